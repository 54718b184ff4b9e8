//! `agent-qa.config.yaml` → `services.memory` and `curator:` (agent-qa-memory §2, §11.1–2):
//! defaults, types, ranges, strictness, and memory-root resolution.

use std::path::{Path, PathBuf};

use curator_core::config::{Config, ConfigError, MemoryConfig, MemoryProvider, QueryMode};

fn parse(yaml: &str) -> Result<Config, ConfigError> {
    Config::from_yaml_str(yaml, Path::new("/work/project"))
}

fn error(yaml: &str) -> String {
    match parse(yaml) {
        Ok(c) => panic!("expected an error for {yaml:?}, got {c:?}"),
        Err(e) => e.to_string(),
    }
}

/// A config whose memory block holds one key.
fn memory_with(key: &str, value: &str) -> String {
    format!("services:\n  memory:\n    {key}: {value}\n")
}

#[test]
fn missing_block_uses_fallbacks_and_says_so() {
    for yaml in
        ["", "# only a comment\n", "project: acme\nservices:\n  browser:\n    headless: true\n"]
    {
        let c = parse(yaml).unwrap();
        assert_eq!(c.memory, MemoryConfig::default(), "{yaml:?}");
        assert!(!c.memory.block_present);
        assert!(!c.curator.block_present);
        assert_eq!(c.curator.query_mode, QueryMode::Terms);
    }
}

#[test]
fn empty_block_gets_every_schema_default() {
    let m = parse("services:\n  memory: {}\n").unwrap().memory;
    assert!(m.block_present);
    assert!(m.enabled);
    assert_eq!(m.provider, MemoryProvider::Local);
    assert_eq!(m.dir, "agent-qa-memory");
    assert_eq!(m.min_trust, 0.3);
    assert_eq!(m.max_injections, 3);
    assert!(m.curator_enabled);
    assert_eq!(m.lock_timeout_ms, 120_000);
    assert_eq!(m.trust_confirm_delta, 0.05);
    assert_eq!(m.trust_contradict_delta, 0.10);
    assert!(m.ablation_enabled);
    assert!(m.circuit_breaker_enabled);
    assert_eq!(m.circuit_breaker_window_size, 20);
    assert_eq!(m.circuit_breaker_baseline_size, 3);
    assert_eq!(m.circuit_breaker_threshold, 0.15);
}

#[test]
fn curator_deltas_do_not_depend_on_the_block_but_agent_qa_view_does() {
    // §11.2: agent-qa falls back to 0.02/0.05 without the block; curator keeps 0.05/0.10.
    let absent = parse("").unwrap().memory;
    let present = parse("services:\n  memory:\n    enabled: true\n").unwrap().memory;
    assert_eq!((absent.trust_confirm_delta, absent.trust_contradict_delta), (0.05, 0.10));
    assert_eq!((present.trust_confirm_delta, present.trust_contradict_delta), (0.05, 0.10));
    assert_eq!(absent.agent_qa_trust_deltas(), (0.02, 0.05));
    assert_eq!(present.agent_qa_trust_deltas(), (0.05, 0.10));
}

#[test]
fn every_key_is_read() {
    let yaml = "\
services:
  memory:
    enabled: false
    provider: local
    dir: '  ./mem  '
    minTrust: 0.5
    maxInjections: 7
    curatorEnabled: false
    curatorLockTimeout: 5000
    trustConfirmDelta: 0.1
    trustContradictDelta: 0.2
    ablationEnabled: false
    circuitBreakerEnabled: false
    circuitBreakerWindowSize: 5
    circuitBreakerBaselineSize: 2
    circuitBreakerThreshold: 1
curator:
  queryMode: phrase
";
    let c = parse(yaml).unwrap();
    let m = &c.memory;
    assert!(!m.enabled && !m.curator_enabled && !m.ablation_enabled && !m.circuit_breaker_enabled);
    assert_eq!(m.dir, "./mem", "dir is trimmed");
    assert_eq!((m.min_trust, m.max_injections, m.lock_timeout_ms), (0.5, 7, 5000));
    assert_eq!((m.trust_confirm_delta, m.trust_contradict_delta), (0.1, 0.2));
    assert_eq!((m.circuit_breaker_window_size, m.circuit_breaker_baseline_size), (5, 2));
    assert_eq!(m.circuit_breaker_threshold, 1.0);
    assert_eq!(c.curator.query_mode, QueryMode::Phrase);
    assert!(c.curator.block_present);
}

#[test]
fn unit_interval_keys_reject_out_of_range_and_non_numbers() {
    for key in ["minTrust", "trustConfirmDelta", "trustContradictDelta", "circuitBreakerThreshold"]
    {
        assert_eq!(
            error(&memory_with(key, "1.5")),
            format!("services.memory.{key}: must be between 0 and 1, got 1.5")
        );
        assert_eq!(
            error(&memory_with(key, "-0.1")),
            format!("services.memory.{key}: must be between 0 and 1, got -0.1")
        );
        assert_eq!(
            error(&memory_with(key, "'0.5'")),
            format!("services.memory.{key}: must be a number between 0 and 1, got \"0.5\"")
        );
        // The bounds are inclusive.
        assert!(parse(&memory_with(key, "0")).is_ok(), "{key}: 0");
        assert!(parse(&memory_with(key, "1.0")).is_ok(), "{key}: 1.0");
    }
}

#[test]
fn integer_keys_reject_below_minimum_fractions_and_strings() {
    for (key, min) in [
        ("maxInjections", 0),
        ("curatorLockTimeout", 1000),
        ("circuitBreakerWindowSize", 5),
        ("circuitBreakerBaselineSize", 2),
    ] {
        let below = min as i64 - 1;
        assert_eq!(
            error(&memory_with(key, &below.to_string())),
            format!("services.memory.{key}: must be an integer >= {min}, got {below}")
        );
        assert_eq!(
            error(&memory_with(key, "2.5")),
            format!("services.memory.{key}: must be an integer, got 2.5")
        );
        assert_eq!(
            error(&memory_with(key, "ten")),
            format!("services.memory.{key}: must be an integer, got \"ten\"")
        );
        assert!(parse(&memory_with(key, &min.to_string())).is_ok(), "{key}: {min}");
        // zod takes safe integers only; 2^53 + 1 is not even one to JavaScript.
        for unsafe_int in ["9007199254740993", "9007199254740992"] {
            assert_eq!(
                error(&memory_with(key, unsafe_int)),
                format!(
                    "services.memory.{key}: must be a safe integer (at most 2^53 - 1), got {unsafe_int}"
                )
            );
        }
        assert!(parse(&memory_with(key, "9007199254740991")).is_ok(), "{key}: 2^53 - 1");
        assert!(error(&memory_with(key, "1e300")).contains("must be a safe integer"), "{key}");
    }
    // An integral float is an integer, as in JavaScript.
    assert_eq!(parse(&memory_with("maxInjections", "4.0")).unwrap().memory.max_injections, 4);
}

#[test]
fn boolean_keys_accept_only_true_and_false() {
    for key in ["enabled", "curatorEnabled", "ablationEnabled", "circuitBreakerEnabled"] {
        for bad in ["'true'", "1", "null"] {
            let msg = error(&memory_with(key, bad));
            assert!(
                msg.starts_with(&format!("services.memory.{key}: must be true or false, got ")),
                "{msg}"
            );
        }
        assert!(!field_bool(&parse(&memory_with(key, "false")).unwrap().memory, key));
    }
}

fn field_bool(m: &MemoryConfig, key: &str) -> bool {
    match key {
        "enabled" => m.enabled,
        "curatorEnabled" => m.curator_enabled,
        "ablationEnabled" => m.ablation_enabled,
        "circuitBreakerEnabled" => m.circuit_breaker_enabled,
        _ => unreachable!(),
    }
}

#[test]
fn provider_and_dir_rules() {
    assert_eq!(
        error(&memory_with("provider", "redis")),
        "services.memory.provider: must be \"local\", got \"redis\""
    );
    assert_eq!(
        error(&memory_with("dir", "'   '")),
        "services.memory.dir: must be at least 1 character after trimming, got \"   \""
    );
    assert_eq!(
        error(&memory_with("dir", "''")).split(',').next().unwrap(),
        "services.memory.dir: must be at least 1 character after trimming"
    );
    assert_eq!(error(&memory_with("dir", "42")), "services.memory.dir: must be a string, got 42");
}

#[test]
fn unknown_keys_are_errors_in_strict_blocks_only() {
    let msg = error(&memory_with("maxInjection", "3"));
    assert!(
        msg.starts_with(
            "services.memory.maxInjection: unknown key (allowed: enabled, provider, dir,"
        ),
        "{msg}"
    );
    let msg = error("curator:\n  queryMode: terms\n  mode: phrase\n");
    assert!(msg.starts_with("curator.mode: unknown key (allowed: queryMode"), "{msg}");
    // agent-qa's other keys are not ours to judge.
    let c =
        parse("services:\n  memory: {}\n  browser: {anything: 1}\nmodel: gpt\nllm: 3\n").unwrap();
    assert!(c.memory.block_present);
}

#[test]
fn blocks_must_be_mappings() {
    assert_eq!(
        error("services:\n  memory: true\n"),
        "services.memory: must be a mapping, got true"
    );
    assert_eq!(error("services:\n  memory:\n"), "services.memory: must be a mapping, got null");
    assert_eq!(error("services: [1, 2]\n"), "services: must be a mapping, got a list");
    assert_eq!(error("curator: phrase\n"), "curator: must be a mapping, got \"phrase\"");
    assert_eq!(error("- a\n- b\n"), "(top level): must be a mapping, got a list");
    assert_eq!(
        error("curator:\n  queryMode: fuzzy\n"),
        "curator.queryMode: must be \"terms\" or \"phrase\", got \"fuzzy\""
    );
}

#[test]
fn bad_yaml_is_a_yaml_error_not_a_panic() {
    let cases = [
        "services: {memory: [\n",
        "services:\n  memory:\n    minTrust: 0.3\n    minTrust: 0.4\n",
        "a: 1\n---\nb: 2\n",
        "a: b: c\n",
        "key: \"unterminated\n",
    ];
    for yaml in cases {
        assert!(
            matches!(parse(yaml), Err(ConfigError::Yaml { .. })),
            "{yaml:?}: {:?}",
            parse(yaml)
        );
    }
    // An alias bomb is refused by the parser's budgets.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
    }
    assert!(matches!(parse(&bomb), Err(ConfigError::Yaml { .. })));
    let huge = format!("x: '{}'\n", "a".repeat(2 << 20));
    assert!(matches!(parse(&huge), Err(ConfigError::TooLarge { .. })));
}

#[test]
fn memory_root_resolution() {
    let root =
        |yaml: &str, dir: &str| Config::from_yaml_str(yaml, Path::new(dir)).unwrap().memory_root();
    // Absent: the default folder beside the config.
    assert_eq!(root("", "/work/project"), PathBuf::from("/work/project/agent-qa-memory"));
    // Relative: joined to the config folder and normalised.
    assert_eq!(
        root(&memory_with("dir", "../shared/mem/"), "/work/project"),
        PathBuf::from("/work/shared/mem")
    );
    assert_eq!(
        root(&memory_with("dir", "./a/./b"), "/work/project"),
        PathBuf::from("/work/project/a/b")
    );
    // Absolute: normalised, the config folder ignored.
    assert_eq!(
        root(&memory_with("dir", "/srv//mem/../memory"), "/work/project"),
        PathBuf::from("/srv/memory")
    );
    assert_eq!(root(&memory_with("dir", "/../../mem"), "/x"), PathBuf::from("/mem"));
    // Trimmed before resolving.
    assert_eq!(root(&memory_with("dir", "'  mem  '"), "/p"), PathBuf::from("/p/mem"));
    // A relative config folder stays relative (no filesystem or cwd access).
    assert_eq!(root("", "."), PathBuf::from("agent-qa-memory"));
    assert_eq!(Config::default().memory_root(), PathBuf::from("agent-qa-memory"));
}

/// The config is read as agent-qa's `yaml` 2.8.4 reads it (YAML 1.2 core schema), not as a
/// YAML 1.1 parser would: spellings only YAML 1.1 takes for numbers or booleans are strings, so
/// zod refuses them, and `<<` is an ordinary (hence unknown) key, not a merge.
#[test]
fn yaml_is_read_as_agent_qa_reads_it() {
    for (value, shown) in [("1_0", "\"1_0\""), ("0b101", "\"0b101\""), ("1:30", "\"1:30\"")] {
        assert_eq!(
            error(&memory_with("circuitBreakerWindowSize", value)),
            format!("services.memory.circuitBreakerWindowSize: must be an integer, got {shown}"),
        );
    }
    for value in ["yes", "on", "y"] {
        let err = error(&memory_with("enabled", value));
        assert_eq!(err, format!("services.memory.enabled: must be true or false, got {value:?}"));
    }
    // What the core schema does read as numbers and booleans is taken.
    let c = parse(&memory_with("circuitBreakerWindowSize", "0x14")).unwrap();
    assert_eq!(c.memory.circuit_breaker_window_size, 20);
    let c = parse(&memory_with("curatorLockTimeout", "0o7640")).unwrap();
    assert_eq!(c.memory.lock_timeout_ms, 4000);
    let c = parse(&memory_with("minTrust", ".5")).unwrap();
    assert_eq!(c.memory.min_trust, 0.5);
    let c = parse(&memory_with("enabled", "False")).unwrap();
    assert!(!c.memory.enabled);
    // Non-finite numbers are numbers, and out of every range.
    assert_eq!(
        error(&memory_with("minTrust", ".nan")),
        "services.memory.minTrust: must be between 0 and 1, got NaN"
    );
    assert_eq!(
        error(&memory_with("curatorLockTimeout", ".inf")),
        "services.memory.curatorLockTimeout: must be an integer, got Infinity"
    );
    // A merge key is a key like any other; the strict block does not know it.
    let merged = "base: &base\n  minTrust: 0.4\nservices:\n  memory:\n    <<: *base\n";
    assert!(error(merged).starts_with("services.memory.<<: unknown key"), "{}", error(merged));
    // A quoted number is a string.
    assert_eq!(
        error(&memory_with("minTrust", "\"0.4\"")),
        "services.memory.minTrust: must be a number between 0 and 1, got \"0.4\""
    );
}
