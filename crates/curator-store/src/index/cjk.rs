//! Terms mode's words for text written without spaces: overlapping character bigrams.
//!
//! `unicode61` (agent-qa's tokenizer, which phrase mode keeps exactly) splits at spaces and
//! punctuation only, so a Chinese or Japanese clause is one token: "点击登录按钮" and
//! "登录按钮保持禁用" share no token, and terms mode could find a Chinese observation only
//! through a whole clause written the same way (audit 7). A dictionary segmenter would need a
//! dictionary per language; overlapping bigrams need none and are what search engines index
//! unspaced scripts with when they have no dictionary (Lucene's `CJKBigramFilter`, the n-gram
//! parsers of MySQL and PostgreSQL's `pg_bigm`): "点击登录按钮" is 点击 击登 登录 录按 按钮, and
//! shares 登录 and 按钮 with the observation. A bigram that spans two words (击登) is rare in
//! the pool, and terms mode ignores a step term no pool observation holds, so such noise costs
//! little; a bigram common in the pool weighs little by its IDF, as common words do.
//!
//! The scripts are the ones Lucene bigrams by default: Han, Hiragana, Katakana and Hangul. A
//! token is split into runs of those characters and runs of anything else; the other runs stay
//! whole (and are stemmed afterwards, as any token), and a run of one CJK character stays that
//! character.

/// True for a character of the scripts written without spaces between words.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{309F}'          // Hiragana
        | '\u{30A0}'..='\u{30FF}'        // Katakana
        | '\u{31F0}'..='\u{31FF}'        // Katakana phonetic extensions
        | '\u{FF66}'..='\u{FF9F}'        // halfwidth Katakana
        | '\u{3400}'..='\u{4DBF}'        // CJK Unified Ideographs extension A
        | '\u{4E00}'..='\u{9FFF}'        // CJK Unified Ideographs
        | '\u{F900}'..='\u{FAFF}'        // CJK compatibility ideographs
        | '\u{20000}'..='\u{3134F}'      // extensions B–H
        | '\u{1100}'..='\u{11FF}'        // Hangul Jamo
        | '\u{3130}'..='\u{318F}'        // Hangul compatibility Jamo
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
    )
}

/// The words of one `unicode61` token: itself when it holds no CJK character, else its
/// non-CJK runs whole and each CJK run as its overlapping bigrams (a one-character run as that
/// character), in text order.
pub(crate) fn split(token: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = token;
    while let Some(first) = rest.chars().next() {
        let cjk = is_cjk(first);
        let end =
            rest.char_indices().find(|&(_, c)| is_cjk(c) != cjk).map_or(rest.len(), |(i, _)| i);
        let (run, tail) = rest.split_at(end);
        if cjk {
            let chars: Vec<char> = run.chars().collect();
            if chars.len() == 1 {
                words.push(run.to_owned());
            } else {
                words.extend(chars.windows(2).map(|pair| pair.iter().collect::<String>()));
            }
        } else {
            words.push(run.to_owned());
        }
        rest = tail;
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cjk_run_becomes_its_overlapping_bigrams() {
        assert_eq!(split("点击登录按钮"), ["点击", "击登", "登录", "录按", "按钮"]);
        assert_eq!(split("ログインボタン"), ["ログ", "グイ", "イン", "ンボ", "ボタ", "タン"]);
        assert_eq!(split("로그인"), ["로그", "그인"]);
        assert_eq!(split("页"), ["页"]);
    }

    #[test]
    fn other_runs_stay_whole_and_other_tokens_untouched() {
        assert_eq!(split("iphone手机壳"), ["iphone", "手机", "机壳"]);
        assert_eq!(split("第3页"), ["第", "3", "页"]);
        assert_eq!(split("checkout"), ["checkout"]);
        assert_eq!(split("café"), ["café"]);
    }
}
