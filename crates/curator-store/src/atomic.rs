//! Atomic file replacement (fixes agent-qa-memory §11.16: agent-qa writes in place, so a crash
//! or a concurrent reader can see a torn observation).
//!
//! Invariant: a reader of `path` sees the complete old file or the complete new one, never a mix,
//! and after `atomic_write` returns the new content survives a power loss. The temp file lives in
//! the target's folder (a rename is atomic only within one file system) and its name starts with
//! a dot, so agent-qa's listing rule (`obs_*.md`, §1.2) never picks up a leftover temp.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Writes `bytes` to `path` so that readers see the old file or the new one, never a mix:
/// temp file in the same folder, fsync, rename, fsync the folder. The temp file is removed when
/// any step fails. The folder must exist.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .ok_or_else(|| Error::io(path, std::io::Error::other("path has no file name")))?;
    // The file keeps its mode, as a write in place (agent-qa's) keeps it: a harness whose roles
    // share a group-writable file must not find it owner-only after a rewrite.
    let mode = match fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, e)),
    };
    let (temp_path, mut temp) = create_temp(dir, &name.to_string_lossy())?;
    let written = mode
        .map_or(Ok(()), |mode| temp.set_permissions(mode))
        .and_then(|()| temp.write_all(bytes))
        .and_then(|()| temp.sync_all())
        .map_err(|e| Error::io(&temp_path, e))
        .and_then(|()| {
            drop(temp);
            crate::fault_point!("atomic::after-temp");
            fs::rename(&temp_path, path).map_err(|e| Error::io(path, e))
        });
    if let Err(err) = written {
        // Best effort: the write already failed; a leftover dot-file is harmless but untidy.
        let _ = fs::remove_file(&temp_path);
        return Err(err);
    }
    crate::fault_point!("atomic::after-rename");
    sync_dir(dir)
}

/// The pid in a temp file name made by [`create_temp`] for a file named `.{name}…`, `None`
/// when `file_name` is not such a name.
pub(crate) fn temp_writer(file_name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix('.')?;
    let (_, tail) = rest.rsplit_once(".tmp-")?;
    let (pid, random) = tail.split_once('-')?;
    let hex = random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit());
    if hex { pid.parse().ok() } else { None }
}

/// How old a temp file whose writer's pid is dead here must be before it counts as a leftover.
/// A writer in another pid namespace (a container sharing the folder) has a pid that is dead
/// here while it writes, fsyncs and renames its temp, which takes milliseconds; removing the
/// temp under it would fail its write.
pub(crate) const DEAD_WRITER_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether the file at `path` is a temp whose writer is gone (so the file is a leftover): its
/// writer's pid is dead here and it is older than [`DEAD_WRITER_TEMP_AGE`]. `None` for names
/// that are not temp names and for live, unknown or recent writers.
pub(crate) fn is_dead_writers_temp(path: &Path) -> Option<u32> {
    let pid = temp_writer(path.file_name()?.to_str()?)?;
    let age = fs::symlink_metadata(path).ok()?.modified().ok()?.elapsed().ok()?;
    let probe = crate::lock::SystemProbe;
    let dead = crate::lock::ProcessProbe::liveness(&probe, pid) == crate::lock::Liveness::Dead;
    (dead && age > DEAD_WRITER_TEMP_AGE).then_some(pid)
}

/// The temp files in `dir` that [`atomic_write`] made for a writer that is gone: never renamed
/// into place, so nothing reads them, and safe to delete.
pub fn dead_writer_temps(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            is_dead_writers_temp(&path)?;
            Some(path)
        })
        .collect()
}

/// Fsyncs a folder so that a rename or unlink in it is durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))
}

/// The folder holding `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Creates a new, uniquely named dot-file in `dir`: `.<name>.tmp-<pid>-<random>`.
pub(crate) fn create_temp(dir: &Path, name: &str) -> Result<(PathBuf, File)> {
    // 64 random bits make a collision practically impossible; `create_new` turns the remaining
    // chance into a retry instead of two writers sharing one temp file.
    for _ in 0..8 {
        let temp_path =
            dir.join(format!(".{name}.tmp-{}-{:016x}", std::process::id(), rand::random::<u64>()));
        match OpenOptions::new().write(true).create_new(true).open(&temp_path) {
            Ok(file) => return Ok((temp_path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&temp_path, e)),
        }
    }
    Err(Error::io(dir, std::io::Error::other("could not create a unique temp file")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn creates_and_replaces_without_leaving_temps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("obs_a.md");
        atomic_write(&path, b"first").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first");
        atomic_write(&path, b"second, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second, longer");
        assert_eq!(names(dir.path()), ["obs_a.md"]);
    }

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.md");
        atomic_write(&path, b"first").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o664)).unwrap();
        atomic_write(&path, b"second").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o664);
    }

    #[test]
    fn a_failed_rename_removes_the_temp_and_keeps_the_target() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory at the target makes rename fail after the temp was written.
        let path = dir.path().join("target");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("keep"), b"x").unwrap();
        let err = atomic_write(&path, b"data").unwrap_err();
        assert!(err.to_string().contains("target"), "{err}");
        assert_eq!(names(dir.path()), ["target"]);
        assert_eq!(names(&path), ["keep"]);
    }

    #[test]
    fn a_missing_folder_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope").join("obs_a.md");
        let err = atomic_write(&path, b"x").unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn temp_names_are_hidden_from_the_listing_rule() {
        let dir = tempfile::tempdir().unwrap();
        let (temp, _file) = create_temp(dir.path(), "obs_a.md").unwrap();
        let name = temp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".obs_a.md.tmp-"), "{name}");
        assert!(!name.starts_with("obs_"));
        assert_eq!(temp_writer(&name), Some(std::process::id()));
        // This process is alive, so its temp is no leftover.
        assert_eq!(is_dead_writers_temp(&temp), None);
    }

    #[test]
    fn only_temp_names_name_a_writer() {
        assert_eq!(temp_writer(".obs_a.md.tmp-42-00112233aabbccdd"), Some(42));
        assert_eq!(temp_writer(".curator.lock.tmp-7-00112233aabbccdd"), Some(7));
        for name in [
            "obs_a.md",
            ".obs_a.md",
            ".obs_a.md.tmp-42",
            ".obs_a.md.tmp-x-00112233aabbccdd",
            ".obs_a.md.tmp-42-xyz",
        ] {
            assert_eq!(temp_writer(name), None, "{name}");
        }
    }

    #[test]
    fn a_dead_writers_temp_is_a_leftover_once_it_is_older_than_a_write_takes() {
        let dir = tempfile::tempdir().unwrap();
        // An absurd pid is dead here; so is a live writer's in another pid namespace, which a
        // young temp may be.
        let temp = dir.path().join(".obs_a.md.tmp-4000000000-00112233aabbccdd");
        fs::write(&temp, "x").unwrap();
        assert_eq!(is_dead_writers_temp(&temp), None, "young: perhaps being renamed now");
        assert!(dead_writer_temps(dir.path()).is_empty());
        let old = std::time::SystemTime::now() - DEAD_WRITER_TEMP_AGE * 2;
        File::options().write(true).open(&temp).unwrap().set_modified(old).unwrap();
        assert_eq!(is_dead_writers_temp(&temp), Some(4_000_000_000));
        assert_eq!(dead_writer_temps(dir.path()), [temp]);
    }
}
