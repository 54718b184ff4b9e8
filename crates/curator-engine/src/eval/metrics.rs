//! Ranking metrics over one query's returned ids and its labelled relevant set (issue 3 item 7).
//!
//! Every function is pure and takes the list exactly as the engine would inject it, best first.
//! Invariant: an id counts as a hit at most once. If the engine returns the same relevant id twice
//! (agent-qa injects duplicates when one id lives in two folders, spec §11.7), only the first copy
//! earns recall and gain; the second copy is a wasted injection and counts as irrelevant.
//! Queries with an empty relevant set have no recall, reciprocal rank or nDCG (`None`): they are
//! measured only by what was injected for them.

use std::collections::HashSet;

/// For each position of `returned`: is it the first occurrence of a relevant id?
fn first_hits(returned: &[String], relevant: &HashSet<&str>) -> Vec<bool> {
    let mut seen = HashSet::new();
    returned.iter().map(|id| relevant.contains(id.as_str()) && seen.insert(id.as_str())).collect()
}

fn relevant_set(relevant: &[String]) -> HashSet<&str> {
    relevant.iter().map(String::as_str).collect()
}

/// Fraction of the relevant ids found among the first `k` returned ids.
/// `None` when nothing is relevant (recall is undefined there).
pub fn recall_at_k(returned: &[String], relevant: &[String], k: usize) -> Option<f64> {
    let rel = relevant_set(relevant);
    if rel.is_empty() {
        return None;
    }
    let hits = first_hits(returned, &rel).into_iter().take(k).filter(|&h| h).count();
    Some(hits as f64 / rel.len() as f64)
}

/// `1 / rank` of the first relevant id in the whole returned list (ranks start at 1), `0` when
/// none is returned, `None` when nothing is relevant.
pub fn reciprocal_rank(returned: &[String], relevant: &[String]) -> Option<f64> {
    let rel = relevant_set(relevant);
    if rel.is_empty() {
        return None;
    }
    let first = first_hits(returned, &rel).into_iter().position(|h| h);
    Some(first.map_or(0.0, |i| 1.0 / (i as f64 + 1.0)))
}

/// Normalised discounted cumulative gain over the first `cutoff` positions with binary gains:
/// `DCG = Σ hit_i / log2(i + 1)` for ranks `i = 1..=cutoff`, divided by the DCG of an ideal list
/// that puts `min(|relevant|, cutoff)` relevant ids first. `None` when nothing is relevant.
pub fn ndcg_at(returned: &[String], relevant: &[String], cutoff: usize) -> Option<f64> {
    let rel = relevant_set(relevant);
    if rel.is_empty() {
        return None;
    }
    let discount = |rank: usize| 1.0 / ((rank as f64) + 1.0).log2();
    let dcg: f64 = first_hits(returned, &rel)
        .into_iter()
        .take(cutoff)
        .enumerate()
        .filter(|&(_, hit)| hit)
        .map(|(i, _)| discount(i + 1))
        .sum();
    let ideal: f64 = (1..=rel.len().min(cutoff)).map(discount).sum();
    Some(if ideal > 0.0 { dcg / ideal } else { 0.0 })
}

/// The returned ids that are not a first occurrence of a relevant id, in returned order: what
/// the irrelevant-injection rate counts for this query (all of them for a "nothing" query).
pub fn irrelevant_injections(returned: &[String], relevant: &[String]) -> Vec<String> {
    let rel = relevant_set(relevant);
    returned
        .iter()
        .zip(first_hits(returned, &rel))
        .filter(|&(_, hit)| !hit)
        .map(|(id, _)| id.clone())
        .collect()
}

/// The relevant ids not found among the first `k` returned ids, in labelled order.
pub fn missed_at_k(returned: &[String], relevant: &[String], k: usize) -> Vec<String> {
    let top: HashSet<&str> = returned.iter().take(k).map(String::as_str).collect();
    let mut seen = HashSet::new();
    relevant
        .iter()
        .filter(|id| !top.contains(id.as_str()) && seen.insert(id.as_str()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn recall_counts_relevant_ids_in_the_first_k() {
        let returned = ids(&["x", "a", "y", "b"]);
        let relevant = ids(&["a", "b", "c"]);
        assert_eq!(recall_at_k(&returned, &relevant, 1), Some(0.0));
        assert_eq!(recall_at_k(&returned, &relevant, 2), Some(1.0 / 3.0));
        assert_eq!(recall_at_k(&returned, &relevant, 3), Some(1.0 / 3.0));
        assert_eq!(recall_at_k(&returned, &relevant, 4), Some(2.0 / 3.0));
        assert_eq!(recall_at_k(&returned, &relevant, 100), Some(2.0 / 3.0));
        assert_eq!(recall_at_k(&[], &relevant, 3), Some(0.0));
    }

    #[test]
    fn metrics_are_undefined_when_nothing_is_relevant() {
        let returned = ids(&["x"]);
        assert_eq!(recall_at_k(&returned, &[], 3), None);
        assert_eq!(reciprocal_rank(&returned, &[]), None);
        assert_eq!(ndcg_at(&returned, &[], 10), None);
    }

    #[test]
    fn a_duplicated_relevant_id_counts_once_and_its_copy_is_irrelevant() {
        let returned = ids(&["a", "a", "b"]);
        let relevant = ids(&["a", "b"]);
        assert_eq!(recall_at_k(&returned, &relevant, 2), Some(0.5));
        assert_eq!(irrelevant_injections(&returned, &relevant), ids(&["a"]));
        // Hits at ranks 1 and 3: (1 + 1/log2 4) / (1 + 1/log2 3) = 1.5 / 1.6309297535714575.
        let ndcg = ndcg_at(&returned, &relevant, 10).unwrap();
        assert!(close(ndcg, 1.5 / 1.630_929_753_571_457_5), "{ndcg}");
    }

    #[test]
    fn reciprocal_rank_uses_the_first_relevant_position() {
        let relevant = ids(&["a", "b"]);
        assert_eq!(reciprocal_rank(&ids(&["a", "b"]), &relevant), Some(1.0));
        assert_eq!(reciprocal_rank(&ids(&["x", "y", "b"]), &relevant), Some(1.0 / 3.0));
        assert_eq!(reciprocal_rank(&ids(&["x"]), &relevant), Some(0.0));
        assert_eq!(reciprocal_rank(&[], &relevant), Some(0.0));
    }

    #[test]
    fn ndcg_matches_hand_computed_values() {
        let relevant = ids(&["a", "b"]);
        // Ideal order.
        assert_eq!(ndcg_at(&ids(&["a", "b", "x"]), &relevant, 10), Some(1.0));
        // One hit at rank 2: (1/log2 3) / (1 + 1/log2 3) = 0.6309297535714575 / 1.6309297535714575.
        let got = ndcg_at(&ids(&["x", "a"]), &relevant, 10).unwrap();
        assert!(close(got, 0.386_852_807_234_540_9), "{got}");
        // A single relevant id at rank 3: 1/log2 4 = 0.5.
        assert_eq!(ndcg_at(&ids(&["x", "y", "a"]), &ids(&["a"]), 10), Some(0.5));
        // The cutoff drops hits past it and caps the ideal list.
        assert_eq!(ndcg_at(&ids(&["x", "y", "a"]), &ids(&["a"]), 2), Some(0.0));
        let relevant3 = ids(&["a", "b", "c"]);
        let got = ndcg_at(&ids(&["a", "b"]), &relevant3, 2).unwrap();
        assert!(close(got, 1.0), "{got}");
        assert_eq!(ndcg_at(&[], &relevant, 10), Some(0.0));
    }

    #[test]
    fn irrelevant_and_missed_lists_keep_order() {
        let returned = ids(&["x", "a", "y"]);
        let relevant = ids(&["b", "a", "c"]);
        assert_eq!(irrelevant_injections(&returned, &relevant), ids(&["x", "y"]));
        assert_eq!(missed_at_k(&returned, &relevant, 3), ids(&["b", "c"]));
        assert_eq!(missed_at_k(&returned, &relevant, 1), ids(&["b", "a", "c"]));
        // Every injection for a "nothing" query is irrelevant.
        assert_eq!(irrelevant_injections(&returned, &[]), returned);
    }
}
