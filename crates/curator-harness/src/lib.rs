//! curator-harness: harness memory (shared/spec/harness-curator.md).
