//! Redo journals: how a pass (and a triage) survives a SIGKILL at any point (issue 16 item 1;
//! ARCHITECTURE.md "every mutation journaled before it is visible").
//!
//! A pass computes everything in memory, archives what leaves, and then writes one journal,
//! atomically, holding every file it will write and the cut it will make to an append-only log.
//! That write is the commit point. Applying the journal — write each file if its bytes differ,
//! cut the log, delete the journal — is idempotent, so the next pass (or triage) that finds a
//! journal simply applies it again. Before the commit, the journal says only which archive
//! lengths to return to, and the next pass rolls the archive back: the pass never happened.
//!
//! The cut removes an already-archived prefix from raw.md (or pending-issues.jsonl) while
//! keeping what writers appended after the snapshot. It is applied only to the very file the
//! pass read — same inode, prefix of the recorded length and SHA-256 — so a journal applied twice
//! never cuts twice: after the first cut raw.md is a new file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::archive::ArchiveMark;
use crate::error::{Error, Result};
use crate::raw::hex;

/// Where a journaled write goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Target {
    /// A path relative to the state directory.
    State(String),
    /// A file name in the identity directory.
    Identity(String),
}

/// One whole-file write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileWrite {
    pub(crate) target: Target,
    pub(crate) text: String,
}

/// Lines to append to a JSONL file unless it already holds them (the cross-mission ledger).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LineAppend {
    pub(crate) target: Target,
    pub(crate) lines: Vec<String>,
}

/// Removing a read prefix from an append-only file, keeping some of its ranges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Cut {
    /// Relative to the state directory.
    pub(crate) file: String,
    /// The prefix the pass read.
    pub(crate) len: u64,
    /// Its SHA-256 (hex).
    pub(crate) sha256: String,
    /// The file's identity when read.
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    /// Byte ranges of the prefix to keep, in order (each written newline-terminated).
    pub(crate) keep: Vec<(u64, u64)>,
}

/// The phase a journal records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Phase {
    /// Archiving; nothing visible changed yet. Recovery rolls the archive back.
    Archiving,
    /// Committed. Recovery applies it.
    Committed,
}

/// A pass's (or triage's) journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Journal {
    pub(crate) id: String,
    pub(crate) phase: Phase,
    /// The archive lengths before this pass appended (absent for triage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) archive: Option<ArchiveMark>,
    #[serde(default)]
    pub(crate) writes: Vec<FileWrite>,
    #[serde(default)]
    pub(crate) appends: Vec<LineAppend>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cut: Option<Cut>,
}

/// Where the journal's paths resolve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Roots<'a> {
    pub(crate) state: &'a Path,
    pub(crate) identity: &'a Path,
}

impl Roots<'_> {
    pub(crate) fn path(&self, t: &Target) -> PathBuf {
        match t {
            Target::State(rel) => self.state.join(rel),
            Target::Identity(name) => self.identity.join(name),
        }
    }
}

/// What applying a journal did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// Targets whose bytes changed.
    pub(crate) changed: Vec<Target>,
    /// Whether the cut happened now (false: nothing to cut, or it was already done).
    pub(crate) cut: bool,
    /// Why a cut was skipped, if it was.
    pub(crate) skipped: Option<String>,
}

impl Journal {
    /// Writes the journal atomically (temp + fsync + rename + fsync dir).
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string(self).expect("journals serialize");
        crate::fsio::ensure_parent(path)?;
        Ok(curator_store::atomic_write(path, text.as_bytes())?)
    }

    /// Reads a journal; `None` when there is none. A journal that does not parse was never
    /// committed (the write is atomic), so it is reported, not guessed at.
    pub(crate) fn load(path: &Path) -> Result<Option<Journal>> {
        match curator_store::read_regular(path, curator_store::MAX_STATE_FILE) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| Error::Json { path: path.to_path_buf(), message: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Applies a committed journal's file writes and appends (idempotent).
    pub(crate) fn apply_files(&self, roots: Roots<'_>) -> Result<Applied> {
        let mut applied = Applied::default();
        for w in &self.writes {
            let path = roots.path(&w.target);
            if crate::fsio::write_if_changed(&path, w.text.as_bytes())? {
                applied.changed.push(w.target.clone());
            }
        }
        for a in &self.appends {
            let path = roots.path(&a.target);
            let have = crate::fsio::read_or_empty(&path)?;
            let missing: Vec<&str> = a
                .lines
                .iter()
                .map(String::as_str)
                .filter(|l| !have.lines().any(|h| h == *l))
                .collect();
            if !missing.is_empty() {
                crate::fsio::append_line(&path, &missing.join("\n"))?;
                applied.changed.push(a.target.clone());
            }
        }
        Ok(applied)
    }

    /// Applies a committed journal's cut (idempotent); `cut_lock` takes the log's writer lock.
    pub(crate) fn apply_cut(
        &self,
        roots: Roots<'_>,
        cut_lock: &dyn Fn() -> Result<Box<dyn std::any::Any>>,
    ) -> Result<Applied> {
        let mut applied = Applied::default();
        if let Some(cut) = &self.cut {
            let _guard = cut_lock()?;
            match apply_cut(&roots.state.join(&cut.file), cut)? {
                Ok(()) => applied.cut = true,
                Err(why) => applied.skipped = Some(why),
            }
        }
        Ok(applied)
    }
}

/// SHA-256 (hex) of the first `len` bytes of `file`, or `None` if it is shorter.
fn prefix_hash(file: &File, len: u64) -> std::io::Result<Option<String>> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut at = 0u64;
    while at < len {
        let want = usize::try_from((len - at).min(buf.len() as u64)).unwrap_or(buf.len());
        let n = file.read_at(&mut buf[..want], at)?;
        if n == 0 {
            return Ok(None);
        }
        h.update(&buf[..n]);
        at += n as u64;
    }
    Ok(Some(hex(&h.finalize())))
}

/// Cuts `path` as `cut` says, with its writers locked out by the caller. `Ok(Err(why))` when the
/// file is not the one the pass read (already cut, replaced, or edited): then nothing is done.
pub(crate) fn apply_cut(path: &Path, cut: &Cut) -> Result<std::result::Result<(), String>> {
    cut_then(path, cut, &mut || {})
}

/// How long after the rename the old file is read once more: a writer that opened it just
/// before (a shell's `>>`: open, write, close) has written by then.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(20);

/// [`apply_cut`], calling `after_rename` once the new file is in place (a test writes to the
/// old file there, as a late `>>` would).
fn cut_then(
    path: &Path,
    cut: &Cut,
    after_rename: &mut dyn FnMut(),
) -> Result<std::result::Result<(), String>> {
    let mut file = match crate::fsio::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Err(format!("{} is gone", path.display())));
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if (meta.dev(), meta.ino()) != (cut.dev, cut.ino) {
        return Ok(Err(format!(
            "{} is not the file the pass read (already cut or replaced)",
            path.display()
        )));
    }
    if prefix_hash(&file, cut.len).map_err(|e| Error::io(path, e))?.as_deref() != Some(&cut.sha256)
    {
        return Ok(Err(format!("{} changed under the pass (not by an append)", path.display())));
    }
    let dir = crate::fsio::parent_of(path);
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(
            ".{}.cut-",
            path.file_name().map_or("file".into(), |n| n.to_string_lossy())
        ))
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    // The cut file keeps the mode of the file it replaces (roles of a harness may share it
    // through a group); tempfile creates it owner-only.
    temp.as_file().set_permissions(meta.permissions()).map_err(|e| Error::io(path, e))?;
    {
        let out = temp.as_file_mut();
        let mut buf = vec![0u8; 1 << 16];
        for &(start, end) in &cut.keep {
            let mut at = start;
            let mut last = None;
            while at < end {
                let want = usize::try_from((end - at).min(buf.len() as u64)).unwrap_or(buf.len());
                let n = file.read_at(&mut buf[..want], at).map_err(|e| Error::io(path, e))?;
                if n == 0 {
                    break;
                }
                out.write_all(&buf[..n]).map_err(|e| Error::io(path, e))?;
                last = Some(buf[n - 1]);
                at += n as u64;
            }
            if last.is_some_and(|b| b != b'\n') {
                out.write_all(b"\n").map_err(|e| Error::io(path, e))?;
            }
        }
        // Everything appended after the snapshot, whatever its size.
        file.seek(SeekFrom::Start(cut.len)).map_err(|e| Error::io(path, e))?;
        let mut rest = Vec::new();
        loop {
            rest.clear();
            let n =
                (&mut file).take(1 << 20).read_to_end(&mut rest).map_err(|e| Error::io(path, e))?;
            if n == 0 {
                break;
            }
            out.write_all(&rest).map_err(|e| Error::io(path, e))?;
        }
        out.sync_all().map_err(|e| Error::io(path, e))?;
    }
    temp.persist(path).map_err(|e| Error::io(path, e.error))?;
    crate::fsio::sync_dir(dir)?;
    // A writer that does not take the lock (a shell's `>>`) and opened the log before the
    // rename writes to the old file: what it wrote is moved to the new one, now and once more
    // after a moment, so lines appended during a pass stay.
    after_rename();
    move_late_appends(&mut file, path)?;
    std::thread::sleep(SETTLE);
    move_late_appends(&mut file, path)?;
    Ok(Ok(()))
}

/// Appends to `path` whatever `old` (the replaced file, read up to where the cut stopped)
/// holds beyond that point.
fn move_late_appends(old: &mut File, path: &Path) -> Result<()> {
    let mut late = Vec::new();
    old.read_to_end(&mut late).map_err(|e| Error::io(path, e))?;
    if late.is_empty() {
        return Ok(());
    }
    let mut new =
        std::fs::OpenOptions::new().append(true).open(path).map_err(|e| Error::io(path, e))?;
    new.write_all(&late).map_err(|e| Error::io(path, e))?;
    new.sync_data().map_err(|e| Error::io(path, e))
}

/// The identity of `path` (dev, inode) and its SHA-256 over `len` bytes, for a [`Cut`].
pub(crate) fn identify(path: &Path) -> Result<Option<(u64, u64)>> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(Some((m.dev(), m.ino()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_applies_once_and_keeps_the_appended_tail() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.md");
        std::fs::write(&path, b"a\nb\nc\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        let (dev, ino) = identify(&path).unwrap().unwrap();
        let file = File::open(&path).unwrap();
        let sha256 = prefix_hash(&file, 6).unwrap().unwrap();
        let cut = Cut { file: "raw.md".into(), len: 6, sha256, dev, ino, keep: vec![(4, 6)] };
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"d\n").unwrap();
        assert_eq!(apply_cut(&path, &cut).unwrap(), Ok(()));
        assert_eq!(std::fs::read(&path).unwrap(), b"c\nd\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o664, "the cut file keeps the mode roles share it by");
        // Applied again (a journal re-applied after a crash): a new file, nothing happens.
        assert!(apply_cut(&path, &cut).unwrap().is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"c\nd\n");
    }

    /// A writer without the lock that opened the log before the rename and writes after it
    /// (a shell's `>>` racing the cut): its line ends up in the new file.
    #[test]
    fn a_line_written_to_the_old_file_after_the_rename_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.md");
        std::fs::write(&path, b"a\nb\n").unwrap();
        let (dev, ino) = identify(&path).unwrap().unwrap();
        let sha256 = prefix_hash(&File::open(&path).unwrap(), 4).unwrap().unwrap();
        let cut = Cut { file: "raw.md".into(), len: 4, sha256, dev, ino, keep: vec![(2, 4)] };
        let mut late = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        let applied = cut_then(&path, &cut, &mut || {
            late.write_all(b"late\n").unwrap();
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap()
                .write_all(b"new\n")
                .unwrap();
        });
        assert_eq!(applied.unwrap(), Ok(()));
        assert_eq!(std::fs::read(&path).unwrap(), b"b\nnew\nlate\n");
    }
}
