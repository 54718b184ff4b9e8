//! The codec's errors: one [`ParseError`] variant per rule of agent-qa-memory §1.4, and the
//! write-schema failures of §1.6.
//!
//! The first line of each parse message is agent-qa's own wording, so a person comparing our
//! lint report with agent-qa's behaviour recognises the rule; anything we add (a hint, the
//! field and the value) comes after it.

use std::fmt;

/// Why a file is not a valid observation; the variants are §1.4's rules, in their order.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Rule 1: the text does not match `^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$`.
    #[error(
        "No frontmatter delimiters found{}",
        if *starts_with_bom {
            " (the file starts with a UTF-8 byte order mark, which agent-qa does not strip: \
             save it without the BOM)"
        } else {
            ""
        }
    )]
    NoDelimiters {
        /// The text starts with U+FEFF, the usual reason a file that looks right is rejected.
        starts_with_bom: bool,
    },
    /// Rule 2: the frontmatter is not one valid YAML 1.2 document (syntax, duplicate keys,
    /// several documents, an alias bomb).
    #[error("YAML parse error: {0}")]
    Yaml(String),
    /// Rule 2, curator's budget: the frontmatter holds more YAML nodes (keys, values, items)
    /// than curator reads for one observation's metadata. agent-qa has no such limit; without
    /// one, a single file under the size cap could cost a second of parsing on every read.
    #[error(
        "frontmatter too large: more than {limit} YAML nodes (keys, values, items); curator reads \
         at most that many for one observation's metadata (agent-qa has no such limit): move \
         the data to the body or split the file"
    )]
    FrontmatterTooLarge {
        /// The budget, in nodes.
        limit: usize,
    },
    /// Rule 3: the body is empty or only whitespace.
    #[error("Observation markdown body is missing or blank")]
    BlankBody,
    /// Rule 4: the frontmatter has a `content` key.
    #[error("Observation content must live in the markdown body, not frontmatter")]
    ContentInFrontmatter,
    /// Rule 5: the frontmatter `id` is not the file name without `.md` (strict: a number never
    /// equals a file name).
    #[error("ID mismatch: file {file} vs frontmatter {frontmatter}")]
    IdMismatch {
        /// The file name without `.md`.
        file: String,
        /// The frontmatter `id` as JavaScript's `String()` renders it.
        frontmatter: String,
    },
    /// Rule 6: the base or suite schema (§1.5) rejects one or more fields.
    #[error("schema: {}", SchemaIssues(.0))]
    Schema(Vec<SchemaIssue>),
}

/// One field the §1.5 schema rejects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaIssue {
    /// The field's path: `trust`, `suite_snapshot[1].id`, or `(frontmatter)` for the whole map.
    pub field: String,
    /// The rule, e.g. `a number between 0 and 1`.
    pub expected: String,
    /// What the file has, e.g. `string "0.5"`, or `nothing` for a missing field.
    pub got: String,
}

impl fmt::Display for SchemaIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field {}: expected {}, got {}", self.field, self.expected, self.got)
    }
}

struct SchemaIssues<'a>(&'a [SchemaIssue]);

impl fmt::Display for SchemaIssues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, issue) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            issue.fmt(f)?;
        }
        Ok(())
    }
}

/// Why an observation cannot be written: a field breaks the write schema (§1.6 step 2), or an
/// unknown key would collide with a field the writer emits.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A field breaks the write schema.
    #[error("cannot write observation {id}: field {field}: expected {rule}")]
    Invalid {
        /// The observation's id.
        id: String,
        /// The field, e.g. `trust` or `extra.position`.
        field: String,
        /// The rule it breaks.
        rule: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_start_with_agent_qa_wording() {
        assert_eq!(
            ParseError::NoDelimiters { starts_with_bom: false }.to_string(),
            "No frontmatter delimiters found"
        );
        assert!(
            ParseError::NoDelimiters { starts_with_bom: true }
                .to_string()
                .starts_with("No frontmatter delimiters found (the file starts with a UTF-8 byte")
        );
        let schema = ParseError::Schema(vec![
            SchemaIssue {
                field: "trust".into(),
                expected: "a number between 0 and 1".into(),
                got: "string \"0.5\"".into(),
            },
            SchemaIssue {
                field: "title".into(),
                expected: "a string".into(),
                got: "nothing".into(),
            },
        ]);
        assert_eq!(
            schema.to_string(),
            "schema: field trust: expected a number between 0 and 1, got string \"0.5\"; \
             field title: expected a string, got nothing"
        );
    }
}
