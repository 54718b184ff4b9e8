//! Invisible and bidi-control characters (agent-qa-memory §7, additions of §11.10).
//!
//! A character in this set can hide or reorder text that a reviewer reads differently from what
//! an agent is fed, so any occurrence blocks the text. The check runs on the raw text, before any
//! normalisation, and reports the first such character as agent-qa does:
//! `invisible_unicode_U+` + uppercase hex, zero-padded to at least 4 digits.
//!
//! Left out on purpose: U+200E/U+200F and U+061C (directional *marks*, not overrides or
//! isolates; they are common in right-to-left UI text and cannot reorder a run by themselves),
//! and the variation selectors U+FE00–U+FE0F (every emoji with a text/emoji presentation carries
//! one). Those are still removed from the matching copy, so they cannot split a keyword.

/// Whether `c` is one of the blocked invisible characters.
pub(super) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        // agent-qa's list
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
            | '\u{202A}'..='\u{202E}'
            // §11.10: soft hyphen, Mongolian vowel separator, invisible operators, isolates,
            // deprecated format controls, tag characters
            | '\u{00AD}'
            | '\u{180E}'
            | '\u{2061}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{206A}'..='\u{206F}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// The first blocked invisible character of `text`, scanning by code point.
pub(super) fn first_invisible(text: &str) -> Option<char> {
    text.chars().find(|&c| is_invisible(c))
}

/// agent-qa's `matchedPattern` for an invisible character.
pub(super) fn rule_id(c: char) -> String {
    format!("invisible_unicode_U+{:04X}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_character_is_caught_and_named() {
        let listed: Vec<u32> = [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x180E]
            .into_iter()
            .chain(0x202A..=0x202E)
            .chain(0x2061..=0x2064)
            .chain(0x2066..=0x2069)
            .chain(0x206A..=0x206F)
            .chain(0xE0000..=0xE007F)
            .collect();
        for cp in listed {
            let c = char::from_u32(cp).unwrap();
            let text = format!("Login works{c}fine");
            assert_eq!(first_invisible(&text), Some(c), "U+{cp:04X}");
        }
    }

    #[test]
    fn ids_are_uppercase_hex_padded_to_four() {
        assert_eq!(rule_id('\u{200B}'), "invisible_unicode_U+200B");
        assert_eq!(rule_id('\u{FEFF}'), "invisible_unicode_U+FEFF");
        assert_eq!(rule_id('\u{00AD}'), "invisible_unicode_U+00AD");
        assert_eq!(rule_id('\u{E0041}'), "invisible_unicode_U+E0041");
    }

    #[test]
    fn first_found_is_reported() {
        assert_eq!(first_invisible("a\u{202E}b\u{200B}"), Some('\u{202E}'));
    }

    #[test]
    fn ordinary_text_and_marks_pass() {
        for text in ["plain", "émoji ❤️ ok", "עברית\u{200F}", "tab\tand\nnewline", "a\u{00A0}b"]
        {
            assert_eq!(first_invisible(text), None, "{text:?}");
        }
        // Neighbours of the listed ranges.
        for c in ['\u{2065}', '\u{2070}', '\u{E0080}', '\u{180D}', '\u{00AC}', '\u{202F}'] {
            assert!(!is_invisible(c), "U+{:04X}", u32::from(c));
        }
    }
}
