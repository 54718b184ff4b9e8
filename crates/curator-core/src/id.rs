//! Observation, test, suite, hook and run ids (agent-qa-memory §1.7).
//!
//! Validation is shape-only, exactly as agent-qa's `id-agent` parser: a prefix, `_`, then words of
//! two or more lowercase ASCII letters separated by `-` or `_`. No word-list membership check is
//! made, so ids written by agent-qa (from its own word list) are accepted unchanged.
//!
//! Generation draws 10 words from our own 4,096-word list (`data/words.txt`, provenance in
//! `data/README.md`) with a CSPRNG: each word is `WORDS[r % 4096]` for a uniform `u16` `r`, which
//! is unbiased because 65,536 is a multiple of 4,096; 10 words give 120 bits. Unlike agent-qa,
//! [`ObservationId::generate_unique`] re-draws when an id is already taken, so a new id never
//! names an existing file.
//!
//! [`with_seeded_ids`] makes generation reproducible on one thread for the length of a call: a
//! simulation that curates thousands of runs (`curate_policy_sim`) otherwise draws different ids
//! on every run, and since probation breaks ties by a hash of the id, its figures moved from one
//! run of the same code to the next. Nothing in curator itself calls it.

use std::cell::Cell;
use std::fmt;
use std::sync::LazyLock;

use rand::Rng;

/// How many words a generated id has.
const CANONICAL_WORDS: usize = 10;
/// How many words a legacy (read-only in agent-qa) observation id has.
const LEGACY_WORDS: usize = 6;
/// The size of the word list; a power of two dividing 65,536 so `u16 % WORD_COUNT` is unbiased.
const WORD_COUNT: usize = 4096;

/// The id word list, one word per line (checked by `word_list_is_well_formed` below).
static WORDS: LazyLock<Box<[&'static str]>> =
    LazyLock::new(|| include_str!("../data/words.txt").lines().collect());

/// The shape of a valid observation id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdShape {
    /// `obs_` + 10 words: what agent-qa and curator write.
    Canonical,
    /// `obs_` + 6 words: readable; curator may rewrite under the same id (agent-qa cannot).
    Legacy,
}

/// Why a string is not an observation id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Observation ID must be obs_ followed by either 10 canonical words or a legacy 6-word body (got {0:?})"
)]
pub struct IdError(pub String);

/// A validated observation id (canonical or legacy shape).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObservationId(String);

impl ObservationId {
    /// Validates the shape (§1.7 regexes); no word-list membership check, as agent-qa.
    ///
    /// Canonical: `^obs_[a-z]{2,}(?:[-_][a-z]{2,}){9}$`; legacy: the same with `{5}`.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        match word_count(s, "obs") {
            Some(CANONICAL_WORDS | LEGACY_WORDS) => Ok(Self(s.to_owned())),
            _ => Err(IdError(crate::excerpt(s))),
        }
    }

    /// Which shape this id has.
    pub fn shape(&self) -> IdShape {
        // `parse` admitted only 10- or 6-word bodies, so anything not canonical is legacy.
        if word_count(&self.0, "obs") == Some(CANONICAL_WORDS) {
            IdShape::Canonical
        } else {
            IdShape::Legacy
        }
    }

    /// A fresh canonical id: 10 words from the 4,096-word list, chosen with a CSPRNG, unbiased.
    ///
    /// Does not look at existing ids; stores use [`ObservationId::generate_unique`].
    pub fn generate() -> Self {
        Self(generate_with_prefix("obs"))
    }

    /// A fresh canonical id for which `exists` is false.
    ///
    /// `exists` is asked about each candidate (the file store checks its id index and the disk).
    /// A collision among 2^120 ids is practically impossible, so the loop re-draws rather than
    /// giving up; the bound only guards against an `exists` that always says yes.
    pub fn generate_unique(exists: impl Fn(&ObservationId) -> bool) -> Result<Self, IdCollision> {
        const ATTEMPTS: u32 = 64;
        for _ in 0..ATTEMPTS {
            let id = Self::generate();
            if !exists(&id) {
                return Ok(id);
            }
        }
        Err(IdCollision { attempts: ATTEMPTS })
    }

    /// The id text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ObservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ObservationId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// [`ObservationId::generate_unique`] found every fresh id taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "could not find an unused observation id after {attempts} attempts (the existence check always answered yes)"
)]
pub struct IdCollision {
    /// How many candidates were tried.
    pub attempts: u32,
}

/// `t_` + 10 words (agent-qa's canonical test id).
pub fn is_canonical_test_id(s: &str) -> bool {
    word_count(s, "t") == Some(CANONICAL_WORDS)
}

/// `s_` + 10 words (agent-qa's canonical suite id).
pub fn is_canonical_suite_id(s: &str) -> bool {
    word_count(s, "s") == Some(CANONICAL_WORDS)
}

/// `h_` + 10 words (agent-qa's canonical hook id).
pub fn is_canonical_hook_id(s: &str) -> bool {
    word_count(s, "h") == Some(CANONICAL_WORDS)
}

/// `r_` + 10 words (agent-qa's canonical run id; there is no legacy form).
pub fn is_canonical_run_id(s: &str) -> bool {
    word_count(s, "r") == Some(CANONICAL_WORDS)
}

/// A fresh canonical run id (`r_` + 10 words), drawn like observation ids.
pub fn generate_run_id() -> String {
    generate_with_prefix("r")
}

thread_local! {
    /// The splitmix64 state of [`with_seeded_ids`] on this thread, while one is running.
    static SEEDED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Runs `f` with every id generated on this thread drawn from a generator seeded with `seed`
/// (splitmix64, not a CSPRNG), so the same calls give the same ids. Other threads, and this one
/// after `f` returns or unwinds, draw from the CSPRNG again. Nested calls restore the outer seed's
/// state on return.
pub fn with_seeded_ids<R>(seed: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SEEDED.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SEEDED.with(|s| s.replace(Some(seed))));
    f()
}

/// The next word index: from the seeded generator inside [`with_seeded_ids`], else the CSPRNG.
fn next_u16(rng: &mut rand::rngs::ThreadRng) -> u16 {
    let seeded = SEEDED.with(|s| {
        let state = s.get()?.wrapping_add(0x9E37_79B9_7F4A_7C15);
        s.set(Some(state));
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Some(((z ^ (z >> 31)) >> 48) as u16)
    });
    // The low 16 bits of a uniform u32 are a uniform u16.
    seeded.unwrap_or_else(|| rng.next_u32() as u16)
}

/// `prefix_` + 10 CSPRNG-chosen words joined by `-`.
fn generate_with_prefix(prefix: &str) -> String {
    // ThreadRng is a ChaCha-based CSPRNG seeded and periodically reseeded from the OS.
    let mut rng = rand::rng();
    let words = &**WORDS;
    let mut out = String::with_capacity(prefix.len() + 1 + CANONICAL_WORDS * 7);
    out.push_str(prefix);
    out.push('_');
    for i in 0..CANONICAL_WORDS {
        if i > 0 {
            out.push('-');
        }
        out.push_str(words[usize::from(next_u16(&mut rng)) % WORD_COUNT]);
    }
    out
}

/// The number of words in the body of `s` when it is `prefix_` + a valid body, else `None`.
///
/// Mirrors id-agent's parse: split at the first `_`, the prefix must match, and the body must be
/// `[a-z]{2,}` words separated by single `-` or `_`.
fn word_count(s: &str, prefix: &str) -> Option<usize> {
    let (head, body) = s.split_once('_')?;
    if head != prefix {
        return None;
    }
    let mut count = 0;
    for word in body.split(['-', '_']) {
        if word.len() < 2 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
            return None;
        }
        count += 1;
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    const CANONICAL: &str = "obs_apple-brave-cider-delta-eagle-fable-gamma-habit-ivory-joker";
    const LEGACY: &str = "obs_apple-brave-cider-delta-eagle-fable";

    #[test]
    fn word_list_is_well_formed() {
        let words = &**WORDS;
        assert_eq!(words.len(), WORD_COUNT, "data/words.txt must hold exactly 4,096 words");
        let distinct: HashSet<_> = words.iter().collect();
        assert_eq!(distinct.len(), WORD_COUNT, "data/words.txt has duplicate words");
        for w in words {
            assert!(
                (3..=6).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase()),
                "word {w:?} is not 3-6 lowercase ASCII letters"
            );
        }
        assert_eq!(65536 % WORD_COUNT, 0, "u16 % WORD_COUNT would be biased");
    }

    #[test]
    fn canonical_and_legacy_ids_parse_with_their_shape() {
        assert_eq!(ObservationId::parse(CANONICAL).unwrap().shape(), IdShape::Canonical);
        assert_eq!(ObservationId::parse(LEGACY).unwrap().shape(), IdShape::Legacy);
        // `_` is a separator too, as in id-agent's body regex.
        let underscored = "obs_apple_brave-cider_delta-eagle-fable-gamma-habit-ivory-joker";
        assert_eq!(ObservationId::parse(underscored).unwrap().shape(), IdShape::Canonical);
        assert_eq!(ObservationId::parse(CANONICAL).unwrap().to_string(), CANONICAL);
    }

    #[test]
    fn an_error_repeats_a_huge_id_cut_short() {
        let huge = format!("obs_{}", "é".repeat(5000));
        let msg = ObservationId::parse(&huge).unwrap_err().to_string();
        assert!(msg.len() < 400 && msg.contains("(10004 bytes)"), "{msg}");
        let short = ObservationId::parse("bad_id").unwrap_err().to_string();
        assert!(short.ends_with("(got \"bad_id\")"), "{short}");
    }

    #[test]
    fn rejected_examples_of_the_spec() {
        for bad in [
            "bad_id",
            "obs_one-two-three",
            "obs_ONE-TWO-THREE-FOUR-FIVE-SIX-SEVEN-EIGHT-NINE-TEN",
            "obs_one-two-three-four-five-six-seven-eight-nine-te1",
            "obs_a-two-three-four-five-six-seven-eight-nine-ten",
            "obs_one-two-three-four-five-six-seven-eight-nine",
            "obs_one-two-three-four-five-six-seven-eight-nine-ten-eleven",
            "obs_one-two-three-four-five-six-seven",
            "obs_",
            "obs",
            "",
            "_one-two-three-four-five-six",
            "obs_one--two-three-four-five-six",
            "obs_one-two-three-four-five-six-",
            "obs_-one-two-three-four-five-six",
            "obs_one two-three-four-five-six",
            "obs_óne-two-three-four-five-six",
            "t_one-two-three-four-five-six-seven-eight-nine-ten",
            "OBS_one-two-three-four-five-six",
        ] {
            let err = ObservationId::parse(bad).unwrap_err();
            assert!(err.to_string().starts_with("Observation ID must be obs_"), "{bad:?}");
        }
    }

    #[test]
    fn other_id_kinds_need_ten_words_and_their_prefix() {
        let body = "apple-brave-cider-delta-eagle-fable-gamma-habit-ivory-joker";
        assert!(is_canonical_test_id(&format!("t_{body}")));
        assert!(is_canonical_suite_id(&format!("s_{body}")));
        assert!(is_canonical_hook_id(&format!("h_{body}")));
        assert!(is_canonical_run_id(&format!("r_{body}")));
        assert!(!is_canonical_test_id(&format!("s_{body}")));
        assert!(!is_canonical_suite_id("s_apple-brave-cider-delta-eagle-fable"));
        assert!(!is_canonical_run_id("r_apple-brave-cider-delta-eagle-fable"));
        assert!(!is_canonical_test_id("t_"));
        assert!(!is_canonical_run_id(&format!("r_{}", body.to_uppercase())));
    }

    #[test]
    fn generated_ids_are_canonical_and_from_the_list() {
        let words: HashSet<&str> = WORDS.iter().copied().collect();
        let mut seen = HashSet::new();
        for _ in 0..2000 {
            let id = ObservationId::generate();
            let reparsed = ObservationId::parse(id.as_str()).unwrap();
            assert_eq!(reparsed.shape(), IdShape::Canonical, "{id}");
            let body = id.as_str().strip_prefix("obs_").unwrap();
            assert!(body.split('-').all(|w| words.contains(w)), "{id}");
            assert!(seen.insert(id.clone()), "duplicate id {id}");
        }
        let run = generate_run_id();
        assert!(is_canonical_run_id(&run), "{run}");
    }

    #[test]
    fn generated_words_cover_the_list_roughly_uniformly() {
        // 20,000 ids = 200,000 draws over 4,096 words: about 48.8 per word. A generator that used
        // only part of the list (say a u8 index) would leave most words at zero.
        let mut counts = vec![0u32; WORD_COUNT];
        let index: std::collections::HashMap<&str, usize> =
            WORDS.iter().enumerate().map(|(i, w)| (*w, i)).collect();
        for _ in 0..20_000 {
            let id = ObservationId::generate();
            for w in id.as_str()["obs_".len()..].split('-') {
                counts[index[w]] += 1;
            }
        }
        let unused = counts.iter().filter(|&&c| c == 0).count();
        let max = *counts.iter().max().unwrap();
        assert!(unused < 10, "{unused} words never drawn");
        assert!(max < 110, "a word was drawn {max} times (expected about 49)");
    }

    #[test]
    fn generate_unique_redraws_on_collision_and_gives_up_on_a_liar() {
        let calls = std::cell::Cell::new(0);
        let id = ObservationId::generate_unique(|_| {
            calls.set(calls.get() + 1);
            calls.get() < 3
        })
        .unwrap();
        assert_eq!(calls.get(), 3);
        assert_eq!(id.shape(), IdShape::Canonical);
        let err = ObservationId::generate_unique(|_| true).unwrap_err();
        assert_eq!(err.attempts, 64);
    }

    #[test]
    fn seeded_ids_repeat_inside_the_call_and_only_there() {
        let draw = || (ObservationId::generate(), generate_run_id());
        let a = with_seeded_ids(7, draw);
        assert_eq!(a, with_seeded_ids(7, draw), "the same seed gives the same ids");
        assert_ne!(a, with_seeded_ids(8, draw));
        assert_eq!(a.0.shape(), IdShape::Canonical);
        assert!(is_canonical_run_id(&a.1));
        // Outside the call, and on another thread inside it, the CSPRNG draws again.
        assert_ne!(draw(), draw());
        let (here, there) = with_seeded_ids(7, || {
            let there = std::thread::spawn(ObservationId::generate).join().unwrap();
            (ObservationId::generate(), there)
        });
        assert_eq!(here, a.0);
        assert_ne!(there, a.0);
        // A nested seed ends where it began, and so does a seed whose call panicked.
        let outer = with_seeded_ids(7, || {
            let _ = std::panic::catch_unwind(|| with_seeded_ids(9, || panic!("inside")));
            draw()
        });
        assert_eq!(outer, a);
        assert_ne!(draw(), draw());
    }
}
