//! The ISO datetime rule of `created` / `last_confirmed` (agent-qa-memory §1.5).
//!
//! agent-qa validates with zod 4's `z.string().datetime()` and default options:
//! `YYYY-MM-DDTHH:MM[:SS[.fraction]]Z`, uppercase `T` and `Z`, no offset, no local time, any
//! number (≥ 1) of fraction digits, and a real calendar date (leap years by the Gregorian rule,
//! hours 00–23, seconds 00–59). The check is written out by hand rather than delegated to a
//! date library because libraries accept more (offsets, lowercase, leap seconds) and a file
//! accepted here must also be accepted by agent-qa.

/// True when `s` passes agent-qa's ISO datetime rule (§1.5).
pub fn is_iso_datetime(s: &str) -> bool {
    let b = s.as_bytes();
    // Shortest form: "YYYY-MM-DDTHH:MMZ" (17 bytes).
    if b.len() < 17 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return false;
    }
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute)) = (
        digits(&b[0..4]),
        digits(&b[5..7]),
        digits(&b[8..10]),
        digits(&b[11..13]),
        digits(&b[14..16]),
    ) else {
        return false;
    };
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return false;
    }
    if hour > 23 || minute > 59 {
        return false;
    }
    match &b[16..] {
        [b'Z'] => true,
        [b':', s1, s2, rest @ ..] => {
            let Some(second) = digits(&[*s1, *s2]) else { return false };
            if second > 59 {
                return false;
            }
            match rest {
                [b'Z'] => true,
                [b'.', frac @ .., b'Z'] => !frac.is_empty() && frac.iter().all(u8::is_ascii_digit),
                _ => false,
            }
        }
        _ => false,
    }
}

/// The value of a run of ASCII digits (only `0-9`: JS `\d` is ASCII-only).
fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |acc, &c| c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0')))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_forms_zod_accepts() {
        for s in [
            "2026-04-10T12:00:00.000Z",
            "2026-04-10T12:00:00Z",
            "2026-04-10T12:00Z",
            "2026-04-10T12:00:00.1Z",
            "2026-04-10T12:00:00.123456789Z",
            "2024-02-29T00:00:00Z",
            "2000-02-29T00:00:00Z",
            "0000-02-29T00:00Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            assert!(is_iso_datetime(s), "{s}");
        }
    }

    #[test]
    fn rejects_what_zod_rejects() {
        for s in [
            "2026-04-10T12:00:00+02:00",
            "2026-04-10T12:00:00.000+00:00",
            "2026-04-10T12:00:00",
            "2026-04-10 12:00:00Z",
            "2026-04-10T12:00:00z",
            "2026-04-10t12:00:00Z",
            "2026-02-30T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-04-00T00:00:00Z",
            "2026-04-10T24:00:00Z",
            "2026-04-10T12:60:00Z",
            "2026-04-10T12:00:60Z",
            "2026-04-10T12:00:00.Z",
            "2026-04-10T12Z",
            "2026-04-10",
            "26-04-10T12:00:00Z",
            "+02026-04-10T12:00:00Z",
            "2026-4-10T12:00:00Z",
            "2026-04-10T12:00:00.000ZZ",
            " 2026-04-10T12:00:00Z",
            "2026-04-10T12:00:00Z ",
            "２０２６-04-10T12:00:00Z",
            "",
        ] {
            assert!(!is_iso_datetime(s), "{s}");
        }
    }
}
