//! The security scanner (agent-qa-memory §7). STUB.
