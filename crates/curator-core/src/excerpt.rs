//! How an error message repeats input it refused.
//!
//! Ids, run ids and names arrive from path segments, decisions files, forms and agents; an error
//! that echoes 5,000 characters of one hides its own message (and fills a CI log). Errors show
//! short input whole, as written, and long input cut short with its length.

/// Longest input an error repeats whole, in characters.
const MAX_EXCERPT_CHARS: usize = 120;

/// `s` as an error shows it: whole, or its first [`MAX_EXCERPT_CHARS`] characters, `…` and its
/// length in bytes.
pub fn excerpt(s: &str) -> String {
    match s.char_indices().nth(MAX_EXCERPT_CHARS) {
        None => s.to_owned(),
        Some((cut, _)) => format!("{}… ({} bytes)", &s[..cut], s.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_whole_and_long_input_cut_on_a_character() {
        assert_eq!(excerpt("bad_id"), "bad_id");
        let long = "é".repeat(5000);
        let shown = excerpt(&long);
        assert!(shown.starts_with(&"é".repeat(MAX_EXCERPT_CHARS)), "{shown}");
        assert!(shown.ends_with("… (10000 bytes)"), "{shown}");
        assert_eq!(excerpt(&"a".repeat(MAX_EXCERPT_CHARS)), "a".repeat(MAX_EXCERPT_CHARS));
    }
}
