//! What a run record or decisions document may say beyond its schema (issue 15 item 3).
//!
//! A misspelt key is worse than a missing one: `observaton` in a step parses, and the step's
//! `MEMO:` is silently lost. So by default a key the schema does not know is an error that names
//! the key, its JSON path and the nearest known key (`did you mean "observation"?`). agent-qa's
//! zod schemas strip unknown keys instead; [`UnknownKeys::Ignore`] is that behaviour, kept for
//! harnesses that send more than curator reads (config `curator.unknownKeys: ignore`). The LLM's
//! answer is always read with `Ignore`: a model's extra key is no user's typo.

use serde_json::{Map, Value};

/// What to do with a key the schema does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownKeys {
    /// An error naming the key and the nearest known one (curator's default).
    #[default]
    Reject,
    /// Skip it, as agent-qa's zod schemas do.
    Ignore,
}

/// The first key of `obj` not in `known`, with the rule text to report, or `None` when every
/// key is known (or unknown keys are ignored). `path` is the object's JSON path (`""` for the
/// document); the returned field is the key's full path.
pub(crate) fn first_unknown(
    obj: &Map<String, Value>,
    known: &[&str],
    path: &str,
    policy: UnknownKeys,
) -> Option<(String, String)> {
    if policy == UnknownKeys::Ignore {
        return None;
    }
    let key = obj.keys().find(|k| !known.contains(&k.as_str()))?;
    let field = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
    let rule = match nearest(key, known) {
        Some(near) => format!("unknown key (did you mean {near:?}?)"),
        None => format!("unknown key (known keys: {})", known.join(", ")),
    };
    Some((field, rule))
}

/// The known key closest to `key`, when it is close enough to be a plausible typo: a
/// Damerau–Levenshtein distance of at most a third of the longer name (at least 1), or the
/// same name up to case and `_`/`-`.
pub(crate) fn nearest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let fold = |s: &str| s.to_lowercase().replace(['_', '-'], "");
    known
        .iter()
        .map(|k| {
            let d = if fold(k) == fold(key) { 0 } else { strsim::damerau_levenshtein(key, k) };
            (d, *k)
        })
        .filter(|(d, k)| *d <= (key.chars().count().max(k.chars().count()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_nearest_key_is_a_plausible_typo_or_nothing() {
        let known = ["name", "status", "observation", "error", "injected"];
        assert_eq!(nearest("observaton", &known), Some("observation"));
        assert_eq!(nearest("Status", &known), Some("status"));
        assert_eq!(nearest("inejcted", &known), Some("injected"));
        assert_eq!(nearest("screenshot", &known), None);
        assert_eq!(nearest("healingAttempts", &["healing_attempts"]), Some("healing_attempts"));
    }

    #[test]
    fn an_unknown_key_is_named_with_its_path_unless_ignored() {
        let obj = json!({"name": "a", "observaton": "MEMO: x"});
        let obj = obj.as_object().unwrap();
        let known = ["name", "observation"];
        let (field, rule) = first_unknown(obj, &known, "steps[1]", UnknownKeys::Reject).unwrap();
        assert_eq!(field, "steps[1].observaton");
        assert_eq!(rule, "unknown key (did you mean \"observation\"?)");
        assert!(first_unknown(obj, &known, "", UnknownKeys::Ignore).is_none());
        let obj = json!({"zzz": 1});
        let (field, rule) =
            first_unknown(obj.as_object().unwrap(), &known, "", UnknownKeys::Reject).unwrap();
        assert_eq!(field, "zzz");
        assert_eq!(rule, "unknown key (known keys: name, observation)");
    }
}
