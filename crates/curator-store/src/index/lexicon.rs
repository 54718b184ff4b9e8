//! Words a step may use for what an observation says in other words (terms mode, rule 2;
//! issue 14): forms the stemmer leaves apart ("pay" / "payment", "send" / "sent") and UI
//! synonyms ("sign in" / "log in", "basket" / "cart", "remove" / "delete").
//!
//! Why at query time and not in the index: the index keeps each observation's own words, so the
//! tables can change without rebuilding any index or migrating a PostgreSQL table, and an entry
//! can only *add* evidence to a step term: an alternative counts only where the pool holds it,
//! as one more form of the step's word, weighed by the document frequency of all its forms
//! together. A two-word entry ("log in") is matched joined (`login`), the form the step side
//! already builds from neighbouring words, because the analyzer drops the function words ("in")
//! that would otherwise split it.
//!
//! The tables are `data/lexicon/forms.txt` and `data/lexicon/synonyms.txt` (source and licence
//! in their headers), compiled in. Each line is one group; a word's alternatives are the other
//! members of every group it is in (not transitive: two groups sharing a word are not merged,
//! so a word with two senses cannot chain them).

use std::collections::HashMap;
use std::sync::LazyLock;

use super::relevance::analyze_unique;

const FORMS: &str = include_str!("../../data/lexicon/forms.txt");
const SYNONYMS: &str = include_str!("../../data/lexicon/synonyms.txt");

/// Analyzed key of a table entry → the analyzed keys of the other members of its groups.
static ALTERNATIVES: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let mut out = HashMap::new();
    add_groups(&mut out, FORMS);
    add_groups(&mut out, SYNONYMS);
    out
});

/// The analyzed form of one table entry: its words joined, then analyzed like a step word, so
/// "Log in" and "login" are one key and "payments" is "payment". `None` for an entry the
/// analyzer drops whole (a stop word or step verb).
fn key(entry: &str) -> Option<String> {
    let joined: String = curator_core::fts::token_texts(entry).concat();
    analyze_unique(&joined).into_iter().next()
}

/// The groups of a table, each as its line (comment cut) and its entries (`word: variant, …`).
fn groups(table: &str) -> impl Iterator<Item = (&str, Vec<&str>)> {
    table.lines().filter_map(|line| {
        let line = line.split('#').next().unwrap_or_default().trim();
        let (word, variants) = line.split_once(':')?;
        Some((line, std::iter::once(word).chain(variants.split(',')).collect()))
    })
}

fn add_groups(out: &mut HashMap<String, Vec<String>>, table: &str) {
    for (_, entries) in groups(table) {
        let mut members: Vec<String> = Vec::new();
        for entry in entries {
            if let Some(k) = key(entry)
                && !members.contains(&k)
            {
                members.push(k);
            }
        }
        for m in &members {
            let others: &mut Vec<String> = out.entry(m.clone()).or_default();
            for o in members.iter().filter(|o| *o != m) {
                if !others.contains(o) {
                    others.push(o.clone());
                }
            }
        }
    }
}

/// The other members of `term`'s groups (analyzed), empty when the tables do not know it.
pub(super) fn alternatives(term: &str) -> &'static [String] {
    ALTERNATIVES.get(term).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stem(word: &str) -> String {
        analyze_unique(word).remove(0)
    }

    #[test]
    fn every_member_of_a_group_finds_the_others_in_analyzed_form() {
        let mut g = HashMap::new();
        add_groups(
            &mut g,
            "# comment\nlogin: log in, sign in  # trailing\ncart: basket, baskets\n",
        );
        assert_eq!(g["login"], ["signin"]);
        assert_eq!(g["signin"], ["login"]);
        assert_eq!(g["basket"], ["cart"], "an inflection of a member is that member");
        assert!(!g.contains_key("log"), "a phrase is only known joined");
    }

    #[test]
    fn groups_sharing_a_word_are_not_chained() {
        let mut g = HashMap::new();
        add_groups(&mut g, "popup: modal\npopup: tooltip\n");
        assert_eq!(g["popup"], ["modal", "tooltip"]);
        assert_eq!(g["modal"], ["popup"], "modal is not a tooltip");
    }

    #[test]
    fn the_compiled_tables_relate_the_words_the_issue_names() {
        assert!(alternatives("pay").contains(&stem("payment")));
        assert!(alternatives("signin").contains(&"login".to_owned()));
        assert!(alternatives(&stem("basket")).contains(&stem("cart")));
        assert!(alternatives(&stem("remove")).contains(&stem("delete")));
        assert!(alternatives(&stem("sent")).contains(&stem("send")));
        assert!(alternatives("unknownword").is_empty());
    }

    #[test]
    fn every_entry_adds_a_form_the_stemmer_does_not_already_join() {
        for table in [FORMS, SYNONYMS] {
            for (line, entries) in groups(table) {
                let keys: Vec<Option<String>> = entries.into_iter().map(key).collect();
                let distinct: std::collections::HashSet<&Option<String>> = keys.iter().collect();
                // Two spellings of one phrase ("log in", "login") may share a key; a line whose
                // members all share one relates nothing.
                assert!(distinct.len() > 1, "{line:?} relates nothing: {keys:?}");
            }
        }
    }

    #[test]
    fn a_word_whose_stem_is_another_word_relates_nothing() {
        // "settings" stems to `set` and "authorize" to `author`: grouping them would give the
        // verb "set" and the noun "author" synonyms.
        for stem in ["set", "author", "prefer"] {
            assert!(alternatives(stem).is_empty(), "{stem}: {:?}", alternatives(stem));
        }
    }

    #[test]
    fn every_table_entry_survives_analysis() {
        // An entry the analyzer drops (a stop word, a step verb) would silently relate nothing.
        for table in [FORMS, SYNONYMS] {
            for (_, entries) in groups(table) {
                for entry in entries {
                    assert!(key(entry).is_some(), "{entry:?} analyzes to nothing");
                }
            }
        }
    }
}
