//! Printing: human text on stdout, diagnostics on stderr, or exactly one JSON document with `--json`.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

/// Prints `value` as one pretty JSON document followed by a newline.
pub(crate) fn print_json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Prints `text` as-is on stdout.
pub(crate) fn print_text(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Shortens `s` to at most `max` characters for one-line listings.
pub(crate) fn ellipsize(s: &str, max: usize) -> String {
    let one_line: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::ellipsize;

    #[test]
    fn ellipsize_keeps_short_text_and_cuts_long_text_on_char_boundaries() {
        assert_eq!(ellipsize("short", 10), "short");
        assert_eq!(ellipsize("ünïcødé-títlé", 5), "ünïc…");
        assert_eq!(ellipsize("a\nb", 10), "a b");
    }
}
