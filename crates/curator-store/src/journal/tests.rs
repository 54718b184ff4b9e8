//! The journal's line format, torn lines, and transactions: open, committed, rolled back.

use super::*;
use std::fs;

fn entry(id: &str, run: Option<&str>) -> JournalEntry {
    JournalEntry {
        time: "2026-04-10T12:00:00.000Z".into(),
        run_id: run.map(Into::into),
        action: Action::Add,
        tier: "tests".into(),
        scope: "t_x".into(),
        id: id.into(),
        reasoning: "because".into(),
        before: None,
        after: None,
        before_file: None,
        after_file: Some("---\nid: x\n---\nbody\n".into()),
        txn: None,
        reverts: None,
        place: Place::Memory,
        evidence: None,
    }
}

fn in_txn(id: &str, txn: &str) -> JournalEntry {
    JournalEntry { txn: Some(txn.into()), ..entry(id, Some("r1")) }
}

fn end(end: End, txn: &str) -> EndMarker {
    EndMarker {
        end,
        txn: txn.into(),
        time: "2026-04-10T12:00:01.000Z".into(),
        run_id: Some("r1".into()),
        reason: None,
    }
}

fn ids(entries: &[JournalEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.id.as_str()).collect()
}

#[test]
fn entries_round_trip_one_line_each_and_filter() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    assert!(journal.read(&JournalFilter::default()).unwrap().is_empty());
    journal.append(&entry("obs_a", Some("r1"))).unwrap();
    journal.append(&entry("obs_b", Some("r1"))).unwrap();
    journal.append(&entry("obs_a", None)).unwrap();
    let text = fs::read_to_string(journal.path()).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .starts_with(r#"{"time":"2026-04-10T12:00:00.000Z","run_id":"r1","action":"add","#)
    );
    let all = journal.read(&JournalFilter::default()).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0], entry("obs_a", Some("r1")));
    let by_id = JournalFilter { id: Some("obs_a".into()), run_id: None };
    assert_eq!(journal.read(&by_id).unwrap().len(), 2);
    let by_run = JournalFilter { id: None, run_id: Some("r1".into()) };
    assert_eq!(journal.read(&by_run).unwrap().len(), 2);
    let both = JournalFilter { id: Some("obs_a".into()), run_id: Some("r1".into()) };
    assert_eq!(journal.read(&both).unwrap().len(), 1);
}

#[test]
fn a_torn_last_line_is_skipped_then_cut_by_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&entry("obs_a", None)).unwrap();
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(br#"{"time":"2026-04-10T12:0"#).unwrap();
    assert_eq!(journal.read(&JournalFilter::default()).unwrap().len(), 1);
    journal.append(&entry("obs_b", None)).unwrap();
    let ids: Vec<String> =
        journal.read(&JournalFilter::default()).unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, ["obs_a", "obs_b"]);
}

#[test]
fn a_torn_only_line_is_cut_entirely() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    fs::create_dir_all(dir.path().join(".curator")).unwrap();
    fs::write(journal.path(), b"{\"ti").unwrap();
    assert!(journal.read(&JournalFilter::default()).unwrap().is_empty());
    journal.append(&entry("obs_a", None)).unwrap();
    assert_eq!(journal.read(&JournalFilter::default()).unwrap().len(), 1);
}

#[test]
fn a_bad_line_in_the_middle_is_reported_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&entry("obs_a", None)).unwrap();
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(b"not json\n").unwrap();
    journal.append(&entry("obs_b", None)).unwrap();
    let err = journal.read(&JournalFilter::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("journal.jsonl line 2:"), "{msg}");
    // A complete but invalid last line is not a torn one either.
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    fs::create_dir_all(dir.path().join(".curator")).unwrap();
    fs::write(journal.path(), b"{}\n").unwrap();
    assert!(matches!(journal.read(&JournalFilter::default()), Err(Error::Journal { line: 1, .. })));
}

/// A line a newer curator wrote (an action this version does not know) is named as such, not
/// as damage to remove (audit 9: removing it loses the newer curator's history).
#[test]
fn a_line_of_a_newer_curator_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&entry("obs_a", None)).unwrap();
    let line =
        serde_json::to_string(&entry("obs_b", None)).unwrap().replace("\"add\"", "\"quarantine\"");
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(format!("{line}\n").as_bytes()).unwrap();
    let msg = journal.read(&JournalFilter::default()).unwrap_err().to_string();
    assert!(msg.contains("line 2:") && msg.contains("quarantine"), "{msg}");
    assert!(msg.contains("a newer curator probably wrote this line"), "{msg}");
}

#[test]
fn a_bad_complete_last_line_stops_writes_naming_its_line_and_the_remedy() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&entry("obs_a", None)).unwrap();
    journal.append(&in_txn("obs_b", "t1")).unwrap();
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(b"{\"end\":\"comm\n").unwrap();
    // Whether t1 was committed cannot be told, so recovery refuses rather than guess.
    let err = journal.open_transactions().unwrap_err();
    assert!(matches!(err, Error::Journal { line: 3, .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("line 3:") && msg.contains("fixed or removed"), "{msg}");
    // Removing the line is the remedy: t1 is then the open transaction it was.
    let text = fs::read_to_string(journal.path()).unwrap();
    let cut = text.trim_end_matches('\n').rfind('\n').unwrap() + 1;
    fs::write(journal.path(), &text[..cut]).unwrap();
    assert_eq!(ids(&journal.open_transactions().unwrap()[0].entries), ["obs_b"]);
}

#[test]
fn only_committed_transactions_count_and_old_lines_count_as_committed() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    let all = JournalFilter::default();
    journal.append(&entry("obs_legacy", Some("r0"))).unwrap();
    journal.append(&in_txn("obs_a", "t1")).unwrap();
    journal.append(&in_txn("obs_b", "t1")).unwrap();
    // Open: neither readers nor a filtered read see t1 yet; its own transaction does.
    assert_eq!(ids(&journal.read(&all).unwrap()), ["obs_legacy"]);
    assert_eq!(
        ids(&journal.read_including(&all, Some("t1")).unwrap()),
        ["obs_legacy", "obs_a", "obs_b"]
    );
    let open = journal.open_transactions().unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!((open[0].txn.as_str(), ids(&open[0].entries)), ("t1", vec!["obs_a", "obs_b"]));
    journal.append_end(&end(End::Commit, "t1")).unwrap();
    assert!(journal.open_transactions().unwrap().is_empty());
    journal.append(&in_txn("obs_c", "t2")).unwrap();
    journal.append_end(&end(End::Rollback, "t2")).unwrap();
    assert_eq!(ids(&journal.read(&all).unwrap()), ["obs_legacy", "obs_a", "obs_b"]);
    let by_id = JournalFilter { id: Some("obs_c".into()), run_id: None };
    assert!(journal.read(&by_id).unwrap().is_empty());
    let text = fs::read_to_string(journal.path()).unwrap();
    assert!(
        text.lines().nth(3).unwrap().starts_with(r#"{"end":"commit","txn":"t1","time":"#),
        "{text}"
    );
}

#[test]
fn a_journal_of_old_lines_has_no_open_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    assert!(journal.open_transactions().unwrap().is_empty());
    journal.append(&entry("obs_a", None)).unwrap();
    assert!(journal.open_transactions().unwrap().is_empty());
    journal.append(&in_txn("obs_b", "t1")).unwrap();
    assert_eq!(ids(&journal.open_transactions().unwrap()[0].entries), ["obs_b"]);
}

#[test]
fn an_open_transaction_longer_than_one_read_window_is_found_whole() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&in_txn("obs_first", "t0")).unwrap();
    journal.append_end(&end(End::Commit, "t0")).unwrap();
    let big = "x".repeat(10_000);
    for i in 0..40 {
        let mut e = in_txn(&format!("obs_{i}"), "t1");
        e.after_file = Some(big.clone());
        journal.append(&e).unwrap();
    }
    // A torn last line is not part of it.
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(br#"{"time":"2026"#).unwrap();
    let open = journal.open_transactions().unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].entries.len(), 40);
    assert_eq!(open[0].entries[0].id, "obs_0");
    assert_eq!(open[0].entries[39].id, "obs_39");
}

#[test]
fn a_filtered_read_parses_only_lines_that_can_match() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&entry("obs_a", Some("r1"))).unwrap();
    // A run id that is a prefix of another must not match it, nor an id inside a file text.
    journal.append(&entry("obs_a", Some("r10"))).unwrap();
    let mut tricky = entry("obs_b", Some("r1"));
    tricky.reasoning = r#"mentions "id":"obs_a" in passing"#.into();
    journal.append(&tricky).unwrap();
    let f = |id: Option<&str>, run: Option<&str>| JournalFilter {
        id: id.map(Into::into),
        run_id: run.map(Into::into),
    };
    assert_eq!(ids(&journal.read(&f(None, Some("r1"))).unwrap()), ["obs_a", "obs_b"]);
    assert_eq!(ids(&journal.read(&f(Some("obs_a"), None)).unwrap()), ["obs_a", "obs_a"]);
    assert_eq!(ids(&journal.read(&f(Some("obs_a"), Some("r10"))).unwrap()), ["obs_a"]);
}

#[test]
fn a_marker_is_read_whatever_its_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&in_txn("obs_a", "t1")).unwrap();
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(b"{\"txn\":\"t1\",\"time\":\"x\",\"end\":\"commit\"}\n").unwrap();
    assert_eq!(ids(&journal.read(&JournalFilter::default()).unwrap()), ["obs_a"]);
    assert!(journal.open_transactions().unwrap().is_empty());
}

#[test]
fn an_unterminated_last_line_counts_for_nothing_even_when_it_parses() {
    // The next append cuts such a line off, so a reader must not count it meanwhile: a commit
    // marker without its newline does not commit.
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&in_txn("obs_a", "t1")).unwrap();
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(&serde_json::to_vec(&end(End::Commit, "t1")).unwrap()).unwrap();
    assert!(journal.read(&JournalFilter::default()).unwrap().is_empty());
    assert_eq!(journal.open_transactions().unwrap().len(), 1);
}

/// A run's evidence entry: one step into which `id` was injected.
fn evidence(run: &str, txn: &str, id: &str, action: Action) -> JournalEntry {
    let step = crate::evidence::StepEvidence {
        status: "failed".into(),
        injected: vec![id.into()],
        probation: None,
    };
    let run_evidence = RunEvidence {
        run_id: run.into(),
        time: "2026-04-10T12:00:00.000Z".into(),
        test: "t_x".into(),
        status: "failed".into(),
        ablation: None,
        steps: vec![step],
    };
    let mut e = JournalEntry::evidence_change(Some(run.into()), &run_evidence, action);
    e.txn = Some(txn.into());
    e
}

/// A committed transaction of run `run` changing `id` with a large file text (so a few of
/// them make the checkpoint worth writing), with its evidence.
fn applied(journal: &Journal, run: &str, txn: &str, id: &str, end_as: End) {
    let mut change = JournalEntry { txn: Some(txn.into()), ..entry(id, Some(run)) };
    change.after_file = Some(format!("---\nid: {id}\n---\n{}\n", "x".repeat(400_000)));
    journal.append(&change).unwrap();
    journal.append(&evidence(run, txn, id, Action::Evidence)).unwrap();
    journal.append_end(&EndMarker { run_id: Some(run.into()), ..end(end_as, txn) }).unwrap();
}

/// What the curator asks of the journal, read through `journal`'s checkpoint when it holds.
fn answers(journal: &Journal) -> Vec<String> {
    let mut out = Vec::new();
    for run in ["r0", "r1", "r2", "r3", "undo:r1"] {
        let filter = JournalFilter { id: None, run_id: Some(run.into()) };
        let entries = journal.read(&filter).unwrap();
        out.push(format!(
            "{run}: {:?}",
            entries.iter().map(|e| (&e.id, e.action)).collect::<Vec<_>>()
        ));
    }
    let book = journal.evidence(None).unwrap();
    out.push(format!("{:?} {:?} {:?}", book.runs, book.observations, book.tests));
    out
}

#[test]
fn the_checkpoint_answers_as_the_whole_journal_does_and_is_dropped_when_the_journal_changed() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    journal.append(&entry("obs_legacy", Some("r0"))).unwrap();
    applied(&journal, "r1", "t1", "obs_a", End::Commit);
    applied(&journal, "r2", "t2", "obs_b", End::Rollback);
    applied(&journal, "r3", "t3", "obs_c", End::Commit);
    let checkpoint = checkpoint::path_for(journal.path());
    assert!(!checkpoint.exists());
    let whole = answers(&journal);
    journal.refresh_checkpoint().unwrap();
    assert!(checkpoint.exists(), "the tail is worth a checkpoint");
    let cp = Checkpoint::load(journal.path(), &Default::default()).unwrap();
    assert_eq!(cp.len, fs::metadata(journal.path()).unwrap().len());
    assert_eq!(cp.runs.keys().collect::<Vec<_>>(), ["r0", "r1", "r3"], "rolled back: left out");
    assert_eq!(answers(&journal), whole);
    // Later changes come from the tail: an undo of r1 retracts its evidence, a new run adds.
    journal
        .append(&JournalEntry { txn: Some("t4".into()), ..entry("obs_a", Some("undo:r1")) })
        .unwrap();
    journal.append(&evidence("r1", "t4", "obs_a", Action::Retract)).unwrap();
    journal.append_end(&end(End::Commit, "t4")).unwrap();
    applied(&journal, "r1", "t5", "obs_a", End::Commit);
    let fresh = Journal::for_root(dir.path());
    let with_checkpoint = answers(&fresh);
    fs::rename(&checkpoint, dir.path().join("aside.json")).unwrap();
    assert_eq!(answers(&Journal::for_root(dir.path())), with_checkpoint, "tail folded right");
    fs::rename(dir.path().join("aside.json"), &checkpoint).unwrap();
    // A journal cut by hand before the checkpoint's end: the checkpoint no longer holds.
    let text = fs::read(journal.path()).unwrap();
    let cut = text.len() / 3;
    let cut = text[..cut].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    fs::write(journal.path(), &text[..cut]).unwrap();
    assert!(Checkpoint::load(journal.path(), &Default::default()).is_none());
    let after_cut = answers(&Journal::for_root(dir.path()));
    fs::remove_file(&checkpoint).unwrap();
    assert_eq!(answers(&Journal::for_root(dir.path())), after_cut);
    // A journal replaced by another as long, differing where the checkpoint ends: not the
    // same prefix either.
    fs::write(journal.path(), &text).unwrap();
    journal.refresh_checkpoint().unwrap();
    assert!(Checkpoint::load(journal.path(), &Default::default()).is_some());
    let mut other = text.clone();
    let marker = memchr::memmem::rfind(&other, b"\"t5\"").unwrap();
    other[marker + 1] = b'9';
    fs::write(journal.path(), &other).unwrap();
    assert!(Checkpoint::load(journal.path(), &Default::default()).is_none());
}

/// A page read backwards from the end holds exactly what reading every entry and taking the
/// newest would: over legacy lines, committed, rolled-back and open transactions, a torn last
/// line, entries long enough to span the backward reader's chunks, and every filter.
#[test]
fn a_page_read_from_the_end_equals_the_newest_of_a_full_read() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::for_root(dir.path());
    let big = "y".repeat(300 * 1024); // longer than one backward chunk
    journal.append(&entry("obs_legacy", Some("r0"))).unwrap();
    for i in 0..30 {
        let txn = format!("t{i}");
        let run = format!("r{}", i % 4);
        for id in ["obs_a", "obs_b", "obs_c"].iter().take(1 + i % 3) {
            let mut e = JournalEntry { run_id: Some(run.clone()), ..in_txn(id, &txn) };
            if i % 7 == 3 {
                e.reasoning = big.clone();
            }
            journal.append(&e).unwrap();
        }
        let outcome = if i % 5 == 4 { End::Rollback } else { End::Commit };
        journal.append_end(&EndMarker { run_id: Some(run), ..end(outcome, &txn) }).unwrap();
    }
    journal.append(&in_txn("obs_open", "t_open")).unwrap(); // never ended
    let mut f = OpenOptions::new().append(true).open(journal.path()).unwrap();
    f.write_all(b"{\"time\":\"torn").unwrap();
    let filters = [
        JournalFilter::default(),
        JournalFilter { id: Some("obs_b".into()), run_id: None },
        JournalFilter { id: None, run_id: Some("r2".into()) },
        JournalFilter { id: Some("obs_a".into()), run_id: Some("r1".into()) },
        JournalFilter { id: Some("obs_none".into()), run_id: None },
    ];
    for filter in &filters {
        let mut all = journal.read(filter).unwrap();
        all.reverse();
        for (offset, limit) in [(0, 1), (0, 50), (3, 4), (10, 100), (200, 5)] {
            let page = journal.page(filter, offset, limit).unwrap();
            assert_eq!(page.total, all.len(), "{filter:?}");
            let want: Vec<_> = all.iter().skip(offset).take(limit).cloned().collect();
            assert_eq!(page.entries, want, "{filter:?} {offset} {limit}");
        }
    }
    assert!(journal.page(&filters[0], 0, 10).unwrap().entries.iter().all(|e| e.id != "obs_open"));
    // The heads a summary of the runs reads: every committed entry's, newest first.
    let mut heads = Vec::new();
    journal
        .heads(&mut |h| {
            heads.push((
                h.time.to_owned(),
                h.run_id.map(str::to_owned),
                h.action.to_owned(),
                h.txn.map(str::to_owned),
            ))
        })
        .unwrap();
    let mut all = journal.read(&filters[0]).unwrap();
    all.reverse();
    let want: Vec<_> = all
        .iter()
        .map(|e| (e.time.clone(), e.run_id.clone(), e.action.as_str().to_owned(), e.txn.clone()))
        .collect();
    assert_eq!(heads, want);
    let missing = Journal::for_root(&dir.path().join("none"));
    assert_eq!(missing.page(&filters[0], 0, 10).unwrap(), JournalPage::default());
}
