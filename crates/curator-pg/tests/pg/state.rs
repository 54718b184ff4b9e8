//! Run sessions and breaker windows shared through the database.

use curator_store::Store;

use crate::util::pg_store;

#[test]
fn run_steps_replace_and_clear_like_the_file_sessions() {
    let (_db, pg) = pg_store();
    assert_eq!(pg.load_session("r_1").unwrap(), None);
    pg.record_injection("r_1", 0, &["obs_a".into(), "obs_b".into()]).unwrap();
    pg.record_injection("r_1", 2, &["obs_c".into()]).unwrap();
    pg.record_injection("r_1", 0, &["obs_d".into()]).unwrap();
    pg.record_injection("r_2", 0, &["obs_x".into()]).unwrap();
    let s = pg.load_session("r_1").unwrap().unwrap();
    assert_eq!(s.run_id, "r_1");
    assert_eq!(
        s.injected.into_iter().collect::<Vec<_>>(),
        vec![(0, vec!["obs_d".into()]), (2, vec!["obs_c".into()])]
    );
    pg.record_injection("r_1", 2, &[]).unwrap();
    assert_eq!(pg.load_session("r_1").unwrap().unwrap().injected.len(), 1);
    // A session whose every step ended up injecting nothing still exists, as its file does:
    // `None` is only for a run nothing was ever recorded for.
    pg.record_injection("r_1", 0, &[]).unwrap();
    let emptied = pg.load_session("r_1").unwrap().expect("the session is still there");
    assert!(emptied.injected.is_empty() && emptied.probation.is_empty(), "{emptied:?}");
    let (_dir, file) = crate::util::file_store();
    file.record_injection("r_1", 0, &["obs_d".into()]).unwrap();
    file.record_injection("r_1", 0, &[]).unwrap();
    assert_eq!(file.load_session("r_1").unwrap(), Some(emptied));
}

#[test]
fn step_indexes_beyond_what_both_stores_key_exactly_are_refused() {
    let (_db, pg) = pg_store();
    let (_dir, file) = crate::util::file_store();
    let max = curator_store::MAX_STEP_INDEX;
    for store in [&pg as &dyn Store, &file] {
        store.record_injection("r_big", max, &["obs_a".into()]).unwrap();
        for step in [max + 1, 1 << 63, u64::MAX] {
            let err = store.record_injection("r_big", step, &["obs_b".into()]).unwrap_err();
            assert!(err.to_string().contains("invalid step index"), "{err}");
        }
        let s = store.load_session("r_big").unwrap().unwrap();
        assert_eq!(s.injected.into_iter().collect::<Vec<_>>(), vec![(max, vec!["obs_a".into()])]);
    }
}

#[test]
fn breaker_updates_from_many_threads_are_never_lost() {
    let (db, pg) = pg_store();
    assert_eq!(pg.load_breaker("k").unwrap(), None);
    let url = db.url().to_owned();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let pg = curator_pg::PgStore::connect(&url, Default::default()).unwrap();
                for _ in 0..25 {
                    pg.update_breaker("k", &mut |cur| {
                        let n = cur.and_then(|v| v["runs"].as_u64()).unwrap_or(0);
                        serde_json::json!({ "runs": n + 1 })
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(pg.load_breaker("k").unwrap(), Some(serde_json::json!({ "runs": 100 })));
}

#[test]
fn run_records_are_kept_replaced_and_read_back_like_the_file_store() {
    let (_db, pg) = pg_store();
    assert_eq!(pg.load_run_record("r_1").unwrap(), None);
    let first = serde_json::json!({"run_id": "r_1", "status": "failed", "steps": [{"name": "a"}]});
    pg.keep_run_record("r_1", &first).unwrap();
    assert_eq!(pg.load_run_record("r_1").unwrap(), Some(first));
    let again = serde_json::json!({"run_id": "r_1", "status": "passed", "steps": []});
    pg.keep_run_record("r_1", &again).unwrap();
    assert_eq!(pg.load_run_record("r_1").unwrap(), Some(again), "the last report counts");
    // Hostile ids are plain values here: nothing to traverse, nothing else touched.
    pg.keep_run_record("../../etc/passwd", &serde_json::json!({})).unwrap();
    assert_eq!(pg.load_run_record("r_2").unwrap(), None);
}
