//! A YAML emitter that produces what `yaml` 2.8.4 `stringify(value, {lineWidth: 0})` produces
//! for plain JS values (agent-qa-memory §1.6).
//!
//! Invariant: for every value this emitter writes, agent-qa's writer would write the same bytes,
//! and reading them back (here or in agent-qa) gives the same value. The rules follow `yaml`'s
//! `stringifyString`, `stringifyPair` and `stringifyCollection`: block maps and sequences
//! indented two spaces per level (sequences inside maps indented too), empty collections as
//! `[]`/`{}`, strings plain unless a reader would see something else, then double-quoted with
//! `yaml`'s escapes, single-quoted when the text has `"` but no `'`, and block literals
//! (`|`, `|-`, `|+`, with an indentation indicator when the text starts with a space) for
//! multi-line values. With `lineWidth: 0` nothing is ever folded.
//!
//! One deliberate difference: `yaml` writes a whitespace-only multi-line string whose first
//! non-empty line starts with a space (`" \n"`) as a block literal that reads back without that
//! space. We quote such strings instead, so they survive a round trip.

use super::number::yaml_number;
use super::resolve::core_tag;
use super::value::YamlValue;

/// `yaml`'s indentation step.
const STEP: &str = "  ";
/// `doubleQuotedMinMultiLineLength`: shorter double-quoted strings keep `\n` escapes.
const MIN_MULTI_LINE_LENGTH: usize = 40;
/// Keys whose rendering is longer than this (UTF-16 units) become explicit `? key` keys.
const MAX_IMPLICIT_KEY_LENGTH: usize = 1024;

/// A whole document whose root is a map, with the trailing newline `yaml` always adds.
pub(crate) fn emit_document(entries: &[(String, YamlValue)]) -> String {
    let mut out = emit_map(entries, "");
    out.push('\n');
    out
}

/// A block map whose pairs start at `indent` (the first pair without it: the caller places it).
fn emit_map(entries: &[(String, YamlValue)], indent: &str) -> String {
    if entries.is_empty() {
        return "{}".to_owned();
    }
    let pair_indent = format!("{indent}{STEP}");
    let lines: Vec<String> =
        entries.iter().map(|(k, v)| emit_pair(k, v, indent, &pair_indent)).collect();
    lines.join(&format!("\n{indent}"))
}

fn emit_pair(key: &str, value: &YamlValue, indent: &str, pair_indent: &str) -> String {
    let key_text = emit_string(key, pair_indent, true);
    let explicit = utf16_len(&key_text) > MAX_IMPLICIT_KEY_LENGTH;
    let mut out =
        if explicit { format!("? {key_text}\n{indent}:") } else { format!("{key_text}:") };
    match value {
        // After an explicit `? key`, `yaml` starts even a block collection on the `:` line.
        _ if explicit => {
            out.push(' ');
            out.push_str(&emit_node(value, pair_indent));
        }
        YamlValue::Seq(items) if !items.is_empty() => {
            out.push('\n');
            out.push_str(pair_indent);
            out.push_str(&emit_seq(items, pair_indent));
        }
        YamlValue::Map(entries) if !entries.is_empty() => {
            out.push('\n');
            out.push_str(pair_indent);
            out.push_str(&emit_map(entries, pair_indent));
        }
        other => {
            out.push(' ');
            out.push_str(&emit_node(other, pair_indent));
        }
    }
    out
}

/// A block sequence whose items start at `indent`; items are indented one step further.
fn emit_seq(items: &[YamlValue], indent: &str) -> String {
    let item_indent = format!("{indent}{STEP}");
    let lines: Vec<String> =
        items.iter().map(|item| format!("- {}", emit_node(item, &item_indent))).collect();
    lines.join(&format!("\n{indent}"))
}

/// Any value in block context; `indent` is the indentation of its continuation lines.
fn emit_node(value: &YamlValue, indent: &str) -> String {
    match value {
        YamlValue::Null => "null".to_owned(),
        YamlValue::Bool(b) => b.to_string(),
        YamlValue::Int(i) => i.to_string(),
        YamlValue::Float(f) => yaml_number(*f),
        YamlValue::String(s) => emit_string(s, indent, false),
        YamlValue::Seq(items) if items.is_empty() => "[]".to_owned(),
        YamlValue::Map(entries) if entries.is_empty() => "{}".to_owned(),
        YamlValue::Seq(items) => emit_seq(items, indent),
        YamlValue::Map(entries) => emit_map(entries, indent),
    }
}

/// A string scalar (`stringifyString`); `indent` is the context indentation, `implicit_key`
/// says it is a map key.
pub(crate) fn emit_string(value: &str, indent: &str, implicit_key: bool) -> String {
    // Control characters (but tab and newline) can only be written escaped.
    if value.chars().any(|c| matches!(c, '\0'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'))
    {
        return double_quoted(value, indent, implicit_key);
    }
    plain_or_other(value, indent, implicit_key)
}

fn plain_or_other(value: &str, indent: &str, implicit_key: bool) -> String {
    let multi_line = value.contains('\n');
    if implicit_key && multi_line {
        return quoted(value, indent, implicit_key);
    }
    if needs_quotes(value) {
        return if implicit_key || !multi_line {
            quoted(value, indent, implicit_key)
        } else {
            block_literal(value, indent)
        };
    }
    if multi_line {
        return block_literal(value, indent);
    }
    // A top-level key starting a line with `---`, `...` or `%` would end the document.
    if implicit_key && indent == STEP && contains_document_marker(value) {
        return quoted(value, indent, implicit_key);
    }
    if core_tag(value).is_some() {
        // `true`, `null`, `0.5`, `0x1F`, `.inf`, an empty string: plain would not read back as
        // a string.
        return quoted(value, indent, implicit_key);
    }
    value.to_owned()
}

/// `/^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/`
fn needs_quotes(value: &str) -> bool {
    let b = value.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else { return false };
    b"\n\t ,[]{}#&*!|>'\"%@`".contains(&first)
        || value == "?"
        || value == "-"
        || (matches!(first, b'?' | b'-') && matches!(b.get(1), Some(b' ' | b'\t')))
        || b.windows(2).any(|w| {
            matches!(
                w,
                [b'\n' | b':', b' ' | b'\t'] | [b' ' | b'\t', b'\n'] | [b'\n' | b'\t' | b' ', b'#']
            )
        })
        || matches!(last, b'\n' | b'\t' | b' ' | b':')
}

/// `/^(%|---|\.\.\.)/m`: a line (after LF, CR, U+2028 or U+2029) starting like a directive or a
/// document marker.
fn contains_document_marker(value: &str) -> bool {
    let marker = |s: &str| s.starts_with('%') || s.starts_with("---") || s.starts_with("...");
    marker(value)
        || value
            .char_indices()
            .filter(|(_, c)| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
            .any(|(i, c)| marker(&value[i + c.len_utf8()..]))
}

/// `quotedString`: single quotes when the text has `"` and no `'`, else double quotes.
fn quoted(value: &str, indent: &str, implicit_key: bool) -> String {
    if value.contains('"') && !value.contains('\'') {
        single_quoted(value, indent, implicit_key)
    } else {
        double_quoted(value, indent, implicit_key)
    }
}

fn single_quoted(value: &str, indent: &str, implicit_key: bool) -> String {
    let blank_around_newline = value
        .as_bytes()
        .windows(2)
        .any(|w| matches!(w, [b' ' | b'\t', b'\n'] | [b'\n', b' ' | b'\t']));
    if (implicit_key && value.contains('\n')) || blank_around_newline {
        return double_quoted(value, indent, implicit_key);
    }
    let indent = effective_indent(value, indent);
    // A run of n newlines is written as n+1 line breaks (folding eats one), then the indent.
    let mut out = String::from("'");
    let mut newlines = 0;
    for c in value.chars() {
        if c == '\n' {
            newlines += 1;
            out.push('\n');
            continue;
        }
        if newlines > 0 {
            out.push('\n');
            out.push_str(indent);
            newlines = 0;
        }
        if c == '\'' {
            out.push_str("''");
        } else {
            out.push(c);
        }
    }
    if newlines > 0 {
        out.push('\n');
        out.push_str(indent);
    }
    out.push('\'');
    out
}

fn effective_indent<'a>(value: &str, indent: &'a str) -> &'a str {
    if indent.is_empty() && contains_document_marker(value) { STEP } else { indent }
}

/// `doubleQuotedString`: `JSON.stringify`, then YAML's shorter escapes, then (for strings of
/// 40+ characters) real line breaks for `\n`.
fn double_quoted(value: &str, indent: &str, implicit_key: bool) -> String {
    let json = json_stringify(value);
    let indent = effective_indent(value, indent);
    let long = utf16_len(&json) >= MIN_MULTI_LINE_LENGTH;
    // Every byte examined below is ASCII, so slicing at those positions keeps UTF-8 intact.
    let j = json.as_bytes();
    let at = |i: usize| j.get(i).copied();
    let mut out = String::with_capacity(json.len());
    let mut start = 0;
    let mut i = 0;
    while i < j.len() {
        let mut ch = j[i];
        if ch == b' ' && at(i + 1) == Some(b'\\') && at(i + 2) == Some(b'n') {
            // A space before a line break must be escaped or a reader would drop it.
            out.push_str(&json[start..i]);
            out.push_str("\\ ");
            i += 1;
            start = i;
            ch = b'\\';
        }
        if ch == b'\\' {
            match at(i + 1) {
                Some(b'u') => {
                    out.push_str(&json[start..i]);
                    let code = &json[i + 2..i + 6];
                    match code {
                        "0000" => out.push_str("\\0"),
                        "0007" => out.push_str("\\a"),
                        "000b" => out.push_str("\\v"),
                        "001b" => out.push_str("\\e"),
                        _ => {
                            out.push_str("\\x");
                            out.push_str(&code[2..]);
                        }
                    }
                    i += 5;
                    start = i + 1;
                }
                Some(b'n') if !(implicit_key || at(i + 2) == Some(b'"') || !long) => {
                    out.push_str(&json[start..i]);
                    out.push_str("\n\n");
                    while at(i + 2) == Some(b'\\')
                        && at(i + 3) == Some(b'n')
                        && at(i + 4) != Some(b'"')
                    {
                        out.push('\n');
                        i += 2;
                    }
                    out.push_str(indent);
                    if at(i + 2) == Some(b' ') {
                        // A space opening a continuation line must be escaped too.
                        out.push('\\');
                    }
                    i += 1;
                    start = i + 1;
                }
                _ => i += 1,
            }
        }
        i += 1;
    }
    out.push_str(&json[start..]);
    out
}

/// JavaScript's `JSON.stringify` of a string: `"`, `\\` and C0 controls escaped (`\b \f \n \r
/// \t`, else `\u00xx`), everything else raw.
fn json_stringify(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `blockString` in literal mode (with `lineWidth: 0` a literal is always chosen).
fn block_literal(value: &str, indent: &str) -> String {
    if ends_with_newline_then_blanks(value) || is_lossy_as_block(value) {
        return quoted(value, indent, false);
    }
    // Chomping from the trailing run of blanks and newlines.
    let end_start = value.trim_end_matches(['\n', '\t', ' ']).len();
    let (body, end) = value.split_at(end_start);
    let chomp = match end.find('\n') {
        None => "-",
        Some(p) if body.is_empty() || p != end.len() - 1 => "+",
        Some(_) => "",
    };
    let end = indent_inner_newline_runs(end.strip_suffix('\n').unwrap_or(end), indent);

    // Leading newlines go before the first line; leading spaces need an indentation indicator.
    let lead_len = body.len() - body.trim_start_matches(['\n', ' ']).len();
    let lead = &body[..lead_len];
    let starts_with_space = lead.contains(' ');
    let (start, body) = body.split_at(lead.rfind('\n').map_or(0, |p| p + 1));
    let indicator = if starts_with_space { if indent.is_empty() { "1" } else { "2" } } else { "" };
    format!(
        "|{indicator}{chomp}\n{indent}{}{}{end}",
        indent_newline_runs(start, indent),
        indent_newline_runs(body, indent)
    )
}

/// `/\n[\t ]+$/`: a block cannot end in blanks after its last line break.
fn ends_with_newline_then_blanks(value: &str) -> bool {
    let trimmed = value.trim_end_matches(['\t', ' ']);
    trimmed.len() < value.len() && trimmed.ends_with('\n')
}

/// Whitespace-only text whose first non-empty line starts with a space: as a literal its first
/// line would be read as indentation (see the module doc).
fn is_lossy_as_block(value: &str) -> bool {
    value.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n'))
        && value.split('\n').find(|l| !l.is_empty()).is_some_and(|l| l.starts_with(' '))
}

/// `s.replace(/\n+/g, "$&" + indent)`.
fn indent_newline_runs(s: &str, indent: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '\n' && chars.peek() != Some(&'\n') {
            out.push_str(indent);
        }
    }
    out
}

/// `yaml`'s `blockEndNewlines`: like [`indent_newline_runs`], but a run at the very end stays
/// bare.
fn indent_inner_newline_runs(s: &str, indent: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '\n' && chars.peek().is_some_and(|n| *n != '\n') {
            out.push_str(indent);
        }
    }
    out
}

/// JavaScript's `String.length`.
fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title(s: &str) -> String {
        emit_document(&[("title".to_owned(), YamlValue::String(s.to_owned()))])
    }

    #[test]
    fn quoting_basics() {
        assert_eq!(title("plain text"), "title: plain text\n");
        assert_eq!(title("true"), "title: \"true\"\n");
        assert_eq!(title(""), "title: \"\"\n");
        assert_eq!(title("say \"hi\": now"), "title: 'say \"hi\": now'\n");
        assert_eq!(title("it's: \"x\""), "title: \"it's: \\\"x\\\"\"\n");
        assert_eq!(title("a\u{1}b"), "title: \"a\\x01b\"\n");
        assert_eq!(title("a\u{0}\u{7}\u{b}\u{1b}\u{8}\u{c}"), "title: \"a\\0\\a\\v\\e\\b\\f\"\n");
    }

    #[test]
    fn block_literals() {
        assert_eq!(title("a\nb"), "title: |-\n  a\n  b\n");
        assert_eq!(title("a\n"), "title: |\n  a\n");
        assert_eq!(title("a\n\n"), "title: |+\n  a\n\n");
        assert_eq!(title(" a\nb"), "title: |2-\n   a\n  b\n");
        assert_eq!(title("\n\nabc\ndef"), "title: |-\n  \n\n  abc\n  def\n");
        assert_eq!(title("x\n  "), "title: \"x\\n  \"\n");
        // yaml would write `|+` and lose the space; the escaped space keeps it.
        assert_eq!(title(" \n"), "title: \"\\ \\n\"\n");
    }

    #[test]
    fn collections() {
        let v = vec![
            ("e".to_owned(), YamlValue::Seq(vec![])),
            ("m".to_owned(), YamlValue::Map(vec![])),
            (
                "s".to_owned(),
                YamlValue::Seq(vec![
                    YamlValue::Int(1),
                    YamlValue::Seq(vec![YamlValue::Int(2), YamlValue::Int(3)]),
                    YamlValue::Map(vec![("k".to_owned(), YamlValue::String("v".into()))]),
                ]),
            ),
            (
                "n".to_owned(),
                YamlValue::Map(vec![(
                    "m".to_owned(),
                    YamlValue::Map(vec![("n".to_owned(), YamlValue::Int(1))]),
                )]),
            ),
            ("z".to_owned(), YamlValue::Null),
            ("---x".to_owned(), YamlValue::Float(-0.0)),
        ];
        assert_eq!(
            emit_document(&v),
            "e: []\nm: {}\ns:\n  - 1\n  - - 2\n    - 3\n  - k: v\nn:\n  m:\n    n: 1\nz: null\n\"---x\": -0\n"
        );
    }

    #[test]
    fn long_keys_become_explicit() {
        let key = "x".repeat(1030);
        let doc = emit_document(&[(key.clone(), YamlValue::Int(7))]);
        assert_eq!(doc, format!("? {key}\n: 7\n"));
        let seq = YamlValue::Seq(vec![YamlValue::Int(1), YamlValue::Int(2)]);
        let doc = emit_document(&[(key.clone(), seq)]);
        assert_eq!(doc, format!("? {key}\n: - 1\n  - 2\n"));
    }
}
