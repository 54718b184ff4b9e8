//! The file store over a memory directory. STUB.

/// Observations as agent-qa files under a root directory.
#[derive(Debug)]
pub struct FileStore {}
