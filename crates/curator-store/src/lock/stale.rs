//! When may a waiter delete somebody else's `.curator.lock`? (agent-qa-memory §6 `isStale`, with
//! the fixes of §11.17.)
//!
//! The rule is agent-qa's — a holder is stale when its file cannot be read as the lock JSON, its
//! pid is dead, or its timestamp is older than 2·T — with three changes, each of which only ever
//! makes curator *more* patient than agent-qa except where it has proof:
//!
//! 1. **The flock decides for curator holders.** Every curator holder keeps an flock on the lock
//!    file from before the file becomes visible until after it is deleted. If the flock is
//!    taken, a live curator holds the lock: it is never stale, whatever its pid looks like from
//!    here (another pid namespace) and however old it is (a long transaction is not a dead one).
//!    A free flock is *not* proof of death on its own, because agent-qa does not flock.
//! 2. **EPERM is alive**, and a zombie is dead (see `process.rs`).
//! 3. **A dead curator holder is recognised at once, PID reuse included**, without a new field
//!    (agent-qa would not accept one): a curator lock file has a second hidden name while held
//!    (see `mod.rs`), so two links and a free flock mean its holder died, whatever process now
//!    has its pid.
//!
//! What is *not* taken as proof for agent-qa's files (one link): that the process now using the
//! pid started after the lock's timestamp, or that the pid is our own. Both were tried, and both
//! steal live locks: the timestamp is the holder's wall clock, which may run behind ours, and a
//! holder in another pid namespace (a container sharing the volume, often pid 1 there) has a pid
//! that names an unrelated, younger process here, or this very process. A reused pid is waited
//! out to 2·T, as agent-qa waits it out.
//!
//! One more guard fixes a race agent-qa has: it creates the file first and writes the JSON
//! second, so a waiter may read an empty file. An unparsable file is stale only once it is older
//! than [`UNPARSABLE_GRACE`]; curator's own lock files are never visible half-written.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::process::{Liveness, ProcessProbe};
use crate::lock::LockHolder;

/// How old an unparsable lock file must be before it counts as abandoned.
pub(crate) const UNPARSABLE_GRACE: Duration = Duration::from_secs(1);

/// What a waiter sees when the lock file exists.
#[derive(Debug)]
pub(crate) struct Observed<'a> {
    pub(crate) content: &'a [u8],
    /// How long ago the file was last modified (`None` if unknown; zero when its time is
    /// ahead of our clock).
    pub(crate) age: Option<Duration>,
    /// `true` when our `try_lock` on the file succeeded, i.e. no curator holds it.
    pub(crate) flock_free: bool,
    /// The file has two or more links: a curator created it (see `mod.rs`).
    pub(crate) curator_mark: bool,
}

/// The waiter's conclusion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The holder is (or may be) alive: wait.
    Held,
    /// The holder is gone: delete the file and try again at once. The reason is for the log.
    Stale(&'static str),
}

/// Judges a lock file. `timeout` is T.
pub(crate) fn judge(
    seen: &Observed<'_>,
    now: Timestamp,
    timeout: Duration,
    probe: &dyn ProcessProbe,
) -> Verdict {
    if !seen.flock_free {
        return Verdict::Held;
    }
    if seen.curator_mark {
        return Verdict::Stale("a curator holder died: its flock is free");
    }
    let Some(json) = parse_json(seen.content) else {
        return match seen.age {
            Some(age) if age < UNPARSABLE_GRACE => Verdict::Held,
            _ => Verdict::Stale("content is not the lock JSON"),
        };
    };
    // agent-qa: a missing or non-numeric pid makes kill() throw, which it reads as stale.
    let Some(pid) = json.get("pid").and_then(pid_of) else {
        return Verdict::Stale("no numeric pid");
    };
    // kill(0 or -n, 0) probes a process group, which agent-qa reads as a live holder and then
    // waits 2·T on; no holder writes such a pid, so it is a dead one.
    let Some(pid) = u32::try_from(pid).ok().filter(|&pid| pid > 0) else {
        return Verdict::Stale("pid 0 or below");
    };
    if probe.liveness(pid) == Liveness::Dead {
        return Verdict::Stale("holder process is dead");
    }
    // agent-qa: `Date.parse` of a missing or bad timestamp is NaN, and NaN is never stale.
    let Some(stamp) = json.get("timestamp").and_then(|t| curator_core::js_date::parse(t.as_str()?))
    else {
        return Verdict::Held;
    };
    let limit = SignedDuration::try_from(timeout.saturating_mul(2)).unwrap_or(SignedDuration::MAX);
    if now.duration_since(stamp) > limit {
        return Verdict::Stale("timestamp older than twice the lock timeout");
    }
    Verdict::Held
}

/// The holder as written in the file, for messages; `None` when the file is not the lock JSON.
pub(crate) fn holder_of(content: &[u8]) -> Option<LockHolder> {
    let json = parse_json(content)?;
    let pid = u32::try_from(pid_of(json.get("pid")?)?).ok()?;
    let timestamp = match json.get("timestamp") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "an unknown time".to_owned(),
    };
    Some(LockHolder { pid, timestamp })
}

/// The pid as agent-qa's `process.kill(pid, 0)` takes it: a number, or a string holding one
/// (`"12"`, `12.0`), that equals its 32-bit integer (`pid != (pid | 0)` throws otherwise).
fn pid_of(value: &serde_json::Value) -> Option<i64> {
    let n = match value {
        serde_json::Value::Number(n) => n.as_f64()?,
        serde_json::Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    let int32 = f64::from(i32::MIN)..=f64::from(i32::MAX);
    // The range check makes the cast exact.
    #[allow(clippy::cast_possible_truncation)]
    (n.fract() == 0.0 && int32.contains(&n)).then_some(n as i64)
}

fn parse_json(content: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_slice(content).ok()? {
        serde_json::Value::Object(map) => Some(map),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers the lock's questions from a table instead of the operating system.
    struct FakeProbe {
        liveness: Liveness,
    }

    impl ProcessProbe for FakeProbe {
        fn liveness(&self, _pid: u32) -> Liveness {
            self.liveness
        }
    }

    const T: Duration = Duration::from_secs(120);

    fn now() -> Timestamp {
        "2026-04-10T12:00:00.000Z".parse().unwrap()
    }

    fn probe(liveness: Liveness) -> FakeProbe {
        FakeProbe { liveness }
    }

    fn verdict(content: &str, flock_free: bool, probe: &FakeProbe) -> Verdict {
        let seen = Observed {
            content: content.as_bytes(),
            age: Some(Duration::from_secs(10)),
            flock_free,
            curator_mark: false,
        };
        judge(&seen, now(), T, probe)
    }

    const FRESH: &str = r#"{"pid":4242,"timestamp":"2026-04-10T11:59:00.000Z"}"#;

    #[test]
    fn a_held_flock_is_a_live_curator_whatever_the_file_says() {
        let dead = probe(Liveness::Dead);
        assert_eq!(verdict(FRESH, false, &dead), Verdict::Held);
        assert_eq!(verdict("garbage", false, &dead), Verdict::Held);
        let ancient = r#"{"pid":4242,"timestamp":"2000-01-01T00:00:00.000Z"}"#;
        assert_eq!(verdict(ancient, false, &dead), Verdict::Held);
    }

    #[test]
    fn agent_qa_rules_apply_when_no_flock_is_held() {
        assert_eq!(verdict(FRESH, true, &probe(Liveness::Alive)), Verdict::Held);
        assert!(matches!(verdict(FRESH, true, &probe(Liveness::Dead)), Verdict::Stale(_)));
        for bad in ["", "{", "[]", "null", r#"{"timestamp":"x"}"#, r#"{"pid":"x4242"}"#] {
            assert!(
                matches!(verdict(bad, true, &probe(Liveness::Alive)), Verdict::Stale(_)),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_pid_is_read_as_nodes_process_kill_reads_it() {
        let alive = probe(Liveness::Alive);
        let stamp = r#""timestamp":"2026-04-10T11:59:00.000Z""#;
        for pid in ["4242", "4242.0", r#""4242""#, r#"" 4242 ""#] {
            let file = format!(r#"{{"pid":{pid},{stamp}}}"#);
            assert_eq!(verdict(&file, true, &alive), Verdict::Held, "{file}");
            assert_eq!(holder_of(file.as_bytes()).map(|h| h.pid), Some(4242), "{file}");
        }
        // Not an int32 (kill() throws: stale), or a process group (curator's rule: stale).
        for pid in ["4242.5", "4294967296", r#""12abc""#, "true", "0", "-1"] {
            let file = format!(r#"{{"pid":{pid},{stamp}}}"#);
            assert!(matches!(verdict(&file, true, &alive), Verdict::Stale(_)), "{file}");
        }
    }

    #[test]
    fn eperm_counts_as_alive_until_twice_the_timeout() {
        let eperm = probe(Liveness::NotPermitted);
        assert_eq!(verdict(FRESH, true, &eperm), Verdict::Held);
        let at_limit = r#"{"pid":4242,"timestamp":"2026-04-10T11:56:00.000Z"}"#;
        assert_eq!(verdict(at_limit, true, &eperm), Verdict::Held);
        let past = r#"{"pid":4242,"timestamp":"2026-04-10T11:55:59.999Z"}"#;
        assert!(matches!(verdict(past, true, &eperm), Verdict::Stale(_)));
    }

    /// agent-qa ages a lock by `Date.parse`, which reads more than ISO with a zone: a
    /// timestamp another tool printed with `toUTCString()`, an RFC 2822 date or a date alone is
    /// aged too (now is 2026-04-10T12:00:00Z; the limit is 4 minutes).
    #[test]
    fn a_timestamp_javascript_reads_is_aged_whatever_its_form() {
        let alive = probe(Liveness::Alive);
        for stamp in [
            "Fri, 10 Apr 2026 11:55:59 GMT",
            "10 Apr 2026 06:55:00 -0500",
            "2026-04-10",
            "2026-04-10 11:55:00Z",
            "2026-04-10T13:55:00.000+0200",
        ] {
            let file = format!(r#"{{"pid":4242,"timestamp":"{stamp}"}}"#);
            assert!(matches!(verdict(&file, true, &alive), Verdict::Stale(_)), "{stamp}");
        }
        for stamp in ["Fri, 10 Apr 2026 11:57:00 GMT", "2026-04-10T13:57:00+0200"] {
            let file = format!(r#"{{"pid":4242,"timestamp":"{stamp}"}}"#);
            assert_eq!(verdict(&file, true, &alive), Verdict::Held, "{stamp}");
        }
    }

    #[test]
    fn an_unparsable_timestamp_is_never_stale_by_age() {
        let odd = r#"{"pid":4242,"timestamp":"yesterday"}"#;
        assert_eq!(verdict(odd, true, &probe(Liveness::Alive)), Verdict::Held);
        let missing = r#"{"pid":4242}"#;
        assert_eq!(verdict(missing, true, &probe(Liveness::Alive)), Verdict::Held);
    }

    #[test]
    fn a_live_pid_is_waited_on_whoever_has_it_here_until_twice_the_timeout() {
        // A holder whose clock runs behind ours, or one in another pid namespace whose pid
        // names a younger process here, or this very process: alive, so held, as agent-qa
        // holds it.
        let behind = r#"{"pid":4242,"timestamp":"2026-04-10T11:58:00.000Z"}"#;
        assert_eq!(verdict(behind, true, &probe(Liveness::Alive)), Verdict::Held);
        let ours =
            format!(r#"{{"pid":{},"timestamp":"2026-04-10T11:59:00.000Z"}}"#, std::process::id());
        assert_eq!(verdict(&ours, true, &probe(Liveness::Alive)), Verdict::Held);
        let old =
            format!(r#"{{"pid":{},"timestamp":"2026-04-10T11:55:59.999Z"}}"#, std::process::id());
        assert!(matches!(verdict(&old, true, &probe(Liveness::Alive)), Verdict::Stale(_)));
    }

    #[test]
    fn a_half_written_file_gets_a_grace_period() {
        let young = Observed {
            content: b"",
            age: Some(Duration::from_millis(5)),
            flock_free: true,
            curator_mark: false,
        };
        assert_eq!(judge(&young, now(), T, &probe(Liveness::Alive)), Verdict::Held);
        let old = Observed {
            content: b"",
            age: Some(Duration::from_secs(2)),
            flock_free: true,
            curator_mark: false,
        };
        assert!(matches!(judge(&old, now(), T, &probe(Liveness::Alive)), Verdict::Stale(_)));
    }

    #[test]
    fn a_curator_file_with_a_free_flock_is_a_dead_curator_even_if_its_pid_lives() {
        let seen = Observed {
            content: FRESH.as_bytes(),
            age: Some(Duration::ZERO),
            flock_free: true,
            curator_mark: true,
        };
        let alive = probe(Liveness::Alive);
        assert!(matches!(judge(&seen, now(), T, &alive), Verdict::Stale(_)));
        let held = Observed { flock_free: false, ..seen };
        assert_eq!(judge(&held, now(), T, &alive), Verdict::Held);
    }

    #[test]
    fn holders_are_read_for_messages() {
        let h = holder_of(FRESH.as_bytes()).unwrap();
        assert_eq!((h.pid, h.timestamp.as_str()), (4242, "2026-04-10T11:59:00.000Z"));
        assert_eq!(holder_of(br#"{"pid":1}"#).unwrap().timestamp, "an unknown time");
        assert!(holder_of(b"nope").is_none());
    }
}
