//! One page of the journal, newest first, read from the end of the file.
//!
//! The web UI and `GET /api/v1/journal` show the newest changes. Reading the whole journal to
//! show fifty of them cost memory and time in proportion to the history (a 27 MB journal of
//! 7,000 runs: 120 ms and 37 MB of a serve's memory per page, kept by the allocator), so a page
//! is read backwards: an end marker comes after its transaction's entries, so walking back
//! from the end meets each transaction's outcome before its entries and decides each entry as
//! it comes. Only the page's entries are parsed whole; every other line is parsed for the few
//! fields the count needs, and the lines a filter cannot match are not parsed at all.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use serde::Deserialize;

use super::{End, Journal, JournalEntry, JournalFilter, Line, MARKER_PREFIX, MAX_LINE, parse_line};
use crate::{Error, Result};

/// The newest committed entries passing a filter, after skipping `offset` of them, and how
/// many there are in all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JournalPage {
    pub total: usize,
    pub entries: Vec<JournalEntry>,
}

/// The fields of an entry line the count reads.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(default, borrow)]
    run_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    txn: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    time: Cow<'a, str>,
    #[serde(default, borrow)]
    action: Cow<'a, str>,
}

/// What a summary of the runs reads of one committed entry (`Store::journal_heads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalHead<'a> {
    pub time: &'a str,
    pub run_id: Option<&'a str>,
    /// The action as the journal spells it (`add`, `confirm`, …).
    pub action: &'a str,
    /// The transaction, `None` for a line written before transactions.
    pub txn: Option<&'a str>,
}

/// What [`Journal::walk_back`] calls with each committed entry: the offset its line starts at,
/// the line, its head.
type EntryVisit<'v> = dyn FnMut(u64, &[u8], &JournalHead<'_>) -> Result<()> + 'v;

impl Journal {
    /// The committed entries passing `filter`, newest first, `offset` skipped and at most
    /// `limit` kept, with their total.
    pub(crate) fn page(
        &self,
        filter: &JournalFilter,
        offset: usize,
        limit: usize,
    ) -> Result<JournalPage> {
        let mut page = JournalPage::default();
        self.walk_back(filter, &mut |start, line, _| {
            if page.total >= offset && page.entries.len() < limit {
                match parse_line(line) {
                    Ok(Line::Entry(entry)) => page.entries.push(*entry),
                    Ok(Line::End(_)) => {}
                    Err(e) => return Err(self.bad_line(start, super::unreadable_line(&e))),
                }
            }
            page.total += 1;
            Ok(())
        })?;
        Ok(page)
    }

    /// Every committed entry's head, newest first, each parsed for its head alone: what a
    /// summary of every run reads without holding the journal's texts.
    pub(crate) fn heads(&self, visit: &mut dyn FnMut(&JournalHead<'_>)) -> Result<()> {
        self.walk_back(&JournalFilter::default(), &mut |_, _, head| {
            visit(head);
            Ok(())
        })
    }

    /// Calls `visit` with each committed entry passing `filter`, newest first: the offset its
    /// line starts at, the line, its head.
    fn walk_back(&self, filter: &JournalFilter, visit: &mut EntryVisit<'_>) -> Result<()> {
        let file = match crate::open_regular(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let needles = filter.needles();
        let finders: Vec<_> = needles.iter().map(memchr::memmem::Finder::new).collect();
        let mut ends: HashMap<String, End> = HashMap::new();
        let mut lines = LinesBackwards::new(file).map_err(|e| Error::io(&self.path, e))?;
        while let Some((start, line)) = lines.next().map_err(|e| self.bad_at(e, lines.pos))? {
            if line.is_empty() {
                continue;
            }
            let head = if line.starts_with(MARKER_PREFIX) {
                None
            } else if !finders.iter().all(|f| f.find(&line).is_some()) {
                continue;
            } else {
                serde_json::from_slice::<Head>(&line).ok()
            };
            let head = match head {
                Some(head) => head,
                // A marker, or a line whose head did not read alone: read it as the scan does.
                None => match parse_line(&line) {
                    Ok(Line::End(marker)) => {
                        // Walking back, the first marker of a transaction is its last one.
                        ends.entry(marker.txn).or_insert(marker.end);
                        continue;
                    }
                    Ok(Line::Entry(entry)) => Head {
                        id: entry.id.into(),
                        run_id: entry.run_id.map(Into::into),
                        txn: entry.txn.map(Into::into),
                        time: entry.time.into(),
                        action: entry.action.as_str().into(),
                    },
                    Err(e) => return Err(self.bad_line(start, super::unreadable_line(&e))),
                },
            };
            let matches = filter.id.as_deref().is_none_or(|id| id == head.id)
                && filter.run_id.as_deref().is_none_or(|run| head.run_id.as_deref() == Some(run));
            let committed = match head.txn.as_deref() {
                None => true, // a line from before transactions: committed
                Some(txn) => ends.get(txn) == Some(&End::Commit),
            };
            if matches && committed {
                let view = JournalHead {
                    time: &head.time,
                    run_id: head.run_id.as_deref(),
                    action: &head.action,
                    txn: head.txn.as_deref(),
                };
                visit(start, &line, &view)?;
            }
        }
        Ok(())
    }

    fn bad_line(&self, start: u64, reason: String) -> Error {
        Error::Journal {
            path: self.path.clone(),
            line: self.line_number_at(start).unwrap_or(0),
            reason,
        }
    }

    fn bad_at(&self, e: std::io::Error, pos: u64) -> Error {
        if e.kind() == std::io::ErrorKind::InvalidData {
            self.bad_line(pos, e.to_string())
        } else {
            Error::io(&self.path, e)
        }
    }
}

/// The whole lines of a file from the last to the first, each with the offset it starts at.
/// A last line with no newline (torn by a crash) is not one of them, as in the forward scan.
struct LinesBackwards {
    file: File,
    /// Where the bytes not yet read end: `carry` holds the bytes from here to the end of the
    /// lines not yet returned (without the newline that ends the last of them).
    pos: u64,
    carry: Vec<u8>,
}

const CHUNK: u64 = 256 * 1024;

impl LinesBackwards {
    fn new(mut file: File) -> std::io::Result<LinesBackwards> {
        let len = file.metadata()?.len();
        // Find the last newline: what follows it is a torn line, skipped.
        let mut end = len;
        let mut probe = Vec::new();
        while end > 0 {
            let from = end.saturating_sub(CHUNK);
            probe.resize(usize::try_from(end - from).unwrap_or(0), 0);
            file.seek(SeekFrom::Start(from))?;
            file.read_exact(&mut probe)?;
            if let Some(i) = memchr::memrchr(b'\n', &probe) {
                end = from + i as u64;
                break;
            }
            if len - from > MAX_LINE {
                return Err(too_long());
            }
            end = from;
        }
        Ok(LinesBackwards { file, pos: end, carry: Vec::new() })
    }

    fn next(&mut self) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        loop {
            if let Some(i) = memchr::memrchr(b'\n', &self.carry) {
                let line = self.carry.split_off(i + 1);
                self.carry.truncate(i);
                return Ok(Some((self.pos + i as u64 + 1, line)));
            }
            if self.pos == 0 {
                if self.carry.is_empty() {
                    return Ok(None);
                }
                return Ok(Some((0, std::mem::take(&mut self.carry))));
            }
            if self.carry.len() as u64 > MAX_LINE {
                return Err(too_long());
            }
            let from = self.pos.saturating_sub(CHUNK);
            let mut chunk = vec![0u8; usize::try_from(self.pos - from).unwrap_or(0)];
            self.file.seek(SeekFrom::Start(from))?;
            self.file.read_exact(&mut chunk)?;
            chunk.extend_from_slice(&self.carry);
            self.carry = chunk;
            self.pos = from;
        }
    }
}

fn too_long() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("a line longer than {MAX_LINE} bytes: not a journal entry"),
    )
}
