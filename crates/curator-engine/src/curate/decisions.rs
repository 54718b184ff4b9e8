//! agent-qa's decision schema, `CuratorResponseSchema` (agent-qa-memory §5.3).
//!
//! The same JSON comes from a harness file, stdin, the HTTP API, MCP and the LLM, so it is
//! validated in one place with errors that name the field (`decisions[2].observationId`).
//! Every listed field is required and `title` / `content` must be non-empty. A key the schema
//! does not know is an error naming the nearest known key, except with [`UnknownKeys::Ignore`]
//! (agent-qa's zod strips such keys; the LLM's answer is always read that way). Ids are *not* checked here: an unknown or malformed id
//! is a per-decision error in the MemoryLog (§5.4), never a reason to drop the whole answer.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::unknown_keys::{UnknownKeys, first_unknown};

/// Where an added observation goes (`scope` of an add).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionScope {
    Product,
    Suite,
    Test,
}

/// One A.U.D.N. decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Decision {
    /// Record a new observation.
    Add { title: String, content: String, scope: DecisionScope, reasoning: String },
    /// Confirm an existing observation.
    Update {
        #[serde(rename = "observationId")]
        observation_id: String,
        reasoning: String,
    },
    /// Contradict an existing observation.
    Deprecate {
        #[serde(rename = "observationId")]
        observation_id: String,
        reasoning: String,
    },
    /// Nothing to do.
    Noop { reasoning: String },
}

impl Decision {
    /// The `action` word.
    pub fn action(&self) -> &'static str {
        match self {
            Decision::Add { .. } => "add",
            Decision::Update { .. } => "update",
            Decision::Deprecate { .. } => "deprecate",
            Decision::Noop { .. } => "noop",
        }
    }
}

/// The decisions document: `{"decisions": [...]}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Decisions {
    pub decisions: Vec<Decision>,
}

/// A field of a decisions document breaks the schema; `field` is its JSON path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("decisions: {field}: {rule}")]
pub struct DecisionsError {
    pub field: String,
    pub rule: String,
}

fn err(field: impl Into<String>, rule: impl Into<String>) -> DecisionsError {
    DecisionsError { field: field.into(), rule: rule.into() }
}

impl Decisions {
    /// Parses and validates decisions JSON text; an unknown key is an error.
    pub fn from_json(text: &str) -> Result<Self, DecisionsError> {
        Self::from_json_with(text, UnknownKeys::Reject)
    }

    /// [`Decisions::from_json`] with a choice of what an unknown key does.
    pub fn from_json_with(text: &str, unknown: UnknownKeys) -> Result<Self, DecisionsError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| err("(document)", format!("not valid JSON: {e}")))?;
        Self::from_value_with(&value, unknown)
    }

    /// Validates an already parsed JSON value; an unknown key is an error.
    pub fn from_value(value: &Value) -> Result<Self, DecisionsError> {
        Self::from_value_with(value, UnknownKeys::Reject)
    }

    /// [`Decisions::from_value`] with a choice of what an unknown key does.
    pub fn from_value_with(value: &Value, unknown: UnknownKeys) -> Result<Self, DecisionsError> {
        let obj = value.as_object().ok_or_else(|| err("(document)", "must be a JSON object"))?;
        if let Some((field, rule)) = first_unknown(obj, &["decisions"], "", unknown) {
            return Err(err(field, rule));
        }
        let list = obj
            .get("decisions")
            .ok_or_else(|| err("decisions", "is required"))?
            .as_array()
            .ok_or_else(|| err("decisions", "must be an array"))?;
        let decisions = list
            .iter()
            .enumerate()
            .map(|(i, d)| decision(d, i, unknown))
            .collect::<Result<_, _>>()?;
        Ok(Decisions { decisions })
    }

    /// The JSON Schema of this document, for structured output (OpenAI `json_schema`, strict).
    pub fn json_schema() -> Value {
        let text = json!({"type": "string"});
        let variant = |action: &str, fields: &[(&str, Value)]| {
            let mut props = Map::new();
            props.insert("action".into(), json!({"type": "string", "enum": [action]}));
            for (name, schema) in fields {
                props.insert((*name).into(), schema.clone());
            }
            let required: Vec<&str> =
                std::iter::once("action").chain(fields.iter().map(|(n, _)| *n)).collect();
            json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
        };
        let scope = json!({"type": "string", "enum": ["product", "suite", "test"],
                           "description": "Use \"suite\" only if a suite context was provided"});
        json!({
            "type": "object",
            "properties": {"decisions": {"type": "array", "items": {"anyOf": [
                variant("add", &[("title", text.clone()), ("content", text.clone()), ("scope", scope), ("reasoning", text.clone())]),
                variant("update", &[("observationId", text.clone()), ("reasoning", text.clone())]),
                variant("deprecate", &[("observationId", text.clone()), ("reasoning", text.clone())]),
                variant("noop", &[("reasoning", text)]),
            ]}}},
            "required": ["decisions"],
            "additionalProperties": false
        })
    }
}

/// The keys of each kind of decision; `None` for an action that is none of them (then the
/// action is the error, not the keys that come with it).
fn decision_keys(action: &str) -> Option<&'static [&'static str]> {
    match action {
        "add" => Some(&["action", "title", "content", "scope", "reasoning"]),
        "update" | "deprecate" => Some(&["action", "observationId", "reasoning"]),
        "noop" => Some(&["action", "reasoning"]),
        _ => None,
    }
}

fn decision(value: &Value, i: usize, unknown: UnknownKeys) -> Result<Decision, DecisionsError> {
    let path = format!("decisions[{i}]");
    let obj = value.as_object().ok_or_else(|| err(&path, "must be an object"))?;
    if let Some(Value::String(action)) = obj.get("action")
        && let Some(keys) = decision_keys(action)
        && let Some((field, rule)) = first_unknown(obj, keys, &path, unknown)
    {
        return Err(err(field, rule));
    }
    let field = |name: &str| -> Result<String, DecisionsError> {
        match obj.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(err(format!("{path}.{name}"), "must be a string")),
            None => Err(err(format!("{path}.{name}"), "is required")),
        }
    };
    let non_empty = |name: &str| -> Result<String, DecisionsError> {
        let s = field(name)?;
        if s.is_empty() {
            return Err(err(format!("{path}.{name}"), "must not be empty"));
        }
        Ok(s)
    };
    let action = field("action")?;
    Ok(match action.as_str() {
        "add" => {
            let scope = match field("scope")?.as_str() {
                "product" => DecisionScope::Product,
                "suite" => DecisionScope::Suite,
                "test" => DecisionScope::Test,
                other => {
                    return Err(err(
                        format!("{path}.scope"),
                        format!("must be \"product\", \"suite\" or \"test\", got {other:?}"),
                    ));
                }
            };
            Decision::Add {
                title: non_empty("title")?,
                content: non_empty("content")?,
                scope,
                reasoning: field("reasoning")?,
            }
        }
        "update" => Decision::Update {
            observation_id: field("observationId")?,
            reasoning: field("reasoning")?,
        },
        "deprecate" => Decision::Deprecate {
            observation_id: field("observationId")?,
            reasoning: field("reasoning")?,
        },
        "noop" => Decision::Noop { reasoning: field("reasoning")? },
        other => {
            return Err(err(
                format!("{path}.action"),
                format!("must be \"add\", \"update\", \"deprecate\" or \"noop\", got {other:?}"),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_qa_document_round_trips() {
        let text = r#"{"decisions":[
            {"action":"add","title":"Login: modal","content":"Appears late","scope":"suite","reasoning":"seen"},
            {"action":"update","observationId":"obs_a","reasoning":"held","extra":1},
            {"action":"deprecate","observationId":"obs_b","reasoning":"wrong"},
            {"action":"noop","reasoning":"nothing"}]}"#;
        let d = Decisions::from_json_with(text, UnknownKeys::Ignore).unwrap();
        assert_eq!(d.decisions.len(), 4);
        let e = Decisions::from_json(text).unwrap_err();
        assert_eq!(e.field, "decisions[1].extra");
        let typo = r#"{"decisions":[{"action":"update","observationID":"obs_a","reasoning":"r"}]}"#;
        let e = Decisions::from_json(typo).unwrap_err();
        assert_eq!(e.field, "decisions[0].observationID");
        assert!(e.rule.contains("did you mean \"observationId\""), "{e}");
        let e = Decisions::from_json(r#"{"decisons":[]}"#).unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.rule.as_str()),
            ("decisons", "unknown key (did you mean \"decisions\"?)")
        );
        assert_eq!(
            d.decisions[1],
            Decision::Update { observation_id: "obs_a".into(), reasoning: "held".into() }
        );
        let back = serde_json::to_value(&d).unwrap();
        assert_eq!(back["decisions"][0]["scope"], "suite");
        assert_eq!(back["decisions"][2]["observationId"], "obs_b");
        assert_eq!(Decisions::from_value(&back).unwrap(), d);
    }

    #[test]
    fn schema_violations_name_the_field() {
        let cases = [
            (
                r#"{"decisions":[{"action":"add","title":"","content":"c","scope":"product","reasoning":""}]}"#,
                "decisions[0].title",
            ),
            (
                r#"{"decisions":[{"action":"add","title":"t","content":"c","scope":"global","reasoning":""}]}"#,
                "decisions[0].scope",
            ),
            (r#"{"decisions":[{"action":"noop"}]}"#, "decisions[0].reasoning"),
            (
                r#"{"decisions":[{"action":"update","observationId":7,"reasoning":""}]}"#,
                "decisions[0].observationId",
            ),
            (r#"{"decisions":[{"action":"merge","reasoning":""}]}"#, "decisions[0].action"),
            // An unknown action is the error, not the id an update would carry.
            (
                r#"{"decisions":[{"action":"confirm","observationId":"obs_a","reasoning":""}]}"#,
                "decisions[0].action",
            ),
            (r#"{"decisions":{}}"#, "decisions"),
            (r#"{}"#, "decisions"),
            (r#"[1]"#, "(document)"),
            (r#"{"#, "(document)"),
        ];
        for (text, field) in cases {
            assert_eq!(Decisions::from_json(text).unwrap_err().field, field, "{text}");
        }
        assert_eq!(Decisions::from_json(r#"{"decisions":[]}"#).unwrap().decisions, vec![]);
    }

    #[test]
    fn json_schema_requires_every_field_of_every_variant() {
        let schema = Decisions::json_schema();
        let variants = schema["properties"]["decisions"]["items"]["anyOf"].as_array().unwrap();
        assert_eq!(variants.len(), 4);
        for v in variants {
            let props: Vec<&String> = v["properties"].as_object().unwrap().keys().collect();
            let required: Vec<&str> =
                v["required"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
            assert_eq!(props.len(), required.len(), "strict mode needs every property required");
            assert_eq!(v["additionalProperties"], false);
        }
    }
}
