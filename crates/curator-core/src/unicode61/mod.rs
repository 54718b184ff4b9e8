//! FTS5's `unicode61` tokenizer (remove_diacritics=1), code point for code point.
//!
//! agent-qa's phrase mode matches a step against observations with this tokenizer, so which
//! characters make a word and what they fold to decide what is injected. Its decisions are per
//! code point and are SQLite's own: letters, numbers and private-use characters of SQLite's
//! (older) Unicode tables start a token; 25 combining diacritics only continue one and are
//! dropped; everything else separates. Case folds are Unicode's simple folds (`ς`, `ſ`, `µ`
//! fold to `σ`, `s`, `μ`), and a diacritic is removed only where the base is an ASCII letter
//! (`é` → `e`, while Greek `ά` and Cyrillic `ё` stay). Deriving that from today's Unicode data
//! got 35 of 172 non-ASCII test tokens wrong, so the tables in `tables.rs` are read from SQLite
//! itself by `scripts/unicode61_tables.py`, which also checks them (see its `--check`).

#[rustfmt::skip]
mod tables;

use tables::{ASCII_TOKEN, CONTINUE_ONLY, FOLD, TOKEN};

/// What a code point does in a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Starts or continues a token.
    Token,
    /// Continues a token begun by a token character; skipped between tokens.
    ContinueOnly,
    /// Ends a token.
    Separator,
}

pub(crate) fn class(c: char) -> Class {
    let cp = u32::from(c);
    if cp < 0x80 {
        return if ASCII_TOKEN[cp as usize] { Class::Token } else { Class::Separator };
    }
    // The first range not wholly below `cp` holds it, if any does.
    let range = TOKEN.partition_point(|&(_, hi)| hi < cp);
    if TOKEN.get(range).is_some_and(|&(lo, _)| lo <= cp) {
        Class::Token
    } else if CONTINUE_ONLY.binary_search(&cp).is_ok() {
        Class::ContinueOnly
    } else {
        Class::Separator
    }
}

/// What `c` becomes in a token; `None` when it is dropped (a removed diacritic).
pub(crate) fn fold(c: char) -> Option<char> {
    if c.is_ascii() {
        return Some(c.to_ascii_lowercase());
    }
    match FOLD.binary_search_by_key(&u32::from(c), |&(from, _)| from) {
        Ok(i) => char::from_u32(FOLD[i].1).filter(|&to| to != '\0'),
        Err(_) => Some(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_and_disjoint() {
        assert!(TOKEN.windows(2).all(|w| w[0].1 < w[1].0) && TOKEN.iter().all(|r| r.0 <= r.1));
        assert!(CONTINUE_ONLY.windows(2).all(|w| w[0] < w[1]));
        assert!(FOLD.windows(2).all(|w| w[0].0 < w[1].0));
        for cp in CONTINUE_ONLY {
            assert_eq!(class(char::from_u32(cp).unwrap()), Class::ContinueOnly);
        }
    }

    #[test]
    fn sqlite_folds_what_unicode_lowercasing_does_not() {
        for (from, to) in [('ς', 'σ'), ('ſ', 's'), ('µ', 'μ'), ('İ', 'i'), ('É', 'e'), ('ẞ', 'ß')]
        {
            assert_eq!(fold(from), Some(to), "{from}");
        }
        // A diacritic is removed only from a letter whose base is ASCII.
        for kept in ['ά', 'ё', 'й'] {
            assert_eq!(fold(kept), Some(kept), "{kept}");
        }
        assert_eq!(fold('\u{301}'), None);
        assert_eq!(class('\u{301}'), Class::ContinueOnly);
        assert_eq!(class('\u{341}'), Class::Separator, "not in FTS5's diacritic mask");
        assert_eq!(class('\u{93F}'), Class::Separator, "a Devanagari vowel sign is Mc");
        assert_eq!(
            (class('_'), class('x'), class('字')),
            (Class::Separator, Class::Token, Class::Token)
        );
    }
}
