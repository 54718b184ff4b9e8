//! The agent-qa observation file format (agent-qa-memory §1.3–§1.6).
//!
//! STUB: signatures are fixed; the helper owning the codec fills them in.

use crate::observation::Observation;

/// Frontmatter keys outside the schema, in file order, kept so a rewrite does not drop them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExtraKeys(pub Vec<(String, YamlValue)>);

/// A YAML value of an unknown frontmatter key.
#[derive(Debug, Clone, PartialEq)]
pub enum YamlValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Seq(Vec<YamlValue>),
    Map(Vec<(String, YamlValue)>),
}

/// Why a file is not a valid observation; the message names the spec rule that failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    #[error("No frontmatter delimiters found")]
    NoDelimiters,
}

/// Why an observation cannot be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    #[error("invalid observation: {0}")]
    Invalid(String),
}

/// Parses a file's text; `file_stem` is the file name without `.md` (§1.4 rule 5).
pub fn parse_observation(text: &str, file_stem: &str) -> Result<Observation, ParseError> {
    let _ = (text, file_stem);
    unimplemented!("codec parse")
}

/// Renders the file exactly as agent-qa's writer would (§1.6), plus unknown keys after the known ones.
pub fn write_observation(obs: &Observation) -> Result<String, WriteError> {
    let _ = obs;
    unimplemented!("codec write")
}
