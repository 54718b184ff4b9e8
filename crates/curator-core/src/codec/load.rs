//! Frontmatter text to a JS-like value, as `yaml` 2.8.4's `parse` sees it (agent-qa-memory §1.4
//! rule 2).
//!
//! The parser is serde-saphyr's own event parser (`granit-parser`), read event by event so that
//! each scalar's style is known: only a *plain* scalar is resolved by the core schema
//! ([`super::resolve`]); a quoted or block scalar is always a string. A derived serde visitor
//! cannot tell `"0.5"` from `0.5`, and serde-saphyr's type inference follows YAML 1.1 in places.
//! Where `yaml` is stricter than that parser, or reads text it refuses, [`super::yaml_rules`]
//! decides, so a text agent-qa skips is refused here and one it reads is read
//! (`tests/fixtures/codec/yaml-2.8.4-edge-vectors.json` holds the evidence).
//!
//! Errors, each a `YAML parse error` for the caller: syntax errors, duplicate keys (compared as
//! `yaml` does: scalar keys by `===` of their values), more than one document, an alias to an
//! unknown or unfinished anchor, and the rules of `yaml_rules`, named by `yaml`'s error code.
//! Aliases are a denial-of-service risk (billion laughs), so the first alias makes the whole
//! text go through serde-saphyr's budgets, which refuse alias bombs without expanding them; only
//! text that passes is expanded here, under a node cap as well.
//!
//! Cost: linear in the text. A mapping's keys are turned into object properties, and checked
//! for duplicates, through one hash map of property names, so a 40,000-key frontmatter costs
//! what 40,000 lines cost, not 40,000² comparisons (issue 13 item 4).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_saphyr::granit_parser::{
    Event, Marker, Options, Parser, ScalarStyle, ScanError, Span, StructureStyle, Tag,
};

use super::error::ParseError;
use super::known_tags;
use super::resolve::{CoreTag, resolve_as, resolve_plain};
use super::value::YamlValue;
use super::yaml_rules::{self, Broken, NodeStart, Repair};

/// Deepest collection nesting accepted; frontmatter is flat, this only bounds recursion.
const MAX_DEPTH: usize = 64;
/// Most nodes an alias expansion may add; real frontmatter has none.
const MAX_ALIAS_NODES: usize = 10_000;
/// The namespace of `!!` tags.
const YAML_TAGS: &str = "tag:yaml.org,2002:";
/// Most YAML nodes (keys, values, items) one frontmatter may hold. Parsing costs about a
/// microsecond per node, so this bounds any file under the size cap to a few tens of
/// milliseconds, where a 1 MiB frontmatter of 80,000 keys or 500,000 nested brackets would
/// cost a second or more (issue 13 item 4). agent-qa's own frontmatter holds a few dozen
/// nodes; a suite snapshot of 4,000 tests about 20,000.
pub(crate) const MAX_NODES: usize = 20_000;
/// Most repairs (`yaml_rules::repair`) tried on one text; each costs a parse of it, so a text
/// with more lone surrogate escapes than this is refused rather than parsed again and again.
const MAX_REPAIRS: usize = 4;

/// Parses frontmatter YAML; an empty or comment-only text is `Null`. `first_line` is the file
/// line the frontmatter starts on, so messages point into the file.
pub(crate) fn load_yaml(text: &str, first_line: usize) -> Result<YamlValue, ParseError> {
    let stand_ins = StandIns::for_text(text);
    let mut parsed: Cow<'_, str> =
        if stand_ins.is_empty() { Cow::Borrowed(text) } else { Cow::Owned(stand_ins.apply(text)) };
    let mut repairs: Vec<Repair> = Vec::new();
    loop {
        let failure = match parse_events(&parsed) {
            Ok(mut value) => {
                if !stand_ins.is_empty() {
                    stand_ins.restore(&mut value);
                }
                return Ok(value);
            }
            Err(failure) => failure,
        };
        if let Failure::Scan(e) = &failure
            && repairs.len() < MAX_REPAIRS
            && let Some((fixed, repair)) = yaml_rules::repair(&parsed, e)
        {
            parsed = Cow::Owned(fixed);
            repairs.push(repair);
            continue;
        }
        return Err(match failure {
            Failure::TooManyNodes => ParseError::FrontmatterTooLarge { limit: MAX_NODES },
            failure => ParseError::Yaml(failure.message(&parsed, first_line, &repairs)),
        });
    }
}

/// Why one parse of the text failed.
#[derive(Debug)]
enum Failure {
    /// The event parser refused the text.
    Scan(ScanError),
    /// A rule of `yaml` (or an alias budget of ours) is broken.
    Rule(Broken),
    /// More than [`MAX_NODES`] nodes.
    TooManyNodes,
}

impl Failure {
    /// The message, with the file line and column of the failure (in the text as written:
    /// lines a repair inserted are not counted).
    fn message(&self, text: &str, first_line: usize, repairs: &[Repair]) -> String {
        let (what, at) = match self {
            Failure::Scan(e) => (e.info(), e.marker().byte_offset().unwrap_or(text.len())),
            Failure::Rule(b) => match b.code {
                Some(code) => (format!("{} ({code})", b.message), b.at),
                None => (b.message.clone(), b.at),
            },
            Failure::TooManyNodes => return format!("more than {MAX_NODES} nodes"),
        };
        let (line, col) = yaml_rules::line_col(text, at);
        let moved: usize = repairs.iter().filter(|r| r.at <= at).map(|r| r.new_lines).sum();
        format!("{what} at line {}, column {col}", line - moved + first_line - 1)
    }
}

impl From<Broken> for Failure {
    fn from(b: Broken) -> Self {
        Failure::Rule(b)
    }
}

/// One parse of `text` into a value.
fn parse_events(text: &str) -> Result<YamlValue, Failure> {
    let mut options = Options::default();
    options.flow_nesting_limit = MAX_DEPTH;
    options.block_nesting_limit = MAX_DEPTH;
    options.set_emit_comments(false);
    if let Some(b) = yaml_rules::leading_document_end(text) {
        return Err(b.into());
    }
    let mut builder = Builder { text, ..Builder::default() };
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, span) = event.map_err(Failure::Scan)?;
        builder.push(event, span)?;
    }
    Ok(builder.root.unwrap_or(YamlValue::Null))
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

/// The byte offset of a marker (the parser reads from a `&str`, so it always knows it).
fn byte_at(m: &Marker) -> usize {
    m.byte_offset().unwrap_or(0)
}

/// A collection being built.
#[derive(Debug)]
struct Frame {
    kind: FrameKind,
    /// The anchor to record it under when it ends (0: none).
    anchor: usize,
    /// An explicit tag of the known YAML 1.1 list (`!!set`, `!!omap`, `!!pairs`).
    tag: Option<String>,
    flow: bool,
    start: Marker,
}

#[derive(Debug)]
enum FrameKind {
    Seq(Vec<YamlValue>),
    /// A mapping, built directly as the JS object `yaml`'s `toJS` makes of it: keys become
    /// property names (`null` → "", numbers and booleans by `String()`, a collection by its
    /// flow rendering), and when two keys name the same property the later value wins in the
    /// earlier position.
    Map {
        properties: Vec<(String, YamlValue)>,
        /// Each property name: its index in `properties` and the kinds of scalar keys that
        /// named it so far, for `yaml`'s uniqueness check.
        names: HashMap<String, (usize, KeyKinds)>,
        /// The key waiting for its value: the property it fills, and where the key started.
        key: Option<(usize, Marker)>,
    },
}

/// The kinds of scalar keys seen under one property name. `yaml` finds two keys equal when
/// their values are `===`; keys with one name are `===` exactly when they have the same kind
/// (`1` and `1.0` both name "1" and are equal, `"1"` and `1` are not), except NaN, which
/// equals nothing, and collections, which are compared by identity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct KeyKinds(u8);

impl KeyKinds {
    /// The bit of a key's kind; `None` for keys that are never equal to another.
    fn bit(key: &YamlValue) -> Option<u8> {
        match key {
            YamlValue::Null => Some(1),
            YamlValue::Bool(_) => Some(2),
            YamlValue::Int(_) => Some(4),
            YamlValue::Float(f) if !f.is_nan() => Some(4),
            YamlValue::String(_) => Some(8),
            _ => None,
        }
    }
}

/// The property name `yaml`'s `toJS` gives a key.
fn property_name(key: &YamlValue) -> String {
    match key {
        YamlValue::Null => String::new(),
        YamlValue::Seq(_) | YamlValue::Map(_) => flow_text(key),
        scalar => scalar.js_string(),
    }
}

/// An outermost flow collection inside a block collection, whose continuation lines are
/// checked against the indentation it needs when it ends.
#[derive(Debug)]
struct OpenFlow {
    /// Depth of its frame in the stack.
    depth: usize,
    need: usize,
    /// First and last line start of each nested flow collection spanning lines.
    nested: Vec<(usize, usize)>,
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
    open_flow: Option<OpenFlow>,
    nodes: usize,
}

impl Builder<'_> {
    fn push(&mut self, event: Event<'_>, span: Span) -> Result<(), Failure> {
        if matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        ) {
            self.nodes += 1;
            if self.nodes > MAX_NODES {
                return Err(Failure::TooManyNodes);
            }
        }
        match event {
            Event::DocumentStart(explicit, _) => {
                self.documents += 1;
                let at = byte_at(&span.start);
                if self.documents > 1 && explicit {
                    return Err(Broken::new(
                        "MULTIPLE_DOCS",
                        "Source contains multiple documents; please use YAML.parseAllDocuments()",
                        at,
                    )
                    .into());
                }
                if self.documents > 1 {
                    // Content after the root node that the parser took for a second document
                    // (` a: 1` then `b: 2`): `yaml` calls it an unexpected token.
                    return Err(Broken::ours(
                        "unexpected content after the document's root node",
                        at,
                    )
                    .into());
                }
            }
            // An explicit `...`: `yaml` starts a second document at whatever follows.
            Event::DocumentEnd if self.text[byte_at(&span.start)..].starts_with("...") => {
                let after = byte_at(&span.end);
                if let Some(b) = yaml_rules::content_after_document_end(self.text, after) {
                    return Err(b.into());
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let at = byte_at(&span.start);
                self.check_node_start(at, NodeStart::Other)?;
                let value = scalar_value(text, style, tag.as_deref(), at)?;
                self.finish_node(value, anchor, span.start)?;
            }
            Event::SequenceStart(style, anchor, tag) => {
                self.start_collection(FrameKind::Seq(Vec::new()), style, anchor, tag, span)?;
            }
            Event::MappingStart(style, anchor, tag) => {
                let kind =
                    FrameKind::Map { properties: Vec::new(), names: HashMap::new(), key: None };
                self.start_collection(kind, style, anchor, tag, span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => self.end_collection(span)?,
            Event::Alias(id) => {
                self.check_node_start(byte_at(&span.start), NodeStart::Other)?;
                self.check_alias_budget(byte_at(&span.start))?;
                let value = self.anchors.get(&id).cloned().ok_or_else(|| {
                    Broken::ours(
                        "alias refers to an unknown or unfinished anchor",
                        byte_at(&span.start),
                    )
                })?;
                self.alias_nodes += count_nodes(&value);
                if self.alias_nodes > MAX_ALIAS_NODES {
                    return Err(Broken::ours(
                        format!("aliases expand to more than {MAX_ALIAS_NODES} nodes (resource exhaustion)"),
                        byte_at(&span.start),
                    )
                    .into());
                }
                self.finish_node(value, 0, span.start)?;
            }
            Event::UnresolvedAlias(name) => {
                return Err(Broken::ours(
                    format!("unresolved alias *{name}"),
                    byte_at(&span.start),
                )
                .into());
            }
            _ => {}
        }
        Ok(())
    }

    fn in_flow(&self) -> bool {
        self.stack.last().is_some_and(|f| f.flow)
    }

    /// The tab rule for a node that is the first content of its line, in block context. An
    /// implicit key is a scalar arriving where a block mapping waits for a key.
    fn check_node_start(&self, at: usize, node: NodeStart) -> Result<(), Broken> {
        if self.in_flow() || !yaml_rules::starts_line(self.text, at) {
            return Ok(());
        }
        let node = match self.stack.last() {
            Some(Frame { kind: FrameKind::Map { key: None, .. }, flow: false, .. })
                if node == NodeStart::Other && !explicit_key(self.text, at) =>
            {
                NodeStart::ImplicitKey
            }
            _ => node,
        };
        match yaml_rules::tab_as_indent(self.text, at, node) {
            Some(b) => Err(b),
            None => Ok(()),
        }
    }

    fn start_collection(
        &mut self,
        kind: FrameKind,
        style: StructureStyle,
        anchor: usize,
        tag: Option<Cow<'_, Tag>>,
        span: Span,
    ) -> Result<(), Failure> {
        let at = byte_at(&span.start);
        let flow = style == StructureStyle::Flow;
        if flow {
            self.check_node_start(at, NodeStart::Other)?;
        } else {
            self.check_node_start(at, NodeStart::BlockCollection)?;
        }
        if let Some(parent) = self.stack.last() {
            match &parent.kind {
                // `yaml`: "Nested mappings are not allowed in compact mappings".
                FrameKind::Map { key: Some((_, key_at)), .. }
                    if !parent.flow
                        && !flow
                        && matches!(kind, FrameKind::Map { .. })
                        && key_at.line() == span.start.line()
                        && !explicit_key(self.text, byte_at(key_at)) =>
                {
                    return Err(Broken::new(
                        "BLOCK_AS_IMPLICIT_KEY",
                        "Nested mappings are not allowed in compact mappings",
                        at,
                    )
                    .into());
                }
                _ => {}
            }
            if flow && !parent.flow && self.open_flow.is_none() {
                let holder_col = match &parent.kind {
                    FrameKind::Map { key: Some((_, key_at)), .. } => Some(key_at.col()),
                    FrameKind::Seq(_) => Some(parent.start.col()),
                    FrameKind::Map { key: None, .. } => None,
                };
                if let Some(col) = holder_col {
                    let need = yaml_rules::flow_indent_needed(self.text, at, col);
                    self.open_flow =
                        Some(OpenFlow { depth: self.stack.len(), need, nested: Vec::new() });
                }
            }
        }
        let tag = tag
            .and_then(|t| t.suffix_in_namespace(YAML_TAGS).map(|name| name.into_owned()))
            .filter(|name| matches!(name.as_str(), "set" | "omap" | "pairs"));
        self.stack.push(Frame { kind, anchor, tag, flow, start: span.start });
        Ok(())
    }

    fn end_collection(&mut self, span: Span) -> Result<(), Failure> {
        let frame = self
            .stack
            .pop()
            .ok_or_else(|| Broken::ours("unbalanced collection end", byte_at(&span.start)))?;
        let start = byte_at(&frame.start);
        let end = byte_at(&span.end);
        if frame.flow {
            let depth = self.stack.len();
            match &mut self.open_flow {
                Some(open) if open.depth == depth => {
                    let is_map = matches!(frame.kind, FrameKind::Map { .. });
                    if let Some(b) = yaml_rules::flow_indentation(
                        self.text,
                        start,
                        end,
                        open.need,
                        &open.nested,
                        is_map,
                    ) {
                        return Err(b.into());
                    }
                    self.open_flow = None;
                }
                Some(open) if span.end.line() > frame.start.line() => {
                    let first = yaml_rules::line_start(self.text, start);
                    let last = yaml_rules::line_start(self.text, end);
                    open.nested.push((first, last));
                }
                _ => {}
            }
        }
        let mut value = match frame.kind {
            FrameKind::Seq(items) => YamlValue::Seq(items),
            FrameKind::Map { properties, .. } => YamlValue::Map(properties),
        };
        if let Some(suffix) = &frame.tag
            && let Some(resolved) = known_tags::collection(suffix, &value, start)
        {
            value = resolved?;
        }
        self.finish_node(value, frame.anchor, frame.start)?;
        Ok(())
    }

    /// Runs the whole text through serde-saphyr once, before the first alias is expanded, so
    /// its alias-replay and size budgets refuse a bomb that this builder would otherwise copy.
    fn check_alias_budget(&mut self, at: usize) -> Result<(), Broken> {
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
        match serde_saphyr::from_str_with_options::<Option<serde::de::IgnoredAny>>(
            self.text, options,
        ) {
            Err(e) if is_alias_budget(&e) => {
                let what = e.to_string();
                let what = what.split(" at line ").next().unwrap_or_default();
                Err(Broken::ours(format!("aliases refused (resource exhaustion): {what}"), at))
            }
            // Any other error is the text's own: the event parser reports it where it is.
            Err(_) | Ok(_) => Ok(()),
        }
    }

    fn finish_node(&mut self, value: YamlValue, anchor: usize, at: Marker) -> Result<(), Broken> {
        if anchor != 0 {
            self.anchors.insert(anchor, value.clone());
        }
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(value);
            return Ok(());
        };
        match &mut frame.kind {
            FrameKind::Seq(items) => items.push(value),
            FrameKind::Map { properties, names, key } => match key.take() {
                None => {
                    let bit = KeyKinds::bit(&value);
                    let name = property_name(&value);
                    let slot = match names.get_mut(&name) {
                        Some((slot, kinds)) => {
                            if let Some(bit) = bit {
                                if kinds.0 & bit != 0 {
                                    // yaml's wording and code; the key is named so the file
                                    // can be fixed.
                                    return Err(Broken::new(
                                        "DUPLICATE_KEY",
                                        format!(
                                            "Map keys must be unique (duplicate key {})",
                                            value.describe()
                                        ),
                                        byte_at(&at),
                                    ));
                                }
                                kinds.0 |= bit;
                            }
                            *slot
                        }
                        None => {
                            let slot = properties.len();
                            names.insert(name.clone(), (slot, KeyKinds(bit.unwrap_or(0))));
                            properties.push((name, YamlValue::Null));
                            slot
                        }
                    };
                    *key = Some((slot, at));
                }
                Some((slot, _)) => properties[slot].1 = value,
            },
        }
        Ok(())
    }
}

/// Whether serde-saphyr refused the text for its alias or size budgets (through the wrappers
/// that add an alias's location or a snippet).
fn is_alias_budget(mut e: &serde_saphyr::Error) -> bool {
    use serde_saphyr::Error as E;
    loop {
        match e {
            E::AliasError { error, .. } | E::WithSnippet { error, .. } => e = error,
            E::Budget { .. }
            | E::AliasReplayCounterOverflow { .. }
            | E::AliasReplayLimitExceeded { .. }
            | E::AliasExpansionLimitExceeded { .. }
            | E::AliasReplayStackDepthExceeded { .. }
            | E::RecursiveReferencesRequireWeakTypes { .. } => return true,
            _ => return false,
        }
    }
}

/// Whether the node at `at` is an explicit key (`? key`): the last indicator before it on its
/// line is `?`.
fn explicit_key(text: &str, at: usize) -> bool {
    let before = text[yaml_rules::line_start(text, at)..at].trim_end_matches([' ', '\t']);
    before.ends_with('?')
        && before[..before.len() - 1].trim_start_matches([' ', '\t', '-']).is_empty()
}

fn count_nodes(v: &YamlValue) -> usize {
    1 + match v {
        YamlValue::Seq(items) => items.iter().map(count_nodes).sum(),
        YamlValue::Map(entries) => entries.iter().map(|(_, v)| count_nodes(v)).sum::<usize>(),
        _ => 0,
    }
}

/// A scalar's value: plain text is resolved by the core schema, anything quoted or block is a
/// string, and an explicit core tag (`!!str`, `!!int`, ...) decides for itself; the YAML 1.1
/// tags `yaml` still knows go through [`known_tags`]. Unknown tags give a string, as `yaml`
/// does after warning "Unresolved tag".
fn scalar_value(
    text: Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
    at: usize,
) -> Result<YamlValue, Broken> {
    if let Some(tag) = tag {
        let Some(name) = tag.suffix_in_namespace(YAML_TAGS) else {
            return Ok(YamlValue::String(text.into_owned()));
        };
        if let Some(known) = known_tags::scalar(&name, &text, at) {
            return known;
        }
        let core = match name.as_ref() {
            "null" => Some(CoreTag::Null),
            "bool" => Some(CoreTag::Bool),
            "int" => Some(CoreTag::Int),
            "float" => Some(CoreTag::Float),
            _ => None,
        };
        return Ok(core
            .and_then(|c| resolve_as(&text, c))
            .unwrap_or_else(|| YamlValue::String(text.into_owned())));
    }
    Ok(match style {
        ScalarStyle::Plain => resolve_plain(&text),
        _ => YamlValue::String(text.into_owned()),
    })
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
        load_yaml(s, 2).map_err(|e| e.to_string())
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
