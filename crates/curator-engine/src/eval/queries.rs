//! The labelled query file of an eval set: `queries.jsonl` (ARCHITECTURE "Eval set", eval/README.md).
//!
//! One JSON object a line: `{"query","product","test","suite"?,"relevant":[ids],"classes"?:[names],
//! "note"?}` with `suite = {"id","tests":[{"test","id"}],"position"}`. `classes` labels what kind of
//! step a query is (e.g. `inflection`, `synonym`, `short`, `long`, `multi`, `nothing`) so a report
//! can give every figure per class. Blank lines are skipped. The loader is
//! strict, because a typo in a label silently changes every figure the set produces: an unknown
//! key, a wrong type, an empty step, an invalid scope name or observation id, a repeated relevant
//! id or a suite whose `tests[position].id` is not the query's `test` is an error naming the line
//! and the field.

use std::collections::HashSet;
use std::path::Path;

use curator_core::{ObservationId, ScopeName, SnapshotEntry};
use serde_json::{Map, Value};

use super::{EvalError, EvalQuery, EvalSuite};

const QUERY_KEYS: [&str; 7] = ["query", "product", "test", "suite", "relevant", "classes", "note"];
const SUITE_KEYS: [&str; 3] = ["id", "tests", "position"];

/// Reads and validates a `queries.jsonl` file.
pub fn load_queries(path: &Path) -> Result<Vec<EvalQuery>, EvalError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| EvalError::Io { path: path.to_path_buf(), source })?;
    parse_queries(&text, &path.display().to_string())
}

/// Validates the text of a `queries.jsonl` file; `source` names it in error messages.
pub fn parse_queries(text: &str, source: &str) -> Result<Vec<EvalQuery>, EvalError> {
    let mut queries = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line = Line { source, number: index + 1 };
        queries.push(line.parse(raw)?);
    }
    Ok(queries)
}

/// Where a value came from, so every error names the file, the line and the field.
struct Line<'a> {
    source: &'a str,
    number: usize,
}

impl Line<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> EvalError {
        EvalError::Field {
            source_name: self.source.to_owned(),
            line: self.number,
            field: field.to_owned(),
            message: message.into(),
        }
    }

    fn parse(&self, raw: &str) -> Result<EvalQuery, EvalError> {
        let value: Value = serde_json::from_str(raw)
            .map_err(|e| self.err("(line)", format!("not valid JSON: {e}")))?;
        let Value::Object(obj) = value else {
            return Err(self.err("(line)", "expected a JSON object"));
        };
        self.reject_unknown(&obj, &QUERY_KEYS, "")?;

        let query = self.string(&obj, "query")?;
        if query.trim().is_empty() {
            return Err(self.err("query", "the step text is blank"));
        }
        let product = self.scope(&obj, "product")?;
        let test = self.scope(&obj, "test")?;
        let suite = match obj.get("suite") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.suite(v, &test)?),
        };
        let relevant = self.relevant(&obj)?;
        let note = match obj.get("note") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(self.err("note", "expected a string")),
        };
        let classes = self.classes(&obj)?;
        Ok(EvalQuery { line: self.number, query, product, test, suite, relevant, classes, note })
    }

    fn reject_unknown(
        &self,
        obj: &Map<String, Value>,
        known: &[&str],
        prefix: &str,
    ) -> Result<(), EvalError> {
        match obj.keys().find(|k| !known.contains(&k.as_str())) {
            Some(key) => Err(self.err(
                &format!("{prefix}{key}"),
                format!("unknown key; expected one of: {}", known.join(", ")),
            )),
            None => Ok(()),
        }
    }

    fn string(&self, obj: &Map<String, Value>, field: &str) -> Result<String, EvalError> {
        match obj.get(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.err(field, format!("expected a string, got {}", kind(other)))),
            None => Err(self.err(field, "missing")),
        }
    }

    fn scope(&self, obj: &Map<String, Value>, field: &str) -> Result<ScopeName, EvalError> {
        let s = self.string(obj, field)?;
        ScopeName::new(s).map_err(|e| self.err(field, e.to_string()))
    }

    fn suite(&self, value: &Value, test: &ScopeName) -> Result<EvalSuite, EvalError> {
        let Value::Object(obj) = value else {
            return Err(self.err("suite", format!("expected an object, got {}", kind(value))));
        };
        self.reject_unknown(obj, &SUITE_KEYS, "suite.")?;
        let id = ScopeName::new(self.string(obj, "id").map_err(|e| self.rename(e, "suite.id"))?)
            .map_err(|e| self.err("suite.id", e.to_string()))?;
        let tests = match obj.get("tests") {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    serde_json::from_value::<SnapshotEntry>(item.clone()).map_err(|e| {
                        self.err(
                            &format!("suite.tests[{i}]"),
                            format!("expected {{\"test\",\"id\"}} strings only: {e}"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(Value::Array(_)) => {
                return Err(self.err(
                    "suite.tests",
                    "must not be empty (a suite snapshot lists at least one test)",
                ));
            }
            Some(other) => {
                return Err(
                    self.err("suite.tests", format!("expected an array, got {}", kind(other)))
                );
            }
            None => return Err(self.err("suite.tests", "missing")),
        };
        let position = match obj.get("position") {
            Some(Value::Number(n)) => n.as_u64().ok_or_else(|| {
                self.err("suite.position", format!("expected an integer >= 0, got {n}"))
            })?,
            Some(other) => {
                return Err(
                    self.err("suite.position", format!("expected an integer, got {}", kind(other)))
                );
            }
            None => return Err(self.err("suite.position", "missing")),
        };
        // The runner queries suite child i with that child's own test id (spec §3.6); any other
        // pairing describes a step no runner would ever send.
        let child = usize::try_from(position).ok().and_then(|p| tests.get(p)).ok_or_else(|| {
            self.err(
                "suite.position",
                format!("{position} is past the last of {} suite tests", tests.len()),
            )
        })?;
        if child.id != test.as_str() {
            return Err(self.err(
                "test",
                format!("must equal suite.tests[{position}].id ({:?}) for a suite step", child.id),
            ));
        }
        Ok(EvalSuite { id, tests, position })
    }

    /// Class labels: distinct, non-blank names made of `a-z`, `0-9`, `-` and `_`, so a typo
    /// cannot hide a query in a class of its own without being visible in the report.
    fn classes(&self, obj: &Map<String, Value>) -> Result<Vec<String>, EvalError> {
        let items = match obj.get("classes") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(
                    self.err("classes", format!("expected an array of names, got {}", kind(other)))
                );
            }
        };
        let mut out: Vec<String> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = format!("classes[{i}]");
            let Value::String(name) = item else {
                return Err(self.err(&field, format!("expected a string, got {}", kind(item))));
            };
            let valid = !name.is_empty()
                && name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                });
            if !valid {
                return Err(
                    self.err(&field, format!("{name:?} is not a class name (a-z, 0-9, - and _)"))
                );
            }
            if out.contains(name) {
                return Err(self.err(&field, format!("{name} is listed twice")));
            }
            out.push(name.clone());
        }
        Ok(out)
    }

    fn relevant(&self, obj: &Map<String, Value>) -> Result<Vec<ObservationId>, EvalError> {
        let items = match obj.get("relevant") {
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(
                    self.err("relevant", format!("expected an array of ids, got {}", kind(other)))
                );
            }
            None => {
                return Err(
                    self.err("relevant", "missing (use [] when nothing should be injected)")
                );
            }
        };
        let mut seen = HashSet::new();
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field = format!("relevant[{i}]");
                let Value::String(s) = item else {
                    return Err(
                        self.err(&field, format!("expected an id string, got {}", kind(item)))
                    );
                };
                let id = ObservationId::parse(s).map_err(|e| self.err(&field, e.to_string()))?;
                if !seen.insert(s.as_str()) {
                    return Err(self.err(&field, format!("{s} is listed twice")));
                }
                Ok(id)
            })
            .collect()
    }

    /// Re-labels a "missing"/type error raised for a nested key with its full path.
    fn rename(&self, err: EvalError, field: &str) -> EvalError {
        match err {
            EvalError::Field { message, .. } => self.err(field, message),
            other => other,
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID_A: &str = "obs_amber-birch-cedar-delta-ember-fern-glade-hazel-iris-jade";
    const ID_B: &str = "obs_kelp-lake-mint-noble-onyx-pine-quill-reef-sage-tulip";
    const LEGACY: &str = "obs_amber-birch-cedar-delta-ember-fern";
    const T0: &str = "t_amber-birch-cedar-delta-ember-fern-glade-hazel-iris-jade";
    const T1: &str = "t_kelp-lake-mint-noble-onyx-pine-quill-reef-sage-tulip";

    fn line_error(text: &str) -> (usize, String, String) {
        match parse_queries(text, "q.jsonl").unwrap_err() {
            EvalError::Field { line, field, message, .. } => (line, field, message),
            other => panic!("unexpected error {other:?}"),
        }
    }

    #[test]
    fn reads_class_labels_and_refuses_bad_ones() {
        let base =
            format!("\"query\":\"Pay\",\"product\":\"shop\",\"test\":\"{T0}\",\"relevant\":[]");
        let qs =
            parse_queries(&format!("{{{base},\"classes\":[\"short\",\"nothing\"]}}"), "q").unwrap();
        assert_eq!(qs[0].classes, vec!["short".to_owned(), "nothing".to_owned()]);
        assert!(parse_queries(&format!("{{{base}}}"), "q").unwrap()[0].classes.is_empty());
        for (classes, field, needle) in [
            ("\"short\"", "classes", "expected an array"),
            ("[1]", "classes[0]", "expected a string"),
            ("[\"Short\"]", "classes[0]", "not a class name"),
            ("[\"\"]", "classes[0]", "not a class name"),
            ("[\"short\",\"short\"]", "classes[1]", "listed twice"),
        ] {
            let (line, got_field, message) =
                line_error(&format!("{{{base},\"classes\":{classes}}}"));
            assert_eq!((line, got_field.as_str()), (1, field), "{classes}");
            assert!(message.contains(needle), "{classes}: {message}");
        }
    }

    #[test]
    fn reads_plain_and_suite_queries_and_skips_blank_lines() {
        let text = format!(
            "{{\"query\":\"Click Sign in\",\"product\":\"shop\",\"test\":\"{T0}\",\"relevant\":[\"{ID_A}\",\"{LEGACY}\"]}}\n\n\
             {{\"query\":\"Pay\",\"product\":\"shop\",\"test\":\"{T1}\",\"suite\":{{\"id\":\"s_x\",\"tests\":[{{\"test\":\"a.yaml\",\"id\":\"{T0}\"}},{{\"test\":\"b.yaml\",\"id\":\"{T1}\"}}],\"position\":1}},\"relevant\":[],\"note\":\"why\"}}\n"
        );
        let qs = parse_queries(&text, "q.jsonl").unwrap();
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[0].line, 1);
        assert_eq!(qs[0].relevant_ids(), vec![ID_A.to_owned(), LEGACY.to_owned()]);
        assert!(qs[0].suite.is_none());
        assert_eq!(qs[1].line, 3);
        let suite = qs[1].suite.as_ref().unwrap();
        assert_eq!((suite.id.as_str(), suite.position, suite.tests.len()), ("s_x", 1, 2));
        assert_eq!(suite.tests[1].test, "b.yaml");
        assert!(qs[1].relevant.is_empty());
        assert_eq!(qs[1].note.as_deref(), Some("why"));
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let ok =
            format!("{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[]}}\n");
        let cases: Vec<(String, &str, &str)> = vec![
            ("{\"query\":\"a\"".to_owned(), "(line)", "not valid JSON"),
            ("[1]".to_owned(), "(line)", "JSON object"),
            (
                format!("{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevent\":[]}}"),
                "relevent",
                "unknown key",
            ),
            (
                format!("{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\"}}"),
                "relevant",
                "missing",
            ),
            (
                format!("{{\"query\":\"  \",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[]}}"),
                "query",
                "blank",
            ),
            (
                format!("{{\"query\":3,\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[]}}"),
                "query",
                "a number",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"../x\",\"test\":\"{T0}\",\"relevant\":[]}}"
                ),
                "product",
                "separator",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[\"obs_bad\"]}}"
                ),
                "relevant[0]",
                "obs_bad",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[\"{ID_A}\",\"{ID_B}\",\"{ID_A}\"]}}"
                ),
                "relevant[2]",
                "listed twice",
            ),
            (
                format!("{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[1]}}"),
                "relevant[0]",
                "a number",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[],\"suite\":{{\"id\":\"s\",\"tests\":[],\"position\":0}}}}"
                ),
                "suite.tests",
                "empty",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[],\"suite\":{{\"id\":\"s\",\"tests\":[{{\"test\":\"a\",\"id\":\"{T0}\",\"x\":1}}],\"position\":0}}}}"
                ),
                "suite.tests[0]",
                "unknown field",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[],\"suite\":{{\"id\":\"s\",\"tests\":[{{\"test\":\"a\",\"id\":\"{T0}\"}}],\"position\":1}}}}"
                ),
                "suite.position",
                "past the last",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[],\"suite\":{{\"id\":\"s\",\"tests\":[{{\"test\":\"a\",\"id\":\"{T0}\"}}],\"position\":-1}}}}"
                ),
                "suite.position",
                "integer >= 0",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T1}\",\"relevant\":[],\"suite\":{{\"id\":\"s\",\"tests\":[{{\"test\":\"a\",\"id\":\"{T0}\"}}],\"position\":0}}}}"
                ),
                "test",
                "suite.tests[0].id",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[],\"suite\":{{\"tests\":[{{\"test\":\"a\",\"id\":\"{T0}\"}}],\"position\":0}}}}"
                ),
                "suite.id",
                "missing",
            ),
            (
                format!(
                    "{{\"query\":\"a\",\"product\":\"p\",\"test\":\"{T0}\",\"relevant\":[],\"suite\":{{\"id\":\"s\",\"tests\":[{{\"test\":\"a\",\"id\":\"{T0}\"}}],\"position\":0,\"pos\":1}}}}"
                ),
                "suite.pos",
                "unknown key",
            ),
        ];
        for (bad, field, needle) in cases {
            // The bad line comes second, so the reported line number must be 2.
            let (line, got_field, message) = line_error(&format!("{ok}{bad}\n"));
            assert_eq!((line, got_field.as_str()), (2, field), "{bad}: {message}");
            assert!(message.contains(needle), "{bad}: {message:?} lacks {needle:?}");
        }
    }

    #[test]
    fn the_message_names_file_line_and_field() {
        let err = parse_queries("{\"query\":\"a\"}", "eval/dev/queries.jsonl").unwrap_err();
        assert_eq!(err.to_string(), "eval/dev/queries.jsonl line 1: field `product`: missing");
    }

    #[test]
    fn a_missing_file_is_an_io_error_naming_the_path() {
        let err = load_queries(Path::new("/nonexistent/queries.jsonl")).unwrap_err();
        assert!(matches!(err, EvalError::Io { .. }));
        assert!(err.to_string().starts_with("/nonexistent/queries.jsonl: cannot read queries"));
    }
}
