//! `agent-qa.config.yaml` → `services.memory` (agent-qa-memory §2). STUB.
