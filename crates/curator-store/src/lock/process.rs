//! Is the process named in a lock file still the one that wrote it? (agent-qa-memory §6, with
//! the fixes of §11.17.)
//!
//! agent-qa asks `kill(pid, 0)` and treats every failure as "dead", so a lock held by another
//! user's process (EPERM) is stolen. Here EPERM means alive: the process exists, we just may not
//! signal it. Two more facts only Linux exposes make the answer sharper, never looser:
//! a zombie (state `Z`, killed but not yet reaped) holds nothing, and a process that started
//! after the lock's timestamp cannot have written it (the pid was reused).

use jiff::{SignedDuration, Timestamp};
use rustix::io::Errno;
use rustix::process::{Pid, test_kill_process};

/// What `kill(pid, 0)` says about a pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// The process exists and we may signal it.
    Alive,
    /// The process exists but belongs to someone we may not signal (EPERM): still alive.
    NotPermitted,
    /// No such process, or a zombie that holds nothing any more.
    Dead,
}

/// The questions the lock asks about other processes; tests substitute answers.
pub(crate) trait ProcessProbe {
    fn liveness(&self, pid: u32) -> Liveness;
    /// When the process now using `pid` started, if the platform can tell.
    fn start_time(&self, pid: u32) -> Option<Timestamp>;
}

/// The real operating system.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SystemProbe;

impl ProcessProbe for SystemProbe {
    fn liveness(&self, pid: u32) -> Liveness {
        // kill(0, 0) and kill(-n, 0) address process groups, never one holder.
        let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
            return Liveness::Dead;
        };
        let alive = match test_kill_process(raw) {
            Ok(()) => Liveness::Alive,
            Err(Errno::SRCH) => return Liveness::Dead,
            Err(Errno::PERM) => Liveness::NotPermitted,
            // Any other answer is not proof of death; waiting is the safe side.
            Err(_) => Liveness::Alive,
        };
        if proc_stat(pid).is_some_and(|s| s.state == 'Z') { Liveness::Dead } else { alive }
    }

    fn start_time(&self, pid: u32) -> Option<Timestamp> {
        let stat = proc_stat(pid)?;
        let boot = boot_time()?;
        let hz = rustix::param::clock_ticks_per_second();
        if hz == 0 {
            return None;
        }
        let since_boot = SignedDuration::from_secs(i64::try_from(stat.start_ticks / hz).ok()?)
            + SignedDuration::from_nanos(
                i64::try_from((stat.start_ticks % hz) * 1_000_000_000 / hz).ok()?,
            );
        boot.checked_add(since_boot).ok()
    }
}

/// The two fields of `/proc/<pid>/stat` the lock needs.
#[derive(Debug)]
struct ProcStat {
    state: char,
    start_ticks: u64,
}

/// Reads `/proc/<pid>/stat` (Linux); `None` elsewhere or when the process is gone.
fn proc_stat(pid: u32) -> Option<ProcStat> {
    parse_proc_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The command name (field 2) may contain spaces and parentheses, so fields are counted from
/// the last `)`: state is field 3, starttime field 22.
fn parse_proc_stat(text: &str) -> Option<ProcStat> {
    let rest = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start_ticks = fields.get(22 - 3)?.parse().ok()?;
    Some(ProcStat { state, start_ticks })
}

/// Boot time from `/proc/stat` (`btime`, seconds since the epoch).
fn boot_time() -> Option<Timestamp> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let secs = text.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()?;
    Timestamp::from_second(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_fields_are_counted_from_the_last_parenthesis() {
        let line = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    987654 12345 67 18446744073709551615";
        let stat = parse_proc_stat(line).unwrap();
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.start_ticks, 987654);
        assert!(parse_proc_stat("garbage").is_none());
    }

    #[test]
    fn our_own_process_is_alive_and_started_before_now() {
        let probe = SystemProbe;
        assert_eq!(probe.liveness(std::process::id()), Liveness::Alive);
        if let Some(start) = probe.start_time(std::process::id()) {
            assert!(start <= Timestamp::now());
        }
    }

    #[test]
    fn a_reaped_child_is_dead_and_pid_zero_is_never_a_holder() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(SystemProbe.liveness(pid), Liveness::Dead);
        assert_eq!(SystemProbe.liveness(0), Liveness::Dead);
        assert_eq!(SystemProbe.liveness(u32::MAX), Liveness::Dead);
    }

    #[test]
    fn an_unreaped_killed_child_is_a_zombie_and_counts_as_dead() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        child.kill().unwrap();
        // Wait until the kernel has turned it into a zombie, without reaping it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while proc_stat(pid).is_some_and(|s| s.state != 'Z') && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if proc_stat(pid).is_some() {
            assert_eq!(SystemProbe.liveness(pid), Liveness::Dead);
        }
        child.wait().unwrap();
    }
}
