//! The journal: one JSON line per mutation in `<root>/.curator/journal.jsonl` (issue 2 item 7).
//!
//! It backs `history`, `undo` and audits, so an entry carries the exact file texts before and
//! after the change (`undo` restores byte for byte) next to the §5.7 snapshots.
//!
//! Invariants: an entry is appended with one `write` on an `O_APPEND` file and fsynced while the
//! writer lock is still held, so entries are in mutation order and never interleave. A crash
//! can only leave a torn *last* line; readers skip it, and the next append (under the lock)
//! cuts it off first so that it never becomes a bad line in the middle. Any other line that is
//! not a valid entry is reported with its number, never skipped silently and never a panic.

use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use curator_core::ObservationSnapshot;

use crate::store::{Action, StoredObservation};
use crate::{Error, Result};

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
        }
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
}

/// The journal file of one memory root.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    path: PathBuf,
}

impl Journal {
    /// `<root>/.curator/journal.jsonl`.
    pub(crate) fn for_root(root: &Path) -> Self {
        Journal { path: root.join(".curator").join("journal.jsonl") }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` as one line and fsyncs it. Call only while holding the writer lock.
    pub(crate) fn append(&self, entry: &JournalEntry) -> Result<()> {
        let dir = crate::atomic::parent_dir(&self.path);
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut line = serde_json::to_vec(entry).map_err(|e| Error::Journal {
            path: self.path.clone(),
            line: 0,
            reason: format!("cannot encode entry for {}: {e}", entry.id),
        })?;
        line.push(b'\n');
        let io = |e| Error::io(&self.path, e);
        let mut file =
            OpenOptions::new().read(true).append(true).create(true).open(&self.path).map_err(io)?;
        self.cut_torn_tail(&mut file)?;
        // One write call: O_APPEND makes it land whole at the end.
        file.write_all(&line).map_err(io)?;
        file.sync_data().map_err(io)
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
        let window = len.min(1 << 20);
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
                    reason: "the last line is unterminated and longer than 1 MiB".into(),
                });
            }
        };
        tracing::warn!(path = %self.path.display(), bytes = len - keep, "cutting a torn journal line left by a crash");
        file.set_len(keep).map_err(io)
    }

    /// Entries passing `filter`, oldest first. A missing journal is empty.
    pub(crate) fn read(&self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        let text = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let complete = text.ends_with(b"\n");
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        let mut entries = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let is_last = i + 1 == lines.len();
            if line.is_empty() && is_last {
                continue;
            }
            match serde_json::from_slice::<JournalEntry>(line) {
                Ok(entry) => {
                    if filter.matches(&entry) {
                        entries.push(entry);
                    }
                }
                // A crash mid-append: the record of that change is lost, the rest is intact.
                Err(_) if is_last && !complete => {
                    tracing::warn!(path = %self.path.display(), line = i + 1, "ignoring a torn last journal line");
                }
                Err(e) => {
                    return Err(Error::Journal {
                        path: self.path.clone(),
                        line: i + 1,
                        reason: e.to_string(),
                    });
                }
            }
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, run: Option<&str>) -> JournalEntry {
        JournalEntry {
            time: "2026-04-10T12:00:00.000Z".into(),
            run_id: run.map(Into::into),
            action: Action::Add,
            tier: "tests".into(),
            scope: "t_x".into(),
            id: id.into(),
            reasoning: "because".into(),
            before: None,
            after: None,
            before_file: None,
            after_file: Some("---\nid: x\n---\nbody\n".into()),
        }
    }

    #[test]
    fn entries_round_trip_one_line_each_and_filter() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::for_root(dir.path());
        assert!(journal.read(&JournalFilter::default()).unwrap().is_empty());
        journal.append(&entry("obs_a", Some("r1"))).unwrap();
        journal.append(&entry("obs_b", Some("r1"))).unwrap();
        journal.append(&entry("obs_a", None)).unwrap();
        let text = fs::read_to_string(journal.path()).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(
            text.lines()
                .next()
                .unwrap()
                .starts_with(r#"{"time":"2026-04-10T12:00:00.000Z","run_id":"r1","action":"add","#)
        );
        let all = journal.read(&JournalFilter::default()).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0], entry("obs_a", Some("r1")));
        let by_id = JournalFilter { id: Some("obs_a".into()), run_id: None };
        assert_eq!(journal.read(&by_id).unwrap().len(), 2);
        let by_run = JournalFilter { id: None, run_id: Some("r1".into()) };
        assert_eq!(journal.read(&by_run).unwrap().len(), 2);
        let both = JournalFilter { id: Some("obs_a".into()), run_id: Some("r1".into()) };
        assert_eq!(journal.read(&both).unwrap().len(), 1);
    }

    #[test]
    fn a_torn_last_line_is_skipped_then_cut_by_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::for_root(dir.path());
        journal.append(&entry("obs_a", None)).unwrap();
        let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
        f.write_all(br#"{"time":"2026-04-10T12:0"#).unwrap();
        assert_eq!(journal.read(&JournalFilter::default()).unwrap().len(), 1);
        journal.append(&entry("obs_b", None)).unwrap();
        let ids: Vec<String> =
            journal.read(&JournalFilter::default()).unwrap().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, ["obs_a", "obs_b"]);
    }

    #[test]
    fn a_torn_only_line_is_cut_entirely() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::for_root(dir.path());
        fs::create_dir_all(dir.path().join(".curator")).unwrap();
        fs::write(journal.path(), b"{\"ti").unwrap();
        assert!(journal.read(&JournalFilter::default()).unwrap().is_empty());
        journal.append(&entry("obs_a", None)).unwrap();
        assert_eq!(journal.read(&JournalFilter::default()).unwrap().len(), 1);
    }

    #[test]
    fn a_bad_line_in_the_middle_is_reported_by_number() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::for_root(dir.path());
        journal.append(&entry("obs_a", None)).unwrap();
        let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
        f.write_all(b"not json\n").unwrap();
        journal.append(&entry("obs_b", None)).unwrap();
        let err = journal.read(&JournalFilter::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("journal.jsonl line 2:"), "{msg}");
        // A complete but invalid last line is not a torn one either.
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::for_root(dir.path());
        fs::create_dir_all(dir.path().join(".curator")).unwrap();
        fs::write(journal.path(), b"{}\n").unwrap();
        assert!(matches!(
            journal.read(&JournalFilter::default()),
            Err(Error::Journal { line: 1, .. })
        ));
    }
}
