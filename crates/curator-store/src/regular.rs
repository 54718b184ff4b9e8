//! Opening the files curator keeps for itself (the journal, its checkpoint, run sessions, run
//! records, breaker windows, the lock) only when they are regular files, and reading them only
//! up to a bound.
//!
//! `open(2)` of a FIFO blocks until some process opens its other end, and a device (a link to
//! `/dev/zero`, say) never ends: either one where curator expects its own file would hang a
//! writer that holds the root's lock (and every writer waiting behind it), or fill memory. So
//! the open never blocks (`O_NONBLOCK`, which regular files ignore) and the descriptor is
//! checked with `fstat` before anything is read: there is no window between a check and the
//! open for the path to be swapped in. A regular file larger than a reader's bound is refused
//! by its size before it is read, so a sparse file cannot exhaust memory either.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use rustix::fs::OFlags;

/// The bound on one state file curator reads whole (a run session, a run record, a breaker
/// window, a lock file, the journal checkpoint): far above what curator writes (a run record is
/// at most 16 MiB, as the API's body limit) and far below what would exhaust a machine.
pub const MAX_STATE_FILE: u64 = 64 << 20;

/// What the error of a path that is not a regular file says.
const NOT_REGULAR: &str = "not a regular file (a FIFO, a device, a socket or a directory)";

/// Opens `path` for reading when it is a regular file (through symlinks); an error of kind
/// `InvalidInput` otherwise, without blocking on a FIFO.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_with(OpenOptions::new().read(true), path)
}

/// As [`open_regular`], with the caller's options (append, create…).
pub fn open_regular_with(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    let file = options.custom_flags(libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, NOT_REGULAR));
    }
    // Regular files ignore O_NONBLOCK on Linux; it is cleared all the same, so that the
    // descriptor is exactly what a plain open would have given.
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
    Ok(file)
}

/// The bytes of the regular file `path`, refused (kind `FileTooLarge`) above `limit` bytes.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let size = file.metadata()?.len();
    let too_large = |size: u64| {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("too large: {size} bytes (curator reads at most {limit})"),
        )
    };
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // The file may grow between the stat and the read: never read past the bound.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// As [`read_regular`], as UTF-8 text (kind `InvalidData` otherwise).
pub fn read_regular_to_string(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, limit)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("journal.jsonl");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let err = open_regular(&fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        let err = open_regular_with(OpenOptions::new().read(true).append(true), &fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert!(read_regular(&fifo, 10).is_err());
    }

    #[test]
    fn a_device_and_a_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("k.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert_eq!(read_regular(&link, 1 << 20).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            read_regular(dir.path(), 1 << 20).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn a_file_over_the_bound_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse.json");
        File::create(&path).unwrap().set_len(8 << 30).unwrap();
        let err = read_regular(&path, MAX_STATE_FILE).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge, "{err}");
        std::fs::write(&path, b"{}").unwrap();
        assert_eq!(read_regular(&path, 2).unwrap(), b"{}");
        assert_eq!(read_regular(&path, 1).unwrap_err().kind(), io::ErrorKind::FileTooLarge);
        let appended = open_regular_with(OpenOptions::new().append(true), &path).unwrap();
        let flags = rustix::fs::fcntl_getfl(&appended).unwrap();
        assert!(flags.contains(OFlags::APPEND) && !flags.contains(OFlags::NONBLOCK));
    }
}
