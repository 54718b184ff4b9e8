//! The matching copy the pattern rules run on (agent-qa-memory §11.10: variants must not slip by).
//!
//! agent-qa matches its case-insensitive regexes on the raw text, so `ｉｇｎｏｒｅ` (full-width),
//! `іgnоrе` (Cyrillic look-alikes) or `ig<U+200B>nore` pass. The copy built here removes format
//! characters, applies NFKC (full-width and compatibility forms become ASCII), lower-cases, and
//! folds a small table of look-alike letters and apostrophes. It is used only for matching: the
//! stored text is never altered.

use std::sync::LazyLock;

use regex::Regex;
use unicode_normalization::UnicodeNormalization;

/// Characters that render as nothing: Unicode format controls (`Cf`, which covers every
/// invisible of `invisible.rs` except the tag block's unassigned points, also listed), the
/// combining grapheme joiner, variation selectors and the Hangul and Khmer fillers.
static IGNORABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"[\p{Cf}\u{034F}\u{FE00}-\u{FE0F}\u{115F}\u{1160}\u{3164}\u{FFA0}\u{17B4}\u{17B5}\u{180B}-\u{180F}\u{E0000}-\u{E007F}]",
    )
    .expect("static regex")
});

/// The text the pattern rules see: ignorables removed, NFKC, lower case, look-alikes folded.
pub(super) fn matching_copy(text: &str) -> String {
    let visible = IGNORABLE.replace_all(text, "");
    let mut out = String::with_capacity(visible.len());
    for c in visible.nfkc().flat_map(char::to_lowercase) {
        out.push(fold(c));
    }
    out
}

/// Latin letter a look-alike stands for (lower case only: the input is already lower-cased).
///
/// The table covers the Cyrillic and Greek letters that are drawn like Latin ones in common
/// fonts, which is what homoglyph attacks on keyword filters use; it is not a full confusables
/// mapping, which would also fold ordinary non-Latin text for no gain here.
fn fold(c: char) -> char {
    match c {
        // Cyrillic
        'а' => 'a',
        'в' => 'b',
        'е' | 'ё' => 'e',
        'к' => 'k',
        'м' => 'm',
        'н' => 'h',
        'о' => 'o',
        'р' => 'p',
        'с' => 'c',
        'т' => 't',
        'у' => 'y',
        'х' => 'x',
        'ѕ' => 's',
        'і' | 'ї' => 'i',
        'ј' => 'j',
        'ԁ' => 'd',
        'һ' => 'h',
        'ӏ' => 'l',
        'ԛ' => 'q',
        'ԝ' => 'w',
        // Greek
        'α' => 'a',
        'β' => 'b',
        'ε' => 'e',
        'ζ' => 'z',
        'η' => 'n',
        'ι' => 'i',
        'κ' => 'k',
        'μ' => 'u',
        'ν' => 'v',
        'ο' => 'o',
        'ρ' => 'p',
        'τ' => 't',
        'υ' => 'u',
        'χ' => 'x',
        // Latin extensions drawn like plain letters
        'ɑ' => 'a',
        'ɡ' => 'g',
        'ı' => 'i',
        'ȷ' => 'j',
        // Apostrophes: agent-qa's `don't` is written with U+0027 only.
        '\u{2018}' | '\u{2019}' | '\u{02BC}' | '\u{2032}' | '\u{FF07}' => '\'',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_becomes_ascii_lower_case() {
        assert_eq!(matching_copy("ＩＧＮＯＲＥ ａｌｌ"), "ignore all");
    }

    #[test]
    fn format_characters_vanish() {
        assert_eq!(
            matching_copy("ig\u{200B}no\u{00AD}re\u{2066} a\u{E0041}ll\u{FE0F}"),
            "ignore all"
        );
    }

    #[test]
    fn look_alikes_and_apostrophes_fold() {
        assert_eq!(matching_copy("\u{406}GN\u{41E}R\u{415}"), "ignore");
        assert_eq!(matching_copy("d\u{3BF}n\u{2019}t"), "don't");
    }

    #[test]
    fn ordinary_text_is_only_lower_cased() {
        assert_eq!(matching_copy("Click Login, then wait 2s."), "click login, then wait 2s.");
        assert_eq!(matching_copy("Café ½"), "café 1⁄2");
    }
}
