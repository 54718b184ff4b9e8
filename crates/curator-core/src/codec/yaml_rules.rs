//! The rules `yaml` 2 (agent-qa's parser) enforces that the event parser underneath the codec
//! does not, and the two places where `yaml` reads text that parser refuses (issue 13 item 4;
//! agent-qa-memory §1.4 rule 2).
//!
//! Each rule here was found by running `yaml` 2.8.4 itself over a table of edge cases
//! (`tests/fixtures/codec/yaml-2.8.4-edge-vectors.*`); a refusal carries `yaml`'s own message
//! and error code, so a lint report names the same rule agent-qa's parser would:
//!
//! - `BLOCK_AS_IMPLICIT_KEY`: a block mapping may not start on the line of the implicit key it
//!   is the value of (`: : : invalid{{{`, `: : a`).
//! - `TAB_AS_INDENT`: a tab in the indentation before a node, or after a `-`/`?`/`:` indicator
//!   before a block collection or an implicit key.
//! - `BAD_INDENT`: a flow collection inside a block collection continues on a line indented no
//!   deeper than the block entry that holds it (only its closing bracket may sit one column
//!   back).
//! - `MULTIPLE_DOCS`: anything but comments after a `...` document end marker.
//!
//! And the readings of text the event parser refuses: a `\uD800`-style escape of a lone
//! UTF-16 surrogate in a double-quoted scalar (a JS string holds it; a Rust string cannot, so
//! it reads as U+FFFD), and `key: [flow]: value` (or the `: value` on the next line, indented),
//! which `yaml` reads as `key: [flow]` followed by an entry with an empty key.
//!
//! Every check is linear in the text it looks at, and each line is looked at a bounded number
//! of times, so the whole parse stays linear in the frontmatter's size.

use serde_saphyr::granit_parser::{ErrorKind, ScanError};

/// A rule the text breaks: `yaml`'s code and message (no code for a budget of ours), and where
/// (a byte offset in the parsed text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Broken {
    pub(crate) code: Option<&'static str>,
    pub(crate) message: String,
    pub(crate) at: usize,
}

impl Broken {
    /// A rule of `yaml`, named by its error code.
    pub(crate) fn new(code: &'static str, message: impl Into<String>, at: usize) -> Self {
        Broken { code: Some(code), message: message.into(), at }
    }

    /// A limit of curator's own (alias budgets), which `yaml` has no code for.
    pub(crate) fn ours(message: impl Into<String>, at: usize) -> Self {
        Broken { code: None, message: message.into(), at }
    }
}

/// The start of the line holding byte `at`.
pub(crate) fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// 1-based line and column (in characters) of byte `at`.
pub(crate) fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let start = line_start(text, at);
    let line = text[..start].bytes().filter(|b| *b == b'\n').count() + 1;
    (line, text[start..at].chars().count() + 1)
}

/// What kind of node starts at a position, for the tab rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeStart {
    /// A block mapping or block sequence.
    BlockCollection,
    /// An implicit key of a block mapping.
    ImplicitKey,
    /// Anything else (a scalar, an alias, a flow collection).
    Other,
}

/// `TAB_AS_INDENT` for a node starting at byte `at`, when it is the first content of its line.
/// The part of the line before it is indentation and block indicators (`- `, `? `, `: `); a tab
/// in the indentation proper is refused before any node, a tab after an indicator only before
/// a block collection or an implicit key (`-\ta` is a sequence of "a", `-\ta: 1` an error).
pub(crate) fn tab_as_indent(text: &str, at: usize, node: NodeStart) -> Option<Broken> {
    let start = line_start(text, at);
    let prefix = &text[start..at];
    if !prefix.contains('\t') {
        return None;
    }
    let mut bytes = prefix.bytes().peekable();
    let mut in_indentation = true;
    let mut tab_after_indicator = false;
    while let Some(b) = bytes.next() {
        match b {
            b' ' => {}
            b'\t' if in_indentation => {
                return Some(Broken::new(
                    "TAB_AS_INDENT",
                    "Tabs are not allowed as indentation",
                    start,
                ));
            }
            b'\t' => tab_after_indicator = true,
            b'-' | b'?' | b':' if matches!(bytes.peek(), Some(b' ' | b'\t') | None) => {
                in_indentation = false;
            }
            // Something else precedes the node on its line: it is not indentation.
            _ => return None,
        }
    }
    (tab_after_indicator && node != NodeStart::Other)
        .then(|| Broken::new("TAB_AS_INDENT", "Tabs are not allowed as indentation", start))
}

/// Whether the node at `at` is the first content of its line (only indentation and block
/// indicators before it).
pub(crate) fn starts_line(text: &str, at: usize) -> bool {
    let prefix = &text[line_start(text, at)..at];
    let mut bytes = prefix.bytes().peekable();
    while let Some(b) = bytes.next() {
        match b {
            b' ' | b'\t' => {}
            b'-' | b'?' | b':' if matches!(bytes.peek(), Some(b' ' | b'\t') | None) => {}
            _ => return false,
        }
    }
    true
}

/// The least indentation (in spaces) the continuation lines of a flow collection starting at
/// byte `at` need, given the column of the block entry holding it (the implicit key of a
/// mapping value, the `-` of a sequence item). A flow collection that is the value of an
/// explicit key (`? k` then `: [`) is held by the `:` of its own line.
pub(crate) fn flow_indent_needed(text: &str, at: usize, holder_col: usize) -> usize {
    let start = line_start(text, at);
    let line = &text[start..at];
    let indent = line.len() - line.trim_start_matches(' ').len();
    if line[indent..].starts_with(':') {
        return indent + 1;
    }
    holder_col + 1
}

/// `BAD_INDENT` for the outermost flow collection spanning bytes `start..end` of `text`: every
/// later line holding content must be indented by at least `need` spaces; a comment line is
/// exempt, and so is a line starting with the bracket that closes the outermost collection one
/// column back. `nested_breaks` lists, for each nested flow collection that itself spans lines,
/// its first and last line start, so such a bracket is known not to close the outermost one.
pub(crate) fn flow_indentation(
    text: &str,
    start: usize,
    end: usize,
    need: usize,
    nested: &[(usize, usize)],
    is_map: bool,
) -> Option<Broken> {
    let mut line = match text[start..end].find('\n') {
        Some(i) => start + i + 1,
        None => return None,
    };
    while line < end {
        let rest = &text[line..];
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        let content = rest.trim_start_matches([' ', '\t']);
        let first = content.chars().next();
        let blank = matches!(first, None | Some('\n' | '\r' | '#'));
        if !blank && spaces < need {
            let closes_outermost = spaces + 1 == need
                && matches!(first, Some(']' | '}'))
                && !nested.iter().any(|&(s, e)| s < line && line <= e);
            if !closes_outermost {
                let what = if is_map { "Flow map" } else { "Flow sequence" };
                let bracket = if is_map { '}' } else { ']' };
                return Some(Broken::new(
                    "BAD_INDENT",
                    format!(
                        "{what} in block collection must be sufficiently indented and end with a {bracket}"
                    ),
                    line,
                ));
            }
        }
        line = match text[line..end].find('\n') {
            Some(i) => line + i + 1,
            None => break,
        };
    }
    None
}

/// `MULTIPLE_DOCS` when anything but blank lines and comments follows a document end at byte
/// `after` (`yaml` starts a second document there, even for a second `...`).
pub(crate) fn content_after_document_end(text: &str, after: usize) -> Option<Broken> {
    let mut at = after;
    for line in text[after..].split_inclusive('\n') {
        let content = line.trim_start_matches([' ', '\t']);
        if !content.trim_end().is_empty() && !content.starts_with('#') {
            return Some(Broken::new(
                "MULTIPLE_DOCS",
                "Source contains multiple documents; please use YAML.parseAllDocuments()",
                at + (line.len() - content.len()),
            ));
        }
        at += line.len();
    }
    None
}

/// A change made to the text so the event parser reads it as `yaml` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Repair {
    /// Where, in the repaired text.
    pub(crate) at: usize,
    /// Line breaks inserted there (messages after it are moved back by as many lines).
    pub(crate) new_lines: usize,
}

/// The text the event parser should read instead, when `err` is one of the two places where
/// `yaml` accepts what it refuses; `None` when the error stands.
pub(crate) fn repair(text: &str, err: &ScanError) -> Option<(String, Repair)> {
    let at = err.marker().byte_offset()?;
    match err.kind() {
        ErrorKind::MissingLowSurrogate
        | ErrorKind::InvalidLowSurrogate
        | ErrorKind::UnpairedLowSurrogate => lone_surrogates(text, at),
        ErrorKind::MappingValueNotAllowed => value_after_flow_value(text, at),
        ErrorKind::ExpectedBlockMappingKey => indented_value_after_flow_value(text, at),
        _ => None,
    }
}

/// The first leading-document-end marker case the event parser does not report: a text that
/// starts (after blank and comment lines) with `...` ends an empty document there, and
/// `MULTIPLE_DOCS` applies to whatever follows.
pub(crate) fn leading_document_end(text: &str) -> Option<Broken> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            at += line.len();
            continue;
        }
        let is_end = content.starts_with("...")
            && matches!(content.as_bytes().get(3), None | Some(b' ' | b'\t'));
        return if is_end { content_after_document_end(text, at + line.len()) } else { None };
    }
    None
}

/// `"\ud800"`: in the double-quoted scalar starting at byte `at`, every escape of a lone
/// surrogate becomes `\uFFFD`, the character a UTF-8 string holds in its place (what
/// `String.prototype.toWellFormed` gives); escaped pairs stay.
fn lone_surrogates(text: &str, at: usize) -> Option<(String, Repair)> {
    let body = text.get(at..)?.strip_prefix('"')?;
    let unit = |i: usize| -> Option<u16> {
        let hex = body.get(i..i + 6)?.strip_prefix("\\u")?;
        u16::from_str_radix(hex, 16).ok()
    };
    let bytes = body.as_bytes();
    let mut lone = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => break,
            b'\\' => match unit(i) {
                Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
                Some(0xD800..=0xDFFF) => {
                    lone.push(i);
                    i += 6;
                }
                _ => i += 2,
            },
            _ => i += 1,
        }
    }
    if lone.is_empty() {
        return None;
    }
    let mut fixed = String::with_capacity(text.len());
    let mut copied = 0;
    for i in lone {
        let escape = at + 1 + i;
        fixed.push_str(&text[copied..escape]);
        fixed.push_str("\\uFFFD");
        copied = escape + 6;
    }
    fixed.push_str(&text[copied..]);
    Some((fixed, Repair { at, new_lines: 0 }))
}

/// The column of the key on the line `line`, after its indentation and `- ` indicators, and
/// whether that line is `key: [flow]` or `key: {flow}` with a plain key.
fn key_of_flow_value_line(line: &str) -> Option<usize> {
    let line = line.trim_end_matches([' ', '\t']);
    let bytes = line.as_bytes();
    let mut key_col = 0;
    while key_col < bytes.len() {
        match bytes[key_col] {
            b' ' => key_col += 1,
            b'-' if matches!(bytes.get(key_col + 1), Some(b' ')) => key_col += 2,
            _ => break,
        }
    }
    let (key, value) = line[key_col..].split_once(": ")?;
    let value = value.trim_start();
    let plain_key = !key.is_empty() && !key.starts_with(['[', '{', '"', '\'', '?', '&', '*', '!']);
    (plain_key && value.starts_with(['[', '{']) && line.ends_with([']', '}'])).then_some(key_col)
}

/// `key: [flow]` then, on the next line, `: value` indented deeper than the key: `yaml` reads
/// the `:` as an entry of the key's mapping with an empty key, so it moves to the key's column.
fn indented_value_after_flow_value(text: &str, at: usize) -> Option<(String, Repair)> {
    let start = line_start(text, at);
    if text.as_bytes().get(at) != Some(&b':') || !text[start..at].bytes().all(|b| b == b' ') {
        return None;
    }
    let previous = line_start(text, start.checked_sub(1)?);
    let key_col = key_of_flow_value_line(&text[previous..start - 1])?;
    if at - start <= key_col {
        return None;
    }
    let mut fixed = String::with_capacity(text.len());
    fixed.push_str(&text[..start]);
    fixed.extend(std::iter::repeat_n(' ', key_col));
    fixed.push_str(&text[at..]);
    Some((fixed, Repair { at: start, new_lines: 0 }))
}

/// `key: [flow]: value` (the `:` at byte `at`): `yaml` ends the entry after the flow
/// collection and reads `: value` as a new entry of the same mapping with an empty key, so the
/// `:` moves to its own line at the key's column.
fn value_after_flow_value(text: &str, at: usize) -> Option<(String, Repair)> {
    if text.as_bytes().get(at) != Some(&b':') {
        return None;
    }
    let start = line_start(text, at);
    let key_col = key_of_flow_value_line(&text[start..at])?;
    let mut fixed = String::with_capacity(text.len() + key_col + 1);
    fixed.push_str(&text[..at]);
    fixed.push('\n');
    fixed.extend(std::iter::repeat_n(' ', key_col));
    fixed.push_str(&text[at..]);
    Some((fixed, Repair { at, new_lines: 1 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_in_indentation_are_refused_and_after_indicators_only_before_collections() {
        let at = |t: &str, needle: &str| t.find(needle).unwrap();
        let t = "a:\n  \tb: 1";
        assert!(tab_as_indent(t, at(t, "b"), NodeStart::ImplicitKey).is_some());
        let t = "-\ta";
        assert!(tab_as_indent(t, 2, NodeStart::Other).is_none());
        assert!(tab_as_indent(t, 2, NodeStart::BlockCollection).is_some());
        let t = "a:\tb";
        assert!(tab_as_indent(t, 3, NodeStart::Other).is_none(), "not the first content");
    }

    #[test]
    fn flow_continuations_need_the_holders_indentation() {
        let t = "a: [b,\nc]";
        assert_eq!(
            flow_indentation(t, 3, t.len(), 1, &[], false).unwrap().code,
            Some("BAD_INDENT")
        );
        let t = "a: [b,\n c]";
        assert_eq!(flow_indentation(t, 3, t.len(), 1, &[], false), None);
        let t = "a: [b,\n]";
        assert_eq!(flow_indentation(t, 3, t.len(), 1, &[], false), None, "closing bracket");
        let t = "a: [b,\n# c\n d]";
        assert_eq!(flow_indentation(t, 3, t.len(), 1, &[], false), None, "comment line");
    }

    #[test]
    fn only_comments_may_follow_a_document_end() {
        assert_eq!(content_after_document_end("\n# c\n\n", 0), None);
        assert_eq!(content_after_document_end("\n...", 0).unwrap().at, 1);
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_col("ab\ncé:", 6), (2, 3));
        assert_eq!(line_col("x", 0), (1, 1));
    }
}
