//! Timestamps as agent-qa writes them: `new Date().toISOString()` (agent-qa-memory §1.6).
//!
//! Always UTC, always three millisecond digits, always `Z`, so a file curator writes is the file
//! agent-qa would have written at the same instant. A curator run takes `now` once and passes it
//! to every decision (§5.4), which is why this takes a timestamp instead of reading the clock.

use jiff::Timestamp;

/// `YYYY-MM-DDTHH:MM:SS.sssZ` for `ts` (milliseconds truncated, as JavaScript's `Date` keeps them).
pub fn iso_millis(ts: Timestamp) -> String {
    let millis = ts.as_millisecond();
    let truncated = Timestamp::from_millisecond(millis).unwrap_or(ts);
    truncated.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// The current time. A clock outside what a timestamp can hold (after 9999-12-30, before
/// -9999) is clamped to the nearest end instead of panicking, as `Timestamp::now` does: a
/// machine with a broken clock gets odd dates, not a crashed writer.
pub fn now() -> Timestamp {
    clamped(std::time::SystemTime::now())
}

fn clamped(time: std::time::SystemTime) -> Timestamp {
    Timestamp::try_from(time).unwrap_or(if time > std::time::UNIX_EPOCH {
        Timestamp::MAX
    } else {
        Timestamp::MIN
    })
}

/// [`iso_millis`] of the current time.
pub fn now_iso() -> String {
    iso_millis(now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_three_millisecond_digits_and_z() {
        let ts: Timestamp = "2026-04-10T12:00:00Z".parse().unwrap();
        assert_eq!(iso_millis(ts), "2026-04-10T12:00:00.000Z");
        let ts: Timestamp = "2026-04-10T12:00:00.123999Z".parse().unwrap();
        assert_eq!(iso_millis(ts), "2026-04-10T12:00:00.123Z");
    }

    #[test]
    fn a_clock_beyond_what_a_timestamp_holds_is_clamped() {
        let far = std::time::UNIX_EPOCH + std::time::Duration::from_secs(300_000_000_000);
        assert_eq!(clamped(far), Timestamp::MAX);
        assert!(iso_millis(clamped(far)).starts_with("9999-12-30T"));
        let before = std::time::UNIX_EPOCH - std::time::Duration::from_secs(400_000_000_000);
        assert_eq!(clamped(before), Timestamp::MIN);
    }

    #[test]
    fn now_has_the_javascript_shape() {
        let now = now_iso();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
    }
}
