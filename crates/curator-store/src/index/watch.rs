//! Which scope folders may have changed since the index last read them (Linux inotify).
//!
//! A long-lived index (a server, an MCP session, a harness process) answers many steps over the
//! same folders. `stat`ing every file of a product folder before each query is what kept the
//! per-step cost at milliseconds for 100k observations (BENCHMARKS.md "Retrieval"); a watch
//! makes the check a non-blocking `read` of the inotify queue instead.
//!
//! Invariant: a folder is reported clean only if it was refreshed after its watch existed and
//! no event for it has been read since. The kernel queues an event before the writer's
//! `write`/`rename`/`unlink` returns, and [`FolderWatch::stale`] drains the queue first, so a
//! change that finished before a query began is always seen — including files agent-qa
//! rewrote in place, which a folder's mtime would miss. Every event of a folder bumps its
//! generation, and [`FolderWatch::mark_fresh`] only cleans a folder whose generation did not
//! move while it was being refreshed (two threads may refresh at once).
//!
//! Whatever the watch cannot vouch for is reported stale, so the caller falls back to the
//! `stat` check: folders that do not exist yet, watches the kernel refused (the per-user
//! limit), a full event queue (everything stale, once), a root on a network file system (inotify
//! does not see other machines' writes there: no watch at all), and any move or deletion of the
//! root, a tier folder or the folder itself (watches reset, since a watch follows the inode, not
//! the path). Writes through another hard link or a shared `mmap` are not reported by inotify;
//! agent-qa and curator write through the folder.

use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use curator_core::Tier;
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

use super::ScopeDir;

/// Most scope folders watched at once; further folders use the `stat` check. Well under the
/// kernel's default per-user limit (8,192 on old kernels), which other programs share.
const MAX_FOLDERS: usize = 4096;

/// What a scope folder's watch reports: anything that can change what the folder serves.
fn folder_events() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR
}

/// What a tier folder's watch reports: its own move or deletion (every scope folder watch
/// under it then follows an inode that is no longer at its path). Scope folders report their
/// own moves, so entries of a tier folder need no watch.
fn tier_events() -> WatchFlags {
    WatchFlags::DELETE_SELF | WatchFlags::MOVE_SELF | WatchFlags::ONLYDIR
}

/// What the root's watch reports: entries appearing, vanishing or moving (only tier folders
/// matter: `.curator.lock` comes and goes with every transaction) and its own moves.
fn root_events() -> WatchFlags {
    WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | tier_events()
}

/// One watched scope folder.
#[derive(Debug)]
struct Folder {
    /// Bumped by every event read for this folder.
    generation: u64,
    /// Refreshed at `generation` and nothing read since.
    clean: bool,
}

/// A folder the caller must refresh, and the generation to pass back to
/// [`FolderWatch::mark_fresh`] once it has.
#[derive(Debug, Clone)]
pub(crate) struct Stale {
    pub(crate) dir: ScopeDir,
    generation: Option<u64>,
}

/// The open inotify instance and what each watch stands for.
#[derive(Debug)]
struct Watches {
    fd: OwnedFd,
    root_wd: i32,
    /// The tier folders' watches: any event on them resets every watch.
    tiers: HashSet<i32>,
    /// Scope folder watches by descriptor → the folder's key (`tier/scope`).
    by_wd: HashMap<i32, String>,
    folders: HashMap<String, Folder>,
}

/// The watch of one memory root (see the module doc). `None` inside when inotify is not
/// available here: then every folder is always stale.
#[derive(Debug)]
pub(crate) struct FolderWatch {
    watches: Option<Watches>,
    /// Whether watching makes sense for this root at all (not a network file system).
    usable: bool,
    buffer: Vec<MaybeUninit<u8>>,
}

impl FolderWatch {
    /// A watch of `root`'s scope folders; inert (everything stale) on a network file system or
    /// where inotify cannot be used.
    pub(crate) fn new(root: &Path) -> Self {
        FolderWatch {
            watches: None,
            usable: !on_network_fs(root),
            buffer: vec![MaybeUninit::uninit(); 16 * 1024],
        }
    }

    /// Whether this watch can ever report a folder clean.
    pub(crate) fn is_active(&self) -> bool {
        self.usable
    }

    /// Reads every queued event, then returns the folders of `dirs` that must be refreshed
    /// before a search can trust the index for them.
    pub(crate) fn stale(&mut self, root: &Path, dirs: &[ScopeDir]) -> Vec<Stale> {
        if !self.usable {
            return dirs.iter().map(|dir| Stale { dir: dir.clone(), generation: None }).collect();
        }
        self.drain();
        if self.watches.is_none() {
            self.watches = start(root);
        }
        let mut out = Vec::new();
        for dir in dirs {
            let generation = match &mut self.watches {
                Some(w) => w.folder(root, dir),
                None => None,
            };
            match generation {
                Some((_, true)) => {}
                Some((generation, false)) => {
                    out.push(Stale { dir: dir.clone(), generation: Some(generation) })
                }
                None => out.push(Stale { dir: dir.clone(), generation: None }),
            }
        }
        out
    }

    /// Marks folders refreshed; a folder with an event read since [`FolderWatch::stale`]
    /// returned it stays stale.
    pub(crate) fn mark_fresh(&mut self, refreshed: &[Stale]) {
        let Some(w) = &mut self.watches else { return };
        for s in refreshed {
            if let (Some(generation), Some(folder)) =
                (s.generation, w.folders.get_mut(&s.dir.key()))
                && folder.generation == generation
            {
                folder.clean = true;
            }
        }
    }

    /// Reads the queue until it is empty, marking the folders it names.
    fn drain(&mut self) {
        let Some(w) = &mut self.watches else { return };
        let mut reset = false;
        let mut reader = inotify::Reader::new(&w.fd, &mut self.buffer);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::AGAIN) => break,
                Err(e) => {
                    tracing::debug!(error = %e, "reading inotify events; resetting the watch");
                    reset = true;
                    break;
                }
            };
            let flags = event.events();
            let on_root = event.wd() == w.root_wd
                && (event.file_name().is_none_or(|name| {
                    Tier::ALL.iter().any(|t| name.to_bytes() == t.dir_name().as_bytes())
                }));
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) || on_root || w.tiers.contains(&event.wd())
            {
                reset = true;
                continue;
            }
            let Some(key) = w.by_wd.get(&event.wd()) else { continue };
            if let Some(folder) = w.folders.get_mut(key) {
                folder.generation += 1;
                folder.clean = false;
            }
            if flags.intersects(ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF)
            {
                // The watch no longer stands for the path (gone, or following a moved inode):
                // forget it, so the folder is watched anew the next time it is read.
                let key = w.by_wd.remove(&event.wd()).unwrap_or_default();
                w.folders.remove(&key);
                if !flags.contains(ReadFlags::IGNORED) {
                    let _ = inotify::remove_watch(&w.fd, event.wd());
                }
            }
        }
        if reset {
            // Closing the descriptor drops every watch; the next `stale` starts over and
            // reports every folder stale until it is refreshed again.
            self.watches = None;
        }
    }
}

/// Opens an inotify instance watching the root and its tier folders; `None` if inotify is not
/// available (the caller then checks every folder).
fn start(root: &Path) -> Option<Watches> {
    let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)
        .map_err(|e| tracing::debug!(error = %e, "inotify unavailable; folders are stat-checked"))
        .ok()?;
    let root_wd = inotify::add_watch(&fd, root, root_events()).ok()?;
    let mut tiers = HashSet::new();
    for tier in Tier::ALL {
        // A tier folder that does not exist yet appears as an event on the root (a reset).
        if let Ok(wd) = inotify::add_watch(&fd, root.join(tier.dir_name()), tier_events()) {
            tiers.insert(wd);
        }
    }
    Some(Watches { fd, root_wd, tiers, by_wd: HashMap::new(), folders: HashMap::new() })
}

impl Watches {
    /// The folder's generation and whether it is clean, watching it first if needed; `None`
    /// if it cannot be watched (missing, limit reached).
    fn folder(&mut self, root: &Path, dir: &ScopeDir) -> Option<(u64, bool)> {
        let key = dir.key();
        if let Some(f) = self.folders.get(&key) {
            return Some((f.generation, f.clean));
        }
        if self.folders.len() >= MAX_FOLDERS {
            return None;
        }
        let path = root.join(dir.tier.dir_name()).join(dir.scope.as_str());
        // A symlinked scope folder: the watch would follow its target, and the link re-pointed
        // or removed (an event of the tier folder, which reports only its own moves) would go
        // unseen. Such a folder is checked on every read, as without inotify.
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return None;
        }
        let wd = inotify::add_watch(&self.fd, &path, folder_events()).ok()?;
        // Two keys can name one inode (a symlinked scope folder): keep one watch per key.
        if let Some(other) = self.by_wd.insert(wd, key.clone()) {
            self.folders.remove(&other);
        }
        self.folders.insert(key, Folder { generation: 0, clean: false });
        Some((0, false))
    }
}

/// Whether `root` is on a file system where inotify misses other machines' writes (NFS, SMB,
/// FUSE and the like): a watch there cannot vouch for anything.
pub fn on_network_fs(root: &Path) -> bool {
    // statfs(2) magic numbers of network and FUSE file systems.
    const REMOTE: &[u64] = &[
        0x6969,      // NFS
        0x517b,      // SMB
        0xff53_4d42, // CIFS
        0xfe53_4d42, // SMB2
        0x6573_5546, // FUSE (sshfs, rclone, …)
        0x00c3_6400, // Ceph
        0x0102_1997, // 9P (VM and container shares)
        0x5346_414f, // AFS
        0x0116_1970, // GFS2
        0x7461_636f, // OCFS2
    ];
    match rustix::fs::statfs(root) {
        Ok(s) => REMOTE.contains(&(s.f_type as u64)),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use curator_core::ScopeName;

    #[test]
    fn a_folder_changed_while_it_was_refreshed_stays_stale() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("products/p");
        std::fs::create_dir_all(&folder).unwrap();
        let dirs = [ScopeDir::new(Tier::Products, ScopeName::new("p").unwrap())];
        let mut watch = FolderWatch::new(root.path());
        // Thread A is told to refresh; before it reports back, thread B reads an event.
        let a = watch.stale(root.path(), &dirs);
        assert_eq!(a.len(), 1);
        std::fs::write(folder.join("obs_x.md"), "changed").unwrap();
        let b = watch.stale(root.path(), &dirs);
        assert_eq!(b.len(), 1);
        watch.mark_fresh(&a);
        assert_eq!(watch.stale(root.path(), &dirs).len(), 1, "A's refresh predates the change");
        watch.mark_fresh(&b);
        assert!(watch.stale(root.path(), &dirs).is_empty(), "B's refresh saw it");
    }

    /// A symlinked scope folder can be re-pointed without an event on its target: it is
    /// never reported clean.
    #[test]
    fn a_symlinked_folder_is_always_stale() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("elsewhere");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::create_dir_all(root.path().join("products")).unwrap();
        std::os::unix::fs::symlink(&target, root.path().join("products/p")).unwrap();
        let dirs = [ScopeDir::new(Tier::Products, ScopeName::new("p").unwrap())];
        let mut watch = FolderWatch::new(root.path());
        let stale = watch.stale(root.path(), &dirs);
        watch.mark_fresh(&stale);
        assert_eq!(watch.stale(root.path(), &dirs).len(), 1);
    }

    #[test]
    fn a_missing_folder_is_always_stale() {
        let root = tempfile::tempdir().unwrap();
        let dirs = [ScopeDir::new(Tier::Tests, ScopeName::new("t_new").unwrap())];
        let mut watch = FolderWatch::new(root.path());
        let stale = watch.stale(root.path(), &dirs);
        watch.mark_fresh(&stale);
        assert_eq!(watch.stale(root.path(), &dirs).len(), 1);
    }
}
