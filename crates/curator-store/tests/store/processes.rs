//! Each scenario spawns this test binary again with a worker role (see `util::spawn_worker`);
//! the `worker_*` tests are `#[ignore]`d and do nothing unless started that way.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use curator_core::{ObservationId, Tier};
use curator_store::{
    Action, FileStore, FileStoreOptions, JournalFilter, ListFilter, ProblemKind, Store,
};

use crate::util::{new_store, observation, open, put, scope, spawn_worker, wait_for, worker_root};

const INCREMENTS: u64 = 50;
const WORKERS: u64 = 8;

fn env_id() -> ObservationId {
    ObservationId::parse(&std::env::var("CURATOR_STORE_TEST_ID").unwrap()).unwrap()
}

/// Read-modify-write of `confirmed_count`, [`INCREMENTS`] times, each under the lock.
#[test]
#[ignore = "worker process for eight_processes_increment_to_exactly_400"]
fn worker_increment() {
    let Some(root) = worker_root("increment") else { return };
    let store = open(&root);
    let id = env_id();
    for _ in 0..INCREMENTS {
        store
            .transact(Some("r_increment"), &mut |tx| {
                let mut stored = tx.get(&id)?.expect("the observation exists");
                stored.observation.confirmed_count += 1;
                tx.put(stored.tier, &stored.scope, &stored.observation, Action::Confirm, "+1")
            })
            .unwrap();
    }
}

#[test]
fn eight_processes_increment_to_exactly_400() {
    let (dir, store) = new_store();
    let obs = observation("Counter", "Incremented by many processes.");
    put(&store, Tier::Tests, "t_count", &obs);
    let id = [("CURATOR_STORE_TEST_ID", obs.id.to_string())];
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| spawn_worker("processes::worker_increment", "increment", dir.path(), &id))
        .collect();
    for mut worker in workers {
        assert!(worker.wait().unwrap().success(), "a worker failed");
    }
    let got = store.get(&obs.id).unwrap();
    assert_eq!(got.observation.confirmed_count, WORKERS * INCREMENTS);
    let journal =
        store.journal(&JournalFilter { run_id: Some("r_increment".into()), ..Default::default() });
    assert_eq!(journal.unwrap().len() as u64, WORKERS * INCREMENTS);
    assert!(!dir.path().join(".curator.lock").exists());
}

/// Takes the lock, says so through a file, and sleeps holding it until killed.
#[test]
#[ignore = "worker process for a_sigkilled_holder_never_blocks_the_next_writer"]
fn worker_hold_lock() {
    let Some(root) = worker_root("hold") else { return };
    let ready = std::env::var("CURATOR_STORE_TEST_READY").unwrap();
    open(&root)
        .transact(None, &mut |_| {
            fs::write(&ready, b"locked").unwrap();
            std::thread::sleep(Duration::from_secs(120));
            Ok(())
        })
        .unwrap();
}

fn lock_pid(root: &Path) -> u32 {
    let text = fs::read_to_string(root.join(".curator.lock")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    u32::try_from(json["pid"].as_u64().unwrap()).unwrap()
}

#[test]
fn a_sigkilled_holder_never_blocks_the_next_writer() {
    let (dir, _store) = new_store();
    // With a 60 s timeout, agent-qa's rules alone would wait out a live-looking holder for up
    // to 120 s; a dead one (reaped, or a zombie not yet reaped) must be replaced at once.
    let options = FileStoreOptions { lock_timeout: Duration::from_secs(60), ..Default::default() };
    let store = FileStore::open(dir.path(), options).unwrap();
    for reap_first in [false, true] {
        let ready = dir.path().join(format!("ready-{reap_first}"));
        let env = [("CURATOR_STORE_TEST_READY", ready.display().to_string())];
        let mut holder = spawn_worker("processes::worker_hold_lock", "hold", dir.path(), &env);
        wait_for(&ready, Duration::from_secs(30));
        assert_eq!(lock_pid(dir.path()), holder.id(), "the worker holds the lock");
        holder.kill().unwrap(); // SIGKILL: no destructor runs, the lock file stays behind
        if reap_first {
            holder.wait().unwrap();
        }
        let started = Instant::now();
        store.transact(None, &mut |_| Ok(())).unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "waited {:?}", started.elapsed());
        holder.wait().unwrap();
    }
    assert!(!dir.path().join(".curator.lock").exists());
}

/// Rewrites one observation forever with bodies of changing size, until killed.
#[test]
#[ignore = "worker process for a_writer_killed_mid_write_never_leaves_a_torn_file"]
fn worker_write_loop() {
    let Some(root) = worker_root("write") else { return };
    let ready = std::env::var("CURATOR_STORE_TEST_READY").unwrap();
    let store = open(&root);
    let id = env_id();
    for round in 0u64.. {
        store
            .transact(Some("r_write"), &mut |tx| {
                let mut stored = tx.get(&id)?.expect("the observation exists");
                stored.observation.confirmed_count += 1;
                let size = 1 + (round * 7919) % 200_000;
                stored.observation.content =
                    format!("Round {round}: {}", "x".repeat(size as usize));
                tx.put(stored.tier, &stored.scope, &stored.observation, Action::Edit, "churn")
            })
            .unwrap();
        if round == 3 {
            fs::write(&ready, b"writing").unwrap();
        }
    }
}

#[test]
fn a_writer_killed_mid_write_never_leaves_a_torn_file() {
    let (dir, store) = new_store();
    let obs = observation("Churn", "Rewritten until the writer dies.");
    put(&store, Tier::Tests, "t_churn", &obs);
    for kill_after_ms in [0u64, 37, 113, 251] {
        let ready = dir.path().join(format!("ready-{kill_after_ms}"));
        let env = [
            ("CURATOR_STORE_TEST_ID", obs.id.to_string()),
            ("CURATOR_STORE_TEST_READY", ready.display().to_string()),
        ];
        let mut writer = spawn_worker("processes::worker_write_loop", "write", dir.path(), &env);
        wait_for(&ready, Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(kill_after_ms));
        writer.kill().unwrap();
        writer.wait().unwrap();

        let listing = store.list(&ListFilter::default()).unwrap();
        // The dead writer's temps (its lock's second name, an observation temp if the kill hit
        // between create and rename) are reported, and never served.
        let only_temps =
            listing.problems.iter().all(|p| matches!(p.kind, ProblemKind::LeftoverTemp { .. }));
        assert!(only_temps, "{:?}", listing.problems);
        let [stored] = &listing.observations[..] else { panic!("{:?}", listing.observations) };
        assert!(stored.observation.content.starts_with("Round "));
        for entry in fs::read_dir(dir.path().join("tests/t_churn")).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(name == format!("{}.md", obs.id) || name.starts_with('.'), "{name}");
        }
        // The dead writer's lock is taken over at once and its journal is still readable.
        let started = Instant::now();
        store
            .transact(None, &mut |tx| {
                let current = tx.get(&obs.id)?.unwrap();
                tx.put(Tier::Tests, &scope("t_churn"), &current.observation, Action::Edit, "after")
            })
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "waited {:?}", started.elapsed());
        let journal = store.journal(&JournalFilter::default()).unwrap();
        assert!(journal.len() >= 4, "{}", journal.len());
        // The next writer removed every temp the dead one left, and the file is the journal's.
        assert!(store.list(&ListFilter::default()).unwrap().problems.is_empty());
        for entry in fs::read_dir(dir.path().join("tests/t_churn")).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert_eq!(name, format!("{}.md", obs.id));
        }
        let on_disk = fs::read_to_string(dir.path().join(format!("tests/t_churn/{}.md", obs.id)));
        assert_eq!(journal.last().unwrap().after_file.as_ref(), Some(&on_disk.unwrap()));
    }
}
