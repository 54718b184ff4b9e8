//! `writeObservation`'s text (agent-qa-memory §1.6): `---\n` + frontmatter + `---\n` + content
//! + `\n`, byte for byte what agent-qa writes.
//!
//! The write schema is checked first (agent-qa throws a ZodError; we return [`WriteError`]):
//! non-empty title and source test, non-blank content, trust a finite number in `[0, 1]`,
//! datetimes by the §1.5 rule, counts and position safe integers, a non-empty snapshot. One
//! difference on purpose: a legacy (6-word) id is writable, so curator can rewrite an
//! observation agent-qa can only read. Unknown keys read from the file are written after the
//! schema fields, in their order (agent-qa drops them); one that would collide with a schema
//! field, or turn a base observation into a suite one (`position`), is refused. And when the
//! frontmatter ends with an empty line of a `|+` block, one more newline is written before
//! `---`: agent-qa's own output loses that line on reading (its delimiter regex eats it).

use crate::observation::Observation;

use super::datetime::is_iso_datetime;
use super::error::WriteError;
use super::load::MAX_NODES;
use super::parse::is_js_whitespace;
use super::schema::{
    BASE_FIELDS, EXPECT_COUNT, EXPECT_DATETIME, EXPECT_NON_EMPTY, EXPECT_SNAPSHOT, EXPECT_TRUST,
    MAX_SAFE_INTEGER, SUITE_FIELDS, is_trust,
};
use super::value::YamlValue;
use super::yaml_emit::emit_document;

/// Renders the file exactly as agent-qa's writer would (§1.6), plus unknown keys after the
/// known ones.
pub fn write_observation(obs: &Observation) -> Result<String, WriteError> {
    check(obs)?;
    let text = |s: &str| YamlValue::String(s.to_owned());
    // Counts were checked to be safe integers, which always fit an i64.
    let int = |n: u64| YamlValue::Int(n as i64);
    let mut fields: Vec<(String, YamlValue)> = [
        ("id", text(obs.id.as_str())),
        ("title", text(&obs.title)),
        ("trust", YamlValue::Float(obs.trust)),
        ("created", text(&obs.created)),
        ("last_confirmed", text(&obs.last_confirmed)),
        ("confirmed_count", int(obs.confirmed_count)),
        ("contradicted_count", int(obs.contradicted_count)),
        ("source_test", text(&obs.source_test)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let Some(suite) = &obs.suite {
        fields.push(("position".to_owned(), int(suite.position)));
        let entries = suite
            .suite_snapshot
            .iter()
            .map(|e| {
                YamlValue::Map(vec![
                    ("test".to_owned(), text(&e.test)),
                    ("id".to_owned(), text(&e.id)),
                ])
            })
            .collect();
        fields.push(("suite_snapshot".to_owned(), YamlValue::Seq(entries)));
    }
    fields.extend(obs.extra.0.iter().cloned());
    let nodes = 1 + fields.iter().map(|(_, v)| 1 + yaml_nodes(v)).sum::<usize>();
    if nodes > MAX_NODES {
        // The reader would refuse the file (`ParseError::FrontmatterTooLarge`).
        return Err(WriteError::Invalid {
            id: obs.id.to_string(),
            field: "(frontmatter)".to_owned(),
            rule: format!("at most {MAX_NODES} YAML nodes, the reader's budget (has {nodes})"),
        });
    }
    let mut frontmatter = emit_document(&fields);
    if frontmatter.ends_with("\n\n") {
        // The document ends with a keep-chomped block (`|+`) whose last line is empty. The
        // reader's delimiter regex takes the newline before `---` as part of the delimiter,
        // so agent-qa would read one line break less than it wrote; one more keeps the value.
        frontmatter.push('\n');
    }
    let mut out = String::with_capacity(frontmatter.len() + obs.content.len() + 9);
    out.push_str("---\n");
    out.push_str(&frontmatter);
    out.push_str("---\n");
    out.push_str(&obs.content);
    out.push('\n');
    Ok(out)
}

/// The YAML nodes a value is written as: itself, plus each key and value of a mapping and each
/// item of a sequence (what the reader counts against [`MAX_NODES`]).
fn yaml_nodes(v: &YamlValue) -> usize {
    1 + match v {
        YamlValue::Seq(items) => items.iter().map(yaml_nodes).sum(),
        YamlValue::Map(entries) => entries.iter().map(|(_, v)| 1 + yaml_nodes(v)).sum(),
        _ => 0,
    }
}

fn check(obs: &Observation) -> Result<(), WriteError> {
    let fail = |field: &str, rule: &str| {
        Err(WriteError::Invalid {
            id: obs.id.to_string(),
            field: field.to_owned(),
            rule: rule.to_owned(),
        })
    };
    if obs.title.is_empty() {
        return fail("title", EXPECT_NON_EMPTY);
    }
    if obs.content.chars().all(is_js_whitespace) {
        return fail("content", "a non-blank markdown body");
    }
    if !is_trust(obs.trust) {
        return fail("trust", EXPECT_TRUST);
    }
    if !is_iso_datetime(&obs.created) {
        return fail("created", EXPECT_DATETIME);
    }
    if !is_iso_datetime(&obs.last_confirmed) {
        return fail("last_confirmed", EXPECT_DATETIME);
    }
    if obs.confirmed_count > MAX_SAFE_INTEGER {
        return fail("confirmed_count", EXPECT_COUNT);
    }
    if obs.contradicted_count > MAX_SAFE_INTEGER {
        return fail("contradicted_count", EXPECT_COUNT);
    }
    if obs.source_test.is_empty() {
        return fail("source_test", EXPECT_NON_EMPTY);
    }
    if let Some(suite) = &obs.suite {
        if suite.position > MAX_SAFE_INTEGER {
            return fail("position", EXPECT_COUNT);
        }
        if suite.suite_snapshot.is_empty() {
            return fail("suite_snapshot", EXPECT_SNAPSHOT);
        }
    }
    let mut seen = std::collections::HashSet::with_capacity(obs.extra.0.len());
    for (key, _) in &obs.extra.0 {
        let reserved = BASE_FIELDS.contains(&key.as_str())
            || key == "content"
            || key == "position"
            || (obs.suite.is_some() && SUITE_FIELDS.contains(&key.as_str()));
        if reserved {
            return fail(&format!("extra.{key}"), "an unknown key, not a schema field or content");
        }
        if !seen.insert(key.as_str()) {
            return fail(&format!("extra.{key}"), "each unknown key once");
        }
    }
    Ok(())
}
