//! A summary of the journal up to a byte offset, so that the reads `curate` makes for every run
//! (is this run applied? what evidence do its suspects have?) read the journal's recent tail, not
//! its whole history (BENCHMARKS.md, "`curate` as the file store's history grows").
//!
//! `<root>/.curator/journal.checkpoint.json` holds, for the journal's first `len` bytes, the
//! outcome evidence folded from them and, for each run id, where its committed entries start.
//! Invariants:
//!
//! * **It is derived.** Deleting it, or a copy that fails the checks below, changes no answer,
//!   only speed: the journal is then read whole, as it was before the checkpoint existed.
//! * **It covers a settled prefix.** A writer writes it right after its transaction's end marker,
//!   under the writer lock, so no transaction is open at `len`: every entry before `len` is
//!   committed or rolled back for good (an end marker only ever closes the one open
//!   transaction, which always lies after the last marker), and the summary counts exactly the
//!   committed ones, as a full read would.
//! * **It is trusted only while the journal still starts with that prefix:** the journal is at
//!   least `len` bytes long and its bytes just before `len` are the ones recorded (the last end
//!   marker, which names its transaction's random id). A journal cut, emptied or replaced by hand
//!   fails the check and is read whole.
//! * **It is rewritten atomically** (a reader sees the old or the new one), and only once the tail
//!   it saves reading is at least as large as itself, so its cost stays a fraction of the
//!   journal's own writes.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::evidence::EvidenceBook;

/// The format this code reads and writes; another version is ignored.
const VERSION: u32 = 1;

/// How many bytes before `len` are recorded to recognise the prefix.
const MARK_BYTES: u64 = 256;

/// The smallest tail worth a rewrite.
const MIN_REWRITE: u64 = 1 << 20;

/// The journal's first `len` bytes, summarized.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    version: u32,
    /// Bytes of the journal covered: always just after a line.
    pub(crate) len: u64,
    /// The covered prefix's last bytes (up to [`MARK_BYTES`]), as lossless hex.
    mark: String,
    /// The outcome evidence of the committed entries before `len`, folded in order.
    pub(crate) evidence: EvidenceBook,
    /// Run id → byte offsets of the committed entries naming that run before `len`.
    pub(crate) runs: BTreeMap<String, Vec<u64>>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The path of the checkpoint beside `journal`.
pub(crate) fn path_for(journal: &Path) -> PathBuf {
    journal.with_file_name("journal.checkpoint.json")
}

/// The last bytes of the journal's first `len` bytes, `None` when the journal is shorter or
/// `len` does not end a line.
fn mark_at(journal: &mut fs::File, len: u64) -> Option<String> {
    let start = len.saturating_sub(MARK_BYTES);
    let mut bytes = vec![0u8; usize::try_from(len - start).ok()?];
    journal.seek(SeekFrom::Start(start)).ok()?;
    journal.read_exact(&mut bytes).ok()?;
    (len == 0 || bytes.last() == Some(&b'\n')).then(|| hex(&bytes))
}

/// The checkpoint file as last read by this process, by its identity on disk, so that the
/// several reads of one `curate` (and every request of a long-lived `serve`) parse it once.
#[derive(Debug, Default)]
pub(crate) struct Cache(Mutex<Option<(FileIdentity, Arc<Checkpoint>)>>);

/// What tells two versions of the checkpoint file apart: it is only ever replaced by a rename.
type FileIdentity = (u64, u64, std::time::SystemTime);

fn identity(path: &Path) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).ok()?;
    Some((meta.ino(), meta.len(), meta.modified().ok()?))
}

impl Checkpoint {
    /// The checkpoint of `journal`, when one exists and the journal still starts with the
    /// prefix it covers; `None` otherwise (the journal is then read whole).
    pub(crate) fn load(journal: &Path, cache: &Cache) -> Option<Arc<Checkpoint>> {
        let path = path_for(journal);
        let id = identity(&path)?;
        let cached = cache.0.lock().ok().and_then(|c| c.clone()).filter(|(seen, _)| *seen == id);
        let cp = match cached {
            Some((_, cp)) => cp,
            None => {
                // Derived data: one that cannot be read (or is absurdly large) is ignored.
                let text = crate::read_regular(&path, 16 * crate::MAX_STATE_FILE).ok()?;
                let cp: Arc<Checkpoint> = Arc::new(serde_json::from_slice(&text).ok()?);
                if let Ok(mut slot) = cache.0.lock() {
                    *slot = Some((id, cp.clone()));
                }
                cp
            }
        };
        if cp.version != VERSION {
            return None;
        }
        let mut file = crate::open_regular(journal).ok()?;
        if file.metadata().ok()?.len() < cp.len {
            return None;
        }
        (mark_at(&mut file, cp.len)? == cp.mark).then_some(cp)
    }

    /// An empty summary of an empty prefix.
    pub(crate) fn empty() -> Checkpoint {
        Checkpoint { version: VERSION, ..Checkpoint::default() }
    }

    /// Whether a tail of `tail` bytes is worth folding into a new checkpoint of about
    /// `size` bytes.
    pub(crate) fn worth_rewriting(tail: u64, size: u64) -> bool {
        tail >= MIN_REWRITE.max(size)
    }

    /// Moves the summary to the journal's first `len` bytes and writes it atomically. Call
    /// only under the writer lock, with no transaction open, after folding in every entry
    /// between the old `len` and the new one.
    pub(crate) fn save(&mut self, journal: &Path, len: u64) -> crate::Result<()> {
        let mut file = crate::open_regular(journal).map_err(|e| crate::Error::io(journal, e))?;
        let Some(mark) = mark_at(&mut file, len) else {
            return Ok(()); // not at a line's end: nothing trustworthy to record
        };
        self.len = len;
        self.mark = mark;
        let text = serde_json::to_vec(self).map_err(|e| crate::Error::State {
            path: path_for(journal),
            what: "journal checkpoint",
            reason: e.to_string(),
        })?;
        crate::atomic_write(&path_for(journal), &text)
    }

    /// Its size on disk, to weigh a rewrite against the tail it saves.
    pub(crate) fn size_on_disk(journal: &Path) -> u64 {
        fs::metadata(path_for(journal)).map_or(0, |m| m.len())
    }
}
