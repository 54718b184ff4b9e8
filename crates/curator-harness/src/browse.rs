//! Read-only views for a person reviewing harness memory (issue 15 item 5): the tail of raw.md
//! and the archive's records a page at a time.
//!
//! Both read in bounded memory whatever the file sizes: the tail reads at most `max_bytes` from
//! the end of raw.md, and a page of the archive streams the ledger twice (count, then collect the
//! page) keeping only the page. Neither takes a lock: raw.md only grows between passes and the
//! archive is append-only, so a read racing a writer sees a consistent prefix, at worst without
//! the newest lines.

use std::io::{Read, Seek, SeekFrom};

use serde::Serialize;

use crate::archive::{ArchiveRecord, for_each_record};
use crate::error::{Error, Result};
use crate::harness::Harness;
use crate::merge::Disposition;

/// Largest page of archive records one call returns.
pub const ARCHIVE_PAGE_MAX: usize = 500;

/// The end of raw.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RawTail {
    /// raw.md's size in bytes (0 when absent).
    pub total_bytes: u64,
    /// The last whole lines within the byte budget, non-UTF-8 bytes shown as U+FFFD (the file
    /// itself keeps them).
    pub text: String,
    /// Whether earlier bytes were left out.
    pub cut: bool,
}

/// One page of archive records, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArchivePage {
    /// Records matching the filter, in all.
    pub total: u64,
    /// Records skipped from the newest.
    pub offset: usize,
    /// Page size asked for.
    pub limit: usize,
    /// The disposition filter, if any.
    pub disposition: Option<Disposition>,
    /// The page, the newest record first.
    pub records: Vec<ArchiveRecord>,
}

impl Harness {
    /// The last whole lines of raw.md within `max_bytes`.
    pub fn raw_tail(&self, max_bytes: u64) -> Result<RawTail> {
        self.require_state()?;
        let path = self.raw_path();
        let mut file = match crate::fsio::open_regular(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(RawTail { total_bytes: 0, text: String::new(), cut: false });
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let total = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let start = total.saturating_sub(max_bytes);
        file.seek(SeekFrom::Start(start)).map_err(|e| Error::io(&path, e))?;
        let mut bytes = Vec::new();
        file.take(max_bytes).read_to_end(&mut bytes).map_err(|e| Error::io(&path, e))?;
        let cut = start > 0;
        if cut {
            // Start at a line boundary: a half line would read as a different entry.
            match bytes.iter().position(|&b| b == b'\n') {
                Some(nl) => {
                    bytes.drain(..=nl);
                }
                None => bytes.clear(),
            }
        }
        Ok(RawTail { total_bytes: total, text: String::from_utf8_lossy(&bytes).into_owned(), cut })
    }

    /// Archive records newest first, `offset` of them skipped, at most `limit` (1 ..=
    /// [`ARCHIVE_PAGE_MAX`]), only those of `disposition` when given.
    pub fn archive_page(
        &self,
        disposition: Option<Disposition>,
        offset: usize,
        limit: usize,
    ) -> Result<ArchivePage> {
        if !(1..=ARCHIVE_PAGE_MAX).contains(&limit) {
            return Err(Error::invalid("limit", format!("1 to {ARCHIVE_PAGE_MAX}")));
        }
        self.require_state()?;
        let dir = self.archive_dir();
        let wanted = |r: &ArchiveRecord| disposition.is_none_or(|d| r.disposition == d);
        let mut total: u64 = 0;
        for_each_record(&dir, |_, r| total += u64::from(wanted(&r)))?;
        // Newest first: the page is the records with oldest-first index in [lo, hi).
        let hi = total.saturating_sub(offset as u64);
        let lo = hi.saturating_sub(limit as u64);
        let mut records = Vec::with_capacity((hi - lo) as usize);
        let mut index: u64 = 0;
        for_each_record(&dir, |_, r| {
            if wanted(&r) {
                if (lo..hi).contains(&index) {
                    records.push(r);
                }
                index += 1;
            }
        })?;
        records.reverse();
        Ok(ArchivePage { total, offset, limit, disposition, records })
    }
}
