//! The harness's file discipline (harness-curator §8.6).
//!
//! Appends are one `write` on an `O_APPEND` descriptor under a short lock, so two writers never
//! interleave inside a line and a rewrite holding the same lock never loses one. Rewrites go through
//! curator-store's `atomic_write` (temp + fsync + rename), and only when the bytes change: a pass
//! with nothing new to say leaves every file, and its mtime, untouched (the idempotency rule).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

use curator_store::{LockGuard, LockOptions, acquire_lock};

use crate::error::{Error, Result};

/// Reads a UTF-8 file; a missing file reads as empty (every layer treats "missing" as "empty").
pub(crate) fn read_or_empty(path: &Path) -> Result<String> {
    read_bytes_or_empty(path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// Reads raw bytes; missing reads as empty.
pub(crate) fn read_bytes_or_empty(path: &Path) -> Result<Vec<u8>> {
    match open_regular(path) {
        Ok(mut file) => {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| Error::io(path, e))?;
            Ok(bytes)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Opens `path` for reading if it is a regular file (through symlinks), without blocking on a
/// FIFO. A FIFO would block the pass, and the mission with it, until some process wrote to it
/// (the harness spec: a curator failure never blocks the mission); a device never ends.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<File> {
    curator_store::open_regular(path)
}

/// Takes a lock file with curator-store's protocol.
pub(crate) fn lock(path: &Path, timeout: Duration) -> Result<LockGuard> {
    ensure_parent(path)?;
    Ok(acquire_lock(path, &LockOptions { timeout })?)
}

/// Appends `line` plus a newline as a single `write` on an `O_APPEND` descriptor, adding a newline
/// first if the file does not end with one (a hand edit must not glue two entries together).
pub(crate) fn append_line(path: &Path, line: &str) -> Result<()> {
    ensure_parent(path)?;
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    // Only the last byte matters: reading the whole file per append made every append cost as
    // much as the file is long.
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let mut last = [0u8; 1];
    let needs_newline = len > 0 && {
        file.read_at(&mut last, len - 1).map_err(|e| Error::io(path, e))?;
        last[0] != b'\n'
    };
    let mut buf = String::with_capacity(line.len() + 2);
    if needs_newline {
        buf.push('\n');
    }
    buf.push_str(line);
    buf.push('\n');
    file.write_all(buf.as_bytes()).map_err(|e| Error::io(path, e))?;
    file.sync_data().map_err(|e| Error::io(path, e))
}

/// The folder of `path` (`.` for a bare name).
pub(crate) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Fsyncs a folder so a rename or a new file in it is durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))
}

/// Atomically replaces `path` with `bytes` unless it already holds exactly those bytes.
/// Returns whether the file changed.
pub(crate) fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
    if path.exists() && read_bytes_or_empty(path)? == bytes {
        return Ok(false);
    }
    ensure_parent(path)?;
    curator_store::atomic_write(path, bytes)?;
    Ok(true)
}

pub(crate) fn ensure_parent(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok(())
}

/// Physical line count with `wc -l` semantics plus a final unterminated line (§7, §5).
pub(crate) fn physical_lines(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The summary's token estimate: ceil(chars / 4) (§5 step 5).
pub(crate) fn estimated_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counting_counts_an_unterminated_last_line() {
        assert_eq!(physical_lines(""), 0);
        assert_eq!(physical_lines("a\nb\n"), 2);
        assert_eq!(physical_lines("a\nb"), 2);
        assert_eq!(physical_lines("\n\n"), 2);
        assert_eq!(estimated_tokens("abcde"), 2);
    }
}
