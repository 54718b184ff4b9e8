//! Is the process named in a lock file still the one that wrote it? (agent-qa-memory §6, with
//! the fixes of §11.17.)
//!
//! agent-qa asks `kill(pid, 0)` and treats every failure as "dead", so a lock held by another
//! user's process (EPERM) is stolen. Here EPERM means alive: the process exists, we just may not
//! signal it. A zombie (state `Z`, killed but not yet reaped, Linux only) holds nothing.

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

/// The question the lock asks about other processes; tests substitute answers.
pub(crate) trait ProcessProbe {
    fn liveness(&self, pid: u32) -> Liveness;
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
}

/// The field of `/proc/<pid>/stat` the lock needs.
#[derive(Debug)]
struct ProcStat {
    state: char,
}

/// Reads `/proc/<pid>/stat` (Linux); `None` elsewhere or when the process is gone.
fn proc_stat(pid: u32) -> Option<ProcStat> {
    parse_proc_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The command name (field 2) may contain spaces and parentheses, so fields are counted from
/// the last `)`: state is field 3.
fn parse_proc_stat(text: &str) -> Option<ProcStat> {
    let rest = text.get(text.rfind(')')? + 1..)?;
    let state = rest.split_whitespace().next()?.chars().next()?;
    Some(ProcStat { state })
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
        assert!(parse_proc_stat("garbage").is_none());
    }

    #[test]
    fn our_own_process_is_alive() {
        assert_eq!(SystemProbe.liveness(std::process::id()), Liveness::Alive);
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
