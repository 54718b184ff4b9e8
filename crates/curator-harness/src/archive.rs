//! The archive: where every entry that leaves raw.md, and every item a pass removes, goes first
//! (issue 16 item 1; ARCHITECTURE.md "Harness memory never deletes without a record").
//!
//! `$STATE/memory/archive/` holds, per month of the pass:
//! - `raw-YYYY-MM.md`: the entries' original bytes, in order, byte for byte (non-UTF-8 included;
//!   an entry without a final newline gets one here, its record keeps the original length);
//! - `dispositions-YYYY-MM.jsonl`: one [`ArchiveRecord`] per entry or removed item: what it
//!   became (promoted, merged, kept, absorbed, dropped), where to, why, and where its bytes are;
//! - `counts.json`: running totals per disposition, so `harness status` need not read the ledger.
//!
//! Durability: a pass appends here, fsyncs, and only then commits (`redo.rs`); raw.md is cut
//! after the commit. A crash before the commit rolls the archive back to the lengths recorded
//! when the pass began, so an entry is never archived twice, and a crash after it rolls forward,
//! so an entry never leaves raw.md unarchived.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::merge::Disposition;
use crate::raw::RawEntry;

/// How much of an entry's text a record repeats (the bytes are in the `.md` file whatever the size).
const RECORD_TEXT_MAX: usize = 2000;

/// The longest dispositions line read back: far above a record of `RECORD_TEXT_MAX` characters.
const MAX_RECORD_LINE: u64 = 1 << 20;

/// What a record describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// A raw.md entry that left raw.md.
    Entry,
    /// A MEMORY.md item or identity entry a pass removed.
    Item,
}

/// One line of `dispositions-YYYY-MM.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveRecord {
    /// The pass that wrote it (`<ISO time>#<pid>`).
    pub pass: String,
    /// Entry or item.
    pub kind: RecordKind,
    /// What became of it.
    pub disposition: Disposition,
    /// Where its content is now (`MEMORY.md ## Lessons`, `identity/worker.md ## Patterns …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<String>,
    /// The item or identity statement it became part of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// Why (absorbed, dropped, kept verbatim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The entry's timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The entry's role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The entry's feature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
    /// A TRICK entry.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trick: bool,
    /// For items: the file and section it was removed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The entry's text (lossily decoded, cut at 2000 characters) or the item's line.
    pub text: String,
    /// For entries: the archive file holding its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
    /// Offset of its bytes in `archive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Length of its bytes as they were in raw.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<u64>,
}

/// Totals per disposition (`counts.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispositionCounts {
    /// Entry records per disposition.
    #[serde(default)]
    pub entries: BTreeMap<Disposition, u64>,
    /// Item records per disposition (always `dropped` today).
    #[serde(default)]
    pub items: BTreeMap<Disposition, u64>,
}

impl DispositionCounts {
    /// Adds `other` to these totals.
    pub fn add(&mut self, other: &DispositionCounts) {
        for (d, n) in &other.entries {
            *self.entries.entry(*d).or_default() += n;
        }
        for (d, n) in &other.items {
            *self.items.entry(*d).or_default() += n;
        }
    }

    /// Entry records of one disposition.
    pub fn entries_of(&self, d: Disposition) -> u64 {
        self.entries.get(&d).copied().unwrap_or(0)
    }

    /// All entry records.
    pub fn total_entries(&self) -> u64 {
        self.entries.values().sum()
    }

    /// `12 promoted, 3 merged, …`.
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = Disposition::ALL
            .iter()
            .map(|d| format!("{} {}", self.entries_of(*d), d.as_str()))
            .collect();
        let items: u64 = self.items.values().sum();
        if items > 0 {
            parts.push(format!("{items} item(s) removed from memory files"));
        }
        parts.join(", ")
    }
}

/// The lengths of the archive files when a pass began: what a rollback returns to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ArchiveMark {
    /// `raw-YYYY-MM.md`.
    pub(crate) md: String,
    pub(crate) md_len: u64,
    /// `dispositions-YYYY-MM.jsonl`.
    pub(crate) ledger: String,
    pub(crate) ledger_len: u64,
}

fn len_or_zero(path: &Path) -> Result<u64> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(Error::io(path, e)),
    }
}

impl ArchiveMark {
    /// The current lengths of this month's files.
    pub(crate) fn now(dir: &Path, month: &str) -> Result<ArchiveMark> {
        let md = format!("raw-{month}.md");
        let ledger = format!("dispositions-{month}.jsonl");
        Ok(ArchiveMark {
            md_len: len_or_zero(&dir.join(&md))?,
            ledger_len: len_or_zero(&dir.join(&ledger))?,
            md,
            ledger,
        })
    }

    /// Cuts both files back to the marked lengths (an interrupted pass's appends go).
    pub(crate) fn rollback(&self, dir: &Path) -> Result<()> {
        for (name, len) in [(&self.md, self.md_len), (&self.ledger, self.ledger_len)] {
            let path = dir.join(name);
            if len_or_zero(&path)? > len {
                let f =
                    OpenOptions::new().write(true).open(&path).map_err(|e| Error::io(&path, e))?;
                f.set_len(len).and_then(|()| f.sync_all()).map_err(|e| Error::io(&path, e))?;
            }
        }
        Ok(())
    }
}

/// Appends one pass's records.
#[derive(Debug)]
pub(crate) struct ArchiveWriter {
    dir: PathBuf,
    mark: ArchiveMark,
    md: BufWriter<File>,
    ledger: BufWriter<File>,
    md_pos: u64,
    counts: DispositionCounts,
}

fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io(path, e))
}

impl ArchiveWriter {
    /// Opens this month's files at the marked lengths (a partial tail from a crash was rolled back
    /// before the mark was taken).
    pub(crate) fn open(dir: &Path, mark: ArchiveMark) -> Result<ArchiveWriter> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let md = BufWriter::with_capacity(1 << 20, open_append(&dir.join(&mark.md))?);
        let ledger = BufWriter::with_capacity(1 << 20, open_append(&dir.join(&mark.ledger))?);
        Ok(ArchiveWriter {
            dir: dir.to_path_buf(),
            md_pos: mark.md_len,
            mark,
            md,
            ledger,
            counts: DispositionCounts::default(),
        })
    }

    fn record(&mut self, rec: &ArchiveRecord) -> Result<()> {
        let path = self.dir.join(&self.mark.ledger);
        let line = serde_json::to_string(rec).expect("archive records serialize");
        self.ledger
            .write_all(line.as_bytes())
            .and_then(|()| self.ledger.write_all(b"\n"))
            .map_err(|e| Error::io(path, e))
    }

    /// Archives `entry`'s bytes (read from `raw` when the entry is larger than its head) and its
    /// record; fills in the record's location fields.
    pub(crate) fn entry(
        &mut self,
        raw: &File,
        entry: &RawEntry,
        mut rec: ArchiveRecord,
    ) -> Result<()> {
        let md_path = self.dir.join(&self.mark.md);
        let offset = self.md_pos;
        let mut last = None;
        if entry.len as usize <= entry.head.len() {
            let bytes = &entry.head[..entry.len as usize];
            self.md.write_all(bytes).map_err(|e| Error::io(&md_path, e))?;
            last = bytes.last().copied();
        } else {
            let mut buf = vec![0u8; 1 << 16];
            let mut at = entry.offset;
            let end = entry.offset + entry.len;
            while at < end {
                let want = usize::try_from((end - at).min(buf.len() as u64)).unwrap_or(buf.len());
                let n = raw.read_at(&mut buf[..want], at).map_err(|e| Error::io(&md_path, e))?;
                if n == 0 {
                    break;
                }
                self.md.write_all(&buf[..n]).map_err(|e| Error::io(&md_path, e))?;
                last = Some(buf[n - 1]);
                at += n as u64;
            }
        }
        self.md_pos += entry.len;
        if last != Some(b'\n') {
            self.md.write_all(b"\n").map_err(|e| Error::io(&md_path, e))?;
            self.md_pos += 1;
        }
        rec.archive = Some(self.mark.md.clone());
        rec.offset = Some(offset);
        rec.len = Some(entry.len);
        rec.text = crate::bounds::cap_chars(&rec.text, RECORD_TEXT_MAX);
        *self.counts.entries.entry(rec.disposition).or_default() += 1;
        self.record(&rec)
    }

    /// Archives a removed item's record.
    pub(crate) fn item(&mut self, rec: &ArchiveRecord) -> Result<()> {
        *self.counts.items.entry(rec.disposition).or_default() += 1;
        self.record(rec)
    }

    /// Flushes and fsyncs both files; returns this pass's counts.
    pub(crate) fn finish(self) -> Result<DispositionCounts> {
        let sync = |w: BufWriter<File>, name: &str| -> Result<()> {
            let path = self.dir.join(name);
            let f = w.into_inner().map_err(|e| Error::io(&path, e.into_error()))?;
            f.sync_all().map_err(|e| Error::io(&path, e))
        };
        sync(self.md, &self.mark.md)?;
        sync(self.ledger, &self.mark.ledger)?;
        crate::fsio::sync_dir(&self.dir)?;
        Ok(self.counts)
    }
}

/// Reads `counts.json` (missing = zero).
pub(crate) fn read_counts(dir: &Path) -> Result<DispositionCounts> {
    let path = dir.join("counts.json");
    let text = crate::fsio::read_or_empty(&path)?;
    if text.trim().is_empty() {
        return Ok(DispositionCounts::default());
    }
    serde_json::from_str(&text).map_err(|e| Error::Json { path, message: e.to_string() })
}

/// Every record of every ledger file, oldest month first, each with its file name; a line that
/// does not parse is skipped (a hand edit must not hide the rest).
pub(crate) fn for_each_record(dir: &Path, mut f: impl FnMut(&str, ArchiveRecord)) -> Result<()> {
    let mut names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("dispositions-") && n.ends_with(".jsonl"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let file = crate::fsio::open_regular(&path).map_err(|e| Error::io(&path, e))?;
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        loop {
            line.clear();
            // A record is one archived entry, bounded as raw.md's entries are; a longer line
            // (a sparse file, a device) is damage, not a record to read into memory.
            let read = (&mut reader)
                .take(MAX_RECORD_LINE + 1)
                .read_until(b'\n', &mut line)
                .map_err(|e| Error::io(&path, e))?;
            if read == 0 {
                break;
            }
            if read as u64 > MAX_RECORD_LINE {
                let why = format!("a line longer than {MAX_RECORD_LINE} bytes");
                return Err(Error::io(
                    &path,
                    std::io::Error::new(std::io::ErrorKind::InvalidData, why),
                ));
            }
            if let Ok(rec) = serde_json::from_slice::<ArchiveRecord>(&line) {
                f(&name, rec);
            }
        }
    }
    Ok(())
}
