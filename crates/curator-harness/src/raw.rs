//! `raw.md` line grammar and entry segmentation (harness-curator §2.1, §2.2), over bytes.
//!
//! The writer always emits the canonical form `[<ts>] <role> <fid> <tag>: <text>` with the tag
//! slot filled (`TRICK` or `-`); the parser also accepts the tolerant forms of §2.1 (`TRICK:` as
//! the first word of the text, or no tag at all). Lines that nearly follow the grammar — a bullet
//! in front, a space instead of `T`, no seconds or no `Z`, a tag word such as `note` — are read
//! by [`parse_near_format`] and marked [`EntryKind::NearFormat`] so a pass can report them: a
//! near-format line starts its own entry instead of silently becoming the continuation of the
//! entry above it (issue 16: such lines were lost).
//!
//! Segmentation works on bytes and keeps the exact byte range of every entry, so truncation
//! (§2.3) and the archive copy entries byte for byte, including bytes that are not UTF-8; only the
//! text handed to the classifier is decoded (lossily). [`EntryReader`] streams a file: memory is
//! bounded by [`MAX_ENTRY_TEXT`], not by the file's size.

use std::io::BufRead;
use std::ops::Range;
use std::sync::LazyLock;

use jiff::Timestamp;
use regex::Regex;

use crate::error::{Error, Result};

/// The tag that flags a worker pattern for promotion (§2.1; case-sensitive).
pub const TRICK: &str = "TRICK";

/// The most bytes of one entry kept in memory for classification; the rest of a giant entry is
/// still archived byte for byte (it is copied from the file, not from memory).
pub const MAX_ENTRY_TEXT: usize = 64 * 1024;

/// A near-format timestamp: optional bullet and bracket, a date, optional time and zone.
static NEAR_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-*+]\s+)?\[?(\d{4}-\d{2}-\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?(?:[.,]\d+)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?\]?\s+",
    )
    .expect("static regex")
});

/// A line that looks like it meant to start an entry (`[` or a bullet, then a date).
static LOOKS_LIKE_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:[-*+]\s+)?\[\d{4}-\d{2}-\d{2}").expect("static regex"));

static ROLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9-]+$").expect("static regex"));

/// A feature id as the harness writes one: a word of letters, digits and dashes.
pub(crate) static FEATURE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9-]*$").expect("static regex"));

/// One parsed raw line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLine {
    /// The ISO-8601 UTC timestamp (`YYYY-MM-DDThh:mm:ssZ`; normalised for near-format lines).
    pub timestamp: String,
    /// The authoring role (`worker`, `plan-reviewer`, ...).
    pub role: String,
    /// The feature in scope; `None` when the writer put `-`.
    pub feature: Option<String>,
    /// Whether the entry carries the `TRICK` tag (in the slot or as the text's first word).
    pub trick: bool,
    /// The observation itself (continuation lines joined with a space).
    pub text: String,
}

impl RawLine {
    /// `YYYY-MM-DD` of the entry: what MEMORY.md and identity items are dated by (issue 16).
    pub fn date(&self) -> &str {
        &self.timestamp[..10.min(self.timestamp.len())]
    }
}

/// What kind of entry a segment of raw.md is (§2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A line of the §2.1 grammar (possibly followed by continuation lines).
    Line(RawLine),
    /// A line that nearly follows the grammar, read leniently (a pass reports it).
    NearFormat(RawLine),
    /// A line that starts like an entry (`[` + date) but could not be read: kept verbatim.
    Malformed,
    /// A `## ` heading block (the monitor role's status blocks).
    Block,
    /// Lines before the first entry start.
    Preamble,
}

/// One entry of a segmented text, with the byte range it occupies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What the entry is.
    pub kind: EntryKind,
    /// Its bytes in the segmented text, including its trailing newline but no leading blank line.
    pub span: Range<usize>,
}

impl Entry {
    /// The parsed line, if this entry follows the grammar or nearly does.
    pub fn line(&self) -> Option<&RawLine> {
        match &self.kind {
            EntryKind::Line(line) | EntryKind::NearFormat(line) => Some(line),
            _ => None,
        }
    }

    /// Whether this entry is a TRICK line.
    pub fn is_trick(&self) -> bool {
        self.line().is_some_and(|l| l.trick)
    }
}

/// The length of a canonical `[YYYY-MM-DDThh:mm:ss(.frac)?Z]` at the start of `line`, brackets
/// included.
fn canonical_timestamp(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let shape = b.first() == Some(&b'[')
        && digits(1..5)
        && b.get(5) == Some(&b'-')
        && digits(6..8)
        && b.get(8) == Some(&b'-')
        && digits(9..11)
        && b.get(11) == Some(&b'T')
        && digits(12..14)
        && b.get(14) == Some(&b':')
        && digits(15..17)
        && b.get(17) == Some(&b':')
        && digits(18..20);
    if !shape {
        return None;
    }
    let mut i = 20;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    (b.get(i) == Some(&b'Z') && b.get(i + 1) == Some(&b']')).then_some(i + 2)
}

fn is_name(s: &str, first_alnum: bool) -> bool {
    !s.is_empty()
        && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
        && (!first_alnum || s.as_bytes()[0].is_ascii_alphanumeric())
}

/// Parses one line of the §2.1 grammar, accepting the tolerant forms. (Hand-written rather than
/// a regex with captures: a pass parses every line of raw.md, and that regex was a tenth of its
/// time.)
pub fn parse_line(line: &str) -> Option<RawLine> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let end = canonical_timestamp(line)?;
    let timestamp = &line[1..end - 1];
    let rest = line[end..].strip_prefix(' ')?;
    let (role, rest) = rest.split_once(' ')?;
    if !is_name(role, false) {
        return None;
    }
    let fid_end = rest.find([' ', ':'])?;
    let fid = &rest[..fid_end];
    if fid != "-" && !is_name(fid, true) {
        return None;
    }
    let rest = &rest[fid_end..];
    let (tag, rest) = if let Some(r) = rest.strip_prefix(" TRICK:") {
        (Some(TRICK), r)
    } else if let Some(r) = rest.strip_prefix(" -:") {
        (Some("-"), r)
    } else {
        (None, rest.strip_prefix(':')?)
    };
    let mut text = rest.strip_prefix(' ').unwrap_or(rest).to_string();
    let mut trick = tag == Some(TRICK);
    // Tolerant forms `…<fid>: TRICK: <text>` and `…<fid> -: TRICK: <text>`: the tag travels as
    // the first word of the text.
    if !trick && let Some(r) = text.strip_prefix("TRICK:") {
        trick = true;
        text = r.trim_start().to_string();
    }
    Some(RawLine {
        timestamp: timestamp.to_string(),
        role: role.to_string(),
        feature: (fid != "-").then(|| fid.to_string()),
        trick,
        text,
    })
}

/// A token in the head of a near-format line that names a feature: `-`, or something with a
/// digit in it (`F-034`, `F034`, `FIX-2`).
fn is_fid_token(t: &str) -> bool {
    t == "-" || (FEATURE.is_match(t) && t.chars().any(|c| c.is_ascii_digit()))
}

/// Reads a line that nearly follows §2.1: a bullet in front, no `T` or no seconds, no `Z` or a
/// zone offset, a missing feature slot, or a tag word other than `TRICK`/`-` (`note`, `LESSON`,
/// kept as a prefix of the text so the classifier sees it). `None` when the line is not one.
pub fn parse_near_format(line: &str) -> Option<RawLine> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let caps = NEAR_TIMESTAMP.captures(line)?;
    let rest = &line[caps.get(0)?.end()..];
    let timestamp = near_timestamp(&caps)?;
    let (head, text) = rest.split_once(':')?;
    let mut tokens = head.split_whitespace();
    let role = tokens.next()?;
    if !ROLE.is_match(role) || !role.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut feature = None;
    let mut tags: Vec<&str> = Vec::new();
    for (n, t) in tokens.enumerate() {
        if n == 0 && is_fid_token(t) {
            feature = (t != "-").then(|| t.to_string());
        } else if t == "-" {
        } else if t.chars().all(|c| c.is_ascii_alphabetic()) && t.len() <= 12 && tags.len() < 2 {
            tags.push(t);
        } else {
            // Prose with a colon in it, not a near-format head.
            return None;
        }
    }
    let mut text = text.trim().to_string();
    let mut trick = false;
    for tag in tags {
        if tag == TRICK {
            trick = true;
        } else {
            text = format!("{tag}: {text}");
        }
    }
    if let Some(rest) = text.strip_prefix("TRICK:") {
        trick = true;
        text = rest.trim_start().to_string();
    }
    Some(RawLine { timestamp, role: role.to_string(), feature, trick, text })
}

/// `YYYY-MM-DDThh:mm:ssZ` from a near-format timestamp; a zone offset is converted to UTC,
/// missing parts are zero.
fn near_timestamp(caps: &regex::Captures<'_>) -> Option<String> {
    let date = &caps[1];
    let hh: u32 = caps.get(2).map_or(Some(0), |m| m.as_str().parse().ok())?;
    let mm: u32 = caps.get(3).map_or(Some(0), |m| m.as_str().parse().ok())?;
    let ss: u32 = caps.get(4).map_or(Some(0), |m| m.as_str().parse().ok())?;
    let zone = caps.get(5).map_or("Z", |m| m.as_str());
    let zone = match zone {
        "Z" | "UTC" => "Z".to_string(),
        z if z.len() == 5 => format!("{}:{}", &z[..3], &z[3..]),
        z => z.to_string(),
    };
    let text = format!("{date}T{hh:02}:{mm:02}:{ss:02}{zone}");
    let ts: Timestamp = text.parse().ok()?;
    Some(iso_seconds(ts))
}

/// How a line relates to entries (§2.2, widened to near-format starts).
enum LineRole {
    Blank,
    Start(EntryKind),
    Continuation,
}

fn classify_line(bytes: &[u8]) -> LineRole {
    let text = String::from_utf8_lossy(bytes);
    let line = text.trim_end_matches(['\n', '\r']);
    if line.trim().is_empty() {
        return LineRole::Blank;
    }
    if line.starts_with("## ") {
        return LineRole::Start(EntryKind::Block);
    }
    if canonical_timestamp(line).is_some() {
        return LineRole::Start(match parse_line(line) {
            Some(l) => EntryKind::Line(l),
            None => parse_near_format(line).map_or(EntryKind::Malformed, EntryKind::NearFormat),
        });
    }
    if let Some(l) = parse_near_format(line) {
        return LineRole::Start(EntryKind::NearFormat(l));
    }
    if LOOKS_LIKE_START.is_match(line) {
        return LineRole::Start(EntryKind::Malformed);
    }
    LineRole::Continuation
}

/// One entry read by [`EntryReader`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    /// Where its bytes start in the file.
    pub offset: u64,
    /// How many bytes it occupies (its lines, including its last newline).
    pub len: u64,
    /// What it is; for lines, continuation lines are joined into the text.
    pub kind: EntryKind,
    /// Its first [`MAX_ENTRY_TEXT`] bytes (all of it for any ordinary entry).
    pub head: Vec<u8>,
}

impl RawEntry {
    /// The parsed line, if any.
    pub fn line(&self) -> Option<&RawLine> {
        match &self.kind {
            EntryKind::Line(line) | EntryKind::NearFormat(line) => Some(line),
            _ => None,
        }
    }

    /// The entry's text, decoded lossily, lines joined with a space (for verbatim items).
    pub fn flat_text(&self) -> String {
        let text = String::from_utf8_lossy(&self.head);
        text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
    }
}

/// Streams the entries of the first `limit` bytes of a reader (§2.2): one line and one entry in
/// memory at a time. Blank lines between entries belong to no entry; a blank line followed by a
/// continuation line belongs to the entry above it.
#[derive(Debug)]
pub struct EntryReader<R> {
    reader: R,
    remaining: u64,
    offset: u64,
    current: Option<RawEntry>,
    /// Blank lines seen after `current` and not yet given to it.
    blank: Vec<u8>,
    line: Vec<u8>,
    /// Every byte read, for a caller that hashes the snapshot.
    hasher: Option<sha2::Sha256>,
    done: bool,
}

impl<R: BufRead> EntryReader<R> {
    /// Reads at most `limit` bytes of `reader`.
    pub fn new(reader: R, limit: u64) -> Self {
        EntryReader {
            reader,
            remaining: limit,
            offset: 0,
            current: None,
            blank: Vec::new(),
            line: Vec::new(),
            hasher: None,
            done: false,
        }
    }

    /// Also hashes every byte read (SHA-256), returned by [`EntryReader::finish_hash`].
    pub fn hashing(mut self) -> Self {
        self.hasher = Some(sha2::Digest::new());
        self
    }

    /// The hash of every byte read so far (hex), if hashing.
    pub fn finish_hash(&mut self) -> Option<String> {
        use sha2::Digest as _;
        self.hasher.take().map(|h| hex(&h.finalize()))
    }

    /// Bytes read so far.
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// Reads one line (up to and including `\n`, or to the limit), keeping at most
    /// `MAX_ENTRY_TEXT` bytes of it in `self.line`; returns its full length (0 at the end).
    fn read_line(&mut self) -> std::io::Result<u64> {
        self.line.clear();
        let mut total = 0u64;
        while self.remaining > 0 {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let avail =
                &buf[..buf.len().min(usize::try_from(self.remaining).unwrap_or(usize::MAX))];
            let (chunk, ends) = match memchr(b'\n', avail) {
                Some(i) => (&avail[..=i], true),
                None => (avail, false),
            };
            let room = MAX_ENTRY_TEXT.saturating_sub(self.line.len());
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if let Some(h) = &mut self.hasher {
                sha2::Digest::update(h, chunk);
            }
            let n = chunk.len();
            self.reader.consume(n);
            total += n as u64;
            self.remaining -= n as u64;
            if ends {
                break;
            }
        }
        Ok(total)
    }

    fn step(&mut self) -> std::io::Result<Option<RawEntry>> {
        loop {
            let start = self.offset;
            let n = self.read_line()?;
            if n == 0 {
                self.done = true;
                return Ok(self.current.take());
            }
            self.offset += n;
            match classify_line(&self.line) {
                LineRole::Blank => {
                    if self.current.is_some() && self.blank.len() < MAX_ENTRY_TEXT {
                        self.blank.extend_from_slice(&self.line);
                    }
                }
                LineRole::Start(kind) => {
                    let next = RawEntry {
                        offset: start,
                        len: n,
                        kind,
                        head: std::mem::take(&mut self.line),
                    };
                    self.blank.clear();
                    if let Some(done) = self.current.replace(next) {
                        return Ok(Some(done));
                    }
                }
                LineRole::Continuation => match &mut self.current {
                    Some(entry) => {
                        // Blank lines inside an entry belong to it.
                        entry.len = start + n - entry.offset;
                        let blank = std::mem::take(&mut self.blank);
                        for part in [&blank[..], &self.line[..]] {
                            let room = MAX_ENTRY_TEXT.saturating_sub(entry.head.len());
                            entry.head.extend_from_slice(&part[..part.len().min(room)]);
                        }
                        if let EntryKind::Line(l) | EntryKind::NearFormat(l) = &mut entry.kind {
                            let more = String::from_utf8_lossy(&self.line);
                            let more = more.trim();
                            if !more.is_empty() && l.text.len() < MAX_ENTRY_TEXT {
                                l.text.push(' ');
                                l.text.push_str(more);
                            }
                        }
                    }
                    None => {
                        self.current = Some(RawEntry {
                            offset: start,
                            len: n,
                            kind: EntryKind::Preamble,
                            head: std::mem::take(&mut self.line),
                        });
                    }
                },
            }
        }
    }
}

impl<R: BufRead> Iterator for EntryReader<R> {
    type Item = std::io::Result<RawEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done && self.current.is_none() {
            return None;
        }
        self.step().transpose()
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Cuts raw.md bytes into entries (§2.2). Blank lines between entries belong to no entry; the
/// bytes of the whole text are the entries' spans plus those blank lines.
pub fn segment(bytes: impl AsRef<[u8]>) -> Vec<Entry> {
    let bytes = bytes.as_ref();
    EntryReader::new(bytes, bytes.len() as u64)
        .map(|e| {
            let e = e.expect("reading from memory cannot fail");
            let start = usize::try_from(e.offset).expect("in-memory offsets fit usize");
            let end = start + usize::try_from(e.len).expect("in-memory lengths fit usize");
            Entry { kind: e.kind, span: start..end }
        })
        .collect()
}

/// Builds the canonical line the writer appends (no trailing newline).
///
/// Refuses what the grammar cannot carry: a role outside `[A-Za-z0-9-]`, a feature id that is not
/// one token, text with a newline or nothing in it.
pub fn format_line(
    now: Timestamp,
    role: &str,
    feature: Option<&str>,
    trick: bool,
    text: &str,
) -> Result<String> {
    if !ROLE.is_match(role) {
        return Err(Error::invalid("role", format!("{role:?} must match [A-Za-z0-9-]+")));
    }
    let fid = match feature {
        None | Some("-") | Some("") => "-",
        Some(f) if FEATURE.is_match(f) => f,
        Some(f) => {
            return Err(Error::invalid("feature", format!("{f:?} is not a feature id or `-`")));
        }
    };
    if text.contains(['\n', '\r']) {
        return Err(Error::invalid("text", "one line per observation: no embedded newline"));
    }
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::invalid("text", "an entry needs an observation"));
    }
    let tag = if trick { TRICK } else { "-" };
    Ok(format!("[{}] {role} {fid} {tag}: {text}", iso_seconds(now)))
}

/// `YYYY-MM-DDThh:mm:ssZ`: the writer's second precision (§2.1).
pub fn iso_seconds(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `YYYY-MM-DD` in UTC: the date stamp of MEMORY.md and identity items.
pub fn iso_date(now: Timestamp) -> String {
    now.strftime("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_and_tolerant_forms_parse_alike() {
        let a =
            parse_line("[2026-04-24T10:05:12Z] worker F-023 TRICK: psql applies in order").unwrap();
        let b = parse_line("[2026-04-24T10:05:12Z] worker F-023: TRICK: psql applies in order")
            .unwrap();
        let c = parse_line("[2026-04-24T10:05:12Z] worker F-023 -: TRICK: psql applies in order")
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert!(a.trick);
        let c =
            parse_line("[2026-04-24T10:18:33.120Z] validator F-023: verified via curl").unwrap();
        assert!(!c.trick);
        assert_eq!(c.text, "verified via curl");
        let d = parse_line("[2026-04-24T10:18:33Z] planner - -: split F-9 in two").unwrap();
        assert_eq!(d.feature, None);
        // The tag is case-sensitive: a lowercase `trick:` is ordinary text.
        let e = parse_line("[2026-04-24T10:18:33Z] worker F-1: trick: x").unwrap();
        assert!(!e.trick);
        assert!(parse_line("[2026-04-24 10:18:33] worker F-1: x").is_none());
    }

    #[test]
    fn near_format_lines_are_read_leniently() {
        let n = parse_near_format("- [2026-04-24 10:08] worker F-034 note: the webhook needs it")
            .unwrap();
        assert_eq!(n.timestamp, "2026-04-24T10:08:00Z");
        assert_eq!((n.role.as_str(), n.feature.as_deref()), ("worker", Some("F-034")));
        assert_eq!(n.text, "note: the webhook needs it");
        let z = parse_near_format("[2026-04-24T12:30:00+02:00] debugger -: TRICK: bisect first")
            .unwrap();
        assert_eq!(z.timestamp, "2026-04-24T10:30:00Z");
        assert!(z.trick && z.feature.is_none() && z.text == "bisect first");
        let w = parse_near_format("[2026-04-24T10:05:12Z] worker: no feature slot").unwrap();
        assert_eq!((w.feature, w.text.as_str()), (None, "no feature slot"));
        assert!(
            parse_near_format("- [2026-04-24] the build broke badly: a colon in prose").is_none()
        );
        assert!(parse_near_format("just text: with a colon").is_none());
    }

    #[test]
    fn writer_refuses_what_the_grammar_cannot_carry() {
        let now: Timestamp = "2026-04-24T10:05:12.9Z".parse().unwrap();
        assert_eq!(
            format_line(now, "worker", Some("F-023"), true, "x").unwrap(),
            "[2026-04-24T10:05:12Z] worker F-023 TRICK: x"
        );
        assert!(format_line(now, "work er", None, false, "x").is_err());
        assert!(format_line(now, "worker", Some("F 1"), false, "x").is_err());
        assert!(format_line(now, "worker", None, false, "a\nb").is_err());
        assert!(format_line(now, "worker", None, false, "  ").is_err());
    }

    #[test]
    fn segmentation_keeps_non_utf8_bytes_and_bounds_memory() {
        let mut bytes = b"[2026-04-24T10:00:00Z] worker F-1 -: caf\xe9 au lait\n\n".to_vec();
        bytes.extend_from_slice(b"[2026-04-24T10:01:00Z] worker F-2 -: next\n  more\n");
        let entries = segment(&bytes);
        assert_eq!(entries.len(), 2);
        assert_eq!(
            &bytes[entries[0].span.clone()],
            b"[2026-04-24T10:00:00Z] worker F-1 -: caf\xe9 au lait\n"
        );
        assert_eq!(entries[1].line().unwrap().text, "next more");
        let giant = vec![b'x'; MAX_ENTRY_TEXT * 3];
        let mut r = EntryReader::new(&giant[..], giant.len() as u64);
        let e = r.next().unwrap().unwrap();
        assert_eq!((e.len as usize, e.head.len()), (giant.len(), MAX_ENTRY_TEXT));
        assert!(r.next().is_none());
    }
}
