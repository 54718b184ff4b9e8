//! `parseObservation` (agent-qa-memory §1.4): the six checks, in the spec's order, first failure
//! wins.
//!
//! Invariant: a text agent-qa accepts is accepted here with the same field values, and a text it
//! rejects is rejected here by the same rule. The quirks are kept on purpose (§11.20): a UTF-8
//! BOM is not stripped (we only add a hint to the message), the closing delimiter is the first
//! line that *starts with* `---` (so `---foo` closes and `foo` begins the body), duplicate keys
//! make the file unreadable.

use crate::observation::Observation;

use super::error::ParseError;
use super::load::load_yaml;
use super::schema;
use super::value::YamlValue;

/// Parses a file's text; `file_stem` is the file name without `.md` (§1.4 rule 5).
///
/// # Example
/// ```
/// use curator_core::codec::parse_observation;
///
/// let text = "---\nid: obs_alpha-beta-gamma-delta-epsilon-zeta\ntitle: Login needs two clicks\n\
///             trust: 0.5\ncreated: 2026-04-10T12:00:00.000Z\nlast_confirmed: 2026-04-10T12:00:00.000Z\n\
///             confirmed_count: 0\ncontradicted_count: 0\nsource_test: t_x\n---\nThe body.\n";
/// let obs = parse_observation(text, "obs_alpha-beta-gamma-delta-epsilon-zeta").unwrap();
/// assert_eq!(obs.content, "The body.");
/// assert_eq!(obs.trust, 0.5);
/// ```
pub fn parse_observation(text: &str, file_stem: &str) -> Result<Observation, ParseError> {
    // Rule 1. The frontmatter always starts on line 2, which YAML messages are relative to.
    let (frontmatter, rest) = split_frontmatter(text)
        .ok_or(ParseError::NoDelimiters { starts_with_bom: text.starts_with('\u{feff}') })?;
    // Rule 2.
    let value = load_yaml(frontmatter, 2)?;
    // Rule 3.
    let content = body_of(rest);
    if content.chars().all(is_js_whitespace) {
        return Err(ParseError::BlankBody);
    }
    if let YamlValue::Map(entries) = &value {
        // Rule 4.
        if entries.iter().any(|(k, _)| k == "content") {
            return Err(ParseError::ContentInFrontmatter);
        }
        // Rule 5: `id !== expectedId`, so only the identical string passes.
        if let Some((_, id)) = entries.iter().find(|(k, _)| k == "id")
            && id.as_str() != Some(file_stem)
        {
            return Err(ParseError::IdMismatch {
                file: file_stem.to_owned(),
                frontmatter: id.js_string(),
            });
        }
    }
    // Rule 6.
    schema::validate(value, content)
}

/// Rule 1 without a regex engine: `^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$`.
///
/// The lazy group ends at the first `\n---` after the opening line; a `\r` just before that
/// `\n` belongs to the delimiter, not the frontmatter. After the closing `---` an optional
/// `\r` then an optional `\n` are consumed, and everything else (even `foo` of `---foo`) is
/// the body. A hand-written scan keeps a 10 MB body linear and allocation-free.
pub(crate) fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let after_open = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let close = after_open.find("\n---")?;
    let fm_end =
        if close > 0 && after_open.as_bytes()[close - 1] == b'\r' { close - 1 } else { close };
    let mut rest = &after_open[close + 4..];
    rest = rest.strip_prefix('\r').unwrap_or(rest);
    rest = rest.strip_prefix('\n').unwrap_or(rest);
    Some((&after_open[..fm_end], rest))
}

/// Rule 3's body: every `\r\n` becomes `\n`, then one trailing `\n` is removed.
fn body_of(rest: &str) -> String {
    let mut body = rest.replace("\r\n", "\n");
    if body.ends_with('\n') {
        body.pop();
    }
    body
}

/// What JavaScript's `String.prototype.trim` and regex `\s` remove: ECMAScript WhiteSpace
/// (tab, VT, FF, ZWNBSP U+FEFF, every Zs space) and LineTerminator (LF, CR, U+2028, U+2029).
/// Unlike `char::is_whitespace` it includes U+FEFF and excludes U+0085.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_follows_the_lazy_regex() {
        assert_eq!(split_frontmatter("---\na: 1\n---\nbody\n"), Some(("a: 1", "body\n")));
        assert_eq!(split_frontmatter("---\r\na: 1\r\n---\r\nbody"), Some(("a: 1", "body")));
        assert_eq!(split_frontmatter("---\na: 1\n---foo\nbody"), Some(("a: 1", "foo\nbody")));
        assert_eq!(split_frontmatter("---\na: 1\n---"), Some(("a: 1", "")));
        assert_eq!(split_frontmatter("---\na: 1\n---\rx"), Some(("a: 1", "x")));
        assert_eq!(split_frontmatter("---\n\n---\nbody"), Some(("", "body")));
        assert_eq!(split_frontmatter("---\r\n\r\n---\nbody"), Some(("", "body")));
        assert_eq!(split_frontmatter("---\na\n---\nb\n---\nc"), Some(("a", "b\n---\nc")));
        assert_eq!(split_frontmatter("---\n---\nbody"), None);
        assert_eq!(split_frontmatter("---\na: 1\n"), None);
        assert_eq!(split_frontmatter("\u{feff}---\na: 1\n---\nbody"), None);
        assert_eq!(split_frontmatter(" ---\na: 1\n---\nbody"), None);
        assert_eq!(split_frontmatter("---\ra: 1\n---\nbody"), None);
        assert_eq!(split_frontmatter(""), None);
    }

    #[test]
    fn body_normalisation() {
        assert_eq!(body_of("a\r\nb\r\n"), "a\nb");
        assert_eq!(body_of("a\n\n"), "a\n");
        assert_eq!(body_of("a\r"), "a\r");
    }

    #[test]
    fn js_whitespace_differs_from_rust_where_javascript_does() {
        assert!(is_js_whitespace('\u{feff}') && !'\u{feff}'.is_whitespace());
        assert!(!is_js_whitespace('\u{85}') && '\u{85}'.is_whitespace());
        assert!(is_js_whitespace('\u{3000}') && !is_js_whitespace('x'));
    }
}
