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
