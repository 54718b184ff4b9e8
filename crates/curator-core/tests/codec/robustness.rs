//! Hostile input: the parser answers quickly with a value or an error, and never panics.

use std::time::{Duration, Instant};

use curator_core::codec::{ParseError, parse_observation, write_observation};

use crate::common::{BASE_LINES, ID, file, observation};

#[test]
fn a_ten_megabyte_body_parses() {
    let body = "Step notes: click, wait, \"retry\" # again\r\n".repeat(250_000);
    assert!(body.len() >= 10_000_000);
    let started = Instant::now();
    let obs = parse_observation(&file(BASE_LINES, &body), ID).unwrap();
    assert!(obs.content.starts_with("Step notes") && !obs.content.contains('\r'));
    let text = write_observation(&obs).unwrap();
    assert_eq!(parse_observation(&text, ID).unwrap(), obs);
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
}

#[test]
fn a_ten_megabyte_frontmatter_errors_or_parses_cleanly() {
    let fm = format!("{BASE_LINES}notes: \"{}\"\n", "x".repeat(10_000_000));
    let obs = parse_observation(&file(&fm, "body"), ID).unwrap();
    assert_eq!(obs.extra.get("notes").and_then(|v| v.as_str()).map(str::len), Some(10_000_000));
    let deep = format!("{BASE_LINES}deep: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(parse_observation(&file(&deep, "body"), ID), Err(ParseError::Yaml(_))));
}

#[test]
fn billion_laughs_is_refused_quickly() {
    let mut fm = String::from(BASE_LINES);
    fm.push_str("lol0: &l0 \"lol\"\n");
    for i in 1..=9 {
        let refs = vec![format!("*l{}", i - 1); 10].join(", ");
        fm.push_str(&format!("lol{i}: &l{i} [{refs}]\n"));
    }
    let started = Instant::now();
    let err = parse_observation(&file(&fm, "body"), ID).unwrap_err();
    assert!(matches!(err, ParseError::Yaml(_)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
}

#[test]
fn a_few_aliases_are_fine() {
    let fm = format!("{BASE_LINES}shared: &s [a, b]\ncopy: *s\n");
    let obs = parse_observation(&file(&fm, "body"), ID).unwrap();
    assert_eq!(obs.extra.get("shared"), obs.extra.get("copy"));
}

#[test]
fn odd_unicode_is_handled() {
    for title in [
        "\u{0}",
        "\u{85}",
        "\u{2028}x\u{2029}",
        "\u{feff}",
        "\u{fffe}\u{ffff}",
        "\u{10ffff}",
        "\u{200b}",
        "a\u{300}",
    ] {
        let obs = curator_core::Observation { title: title.into(), ..observation() };
        let text = write_observation(&obs).unwrap();
        assert_eq!(parse_observation(&text, ID).unwrap().title, title, "{text}");
    }
    // An unpaired-surrogate escape cannot become a Rust string; agent-qa's `yaml` reads it
    // (a JS string holds it), so it reads here as U+FFFD, never a panic (issue 13 item 4).
    let fm = crate::common::with_line("title", "title: \"\\ud800\"");
    assert_eq!(parse_observation(&file(&fm, "body"), ID).unwrap().title, "\u{fffd}");
    // Raw control characters in a plain scalar.
    let fm = crate::common::with_line("title", "title: a\u{1}b");
    let _ = parse_observation(&file(&fm, "body"), ID);
}
