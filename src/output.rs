//! Printing: human text on stdout, diagnostics on stderr, or exactly one JSON document with `--json`.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

/// `eprintln!` that never panics: a diagnostic that cannot be written (stderr on a full disk,
/// its reader gone) is dropped, and the command ends with its own status. A panic there would
/// come after the work is done, and a harness would take exit 101 for a crash and retry a
/// write that stands.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use note;

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

/// `text` with every control character (C0, DEL, C1) but newline and tab written as a visible
/// `\x..` escape, for text a person reads in a terminal: a stored observation may hold ESC or
/// BEL (agent-qa accepts them), which a terminal would otherwise obey.
pub(crate) fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            // `char::is_control` is exactly C0, DEL and C1: all below U+0100.
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
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
    use super::{ellipsize, terminal_safe};

    #[test]
    fn terminal_safe_escapes_controls_but_newlines_and_tabs() {
        assert_eq!(terminal_safe("a\x1b[31mb\x07\tc\nd\0"), "a\\x1b[31mb\\x07\tc\nd\\x00");
        assert_eq!(terminal_safe("\u{85}x\r"), "\\x85x\\x0d");
        assert_eq!(terminal_safe("plain ünïcødé"), "plain ünïcødé");
    }

    #[test]
    fn ellipsize_keeps_short_text_and_cuts_long_text_on_char_boundaries() {
        assert_eq!(ellipsize("short", 10), "short");
        assert_eq!(ellipsize("ünïcødé-títlé", 5), "ünïc…");
        assert_eq!(ellipsize("a\nb", 10), "a b");
    }
}
