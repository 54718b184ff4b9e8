//! The `Store` trait: the one interface the engine uses to read and change observations.
//!
//! The file store implements it over a memory directory, curator-pg over a PostgreSQL database;
//! besides observations and the journal a store keeps what a step's query and the curator share
//! across processes (search, run sessions, breaker windows), so the engine runs unchanged on
//! either (issue 7 item 4). A store never guesses: a missing id is `NotFound`, an id present in two folders is
//! `DuplicateId`, and a file that cannot be read as a safe observation is a [`Problem`] that
//! listings report instead of skipping silently.

use std::path::PathBuf;

use curator_core::{Observation, ObservationId, ScopeName, Tier, codec::ParseError};

use crate::evidence::{EvidenceQuery, EvidenceView, RunEvidence};
use crate::index::{Hit, SearchRequest};
use crate::journal::{JournalEntry, JournalFilter, JournalHead, JournalPage};
use crate::run_state::RunSession;
use crate::{Error, Result};

/// An observation together with where it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredObservation {
    pub tier: Tier,
    pub scope: ScopeName,
    pub observation: Observation,
}

/// Which observations a listing returns; `None` means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub tier: Option<Tier>,
    pub scope: Option<ScopeName>,
}

/// A file the store found but will not serve, and why (or a scope folder it serves but that
/// breaks the scope-name rule of writes, [`ProblemKind::ScopeName`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub path: PathBuf,
    pub kind: ProblemKind,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.kind)
    }
}

/// Why a file is not served.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProblemKind {
    #[error("unreadable: {0}")]
    Unreadable(String),
    #[error("too large: {size} bytes (limit {limit})")]
    TooLarge { size: u64, limit: u64 },
    #[error("not valid UTF-8 (first bad byte at offset {valid_up_to})")]
    InvalidUtf8 { valid_up_to: usize },
    #[error("parse error: {0}")]
    Parse(ParseError),
    #[error("unsafe text: blocked by scanner rule {rule}")]
    Unsafe { rule: String },
    #[error("duplicate id {id}: also in {other}")]
    DuplicateId { id: String, other: PathBuf },
    #[error("misplaced: {0}")]
    Misplaced(String),
    /// A temp file (`.<name>.tmp-<pid>-<random>`) whose writer died before renaming it into
    /// place: never served, and safe to delete. The next writer removes the temps of the
    /// transaction it recovers (issue 13).
    #[error(
        "temp file left by a writer that died (pid {pid}); it is never served and safe to delete"
    )]
    LeftoverTemp { pid: u32 },
    /// A scope folder whose name no write path would create (issue 13 item 5): its
    /// observations are still served, as agent-qa serves them, but the folder is reported.
    #[error(
        "scope folder name breaks the rule of every write path: {0} (its observations are still served; rename the folder)"
    )]
    ScopeName(curator_core::ScopeError),
    /// A store did not take this observation, for the reason given: PostgreSQL cannot hold its
    /// text (a NUL character), or a transfer between stores left it alone because the receiving
    /// store changed it since the last transfer (import does not revert a change, nor undo a
    /// deletion, made in the database).
    #[error("{0}")]
    NotStored(String),
}

/// One thing [`Store::recover`] did to resolve what a dead writer left.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Recovered {
    /// The file concerned.
    pub path: PathBuf,
    /// What was done, as a sentence.
    pub what: String,
}

impl Recovered {
    pub(crate) fn new(path: &std::path::Path, what: String) -> Self {
        Recovered { path: path.to_owned(), what }
    }
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.what)
    }
}

/// The result of a listing: what is served, and what was found but refused.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub observations: Vec<StoredObservation>,
    pub problems: Vec<Problem>,
}

/// One page of a listing ([`Store::list_page`]): which scopes the filter matches and how many
/// observation files each holds, and the page's files, served or refused.
#[derive(Debug, Clone, Default)]
pub struct ListingPage {
    /// Every scope the filter matches, in (tier, scope) order, with its count of observation
    /// files (served or not).
    pub scopes: Vec<(Tier, ScopeName, usize)>,
    /// The observation files the filter matches: the sum of the scope counts.
    pub total: usize,
    /// The served observations among the page's files, in (tier, scope, id) order.
    pub observations: Vec<StoredObservation>,
    /// The refused files among the page's files.
    pub problems: Vec<Problem>,
}

impl ListingPage {
    /// A page cut from a whole listing (what a store that cannot page does): the served
    /// observations are the files, and every problem is reported with the first page.
    pub fn from_listing(listing: Listing, offset: usize, limit: usize) -> Self {
        let mut observations = listing.observations;
        observations.sort_by(|a, b| {
            (a.tier, &a.scope, a.observation.id.as_str()).cmp(&(
                b.tier,
                &b.scope,
                b.observation.id.as_str(),
            ))
        });
        let mut scopes: Vec<(Tier, ScopeName, usize)> = Vec::new();
        for s in &observations {
            match scopes.last_mut() {
                Some((tier, scope, n)) if *tier == s.tier && *scope == s.scope => *n += 1,
                _ => scopes.push((s.tier, s.scope.clone(), 1)),
            }
        }
        let total = observations.len();
        let problems = if offset == 0 { listing.problems } else { Vec::new() };
        let observations = observations.into_iter().skip(offset).take(limit).collect();
        ListingPage { scopes, total, observations, problems }
    }
}

/// What a mutation means; recorded in the journal and the MemoryLog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Add,
    Confirm,
    Deprecate,
    Delete,
    Edit,
    Undo,
    /// Journal only: an ablation rerun failed too, so the memory injected into the failed run
    /// was not the cause and is left unchanged (issue 4; ARCHITECTURE.md "Ablation").
    Exonerate,
    /// Journal only: an ablation proved memory caused a failure, but this observation's own
    /// record of outcomes clears it (issue 18, selective blame).
    Spare,
    /// A new observation an agent or a model proposed enters the review queue (issue 18).
    Propose,
    /// A pending observation leaves the review queue for its tier folder (two entries: one
    /// removing it from [`Place::Pending`], one writing it to [`Place::Memory`]).
    Approve,
    /// A pending observation is refused and removed from the review queue.
    Reject,
    /// Journal only: a run's outcome evidence starts to count (the entry carries it; issue 18).
    /// Curate records it in the run's transaction, so it stands or falls with the run's
    /// application; undoing the undo of a run records it again.
    Evidence,
    /// Journal only: a run's outcome evidence stops counting (`undo` of the run's application).
    Retract,
}

impl Action {
    /// The action as the journal, the MemoryLog and the API spell it (serde's lowercase name).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Confirm => "confirm",
            Action::Deprecate => "deprecate",
            Action::Delete => "delete",
            Action::Edit => "edit",
            Action::Undo => "undo",
            Action::Exonerate => "exonerate",
            Action::Spare => "spare",
            Action::Propose => "propose",
            Action::Approve => "approve",
            Action::Reject => "reject",
            Action::Evidence => "evidence",
            Action::Retract => "retract",
        }
    }

    /// Whether the action is a journal note that changes no file (`undo` reverts no file for
    /// it: an evidence entry is reverted by its opposite, the other notes not at all).
    pub fn is_note(self) -> bool {
        matches!(self, Action::Exonerate | Action::Spare | Action::Evidence | Action::Retract)
    }
}

/// Where an observation file lives: the tier folders every reader serves (agent-qa included),
/// or the review queue of proposals nobody injects as ordinary memory (issue 18;
/// ARCHITECTURE.md "Evidence and review live beside the memory, not in it"). The file store
/// keeps the queue under `<root>/.curator/pending/<tier>/<scope>/`, which agent-qa never lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    /// `<root>/<tier>/<scope>/`: served memory.
    #[default]
    Memory,
    /// The review queue.
    Pending,
}

impl Place {
    /// Whether this is served memory (the journal leaves the field out then).
    pub fn is_memory(&self) -> bool {
        *self == Place::Memory
    }
}

/// The one interface to stored observations.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Every served observation matching `filter`, plus every problem found on the way.
    fn list(&self, filter: &ListFilter) -> Result<Listing>;

    /// One observation by id: `NotFound` or `DuplicateId` rather than a guess.
    fn get(&self, id: &ObservationId) -> Result<StoredObservation>;

    /// One page of the observations matching `filter`, in (tier, scope, id) order: `offset`
    /// and `limit` count observation files, and a store that can tells what the filter matches
    /// without reading every file (the file store reads folder names, then only the page's
    /// files), so a page costs its size, not the root's (issue 13 item 3). The default reads
    /// everything through [`Store::list`] and cuts the page out.
    fn list_page(&self, filter: &ListFilter, offset: usize, limit: usize) -> Result<ListingPage> {
        Ok(ListingPage::from_listing(self.list(filter)?, offset, limit))
    }

    /// Runs `body` holding the store's writer lock as one transaction, journaled with `run_id`:
    /// when `body` succeeds every change stands, when it fails (or a change could not be
    /// completed) none does. The file store journals each change ahead of its file and commits
    /// or rolls back before releasing the lock; a crash at any point is resolved by the next
    /// writer (see [`Store::recover`]). Not reentrant: calling `transact` from inside `body`
    /// waits for the outer call's lock until the lock timeout.
    ///
    /// A database store (curator-pg) runs `body` inside one SQL transaction; after a deadlock
    /// or serialization failure the transaction is rolled back and `body` is **run again** from
    /// the start. A `body` must therefore rebuild whatever it collects (a MemoryLog, a list of
    /// reverted ids) when it starts, rather than append to what a previous attempt left.
    ///
    /// Transactions with the same run id (ignoring `undo-` prefixes) never overlap, so a body
    /// that reads the run's journal ([`Transaction::journal`]) and decides from it (curate
    /// once, undo the latest application) sees every earlier transaction of that run.
    fn transact(
        &self,
        run_id: Option<&str>,
        body: &mut dyn FnMut(&mut dyn Transaction) -> Result<()>,
    ) -> Result<()>;

    /// Journal entries of committed transactions, oldest first.
    fn journal(&self, filter: &JournalFilter) -> Result<Vec<JournalEntry>>;

    /// The newest committed entries passing `filter` (newest first, `offset` skipped, at most
    /// `limit`) and their total: what a page of history shows. The file store reads it from
    /// the journal's end and keeps only the page, so a page costs no memory in proportion to
    /// the history; this default reads every entry.
    fn journal_page(
        &self,
        filter: &JournalFilter,
        offset: usize,
        limit: usize,
    ) -> Result<JournalPage> {
        let mut entries = self.journal(filter)?;
        let total = entries.len();
        entries.reverse();
        let entries = entries.into_iter().skip(offset).take(limit).collect();
        Ok(JournalPage { total, entries })
    }

    /// Calls `visit` with the head of every committed entry (its time, run, action and
    /// transaction), in some order: what a summary of all runs reads. The file store walks the
    /// journal from its end parsing each line for its head alone, so a summary holds no texts;
    /// this default reads every entry, newest first.
    fn journal_heads(&self, visit: &mut dyn FnMut(&JournalHead<'_>)) -> Result<()> {
        for e in self.journal(&JournalFilter::default())?.iter().rev() {
            visit(&JournalHead {
                time: &e.time,
                run_id: e.run_id.as_deref(),
                action: e.action.as_str(),
                txn: e.txn.as_deref(),
            });
        }
        Ok(())
    }

    /// Checks that every journal line can be read, naming the first that cannot. A filtered
    /// read skips the lines it does not ask for without reading them, so a change that must
    /// see *all* of a run's entries (`undo`) checks first: a line damaged by hand could be one
    /// of them. A database journal has no such lines.
    fn check_journal(&self) -> Result<()> {
        Ok(())
    }

    /// Resolves what a writer that died left behind, under the writer lock, and says what was
    /// done: the file store rolls back a transaction that never committed and removes its temp
    /// files (every `transact` does this first; `curator lint` calls it directly). A store
    /// whose transactions are atomic on their own (curator-pg) has nothing to do.
    fn recover(&self) -> Result<Vec<Recovered>> {
        Ok(Vec::new())
    }

    /// The step's memory: every served observation of the request's scopes that matches its
    /// text, best first (agent-qa-memory §3.2, §3.3). The file store answers from its tantivy
    /// index (refreshed first; an in-RAM index when the index cannot be written), curator-pg
    /// from PostgreSQL's full-text index with the same scope, trust and phrase rules.
    fn search(&self, req: &SearchRequest) -> Result<Vec<Hit>> {
        let _ = req;
        Err(Error::Unsupported { operation: "search" })
    }

    /// Records that `ids` were injected into `step` of `run_id` (§3.4): a later record for the
    /// same step replaces its entry (the last attempt counts), and an empty `ids` removes it.
    fn record_injection(&self, run_id: &str, step: u64, ids: &[String]) -> Result<()> {
        let _ = (run_id, step, ids);
        Err(Error::Unsupported { operation: "run sessions" })
    }

    /// What was recorded for `run_id`; `None` when nothing ever was.
    fn load_session(&self, run_id: &str) -> Result<Option<RunSession>> {
        let _ = run_id;
        Err(Error::Unsupported { operation: "run sessions" })
    }

    /// A value that changes whenever this store's memory changes, for a store whose changes no
    /// watch of the memory root can see (a database written by other machines); `None` when
    /// the root's files are the memory (the file store: its files are watched).
    fn change_stamp(&self) -> Result<Option<String>> {
        Ok(None)
    }

    /// Keeps what a finished run reported (its outcome, steps, errors; the shape belongs to
    /// curator-engine, the store keeps it as JSON) under `run_id`, replacing what was kept
    /// before, so a reviewer can see why the curator did what it did (issue 15: the web UI's
    /// run page). Kept beside the memory, never in the agent-qa files.
    fn keep_run_record(&self, run_id: &str, record: &serde_json::Value) -> Result<()> {
        let _ = (run_id, record);
        Err(Error::Unsupported { operation: "run records" })
    }

    /// What [`Store::keep_run_record`] kept for `run_id`; `None` when nothing was.
    fn load_run_record(&self, run_id: &str) -> Result<Option<serde_json::Value>> {
        let _ = run_id;
        Err(Error::Unsupported { operation: "run records" })
    }

    /// The circuit-breaker window stored under `key` (§9), `None` when there is none. The
    /// window's shape belongs to curator-engine; the store keeps it as JSON.
    fn load_breaker(&self, key: &str) -> Result<Option<serde_json::Value>> {
        let _ = key;
        Err(Error::Unsupported { operation: "circuit breakers" })
    }

    /// Replaces the window under `key` with what `change` makes of the current one (`None`
    /// when there is none yet) and returns it; `change` is called exactly once when this
    /// succeeds. No other writer of `key` runs in between, in this process or another, so
    /// concurrent runs recording outcomes never lose one.
    fn update_breaker(
        &self,
        key: &str,
        change: &mut dyn FnMut(Option<serde_json::Value>) -> serde_json::Value,
    ) -> Result<serde_json::Value> {
        let _ = (key, change);
        Err(Error::Unsupported { operation: "circuit breakers" })
    }

    /// Records the injections of `step` of `run_id` with the observation injected on probation
    /// there, if any (one of `ids`; issue 18). Same replacement rules as
    /// [`Store::record_injection`], which is this with no probation.
    fn record_step(
        &self,
        run_id: &str,
        step: u64,
        ids: &[String],
        probation: Option<&str>,
    ) -> Result<()> {
        match probation {
            None => self.record_injection(run_id, step, ids),
            Some(_) => Err(Error::Unsupported { operation: "probation" }),
        }
    }

    /// Records `step` of `run_id` from what `decide` makes of the session as recorded now:
    /// `decide` returns the step's ids and the probation id among them, and no other change of
    /// the run's session comes between its read and this write. So two steps of one run
    /// queried at once neither lose each other's record nor both take the run's one trial
    /// (`curator-engine`'s `trial.rs`). The same replacement rules as [`Store::record_step`].
    /// The default reads, decides and records with nothing held, for stores that keep no
    /// sessions.
    fn update_step(
        &self,
        run_id: &str,
        step: u64,
        decide: &mut dyn FnMut(Option<&RunSession>) -> Result<StepRecord>,
    ) -> Result<()> {
        let session = match self.load_session(run_id) {
            Ok(session) => session,
            Err(Error::Unsupported { .. }) => None,
            Err(e) => return Err(e),
        };
        let record = decide(session.as_ref())?;
        self.record_step(run_id, step, &record.ids, record.probation.as_deref())
    }

    /// Pending observations (the review queue) matching `filter`, oldest file name first within
    /// a scope; files that cannot be served are problems, as in [`Store::list`].
    fn list_pending(&self, filter: &ListFilter) -> Result<Listing> {
        let _ = filter;
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// One pending observation by id; `None` when the queue does not hold it.
    fn get_pending(&self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        let _ = id;
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// The pending observations of the request's scopes that match its text, best first
    /// (the candidates of a probation injection; trust and suite rules as [`Store::search`]).
    fn search_pending(&self, req: &SearchRequest) -> Result<Vec<Hit>> {
        let _ = req;
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// The outcome evidence of the asked observations and tests (issue 18), read fresh.
    fn evidence(&self, query: &EvidenceQuery) -> Result<EvidenceView> {
        let _ = query;
        Err(Error::Unsupported { operation: "outcome evidence" })
    }
}

/// Reads and writes under the writer lock. Reads here see the files as they are now, not a cache.
pub trait Transaction {
    /// The current state of `id`, read fresh.
    fn get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>>;

    /// [`Transaction::get`], served or refused by the scanner: what agent-qa's curator locates
    /// and parses before it confirms or contradicts (§5.4, §5.5 parse, they do not scan), so
    /// memory the scanner blocks can still be contradicted down to its deletion. Rewriting it
    /// scans ([`Transaction::put`]). A store that never holds a refused observation reads the
    /// served one.
    fn get_parsed(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        self.get(id)
    }

    /// Every served observation of one scope, sorted by file name (agent-qa's listing order).
    fn list_scope(&mut self, tier: Tier, scope: &ScopeName) -> Result<Vec<StoredObservation>>;

    /// Every observation of one scope that parses, served or refused by the scanner, sorted by
    /// file name: what agent-qa's suite stale cleanup reads (§5.6 parses, it does not scan), so
    /// a stale file the scanner blocks is deleted too. A store that never holds a refused
    /// observation lists the served ones.
    fn list_scope_parsed(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
    ) -> Result<Vec<StoredObservation>> {
        self.list_scope(tier, scope)
    }

    /// Scans, validates and atomically writes `observation` to `<tier>/<scope>/<id>.md`.
    fn put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()>;

    /// Deletes `<tier>/<scope>/<id>.md`.
    fn delete(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        action: Action,
        reasoning: &str,
    ) -> Result<()>;

    /// Holds `suite`'s cleanup lock until the transaction ends (agent-qa-memory §5.6 stale
    /// suite cleanup), so two curators never clean the same suite at once. The file store's
    /// writer lock already covers the whole root, so the default does nothing; curator-pg takes
    /// a transaction-scoped advisory lock.
    fn lock_suite(&mut self, suite: &ScopeName) -> Result<()> {
        let _ = suite;
        Ok(())
    }

    /// Journal entries as this transaction sees them: every committed one plus its own, oldest
    /// first. Read under the writer lock, so no other transaction of the run can start between
    /// this read and the commit (exactly-once curation and undo decide from it).
    fn journal(&mut self, filter: &JournalFilter) -> Result<Vec<JournalEntry>>;

    /// Marks this transaction as the undo of transaction `txn`: every entry it journals from
    /// now on carries `reverts: txn`, so later readers know which application of a run is
    /// undone (issue 13 item 2: undo, curate again, undo again).
    fn set_reverts(&mut self, txn: &str) -> Result<()>;

    /// Journals a decision that changes no file (an ablation that exonerated `stored`): one
    /// entry with `before == after` and no file texts.
    fn note(&mut self, stored: &StoredObservation, action: Action, reasoning: &str) -> Result<()>;

    /// The exact current text of `<tier>/<scope>/<id>.md`, `None` when there is no such file.
    /// `undo` compares it with what a run wrote before reverting anything.
    fn read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>>;

    /// Puts `<tier>/<scope>/<id>.md` back to exactly `text` (atomically), or removes it when
    /// `text` is `None`; journaled with `action`, the texts before and after, and `reasoning`.
    /// Used by `undo` to restore byte for byte what the journal recorded, so it neither scans
    /// nor re-renders the text.
    fn restore(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        text: Option<&str>,
        action: Action,
        reasoning: &str,
    ) -> Result<()>;

    /// The pending observation `id` (the review queue), read fresh; `None` when not queued.
    fn pending_get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        let _ = id;
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// The review queue's observations in `tier`/`scope`, read inside the transaction and
    /// held against other writers to that scope's queue until it ends, so that a writer that
    /// finds no proposal like its own there can queue it without another landing in between.
    /// Files that cannot be served are left out (the store's `list_pending` names them).
    fn pending_list_scope(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
    ) -> Result<Vec<StoredObservation>> {
        let _ = (tier, scope);
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// Scans, validates and writes `observation` into the review queue at `tier`/`scope`,
    /// journaled with [`Place::Pending`]. An id already served or queued elsewhere is
    /// `DuplicateId`.
    fn pending_put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let _ = (tier, scope, observation, action, reasoning);
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// [`Transaction::read_text`] of the review queue.
    fn pending_read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        let _ = (tier, scope, id);
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// [`Transaction::restore`] in the review queue: puts the queued file back to exactly
    /// `text`, or removes it (`None`), journaled with [`Place::Pending`].
    fn pending_restore(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        text: Option<&str>,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let _ = (tier, scope, id, text, action, reasoning);
        Err(Error::Unsupported { operation: "the review queue" })
    }

    /// Records what one finished run showed about the memory it injected, as a journal entry
    /// of this transaction ([`Action::Evidence`], carrying `run`), so it counts once the
    /// transaction commits and never if it rolls back. **Once per run id**: `Ok(false)` when
    /// `run`'s evidence already counts, and nothing is counted again.
    fn record_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        let _ = run;
        Err(Error::Unsupported { operation: "outcome evidence" })
    }

    /// Stops counting `run`'s evidence (`undo` of the run's application), journaled as
    /// [`Action::Retract`] carrying `run`; `Ok(false)` when it did not count.
    fn retract_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        let _ = run;
        Err(Error::Unsupported { operation: "outcome evidence" })
    }

    /// [`Store::evidence`] under the writer lock (what the blame and review rules read).
    fn evidence(&mut self, query: &EvidenceQuery) -> Result<EvidenceView> {
        let _ = query;
        Err(Error::Unsupported { operation: "outcome evidence" })
    }
}

/// What one query recorded for its step: the ids injected, in order, and the one among them
/// injected on probation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepRecord {
    pub ids: Vec<String>,
    pub probation: Option<String>,
}

/// The file text a store's `put` writes for `observation` at `path`: the scanner must pass it
/// (agent-qa-memory §5.9, §7), it is rendered as agent-qa's writer renders it (§1.6), and it must
/// read back (by us and by agent-qa, whose parser ours mirrors). Every store uses this one check,
/// so they refuse and accept exactly the same observations. Returns the text and what it reads as.
pub fn checked_file_text(
    observation: &Observation,
    path: &std::path::Path,
) -> Result<(String, Observation)> {
    let id = &observation.id;
    if let Some(rule) =
        curator_core::scanner::scan_observation(&observation.title, &observation.content).rule()
    {
        return Err(crate::Error::Unsafe { id: id.to_string(), rule: rule.to_owned() });
    }
    let text = curator_core::codec::write_observation(observation)
        .map_err(|source| crate::Error::Write { path: path.to_path_buf(), source })?;
    let reread = curator_core::codec::parse_observation(&text, id.as_str())
        .map_err(|source| crate::Error::Parse { path: path.to_path_buf(), source })?;
    Ok((text, reread))
}

#[cfg(test)]
mod action_tests {
    use super::Action;

    /// `as_str` is serde's spelling, which the journal files and the API already carry.
    #[test]
    fn every_action_is_spelled_as_serde_spells_it() {
        use Action::*;
        for action in [
            Add, Confirm, Deprecate, Delete, Edit, Undo, Exonerate, Spare, Propose, Approve,
            Reject, Evidence, Retract,
        ] {
            assert_eq!(serde_json::to_value(action).unwrap(), action.as_str(), "{action:?}");
        }
    }
}
