//! Atomic file replacement. STUB.

use std::path::Path;

/// Writes `bytes` to `path` so that readers see the old file or the new one, never a mix:
/// temp file in the same folder, fsync, rename, fsync the folder.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> crate::Result<()> {
    let _ = (path, bytes);
    unimplemented!()
}
