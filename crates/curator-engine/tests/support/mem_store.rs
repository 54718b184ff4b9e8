//! An in-memory `Store`: one mutex is the writer lock, a `Vec` is the journal, and a file's
//! "text" is its snapshot as JSON. It keeps the trait's contract (fresh reads inside the
//! transaction, `NotFound` / `DuplicateId` instead of guesses, one journal entry per change) so
//! engine rules can be tested without a disk. The review queue is a second map, outcome
//! evidence an in-memory [`EvidenceBook`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use curator_core::{
    Observation, ObservationId, ObservationSnapshot, ScopeName, SuitePlacement, Tier,
};
use curator_store::evidence::{EvidenceBook, EvidenceQuery, EvidenceView, RunEvidence};
use curator_store::{
    Action, JournalEntry, JournalFilter, ListFilter, Listing, Place, Result, Store,
    StoredObservation, Transaction,
};

type Key = (Tier, ScopeName, String);

#[derive(Debug, Default)]
struct Inner {
    files: BTreeMap<Key, Observation>,
    pending: BTreeMap<Key, Observation>,
    journal: Vec<JournalEntry>,
    /// Positions in `journal` by run id: curate reads a run's entries on every call.
    by_run: std::collections::HashMap<String, Vec<usize>>,
    /// Transactions begun, for their ids.
    transactions: u64,
    evidence: EvidenceBook,
}

/// Observations in memory.
#[derive(Debug, Default)]
pub struct MemStore {
    inner: Mutex<Inner>,
}

impl MemStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many observations exist.
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap().files.len()
    }
}

fn stored(key: &Key, obs: &Observation) -> StoredObservation {
    StoredObservation { tier: key.0, scope: key.1.clone(), observation: obs.clone() }
}

fn text(obs: &Observation) -> String {
    serde_json::to_string(&obs.snapshot()).unwrap()
}

fn from_text(text: &str) -> Observation {
    let s: ObservationSnapshot = serde_json::from_str(text).unwrap();
    Observation {
        id: ObservationId::parse(&s.id).unwrap(),
        title: s.title,
        content: s.content,
        trust: s.trust,
        created: s.created,
        last_confirmed: s.last_confirmed,
        confirmed_count: s.confirmed_count,
        contradicted_count: s.contradicted_count,
        source_test: s.source_test,
        suite: s.position.map(|position| SuitePlacement {
            position,
            suite_snapshot: s.suite_snapshot.unwrap_or_default(),
        }),
        extra: Default::default(),
    }
}

fn find(inner: &Inner, id: &ObservationId) -> Result<Option<StoredObservation>> {
    find_in(&inner.files, id)
}

fn find_in(
    files: &BTreeMap<Key, Observation>,
    id: &ObservationId,
) -> Result<Option<StoredObservation>> {
    let found: Vec<_> = files.iter().filter(|(k, _)| k.2 == id.as_str()).collect();
    match found.as_slice() {
        [] => Ok(None),
        [(k, o)] => Ok(Some(stored(k, o))),
        many => Err(curator_store::Error::DuplicateId {
            id: id.to_string(),
            paths: many.iter().map(|(k, _)| format!("{}/{}/{}.md", k.0, k.1, k.2).into()).collect(),
        }),
    }
}

impl Store for MemStore {
    fn list(&self, filter: &ListFilter) -> Result<Listing> {
        let inner = self.inner.lock().unwrap();
        let observations = inner
            .files
            .iter()
            .filter(|(k, _)| {
                filter.tier.is_none_or(|t| t == k.0)
                    && filter.scope.as_ref().is_none_or(|s| *s == k.1)
            })
            .map(|(k, o)| stored(k, o))
            .collect();
        Ok(Listing { observations, problems: Vec::new() })
    }

    fn get(&self, id: &ObservationId) -> Result<StoredObservation> {
        let inner = self.inner.lock().unwrap();
        find(&inner, id)?.ok_or_else(|| curator_store::Error::NotFound { id: id.to_string() })
    }

    fn transact(
        &self,
        run_id: Option<&str>,
        body: &mut dyn FnMut(&mut dyn Transaction) -> Result<()>,
    ) -> Result<()> {
        let mut inner = self.inner.lock().unwrap();
        inner.transactions += 1;
        let txn = format!("mem{}", inner.transactions);
        let mut tx =
            MemTx { inner: &mut inner, run_id: run_id.map(str::to_owned), txn, reverts: None };
        body(&mut tx)
    }

    fn journal(&self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        let inner = self.inner.lock().unwrap();
        Ok(inner.read(filter))
    }

    fn list_pending(&self, filter: &ListFilter) -> Result<Listing> {
        let inner = self.inner.lock().unwrap();
        let observations = inner
            .pending
            .iter()
            .filter(|(k, _)| {
                filter.tier.is_none_or(|t| t == k.0)
                    && filter.scope.as_ref().is_none_or(|s| *s == k.1)
            })
            .map(|(k, o)| stored(k, o))
            .collect();
        Ok(Listing { observations, problems: Vec::new() })
    }

    fn get_pending(&self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        find_in(&self.inner.lock().unwrap().pending, id)
    }

    fn evidence(&self, query: &EvidenceQuery) -> Result<EvidenceView> {
        Ok(self.inner.lock().unwrap().evidence.view(query))
    }
}

impl Inner {
    fn append(&mut self, entry: JournalEntry) {
        if let Some(run) = &entry.run_id {
            self.by_run.entry(run.clone()).or_default().push(self.journal.len());
        }
        self.journal.push(entry);
    }

    fn read(&self, filter: &JournalFilter) -> Vec<JournalEntry> {
        let matching = |e: &&JournalEntry| filter.matches(e);
        match &filter.run_id {
            Some(run) => self.by_run.get(run).map_or_else(Vec::new, |at| {
                at.iter().map(|&i| &self.journal[i]).filter(matching).cloned().collect()
            }),
            None => self.journal.iter().filter(matching).cloned().collect(),
        }
    }
}

struct MemTx<'a> {
    inner: &'a mut Inner,
    run_id: Option<String>,
    txn: String,
    reverts: Option<String>,
}

impl MemTx<'_> {
    /// Counts (or stops counting) `run`'s evidence and journals it, as the stores do.
    fn evidence_change(&mut self, run: &RunEvidence, action: Action) -> Result<bool> {
        if !self.inner.evidence.apply(action, run) {
            return Ok(false);
        }
        let mut entry = JournalEntry::evidence_change(self.run_id.clone(), run, action);
        entry.txn = Some(self.txn.clone());
        entry.reverts.clone_from(&self.reverts);
        self.inner.append(entry);
        Ok(true)
    }

    #[allow(clippy::too_many_arguments)]
    fn log(
        &mut self,
        key: &Key,
        action: Action,
        reasoning: &str,
        before: Option<&Observation>,
        after: Option<&Observation>,
    ) {
        self.log_in(Place::Memory, key, action, reasoning, before, after);
    }

    #[allow(clippy::too_many_arguments)]
    fn log_in(
        &mut self,
        place: Place,
        key: &Key,
        action: Action,
        reasoning: &str,
        before: Option<&Observation>,
        after: Option<&Observation>,
    ) {
        self.inner.append(JournalEntry {
            time: "2026-04-10T12:00:00.000Z".into(),
            run_id: self.run_id.clone(),
            action,
            tier: key.0.dir_name().into(),
            scope: key.1.to_string(),
            id: key.2.clone(),
            reasoning: reasoning.into(),
            before: before.map(Observation::snapshot),
            after: after.map(Observation::snapshot),
            before_file: before.map(text),
            after_file: after.map(text),
            txn: Some(self.txn.clone()),
            reverts: self.reverts.clone(),
            place,
            evidence: None,
        });
    }
}

impl Transaction for MemTx<'_> {
    fn get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        find(self.inner, id)
    }

    fn list_scope(&mut self, tier: Tier, scope: &ScopeName) -> Result<Vec<StoredObservation>> {
        Ok(self
            .inner
            .files
            .iter()
            .filter(|(k, _)| k.0 == tier && k.1 == *scope)
            .map(|(k, o)| stored(k, o))
            .collect())
    }

    fn put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let key = (tier, scope.clone(), observation.id.to_string());
        let before = self.inner.files.insert(key.clone(), observation.clone());
        self.log(&key, action, reasoning, before.as_ref(), Some(observation));
        Ok(())
    }

    fn delete(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let key = (tier, scope.clone(), id.to_string());
        let before = self
            .inner
            .files
            .remove(&key)
            .ok_or_else(|| curator_store::Error::NotFound { id: id.to_string() })?;
        self.log(&key, action, reasoning, Some(&before), None);
        Ok(())
    }

    fn note(&mut self, stored: &StoredObservation, action: Action, reasoning: &str) -> Result<()> {
        let key = (stored.tier, stored.scope.clone(), stored.observation.id.to_string());
        self.inner.append(JournalEntry {
            time: "2026-04-10T12:00:00.000Z".into(),
            run_id: self.run_id.clone(),
            action,
            tier: key.0.dir_name().into(),
            scope: key.1.to_string(),
            id: key.2,
            reasoning: reasoning.into(),
            before: Some(stored.observation.snapshot()),
            after: Some(stored.observation.snapshot()),
            before_file: None,
            after_file: None,
            txn: Some(self.txn.clone()),
            reverts: self.reverts.clone(),
            place: Place::Memory,
            evidence: None,
        });
        Ok(())
    }

    fn journal(&mut self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        Ok(self.inner.read(filter))
    }

    fn set_reverts(&mut self, txn: &str) -> Result<()> {
        self.reverts = Some(txn.to_owned());
        Ok(())
    }

    fn read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        Ok(self.inner.files.get(&(tier, scope.clone(), id.to_string())).map(text))
    }

    fn restore(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        file: Option<&str>,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let key = (tier, scope.clone(), id.to_string());
        let before = match file {
            Some(t) => self.inner.files.insert(key.clone(), from_text(t)),
            None => self.inner.files.remove(&key),
        };
        let after = file.map(from_text);
        self.log(&key, action, reasoning, before.as_ref(), after.as_ref());
        Ok(())
    }

    fn pending_get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        find_in(&self.inner.pending, id)
    }

    fn pending_put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        if find(self.inner, &observation.id)?.is_some() {
            return Err(curator_store::Error::DuplicateId {
                id: observation.id.to_string(),
                paths: Vec::new(),
            });
        }
        let key = (tier, scope.clone(), observation.id.to_string());
        let before = self.inner.pending.insert(key.clone(), observation.clone());
        self.log_in(Place::Pending, &key, action, reasoning, before.as_ref(), Some(observation));
        Ok(())
    }

    fn pending_read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        Ok(self.inner.pending.get(&(tier, scope.clone(), id.to_string())).map(text))
    }

    fn pending_restore(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        file: Option<&str>,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let key = (tier, scope.clone(), id.to_string());
        let before = match file {
            Some(t) => self.inner.pending.insert(key.clone(), from_text(t)),
            None => self.inner.pending.remove(&key),
        };
        if before.is_none() && file.is_none() {
            return Ok(());
        }
        let after = file.map(from_text);
        self.log_in(Place::Pending, &key, action, reasoning, before.as_ref(), after.as_ref());
        Ok(())
    }

    fn record_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        self.evidence_change(run, Action::Evidence)
    }

    fn retract_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        self.evidence_change(run, Action::Retract)
    }

    fn evidence(&mut self, query: &EvidenceQuery) -> Result<EvidenceView> {
        Ok(self.inner.evidence.view(query))
    }
}
