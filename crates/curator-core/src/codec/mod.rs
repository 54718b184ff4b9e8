//! The agent-qa observation file format (agent-qa-memory §1.3–§1.6).
//!
//! A file is `---\n` + YAML frontmatter + `---\n` + markdown body + `\n`. This module reads such
//! a file exactly as agent-qa's `parseObservation` does (same accepted files, same values, the
//! same rule named on rejection) and writes one byte for byte as agent-qa's `writeObservation`
//! (`yaml` 2.8.4 `stringify(obj, {lineWidth: 0})`). Two deliberate improvements (§11.20):
//! unknown frontmatter keys are kept and written back after the known ones, and a legacy id is
//! writable.
//!
//! Files: [`parse`](parse_observation) (§1.4 rules in order), `load` (YAML text to a JS-like
//! value, budgets against alias bombs), `resolve` (the YAML 1.2 core schema, both directions),
//! `schema` (§1.5 read schemas), `datetime` (the ISO rule), `write` (§1.6 and the write
//! schema), `yaml_emit` (`yaml`'s scalar and collection rules), `number` (JS number text),
//! `value` ([`YamlValue`]), `error`.
//!
//! # Example
//! ```
//! use curator_core::codec::{parse_observation, write_observation};
//!
//! let text = "---\nid: obs_alpha-beta-gamma-delta-epsilon-zeta\ntitle: 'Say \"hi\": then wait'\n\
//!             trust: 0.55\ncreated: 2026-04-10T12:00:00.000Z\nlast_confirmed: 2026-04-10T12:00:00.000Z\n\
//!             confirmed_count: 2\ncontradicted_count: 0\nsource_test: t_x\n---\nThe body.\n";
//! let obs = parse_observation(text, "obs_alpha-beta-gamma-delta-epsilon-zeta").unwrap();
//! assert_eq!(obs.title, "Say \"hi\": then wait");
//! assert_eq!(write_observation(&obs).unwrap(), text);
//! ```

mod datetime;
mod error;
mod known_tags;
mod load;
mod number;
mod parse;
mod resolve;
mod schema;
mod value;
mod write;
mod yaml_emit;
mod yaml_rules;

pub use datetime::is_iso_datetime;
pub use error::{ParseError, SchemaIssue, WriteError};
pub(crate) use load::load_yaml;
pub use number::{format_js_number, serialize_js_number};
pub use parse::parse_observation;
pub use value::{ExtraKeys, YamlValue};
pub use write::write_observation;
#[cfg(test)]
mod yaml_vectors;
