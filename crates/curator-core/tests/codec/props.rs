//! Property tests: any valid observation survives write → parse; no text makes the parser
//! panic.

use curator_core::codec::{ExtraKeys, YamlValue, parse_observation, write_observation};
use curator_core::{Observation, ObservationId, SnapshotEntry, SuitePlacement};
use proptest::prelude::*;

/// Text that stresses the quoting rules: indicators, `: `, ` #`, quotes, blanks, newlines,
/// control characters, non-ASCII.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(": ".to_owned()),
        Just(" #".to_owned()),
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just("\n".to_owned()),
        Just("\n\n".to_owned()),
        Just(" ".to_owned()),
        Just("\t".to_owned()),
        Just("-".to_owned()),
        Just("---".to_owned()),
        Just("...".to_owned()),
        Just("%".to_owned()),
        Just("?".to_owned()),
        Just("\\".to_owned()),
        Just("\r".to_owned()),
        Just("\u{1}".to_owned()),
        Just("\u{85}".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("\u{2028}".to_owned()),
        Just("\u{feff}".to_owned()),
        Just("true".to_owned()),
        Just("0.5".to_owned()),
        Just("é✓😀".to_owned()),
        "[a-z]{1,8}",
        "[!-~]{1,4}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 1..8).prop_map(|parts| parts.concat())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![tricky_text(), any::<String>().prop_filter("non-empty", |s| !s.is_empty())]
}

fn id() -> impl Strategy<Value = ObservationId> {
    prop_oneof![Just(10usize), Just(6usize)]
        .prop_flat_map(|n| prop::collection::vec("[a-z]{2,6}", n))
        .prop_map(|words| ObservationId::parse(&format!("obs_{}", words.join("-"))).unwrap())
}

fn datetime() -> impl Strategy<Value = String> {
    (
        0u32..=9999,
        1u32..=12,
        1u32..=28,
        0u32..24,
        0u32..60,
        prop::option::of(0u32..60),
        prop::option::of("[0-9]{1,9}"),
    )
        .prop_map(|(y, mo, d, h, mi, s, frac)| {
            let mut out = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}");
            if let Some(s) = s {
                out.push_str(&format!(":{s:02}"));
                if let Some(f) = frac {
                    out.push('.');
                    out.push_str(&f);
                }
            }
            out.push('Z');
            out
        })
}

fn trust() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), Just(0.5), Just(1e-7), Just(0.55), 0.0..=1.0f64]
}

fn count() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..100, 0u64..=(1 << 53) - 1]
}

fn body() -> impl Strategy<Value = String> {
    prop_oneof![
        any_text(),
        Just(
            "Results:\n\n| a | b |\n|---|---|\n| 1: x | \"2\" |\n\n```yaml\nk: v\n---\n```"
                .to_owned()
        ),
    ]
    .prop_filter("agent-qa refuses a blank body", |s| !is_blank(s))
}

fn is_blank(s: &str) -> bool {
    s.chars().all(|c| {
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
    })
}

fn extra_value() -> impl Strategy<Value = YamlValue> {
    let scalar = prop_oneof![
        Just(YamlValue::Null),
        any::<bool>().prop_map(YamlValue::Bool),
        any::<i64>().prop_map(YamlValue::Int),
        (-1e9..1e9f64).prop_map(YamlValue::Float),
        any_text().prop_map(YamlValue::String),
    ];
    scalar.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(YamlValue::Seq),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..3).prop_map(|entries| {
                let mut seen = std::collections::HashSet::new();
                YamlValue::Map(
                    entries.into_iter().filter(|(k, _)| seen.insert(k.clone())).collect(),
                )
            }),
        ]
    })
}

fn extras() -> impl Strategy<Value = ExtraKeys> {
    prop::collection::vec(("x_[a-z]{1,6}|[A-Z][a-z ]{0,5}", extra_value()), 0..3).prop_map(
        |entries| {
            let mut seen = std::collections::HashSet::new();
            ExtraKeys(entries.into_iter().filter(|(k, _)| seen.insert(k.clone())).collect())
        },
    )
}

fn suite() -> impl Strategy<Value = Option<SuitePlacement>> {
    prop::option::of((count(), prop::collection::vec((any_text(), any_text()), 1..4)).prop_map(
        |(position, entries)| SuitePlacement {
            position,
            suite_snapshot:
                entries.into_iter().map(|(test, id)| SnapshotEntry { test, id }).collect(),
        },
    ))
}

fn observation() -> impl Strategy<Value = Observation> {
    (
        (id(), any_text(), body(), trust(), datetime(), datetime()),
        (count(), count(), any_text(), suite(), extras()),
    )
        .prop_map(
            |(
                (id, title, content, trust, created, last_confirmed),
                (confirmed_count, contradicted_count, source_test, suite, extra),
            )| Observation {
                id,
                title,
                content,
                trust,
                created,
                last_confirmed,
                confirmed_count,
                contradicted_count,
                source_test,
                suite,
                extra,
            },
        )
}

/// What a reader gets back for a body: the writer's newline is added, every `\r\n` becomes
/// `\n`, one trailing `\n` is removed (§1.4 rule 3, §1.6 "lossy").
fn body_as_read(content: &str) -> String {
    let mut s = format!("{content}\n").replace("\r\n", "\n");
    s.pop();
    s
}

proptest! {
    // At least 512 cases; `PROPTEST_CASES=20000` runs a longer search.
    #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(512)))]

    #[test]
    fn write_then_parse_round_trips(obs in observation()) {
        let text = write_observation(&obs).unwrap();
        let back = parse_observation(&text, obs.id.as_str())
            .map_err(|e| TestCaseError::fail(format!("{e}\n--- text ---\n{text}")))?;
        let expected = Observation { content: body_as_read(&obs.content), ..obs };
        prop_assert_eq!(back, expected, "text:\n{}", text);
    }

    #[test]
    fn rewriting_a_parsed_file_is_stable(obs in observation()) {
        let text = write_observation(&obs).unwrap();
        let back = parse_observation(&text, obs.id.as_str()).unwrap();
        let again = write_observation(&back).unwrap();
        let normalised = write_observation(&Observation { content: body_as_read(&obs.content), ..obs }).unwrap();
        prop_assert_eq!(again, normalised);
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>(), stem in "[a-z_]{0,12}") {
        let _ = parse_observation(&text, &stem);
    }

    #[test]
    fn arbitrary_frontmatter_never_panics(fm in any_text(), body in any_text()) {
        let _ = parse_observation(&format!("---\n{fm}\n---\n{body}"), "obs_x");
    }

    #[test]
    fn mutated_valid_files_never_panic(obs in observation(), at in any::<prop::sample::Index>(), junk in any_text()) {
        let mut text = write_observation(&obs).unwrap();
        let mut cut = at.index(text.len() + 1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.insert_str(cut, &junk);
        let _ = parse_observation(&text, obs.id.as_str());
    }
}
