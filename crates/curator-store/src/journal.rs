//! The journal: `<root>/.curator/journal.jsonl`, written ahead of every change (issue 2 item 7,
//! issue 13 item 1).
//!
//! It backs `history`, `undo` and audits, so an entry carries the exact file texts before and
//! after the change (`undo` restores byte for byte) next to the §5.7 snapshots. Two kinds of
//! lines share the file:
//!
//! * an **entry** (a [`JournalEntry`]): one change, appended *before* the file changes, tagged
//!   with the transaction (`txn`) it belongs to;
//! * an **end marker** `{"end":"commit"|"rollback","txn":…,"time":…}`: the transaction is
//!   complete (its changes stand) or was rolled back (its files hold their texts from before it).
//!
//! A transaction's entries count — for `history`, `undo`, the API and the UI — only once its
//! commit marker is in the file. Lines written before issue 13 carry no `txn`; each was appended
//! after its change was made, so they count as committed (old files read unchanged).
//!
//! Invariants: every line is appended with one `write` on an `O_APPEND` file and fsynced while
//! the writer lock is held, so lines are in mutation order and never interleave; writers are
//! serialized by that lock and close their transaction (commit or rollback) before releasing it,
//! so at most one transaction is open, and it is the trailing run of entries after the last end
//! marker or pre-issue-13 entry ([`Journal::open_transactions`]). A crash can only leave a torn
//! *last* line; readers skip it, and the next append (under the lock) cuts it off first so that
//! it never becomes a bad line in the middle. Any other line that is neither an entry nor a
//! marker is reported with its number, never skipped silently and never a panic.

use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use curator_core::ObservationSnapshot;

use crate::evidence::{EvidenceBook, RunEvidence};
use crate::store::{Action, Place, StoredObservation};
use crate::{Error, Result, open_regular, open_regular_with};
use checkpoint::Checkpoint;

/// The longest journal line curator writes or reads, in bytes. An entry holds at most two
/// observation files (each at most 1 MiB, a few times that once escaped as JSON) or one run's
/// evidence, so no entry curator writes comes near it; a longer line (a sparse file, a run of
/// NULs left by a crash, a device) is named as damage instead of being read into memory whole.
pub(crate) const MAX_LINE: u64 = 64 << 20;

/// One journaled mutation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JournalEntry {
    /// ISO time of the change (`YYYY-MM-DDTHH:MM:SS.sssZ`).
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub action: Action,
    /// `products`, `suites` or `tests`.
    pub tier: String,
    pub scope: String,
    pub id: String,
    pub reasoning: String,
    pub before: Option<ObservationSnapshot>,
    pub after: Option<ObservationSnapshot>,
    /// The file's exact text before the change (what `undo` restores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_file: Option<String>,
    /// The file's exact text after the change (what `undo` expects to find).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_file: Option<String>,
    /// The transaction (one [`crate::Store::transact`] call) the change belongs to: every
    /// change of one transaction stands or none does. `None` on entries written before issue
    /// 13, which are each complete on their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn: Option<String>,
    /// For a change made by `undo`: the transaction it reverts ([`LEGACY_TXN`] for entries
    /// without a `txn`); see [`crate::Transaction::set_reverts`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<String>,
    /// Which file changed: served memory (the default, left out of the line) or the review
    /// queue (issue 18).
    #[serde(default, skip_serializing_if = "Place::is_memory")]
    pub place: Place,
    /// For [`Action::Evidence`] and [`Action::Retract`]: the run whose outcome evidence starts
    /// or stops counting (issue 18). Such an entry names the run (`id` is its run id, `scope`
    /// its test) and changes no file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Box<RunEvidence>>,
}

/// How [`JournalEntry::reverts`] names the changes of a run journaled before transactions had
/// ids: together they are that run's one application.
pub const LEGACY_TXN: &str = "legacy";

/// A new transaction id for [`JournalEntry::txn`]: `t` + 64 random bits in hex, so two
/// transactions (of any store, any process) never share one.
pub fn new_transaction_id() -> String {
    format!("t{:016x}", rand::random::<u64>())
}

impl JournalEntry {
    /// A journal line that records a decision about `stored` without changing it (e.g. an
    /// exoneration): the snapshot before and after are the same, and no file text is kept.
    pub fn note(
        run_id: Option<String>,
        stored: &StoredObservation,
        action: Action,
        reasoning: &str,
    ) -> JournalEntry {
        let snapshot = stored.observation.snapshot();
        JournalEntry {
            time: curator_core::time::now_iso(),
            run_id,
            action,
            tier: stored.tier.dir_name().to_owned(),
            scope: stored.scope.as_str().to_owned(),
            id: stored.observation.id.to_string(),
            reasoning: reasoning.to_owned(),
            before: Some(snapshot.clone()),
            after: Some(snapshot),
            before_file: None,
            after_file: None,
            txn: None,
            reverts: None,
            place: Place::Memory,
            evidence: None,
        }
    }

    /// The journal entry that makes `run`'s evidence count ([`Action::Evidence`]) or stop
    /// counting ([`Action::Retract`]).
    pub fn evidence_change(run_id: Option<String>, run: &RunEvidence, action: Action) -> Self {
        let reasoning = match action {
            Action::Retract => format!("outcome evidence of run {} no longer counts", run.run_id),
            _ => format!("outcome evidence of run {} recorded", run.run_id),
        };
        JournalEntry {
            time: curator_core::time::now_iso(),
            run_id,
            action,
            tier: curator_core::Tier::Tests.dir_name().to_owned(),
            scope: run.test.clone(),
            id: run.run_id.clone(),
            reasoning,
            before: None,
            after: None,
            before_file: None,
            after_file: None,
            txn: None,
            reverts: None,
            place: Place::Memory,
            evidence: Some(Box::new(run.clone())),
        }
    }

    /// Whether the entry changed a file (as opposed to a journal-only note).
    pub fn changes_a_file(&self) -> bool {
        !self.action.is_note() && (self.before_file.is_some() || self.after_file.is_some())
    }
}

/// Which journal entries to return; every set field must match.
#[derive(Debug, Clone, Default)]
pub struct JournalFilter {
    pub id: Option<String>,
    pub run_id: Option<String>,
}

impl JournalFilter {
    /// Whether `entry` passes the filter.
    pub fn matches(&self, entry: &JournalEntry) -> bool {
        self.id.as_ref().is_none_or(|id| *id == entry.id)
            && self.run_id.as_ref().is_none_or(|run| entry.run_id.as_ref() == Some(run))
    }

    /// Byte strings a matching line must contain, as serde_json writes it (no spaces), so
    /// that a filtered read parses only the lines that can match.
    fn needles(&self) -> Vec<Vec<u8>> {
        let quoted = |key: &str, value: &str| {
            let mut needle = format!("\"{key}\":").into_bytes();
            needle.extend(serde_json::to_vec(value).unwrap_or_default());
            needle
        };
        let mut needles = Vec::new();
        if let Some(id) = &self.id {
            needles.push(quoted("id", id));
        }
        if let Some(run) = &self.run_id {
            needles.push(quoted("run_id", run));
        }
        needles
    }
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum End {
    /// Every change of the transaction stands.
    Commit,
    /// Every file the transaction changed holds its text from before it again.
    Rollback,
}

/// The line that closes a transaction.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct EndMarker {
    pub(crate) end: End,
    pub(crate) txn: String,
    pub(crate) time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run_id: Option<String>,
    /// Why a transaction was rolled back (a failed body, a crash found by the next writer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

/// A transaction whose entries are in the journal but that has no end marker: its writer is
/// still at work (only while somebody holds the lock) or died.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpenTransaction {
    pub(crate) txn: String,
    /// Its entries, oldest first.
    pub(crate) entries: Vec<JournalEntry>,
}

/// One line of the file.
enum Line {
    Entry(Box<JournalEntry>),
    End(EndMarker),
}

/// Markers begin so; entries begin with `{"time":` (serde_json keeps field order).
const MARKER_PREFIX: &[u8] = b"{\"end\":";

/// The `txn` of a marker line as this module writes it, without parsing the line; `None` when
/// it is not found that way (the line is then parsed).
fn marker_txn(line: &[u8]) -> Option<&str> {
    const KEY: &[u8] = b"\"txn\":\"";
    let at = memchr::memmem::find(line, KEY)? + KEY.len();
    let len = memchr::memchr(b'"', &line[at..])?;
    let txn = std::str::from_utf8(&line[at..at + len]).ok()?;
    txn.bytes().all(|b| b.is_ascii_alphanumeric()).then_some(txn)
}

fn parse_line(line: &[u8]) -> std::result::Result<Line, serde_json::Error> {
    if line.starts_with(MARKER_PREFIX) {
        return serde_json::from_slice(line).map(Line::End);
    }
    match serde_json::from_slice::<JournalEntry>(line) {
        Ok(entry) => Ok(Line::Entry(Box::new(entry))),
        // A marker whose keys a hand edit reordered is still a marker.
        Err(e) => serde_json::from_slice(line).map(Line::End).map_err(|_| e),
    }
}

/// Why a journal line does not read. A line naming an action or a field this version does not
/// know is most likely a newer curator's (a fleet upgraded one machine at a time shares the
/// root): said so, because the remedy for damage, removing the line, would lose that history.
fn unreadable_line(e: &serde_json::Error) -> String {
    let message = e.to_string();
    if message.contains("unknown variant") {
        format!(
            "{message}: a newer curator probably wrote this line; upgrade curator on this machine \
             instead of editing the journal"
        )
    } else {
        message
    }
}

/// The journal file of one memory root.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    path: PathBuf,
    checkpoint: std::sync::Arc<checkpoint::Cache>,
}

impl Journal {
    /// `<root>/.curator/journal.jsonl`.
    pub(crate) fn for_root(root: &Path) -> Self {
        Journal {
            path: root.join(".curator").join("journal.jsonl"),
            checkpoint: Default::default(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` as one line and fsyncs it. Call only while holding the writer lock.
    pub(crate) fn append(&self, entry: &JournalEntry) -> Result<()> {
        let line = serde_json::to_vec(entry).map_err(|e| Error::Journal {
            path: self.path.clone(),
            line: 0,
            reason: format!("cannot encode entry for {}: {e}", entry.id),
        })?;
        if line.len() as u64 >= MAX_LINE {
            return Err(Error::Journal {
                path: self.path.clone(),
                line: 0,
                reason: format!(
                    "the entry for {} would be {} bytes, over the journal's line bound of {MAX_LINE}",
                    entry.id,
                    line.len()
                ),
            });
        }
        self.append_line(line, &mut || Ok(()))
    }

    /// Appends an end marker and fsyncs it. Call only while holding the writer lock.
    pub(crate) fn append_end(&self, marker: &EndMarker) -> Result<()> {
        let line = serde_json::to_vec(marker).map_err(|e| Error::Journal {
            path: self.path.clone(),
            line: 0,
            reason: format!("cannot encode the end of transaction {}: {e}", marker.txn),
        })?;
        // Fault points for the commit marker's own I/O errors (the crash tests stop writes by
        // panicking at `wal::*`): before the write, and after it but before its fsync.
        crate::fault_point!("journal::end-write", |_| Err(self.injected("write")));
        self.append_line(line, &mut || {
            crate::fault_point!("journal::end-sync", |_| Err(self.injected("fsync")));
            Ok(())
        })
    }

    #[cfg(feature = "failpoints")]
    fn injected(&self, call: &str) -> Error {
        Error::io(&self.path, std::io::Error::other(format!("injected {call} failure")))
    }

    fn append_line(
        &self,
        mut line: Vec<u8>,
        before_sync: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        line.push(b'\n');
        let dir = crate::atomic::parent_dir(&self.path);
        let io = |e| Error::io(&self.path, e);
        let created = !self.path.exists();
        if created {
            fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut file =
            open_regular_with(OpenOptions::new().read(true).append(true).create(true), &self.path)
                .map_err(io)?;
        self.cut_torn_tail(&mut file)?;
        // One write call: O_APPEND makes it land whole at the end.
        file.write_all(&line).map_err(io)?;
        before_sync()?;
        file.sync_data().map_err(io)?;
        if created {
            // The new file's name must survive a power loss as surely as its first line.
            crate::atomic::sync_dir(dir)?;
        }
        Ok(())
    }

    /// Removes an unterminated last line left by a crash mid-append.
    fn cut_torn_tail(&self, file: &mut fs::File) -> Result<()> {
        let io = |e| Error::io(&self.path, e);
        let len = file.metadata().map_err(io)?.len();
        if len == 0 {
            return Ok(());
        }
        let mut last = [0u8];
        file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
        file.read_exact(&mut last).map_err(io)?;
        if last[0] == b'\n' {
            return Ok(());
        }
        // Find the last newline; everything after it is the torn line.
        let window = len.min(MAX_LINE + 1);
        let mut tail = vec![0u8; usize::try_from(window).unwrap_or(usize::MAX)];
        file.seek(SeekFrom::Start(len - window)).map_err(io)?;
        file.read_exact(&mut tail).map_err(io)?;
        let keep = match tail.iter().rposition(|&b| b == b'\n') {
            Some(i) => len - window + i as u64 + 1,
            None if window == len => 0,
            None => {
                return Err(Error::Journal {
                    path: self.path.clone(),
                    line: 0,
                    reason: format!(
                        "the last line is unterminated and longer than {MAX_LINE} bytes"
                    ),
                });
            }
        };
        tracing::warn!(path = %self.path.display(), bytes = len - keep, "cutting a torn journal line left by a crash");
        file.set_len(keep).map_err(io)
    }

    /// Committed entries passing `filter`, oldest first. A missing journal is empty.
    pub(crate) fn read(&self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        self.read_including(filter, None)
    }

    /// As [`Journal::read`], plus the entries of the open transaction `own` (the caller's own,
    /// under the lock: a transaction sees its own changes). The entries of one run (the
    /// curator's "already applied?" check) come from the checkpoint's list of where they are
    /// and the journal's tail after it, when the checkpoint holds (`checkpoint.rs`).
    pub(crate) fn read_including(
        &self,
        filter: &JournalFilter,
        own: Option<&str>,
    ) -> Result<Vec<JournalEntry>> {
        let keep = |e: &JournalEntry| filter.matches(e);
        if let (None, Some(run)) = (&filter.id, &filter.run_id)
            && let Some(cp) = Checkpoint::load(&self.path, &self.checkpoint)
        {
            let mut entries = self.entries_at(cp.runs.get(run).map_or(&[][..], Vec::as_slice))?;
            entries.retain(keep);
            let tail = self.scan(cp.len, &filter.needles(), &keep, own)?;
            entries.extend(tail.into_iter().map(|(_, e)| e));
            return Ok(entries);
        }
        Ok(self.scan(0, &filter.needles(), &keep, own)?.into_iter().map(|(_, e)| e).collect())
    }

    /// The entries whose lines start at `offsets` (a checkpoint's: committed, before its end).
    fn entries_at(&self, offsets: &[u64]) -> Result<Vec<JournalEntry>> {
        if offsets.is_empty() {
            return Ok(Vec::new());
        }
        let io = |e| Error::io(&self.path, e);
        let mut file = std::io::BufReader::new(open_regular(&self.path).map_err(io)?);
        let mut entries = Vec::with_capacity(offsets.len());
        let mut line = Vec::new();
        for &offset in offsets {
            file.seek(SeekFrom::Start(offset)).map_err(io)?;
            line.clear();
            std::io::BufRead::read_until(&mut (&mut file).take(MAX_LINE), b'\n', &mut line)
                .map_err(io)?;
            let bad = |reason: String| Error::Journal {
                path: self.path.clone(),
                line: self.line_number_at(offset).unwrap_or(0),
                reason,
            };
            match parse_line(line.strip_suffix(b"\n").unwrap_or(&line)) {
                Ok(Line::Entry(entry)) => entries.push(*entry),
                Ok(Line::End(_)) => return Err(bad("the checkpoint names an end marker".into())),
                Err(e) => return Err(bad(unreadable_line(&e))),
            }
        }
        Ok(entries)
    }

    /// Committed entries (and `own`'s) from byte `from` on (the start of a line, after which
    /// no transaction begun earlier ends) whose line holds every one of `needles` and that
    /// pass `keep`, oldest first, each with the offset its line starts at.
    fn scan(
        &self,
        from: u64,
        needles: &[Vec<u8>],
        keep: &dyn Fn(&JournalEntry) -> bool,
        own: Option<&str>,
    ) -> Result<Vec<(u64, JournalEntry)>> {
        let file = match open_regular(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let io = |e| Error::io(&self.path, e);
        // Read a line at a time (a journal of a long history is far larger than what one
        // call needs), each bounded by MAX_LINE.
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
        reader.seek(SeekFrom::Start(from)).map_err(io)?;
        // The 1-based number of the `i`th line read, starting at byte `start` after `from`.
        let number = |i: usize, start: u64| -> usize {
            if from == 0 { i + 1 } else { self.line_number_at(from + start).unwrap_or(0) }
        };
        let finders: Vec<_> = needles.iter().map(memchr::memmem::Finder::new).collect();
        let mut entries = Vec::new();
        // End markers are only looked at for the transactions of the entries kept; each is
        // kept with its line's index and start, numbered only if it turns out bad.
        let mut markers: Vec<(usize, u64, Vec<u8>)> = Vec::new();
        let mut buf = Vec::new();
        let mut start = 0u64;
        for i in 0.. {
            buf.clear();
            let read = std::io::BufRead::read_until(
                &mut (&mut reader).take(MAX_LINE + 1),
                b'\n',
                &mut buf,
            )
            .map_err(io)?;
            if read == 0 {
                break;
            }
            let line_start = start;
            start += read as u64;
            let Some(line) = buf.strip_suffix(b"\n") else {
                if read as u64 > MAX_LINE {
                    return Err(Error::Journal {
                        path: self.path.clone(),
                        line: number(i, line_start),
                        reason: format!("a line longer than {MAX_LINE} bytes: not a journal entry"),
                    });
                }
                // A crash mid-append: that line was never whole (the next append cuts it off),
                // so it counts for nothing even if it parses; the rest is intact.
                tracing::warn!(path = %self.path.display(), "ignoring a torn last journal line");
                break;
            };
            if line.is_empty() {
                continue;
            }
            if line.starts_with(MARKER_PREFIX) {
                markers.push((i, line_start, line.to_vec()));
                continue;
            }
            if !finders.iter().all(|f| f.find(line).is_some()) {
                continue;
            }
            match parse_line(line) {
                Ok(Line::Entry(entry)) => {
                    if keep(&entry) {
                        entries.push((from + line_start, *entry));
                    }
                }
                Ok(Line::End(_)) => markers.push((i, line_start, line.to_vec())),
                Err(e) => {
                    return Err(Error::Journal {
                        path: self.path.clone(),
                        line: number(i, line_start),
                        reason: unreadable_line(&e),
                    });
                }
            }
        }
        let needed: HashSet<&str> = entries.iter().filter_map(|(_, e)| e.txn.as_deref()).collect();
        let mut ends: HashMap<String, End> = HashMap::new();
        for (i, line_start, line) in markers {
            if marker_txn(&line).is_some_and(|txn| !needed.contains(txn)) {
                continue;
            }
            match parse_line(&line) {
                Ok(Line::End(marker)) => {
                    ends.insert(marker.txn, marker.end);
                }
                Ok(Line::Entry(_)) => {} // a hand-written entry that looks like a marker
                Err(e) => {
                    return Err(Error::Journal {
                        path: self.path.clone(),
                        line: number(i, line_start),
                        reason: unreadable_line(&e),
                    });
                }
            }
        }
        entries.retain(|(_, e)| match e.txn.as_deref() {
            None => true,
            Some(txn) => ends.get(txn) == Some(&End::Commit) || own == Some(txn),
        });
        Ok(entries)
    }

    /// Reads every line (keeping none): the first line that is neither an entry nor a marker
    /// is an error naming it.
    pub(crate) fn check(&self) -> Result<()> {
        self.scan(0, &[], &|_| false, None).map(drop)
    }

    /// Every run's outcome evidence that counts: the [`Action::Evidence`] and
    /// [`Action::Retract`] entries of committed transactions (and of `own`, the caller's open
    /// one), folded in journal order: the checkpoint's book and the tail after it when the
    /// checkpoint holds, else the whole journal. Only lines holding an `"evidence":` key are
    /// parsed.
    pub(crate) fn evidence(&self, own: Option<&str>) -> Result<EvidenceBook> {
        let (mut book, from) = match Checkpoint::load(&self.path, &self.checkpoint) {
            Some(cp) => (cp.evidence.clone(), cp.len),
            None => (EvidenceBook::default(), 0),
        };
        for (_, entry) in self.scan(from, &[b"\"evidence\":".to_vec()], &|_| true, own)? {
            if let Some(run) = &entry.evidence {
                book.apply(entry.action, run);
            }
        }
        Ok(book)
    }

    /// Folds the journal's tail into its checkpoint when the tail has grown as large as the
    /// checkpoint itself (`checkpoint.rs`). Call only under the writer lock, right after a
    /// transaction ended; a journal that ends in an open transaction is left alone.
    pub(crate) fn refresh_checkpoint(&self) -> Result<()> {
        let len = match fs::metadata(&self.path) {
            Ok(meta) => meta.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let mut cp = match Checkpoint::load(&self.path, &self.checkpoint) {
            Some(cp) => Checkpoint::clone(&cp),
            None => Checkpoint::empty(),
        };
        let size = Checkpoint::size_on_disk(&self.path);
        if !Checkpoint::worth_rewriting(len.saturating_sub(cp.len), size)
            || !self.open_transactions()?.is_empty()
        {
            return Ok(());
        }
        for (offset, entry) in self.scan(cp.len, &[], &|_| true, None)? {
            if offset >= len {
                break;
            }
            if let Some(run) = &entry.evidence {
                cp.evidence.apply(entry.action, run);
            }
            if let Some(run_id) = entry.run_id {
                cp.runs.entry(run_id).or_default().push(offset);
            }
        }
        cp.save(&self.path, len)
    }

    /// The transactions that were begun and never ended, oldest first: the trailing entries
    /// after the last end marker (or entry written before issue 13). Reads the file backwards
    /// from its end, so a committed journal costs one small read however long it is.
    pub(crate) fn open_transactions(&self) -> Result<Vec<OpenTransaction>> {
        let mut file = match open_regular(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let io = |e| Error::io(&self.path, e);
        let len = file.metadata().map_err(io)?.len();
        let mut window = 16 * 1024u64;
        loop {
            let start = len.saturating_sub(window);
            let mut tail = vec![0u8; usize::try_from(len - start).unwrap_or(usize::MAX)];
            file.seek(SeekFrom::Start(start)).map_err(io)?;
            file.read_exact(&mut tail).map_err(io)?;
            // Whole lines only: drop a torn last line, and the first (partial) line unless the
            // window starts the file.
            let end = tail.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let begin = if start == 0 {
                0
            } else {
                match tail[..end].iter().position(|&b| b == b'\n') {
                    Some(i) => i + 1,
                    None if window > MAX_LINE => {
                        return Err(Error::Journal {
                            path: self.path.clone(),
                            line: 0,
                            reason: format!(
                                "its last {window} bytes hold no whole line: not a journal \
                                 (lines are at most {MAX_LINE} bytes)"
                            ),
                        });
                    }
                    None => {
                        window = window.saturating_mul(2);
                        continue;
                    }
                }
            };
            let mut open = Vec::new();
            let mut closed = false;
            // Where the current line ends within `tail[begin..end]`, to number a bad one.
            let mut line_end = end - begin;
            for line in tail[begin..end].split(|&b| b == b'\n').rev() {
                let line_start = line_end - line.len();
                line_end = line_start.saturating_sub(1);
                if line.is_empty() {
                    continue;
                }
                match parse_line(line) {
                    Ok(Line::Entry(entry)) if entry.txn.is_some() => open.push(*entry),
                    Ok(_) => {
                        closed = true;
                        break;
                    }
                    Err(e) => {
                        // Whether the transactions before it were committed depends on what
                        // this line was meant to be, so nothing is written until a person looks.
                        return Err(Error::Journal {
                            path: self.path.clone(),
                            line: self.line_number_at(start + (begin + line_start) as u64)?,
                            reason: format!(
                                "not a journal entry or end marker ({}); curator writes nothing \
                                 until this line is fixed or removed, since it cannot tell \
                                 whether the change before it was finished",
                                unreadable_line(&e)
                            ),
                        });
                    }
                }
            }
            if closed || start == 0 {
                open.reverse();
                return Ok(group(open));
            }
            window = window.saturating_mul(2);
        }
    }

    /// The 1-based number of the line starting at byte `offset` (an error path: reads the
    /// file up to there).
    fn line_number_at(&self, offset: u64) -> Result<usize> {
        let io = |e| Error::io(&self.path, e);
        let mut prefix = open_regular(&self.path).map_err(io)?.take(offset);
        let mut chunk = vec![0u8; 256 * 1024];
        let mut newlines = 0;
        loop {
            match prefix.read(&mut chunk) {
                Ok(0) => return Ok(newlines + 1),
                Ok(n) => newlines += memchr::memchr_iter(b'\n', &chunk[..n]).count(),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io(e)),
            }
        }
    }
}

/// Consecutive entries of one transaction, grouped, in order.
fn group(entries: Vec<JournalEntry>) -> Vec<OpenTransaction> {
    let mut out: Vec<OpenTransaction> = Vec::new();
    for entry in entries {
        let txn = entry.txn.clone().unwrap_or_default();
        match out.last_mut() {
            Some(last) if last.txn == txn => last.entries.push(entry),
            _ => out.push(OpenTransaction { txn, entries: vec![entry] }),
        }
    }
    out
}

mod checkpoint;
mod page;
pub use page::{JournalHead, JournalPage};
#[cfg(test)]
mod tests;
