//! Frontmatter text to a JS-like value, as `yaml` 2.8.4's `parse` sees it (agent-qa-memory §1.4
//! rule 2).
//!
//! The parser is serde-saphyr's own event parser (`granit-parser`), read event by event so that
//! each scalar's style is known: only a *plain* scalar is resolved by the core schema
//! ([`super::resolve`]); a quoted or block scalar is always a string. A derived serde visitor
//! cannot tell `"0.5"` from `0.5`, and serde-saphyr's type inference follows YAML 1.1 in places.
//!
//! Errors, each a `YAML parse error` for the caller: syntax errors, duplicate keys (compared as
//! `yaml` does: scalar keys by `===` of their values), more than one document, an alias to an
//! unknown or unfinished anchor. Aliases are a denial-of-service risk (billion laughs), so the
//! first alias makes the whole text go through serde-saphyr's budgets, which refuse alias bombs
//! without expanding them; only text that passes is expanded here, under a node cap as well.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Options, Parser, ScalarStyle, ScanError, Tag};

use super::resolve::{CoreTag, resolve_as, resolve_plain};
use super::value::YamlValue;

/// Deepest collection nesting accepted; frontmatter is flat, this only bounds recursion.
const MAX_DEPTH: usize = 64;
/// Most nodes an alias expansion may add; real frontmatter has none.
const MAX_ALIAS_NODES: usize = 10_000;

/// Parses frontmatter YAML; an empty or comment-only text is `Null`. `first_line` is the file
/// line the frontmatter starts on, so messages point into the file.
pub(crate) fn load_yaml(text: &str, first_line: usize) -> Result<YamlValue, String> {
    let mut options = Options::default();
    options.flow_nesting_limit = MAX_DEPTH;
    options.block_nesting_limit = MAX_DEPTH;
    options.set_emit_comments(false);
    let stand_ins = StandIns::for_text(text);
    let replaced;
    let text = if stand_ins.is_empty() {
        text
    } else {
        replaced = stand_ins.apply(text);
        replaced.as_str()
    };
    let mut builder = Builder { text, budget_checked: false, ..Builder::default() };
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, _span) = event.map_err(|e| scan_message(&e, first_line))?;
        builder.push(event)?;
    }
    let mut value = builder.root.unwrap_or(YamlValue::Null);
    if !stand_ins.is_empty() {
        stand_ins.restore(&mut value);
    }
    Ok(value)
}

/// Characters granit refuses anywhere in a document but `yaml` reads as content: C0 controls
/// other than tab and line breaks, DEL and the C1 block, U+FEFF after the start, U+FFFE and
/// U+FFFF. `yaml` writes the C1 ones raw inside double quotes (YAML 1.2 allows them there), so
/// agent-qa files contain them. They are never YAML syntax, so the text is parsed with each one
/// replaced by a private-use character absent from it, and the values get them back.
fn is_refused_content(c: char) -> bool {
    matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
        || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

/// The refused characters of one text and their private-use stand-ins.
#[derive(Debug, Default)]
struct StandIns(Vec<(char, char)>);

impl StandIns {
    fn for_text(text: &str) -> Self {
        // A leading U+FEFF is a byte order mark to both parsers and stays.
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut refused: Vec<char> = body.chars().filter(|c| is_refused_content(*c)).collect();
        if refused.is_empty() {
            return Self::default();
        }
        refused.sort_unstable();
        refused.dedup();
        let mut free = ('\u{f0000}'..='\u{10fffd}').filter(|c| !text.contains(*c));
        // With no stand-in left (a text holding ~130,000 private-use characters) the
        // character stays and granit reports it: an error, never a wrong value.
        Self(refused.into_iter().filter_map(|c| free.next().map(|s| (c, s))).collect())
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn apply(&self, text: &str) -> String {
        let (head, body) = text.split_at(if text.starts_with('\u{feff}') { 3 } else { 0 });
        let mut out = String::with_capacity(text.len());
        out.push_str(head);
        for c in body.chars() {
            out.push(self.0.iter().find(|(from, _)| *from == c).map_or(c, |(_, to)| *to));
        }
        out
    }

    fn restore_str(&self, s: &mut String) {
        if s.chars().any(|c| self.0.iter().any(|(_, to)| *to == c)) {
            *s = s
                .chars()
                .map(|c| self.0.iter().find(|(_, to)| *to == c).map_or(c, |(from, _)| *from))
                .collect();
        }
    }

    fn restore(&self, value: &mut YamlValue) {
        match value {
            YamlValue::String(s) => self.restore_str(s),
            YamlValue::Seq(items) => items.iter_mut().for_each(|v| self.restore(v)),
            YamlValue::Map(entries) => {
                for (k, v) in entries {
                    self.restore_str(k);
                    self.restore(v);
                }
            }
            _ => {}
        }
    }
}

fn scan_message(e: &ScanError, first_line: usize) -> String {
    let m = e.marker();
    format!("{} at line {}, column {}", e.info(), m.line() + first_line - 1, m.col() + 1)
}

/// A collection being built, with the anchor to record it under when it ends.
#[derive(Debug)]
enum Frame {
    Seq { items: Vec<YamlValue>, anchor: usize },
    Map { entries: Vec<(YamlValue, YamlValue)>, key: Option<YamlValue>, anchor: usize },
}

#[derive(Debug, Default)]
struct Builder<'t> {
    text: &'t str,
    stack: Vec<Frame>,
    anchors: HashMap<usize, YamlValue>,
    root: Option<YamlValue>,
    documents: usize,
    alias_nodes: usize,
    budget_checked: bool,
}

impl Builder<'_> {
    fn push(&mut self, event: Event<'_>) -> Result<(), String> {
        match event {
            Event::DocumentStart(..) => {
                self.documents += 1;
                if self.documents > 1 {
                    // yaml's own wording.
                    return Err("Source contains multiple documents; please use \
                                YAML.parseAllDocuments()"
                        .to_owned());
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let value = scalar_value(text, style, tag.as_deref());
                self.finish_node(value, anchor)?;
            }
            Event::SequenceStart(_, anchor, _) => {
                self.stack.push(Frame::Seq { items: Vec::new(), anchor });
            }
            Event::MappingStart(_, anchor, _) => {
                self.stack.push(Frame::Map { entries: Vec::new(), key: None, anchor });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, anchor) = match self.stack.pop() {
                    Some(Frame::Seq { items, anchor }) => (YamlValue::Seq(items), anchor),
                    Some(Frame::Map { entries, anchor, .. }) => (js_object(entries), anchor),
                    None => return Err("unbalanced collection end".to_owned()),
                };
                self.finish_node(value, anchor)?;
            }
            Event::Alias(id) => {
                self.check_alias_budget()?;
                let value =
                    self.anchors.get(&id).cloned().ok_or_else(|| {
                        "alias refers to an unknown or unfinished anchor".to_owned()
                    })?;
                self.alias_nodes += count_nodes(&value);
                if self.alias_nodes > MAX_ALIAS_NODES {
                    return Err(format!(
                        "aliases expand to more than {MAX_ALIAS_NODES} nodes (resource exhaustion)"
                    ));
                }
                self.finish_node(value, 0)?;
            }
            Event::UnresolvedAlias(name) => {
                return Err(format!("unresolved alias *{name}"));
            }
            _ => {}
        }
        Ok(())
    }

    /// Runs the whole text through serde-saphyr once, before the first alias is expanded, so
    /// its alias-replay and size budgets refuse a bomb that this builder would otherwise copy.
    fn check_alias_budget(&mut self) -> Result<(), String> {
        if self.budget_checked {
            return Ok(());
        }
        self.budget_checked = true;
        let options = serde_saphyr::options! {
            budget: serde_saphyr::budget! {
                max_depth: MAX_DEPTH,
                max_documents: 1,
            },
            alias_limits: serde_saphyr::alias_limits! {
                max_total_replayed_events: MAX_ALIAS_NODES,
                max_replay_stack_depth: 16,
            },
            duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::PassThrough,
            merge_keys: serde_saphyr::options::MergeKeyPolicy::AsOrdinary,
            non_finite_float_policy: serde_saphyr::options::NonFiniteFloatPolicy::PassThrough,
            with_snippet: false,
        };
        serde_saphyr::from_str_with_options::<Option<serde::de::IgnoredAny>>(self.text, options)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn finish_node(&mut self, value: YamlValue, anchor: usize) -> Result<(), String> {
        if anchor != 0 {
            self.anchors.insert(anchor, value.clone());
        }
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => {
                    if is_scalar(&value) && entries.iter().any(|(k, _)| is_scalar(k) && *k == value)
                    {
                        // yaml's wording; the key is named so the file can be fixed.
                        return Err(format!(
                            "Map keys must be unique (duplicate key {})",
                            value.describe()
                        ));
                    }
                    *key = Some(value);
                }
                Some(k) => entries.push((k, value)),
            },
        }
        Ok(())
    }
}

fn is_scalar(v: &YamlValue) -> bool {
    !matches!(v, YamlValue::Seq(_) | YamlValue::Map(_))
}

fn count_nodes(v: &YamlValue) -> usize {
    1 + match v {
        YamlValue::Seq(items) => items.iter().map(count_nodes).sum(),
        YamlValue::Map(entries) => entries.iter().map(|(_, v)| count_nodes(v)).sum::<usize>(),
        _ => 0,
    }
}

/// A scalar's value: plain text is resolved by the core schema, anything quoted or block is a
/// string, and an explicit core tag (`!!str`, `!!int`, ...) decides for itself. Unknown tags
/// give a string, as `yaml` does after warning "Unresolved tag".
fn scalar_value(text: Cow<'_, str>, style: ScalarStyle, tag: Option<&Tag>) -> YamlValue {
    if let Some(tag) = tag {
        let core = if tag.is_yaml_core_schema() {
            match tag.suffix() {
                "null" => Some(CoreTag::Null),
                "bool" => Some(CoreTag::Bool),
                "int" => Some(CoreTag::Int),
                "float" => Some(CoreTag::Float),
                _ => None,
            }
        } else {
            None
        };
        return core
            .and_then(|c| resolve_as(&text, c))
            .unwrap_or_else(|| YamlValue::String(text.into_owned()));
    }
    match style {
        ScalarStyle::Plain => resolve_plain(&text),
        _ => YamlValue::String(text.into_owned()),
    }
}

/// `yaml`'s `toJS` of a map into a plain object: keys become property names (`null` → "",
/// numbers and booleans by `String()`), and when two keys name the same property the later
/// value wins in the earlier position.
fn js_object(entries: Vec<(YamlValue, YamlValue)>) -> YamlValue {
    let mut out: Vec<(String, YamlValue)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let name = match &k {
            YamlValue::Null => String::new(),
            YamlValue::Seq(_) | YamlValue::Map(_) => flow_text(&k),
            scalar => scalar.js_string(),
        };
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = v,
            None => out.push((name, v)),
        }
    }
    YamlValue::Map(out)
}

/// A collection used as a key is named by a flow rendering (`[ a, b ]`, `{ a: 1 }`), which is
/// what `yaml` does for such keys after warning about them.
fn flow_text(v: &YamlValue) -> String {
    match v {
        YamlValue::Seq(items) if items.is_empty() => "[]".to_owned(),
        YamlValue::Map(entries) if entries.is_empty() => "{}".to_owned(),
        YamlValue::Seq(items) => {
            format!("[ {} ]", items.iter().map(flow_text).collect::<Vec<_>>().join(", "))
        }
        YamlValue::Map(entries) => format!(
            "{{ {} }}",
            entries
                .iter()
                .map(|(k, v)| format!("{k}: {}", flow_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        scalar => scalar.js_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use YamlValue::*;

    fn load(s: &str) -> Result<YamlValue, std::string::String> {
        load_yaml(s, 2)
    }

    fn map(entries: &[(&str, YamlValue)]) -> YamlValue {
        Map(entries.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect())
    }

    #[test]
    fn empty_and_comment_only_frontmatter_is_null() {
        assert_eq!(load(""), Ok(Null));
        assert_eq!(load("# nothing here"), Ok(Null));
    }

    #[test]
    fn quoted_scalars_stay_strings_and_plain_ones_resolve() {
        let v = load(
            "a: \"0.5\"\nb: 0.5\nc: '1'\nd: yes\ne: ~\nf: |\n  x\ng: !!str 12\nh: !!int \"7\"\ni:",
        )
        .unwrap();
        assert_eq!(
            v,
            map(&[
                ("a", String("0.5".into())),
                ("b", Float(0.5)),
                ("c", String("1".into())),
                ("d", String("yes".into())),
                ("e", Null),
                ("f", String("x\n".into())),
                ("g", String("12".into())),
                ("h", Int(7)),
                ("i", Null),
            ])
        );
    }

    #[test]
    fn nested_collections_and_key_names() {
        let v = load("s:\n  - 1\n  - [a, {b: c}]\n1: one\n~: nothing\ntrue: yes").unwrap();
        assert_eq!(
            v,
            map(&[
                (
                    "s",
                    Seq(vec![
                        Int(1),
                        Seq(vec![String("a".into()), map(&[("b", String("c".into()))])])
                    ])
                ),
                ("1", String("one".into())),
                ("", String("nothing".into())),
                ("true", String("yes".into())),
            ])
        );
    }

    #[test]
    fn duplicate_keys_are_errors_by_value() {
        assert!(load("a: 1\na: 2").unwrap_err().contains("Map keys must be unique"));
        assert!(load("1: a\n1.0: b").unwrap_err().contains("unique"), "1 === 1.0");
        assert!(load("null: a\n~: b").unwrap_err().contains("unique"));
        assert!(load("x:\n  k: 1\n  k: 2").unwrap_err().contains("unique"));
        // "1" !== 1 in yaml's check; the later value then replaces the earlier property.
        assert_eq!(load("1: a\n\"1\": b"), Ok(map(&[("1", String("b".into()))])));
    }

    #[test]
    fn multiple_documents_are_errors() {
        let e = load("a: 1\n...\nb: 2").unwrap_err();
        assert!(e.contains("multiple documents"), "{e}");
        assert!(load("--- a\n--- b").unwrap_err().contains("multiple documents"));
        assert_eq!(load("a: 1\n...\n# c"), Ok(map(&[("a", Int(1))])));
    }

    #[test]
    fn syntax_errors_name_a_file_line() {
        let e = load("a: 1\nb: [unclosed").unwrap_err();
        assert!(e.contains("line"), "{e}");
        assert!(load("a: b: c").is_err());
        assert!(load("a:\n\tb: 1").is_err(), "tabs are not indentation");
    }

    #[test]
    fn small_aliases_expand_and_bombs_are_refused() {
        assert_eq!(
            load("a: &x [1, 2]\nb: *x"),
            Ok(map(&[("a", Seq(vec![Int(1), Int(2)])), ("b", Seq(vec![Int(1), Int(2)]))]))
        );
        assert!(load("a: *nope").is_err());
        let mut bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n".to_owned();
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let started = std::time::Instant::now();
        let err = load(&bomb).unwrap_err();
        assert!(started.elapsed().as_secs() < 2);
        // Refused by serde-saphyr's replay budget before anything was expanded here.
        assert!(!err.contains("nodes (resource exhaustion)"), "{err}");
    }
}
