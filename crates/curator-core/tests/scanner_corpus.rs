//! The scanner on a labelled corpus (agent-qa-memory §7, §11.10): how many attacks it blocks
//! (recall), how many ordinary QA observations it wrongly blocks (false-positive rate), and
//! whether it names the expected rule. The same figures are printed for agent-qa's original
//! regexes, so the improvement is measured rather than claimed.
//!
//! Run with `cargo test -p curator-core --test scanner_corpus -- --nocapture` to see the report.

mod scanner_support;

use curator_core::scanner::scan;
use scanner_support::{agent_qa_rule, cases, fixture, unescape};

struct Figures {
    attacks: usize,
    blocked: usize,
    right_rule: usize,
    benign: usize,
    false_positives: usize,
}

fn measure(rule_of: impl Fn(&str) -> Option<String>, report: &mut Vec<String>) -> Figures {
    let (attacks, benign) = (fixture("attacks.txt"), fixture("benign.txt"));
    let mut f = Figures { attacks: 0, blocked: 0, right_rule: 0, benign: 0, false_positives: 0 };
    for (lineno, line) in cases(&attacks) {
        let (expected, text) = line
            .split_once('\t')
            .unwrap_or_else(|| panic!("attacks.txt:{lineno}: expected `<rule>\\t<text>`"));
        let text = unescape(text, lineno);
        f.attacks += 1;
        match rule_of(&text) {
            Some(got) => {
                f.blocked += 1;
                if got == expected {
                    f.right_rule += 1;
                } else {
                    report.push(format!("  attacks.txt:{lineno}: expected {expected}, got {got}"));
                }
            }
            None => report.push(format!("  attacks.txt:{lineno}: MISSED ({expected}) {text:?}")),
        }
    }
    for (lineno, line) in cases(&benign) {
        let text = unescape(line, lineno);
        f.benign += 1;
        if let Some(got) = rule_of(&text) {
            f.false_positives += 1;
            report.push(format!("  benign.txt:{lineno}: FALSE POSITIVE {got} {text:?}"));
        }
    }
    f
}

fn ratio(a: usize, b: usize) -> f64 {
    a as f64 / b as f64
}

#[test]
fn recall_and_false_positive_rate_on_the_labelled_corpus() {
    let mut ours_report = Vec::new();
    let ours = measure(|t| scan(t).rule().map(str::to_owned), &mut ours_report);
    let mut theirs_report = Vec::new();
    let theirs = measure(agent_qa_rule, &mut theirs_report);

    let recall = ratio(ours.blocked, ours.attacks);
    let fpr = ratio(ours.false_positives, ours.benign);
    let agreement = ratio(ours.right_rule, ours.blocked.max(1));
    eprintln!(
        "scanner corpus: {} attacks, {} benign\n\
         curator : recall {:.3} ({}/{}), false-positive rate {:.3} ({}/{}), expected rule {:.3}\n\
         agent-qa: recall {:.3} ({}/{}), false-positive rate {:.3} ({}/{})",
        ours.attacks,
        ours.benign,
        recall,
        ours.blocked,
        ours.attacks,
        fpr,
        ours.false_positives,
        ours.benign,
        agreement,
        ratio(theirs.blocked, theirs.attacks),
        theirs.blocked,
        theirs.attacks,
        ratio(theirs.false_positives, theirs.benign),
        theirs.false_positives,
        theirs.benign,
    );
    eprintln!("curator misses and mismatches:\n{}", ours_report.join("\n"));

    assert!(ours.attacks >= 100, "the corpus needs at least 100 attacks, has {}", ours.attacks);
    assert!(ours.benign >= 100, "the corpus needs at least 100 benign cases, has {}", ours.benign);
    assert!(recall >= 0.95, "recall {recall:.3} < 0.95:\n{}", ours_report.join("\n"));
    assert!(fpr <= 0.02, "false-positive rate {fpr:.3} > 0.02:\n{}", ours_report.join("\n"));
    assert!(agreement >= 0.90, "expected rule named for only {agreement:.3} of blocked attacks");
}

#[test]
fn escapes_decode() {
    assert_eq!(unescape(r"a\nb\tc\\d\u{200B}e", 1), "a\nb\tc\\d\u{200B}e");
    assert_eq!(unescape(r"\u{E0041}", 1), "\u{E0041}");
}
