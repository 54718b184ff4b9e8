//! Raw → MEMORY.md merge, streamed one entry at a time, and the promotions to identity
//! (harness-curator §4.2, §4.4, §4.5, §6; issue 16 items 2, 3, 5, 6).
//!
//! Every entry of the snapshot gets a [`Fate`]: absorbed (with the reason), or fed into an item —
//! created or merged by the same-lemma test (§4.3), or kept verbatim when it could not be read.
//! A worker TRICK feeds a MEMORY.md Lesson like any other lesson; the Lesson carries its evidence
//! ids across passes, and once it is general (§4.4) and seen by two distinct features it graduates
//! to `identity/worker.md` and leaves MEMORY.md (§4.2). What an item finally became — live in a
//! section, graduated, dropped over a bound, dropped as stale — is known only at the end, so the
//! entry's disposition is resolved then ([`MergeResult::disposition`]).
//!
//! Memory is bounded whatever the size of raw.md: items are matched through a token index
//! ([`LemmaIndex`]), and MEMORY.md's bound is applied while merging (when the document reaches
//! twice its bound it is cut back to the bound by the drop order of `compact.rs`), so a 50 MB
//! raw.md never holds more than a few hundred live items. An item dropped that way is reported
//! like any other drop; a later sighting of the same lesson starts a new item.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use rustc_hash::FxHashMap;

use crate::bounds::{ITEM_MAX_CHARS, MEMORY_MAX_BYTES, MEMORY_MAX_LINES, cap_chars};
use crate::classify::{Classified, KNOWN_ROLES, Rule, Verdict, classify, forgetter, is_convention};
use crate::codebase::{ProjectIndex, feature_ids};
use crate::compact::{DROP_ORDER, stale_reason};
use crate::identity::{IdentityEntry, IdentityFile, IdentitySection};
use crate::issues::FeatureStatuses;
use crate::ledger::{Ledger, LedgerKind, LedgerRecord, mission_free};
use crate::lemma::{Lemma, LemmaIndex};
use crate::memory_md::{Item, MemoryDoc, Section};
use crate::raw::{EntryKind, RawEntry};

/// Identity files by role.
pub(crate) type Identities = BTreeMap<String, IdentityFile>;

/// What happened to one entry of the snapshot (resolved against the items at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Carried no lesson.
    Absorbed(&'static str),
    /// Fed item `item`: created it, merged into it, or was kept verbatim as it.
    Fed {
        /// The item id.
        item: u32,
        /// This entry created the item.
        created: bool,
        /// The entry could not be read and is the item's text verbatim.
        verbatim: bool,
    },
}

/// How an entry or item left raw.md or a memory file (the archive's vocabulary, issue 16).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// Became a new MEMORY.md item or identity entry.
    Promoted,
    /// Folded into an existing item (same lemma).
    Merged,
    /// Could not be read as an entry: kept verbatim as a Context item.
    Kept,
    /// Pure progress / bare verification / status block: no item.
    Absorbed,
    /// Removed to meet a bound, or as stale.
    Dropped,
}

impl Disposition {
    /// Every disposition, in report order.
    pub const ALL: [Disposition; 5] = [
        Disposition::Promoted,
        Disposition::Merged,
        Disposition::Kept,
        Disposition::Absorbed,
        Disposition::Dropped,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Promoted => "promoted",
            Disposition::Merged => "merged",
            Disposition::Kept => "kept",
            Disposition::Absorbed => "absorbed",
            Disposition::Dropped => "dropped",
        }
    }
}

/// Context the merge needs besides the documents.
#[derive(Debug)]
pub(crate) struct MergeContext<'a> {
    /// The project file list and slug.
    pub(crate) project: &'a ProjectIndex,
    /// features.json.
    pub(crate) features: &'a FeatureStatuses,
    /// `YYYY-MM-DD` of this pass (for entries without a date).
    pub(crate) date: &'a str,
    /// Mission id.
    pub(crate) mission: &'a str,
}

/// Where an item ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Live,
    /// Removed; the reason is one of the tiers' (static) or a stale item's (owned).
    Dropped(Cow<'static, str>),
    /// Left MEMORY.md for an identity file; `merged` when the file already held the lemma.
    Graduated {
        target: String,
        statement: String,
        merged: bool,
    },
}

/// A live item and what this pass learned about it.
#[derive(Debug)]
struct Live {
    item: Item,
    section: Section,
    /// Created by this pass.
    born: bool,
    /// Sighted by this pass.
    touched: bool,
    /// A worker TRICK lemma (§4.2).
    trick: bool,
    /// Names the codebase (§4.4), in any sighting.
    specific: bool,
    /// Authors of this pass's sightings.
    roles: Vec<String>,
    /// Distinct invocations (feature ids, else timestamps) of this pass's sightings.
    invocations: Vec<String>,
    /// Role named as the one who forgot (conventions).
    forgetter: Option<String>,
    /// Latest entry date of this pass's sightings.
    latest: Option<String>,
    /// Rendered size, kept current for the running bound.
    bytes: usize,
    lines: usize,
}

/// A pre-existing item or identity entry removed by the pass: written to the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RemovedItem {
    /// `MEMORY.md ## Lessons`, `identity/worker.md`.
    pub(crate) from: String,
    /// The item's line as it was.
    pub(crate) line: String,
    /// Why.
    pub(crate) reason: String,
}

/// The streaming merge.
#[derive(Debug)]
pub(crate) struct Merger<'a> {
    cx: MergeContext<'a>,
    preamble: Vec<String>,
    order: [Vec<u32>; 4],
    states: Vec<State>,
    live: FxHashMap<u32, Live>,
    index: LemmaIndex,
    lines: usize,
    bytes: usize,
    fates: Vec<Fate>,
    removed: Vec<RemovedItem>,
    drops: BTreeMap<String, usize>,
    near_format: Vec<String>,
    near_format_count: usize,
    /// The entry being taken was merged by an earlier committed pass (merged_head.rs): its
    /// evidence is already counted.
    replaying: bool,
}

/// What the merge produced.
#[derive(Debug)]
pub(crate) struct MergeResult {
    /// The new MEMORY.md.
    pub(crate) doc: MemoryDoc,
    /// One per entry, in snapshot order.
    pub(crate) fates: Vec<Fate>,
    states: Vec<State>,
    finals: HashMap<u32, (Section, String)>,
    /// Identity targets an item reached besides its section, by item id.
    also: HashMap<u32, Vec<String>>,
    /// Pre-existing items and identity entries removed.
    pub(crate) removed: Vec<RemovedItem>,
    /// Identity entries appended, as `(role, section, statement)`.
    pub(crate) identity_appends: Vec<(String, IdentitySection, String)>,
    /// Human notes: drops by reason, near-format lines, compactions.
    pub(crate) notes: Vec<String>,
}

/// How many near-format lines a pass names one by one (the rest are counted).
const NEAR_FORMAT_SHOWN: usize = 5;
/// Invocation ids remembered per item per pass (only "≥ 2 distinct" is ever asked).
const INVOCATIONS_MAX: usize = 8;

fn push_unique(v: &mut Vec<String>, s: &str, max: usize) {
    if v.len() < max && !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

fn sentence(s: &str) -> String {
    let s = s.trim();
    if s.ends_with(['.', '!', '?', '…']) { s.to_string() } else { format!("{s}.") }
}

/// The physical lines and bytes of the rendered document around the items.
fn frame(preamble: &[String]) -> (usize, usize) {
    let (mut lines, mut bytes) = if preamble.is_empty() {
        (2, "# MEMORY\n\n".len())
    } else {
        (preamble.len() + 1, preamble.iter().map(|l| l.len() + 1).sum::<usize>() + 1)
    };
    for s in Section::ALL {
        lines += 1;
        bytes += s.heading().len() + 1;
    }
    // A blank line between sections.
    (lines + 3, bytes + 3)
}

impl<'a> Merger<'a> {
    /// Starts from the MEMORY.md on disk.
    pub(crate) fn new(doc: MemoryDoc, cx: MergeContext<'a>) -> Merger<'a> {
        let (lines, bytes) = frame(&doc.preamble);
        let mut m = Merger {
            cx,
            preamble: doc.preamble.clone(),
            order: Default::default(),
            states: Vec::new(),
            live: FxHashMap::default(),
            index: LemmaIndex::default(),
            lines,
            bytes,
            fates: Vec::new(),
            removed: Vec::new(),
            drops: BTreeMap::new(),
            near_format: Vec::new(),
            near_format_count: 0,
            replaying: false,
        };
        for section in Section::ALL {
            for item in doc.items(section) {
                m.insert(section, item.clone(), false);
            }
        }
        m
    }

    fn insert(&mut self, section: Section, item: Item, born: bool) -> u32 {
        let id = u32::try_from(self.states.len()).expect("fewer than 4 billion items");
        let rendered = item.render();
        let (bytes, lines) = (rendered.len() + 1, item.line_count());
        self.lines += lines;
        self.bytes += bytes;
        self.index.insert(id, Lemma::new(&item.statement));
        self.states.push(State::Live);
        self.order[section as usize].push(id);
        self.live.insert(
            id,
            Live {
                item,
                section,
                born,
                touched: false,
                trick: false,
                specific: false,
                roles: Vec::new(),
                invocations: Vec::new(),
                forgetter: None,
                latest: None,
                bytes,
                lines,
            },
        );
        id
    }

    fn resize(&mut self, id: u32) {
        let Some(l) = self.live.get_mut(&id) else { return };
        let (bytes, lines) = (l.item.render().len() + 1, l.item.line_count());
        self.bytes = self.bytes + bytes - l.bytes;
        self.lines = self.lines + lines - l.lines;
        l.bytes = bytes;
        l.lines = lines;
    }

    /// Takes the next entry of the snapshot; `judged` is the LLM judge's verdict on it, if any;
    /// `merged_before` says an earlier pass merged it already (it stayed in raw.md, §2.3), so it
    /// lands where it landed then but adds no evidence again.
    pub(crate) fn take(&mut self, entry: &RawEntry, judged: Option<Verdict>, merged_before: bool) {
        self.replaying = merged_before;
        let fate = match &entry.kind {
            EntryKind::Block => {
                let head = String::from_utf8_lossy(&entry.head);
                if head.starts_with("## monitor") {
                    Fate::Absorbed("monitor status block")
                } else {
                    self.verbatim(entry, "a `## ` block that is not a monitor status block")
                }
            }
            EntryKind::Preamble => self.verbatim(entry, "text before the first entry"),
            EntryKind::Malformed => self.verbatim(entry, "starts like an entry but does not parse"),
            EntryKind::Line(line) | EntryKind::NearFormat(line) => {
                if matches!(entry.kind, EntryKind::NearFormat(_)) {
                    self.near_format_count += 1;
                    if self.near_format.len() < NEAR_FORMAT_SHOWN {
                        let text = String::from_utf8_lossy(&entry.head);
                        self.near_format.push(cap_chars(text.lines().next().unwrap_or(""), 120));
                    }
                }
                let text = line.text.trim();
                let fids: Vec<String> = line.feature.iter().cloned().collect();
                let invocation = line.feature.clone().unwrap_or_else(|| line.timestamp.clone());
                let sighting =
                    Sighting { role: &line.role, date: line.date(), invocation: &invocation, fids };
                if line.trick && line.role == "worker" {
                    let specific = self.cx.project.is_codebase_specific(text);
                    self.trick(text, specific, sighting)
                } else {
                    let verdict = match judged {
                        Some(v) => v,
                        None if line.trick => Verdict::Keep(Classified {
                            section: Section::Lessons,
                            statement: text.to_string(),
                            why: None,
                            convention: false,
                            rule: Rule::Prefix,
                        }),
                        None => classify(&line.role, text),
                    };
                    match verdict {
                        Verdict::Absorb(reason) => Fate::Absorbed(reason),
                        Verdict::Keep(c) => self.keep(c, line.feature.as_deref(), sighting),
                    }
                }
            }
        };
        self.fates.push(fate);
        self.maybe_bound();
    }

    fn verbatim(&mut self, entry: &RawEntry, _why: &str) -> Fate {
        let text = entry.flat_text();
        let date = leading_date(&text).unwrap_or(self.cx.date).to_string();
        let statement = cap_chars(&text, ITEM_MAX_CHARS);
        let sighting = Sighting { role: "", date: &date, invocation: "", fids: Vec::new() };
        let (item, created) = self.upsert(Section::Context, &statement, None, sighting, false);
        Fate::Fed { item, created, verbatim: true }
    }

    fn keep(&mut self, c: Classified, feature: Option<&str>, mut s: Sighting<'_>) -> Fate {
        let mut section = c.section;
        if section == Section::Lessons {
            // §6: a Lesson carries evidence. A role with no feature in scope may still name the
            // features it learned from; with none at all the statement is kept as Context.
            for f in feature_ids(&c.statement) {
                if !s.fids.contains(&f) {
                    s.fids.push(f);
                }
            }
            if s.fids.is_empty() {
                section = Section::Context;
            }
        }
        let mut statement = c.statement.clone();
        if section == Section::History
            && let Some(f) = feature.filter(|f| !statement.contains(f))
        {
            statement = format!("{f}: {statement}");
        }
        let statement = cap_chars(&statement, ITEM_MAX_CHARS);
        let why = c.why.as_deref().map(|w| cap_chars(w, ITEM_MAX_CHARS / 2));
        let role = s.role.to_string();
        let (item, created) = self.upsert(section, &statement, why.as_deref(), s, false);
        if (c.convention || is_convention(&statement))
            && let Some(l) = self.live.get_mut(&item)
        {
            l.forgetter = l.forgetter.take().or_else(|| forgetter(&statement)).or(Some(role));
        }
        Fate::Fed { item, created, verbatim: false }
    }

    fn trick(&mut self, text: &str, specific: bool, s: Sighting<'_>) -> Fate {
        let statement = cap_chars(text, ITEM_MAX_CHARS);
        let (item, created) = self.upsert(Section::Lessons, &statement, None, s, true);
        if let Some(l) = self.live.get_mut(&item) {
            l.trick = true;
            l.specific |= specific;
        }
        Fate::Fed { item, created, verbatim: false }
    }

    /// Creates or merges into a same-lemma item of `section`.
    fn upsert(
        &mut self,
        section: Section,
        statement: &str,
        why: Option<&str>,
        s: Sighting<'_>,
        longest_wording: bool,
    ) -> (u32, bool) {
        let lemma = Lemma::new(statement);
        let found = if lemma.tokens.is_empty() {
            // No content word (`...`, `the`): no lemma is the same as it (§4.3), but the very
            // same statement is the same item, or every pass would add it again.
            self.order[section as usize].iter().copied().find(|id| {
                self.live
                    .get(id)
                    .is_some_and(|l| l.section == section && l.item.statement == statement)
            })
        } else {
            self.index.find(&lemma, |id| self.live.get(&id).is_some_and(|l| l.section == section))
        };
        let (id, created) = match found {
            Some(id) => {
                let l = self.live.get_mut(&id).expect("found ids are live");
                if !self.replaying {
                    l.item.add_evidence(&s.fids);
                }
                // The most specific (longest) wording names a TRICK lemma (§4.2).
                if longest_wording && statement.len() > l.item.statement.len() {
                    l.item.statement = statement.to_string();
                    l.item.verbatim = None;
                    self.index.remove(id);
                    self.index.insert(id, lemma);
                }
                (id, false)
            }
            None => (
                self.insert(section, Item::new(s.date, statement, why, s.fids.clone()), true),
                true,
            ),
        };
        let l = self.live.get_mut(&id).expect("live");
        l.touched = true;
        if !s.role.is_empty() {
            push_unique(&mut l.roles, s.role, KNOWN_ROLES.len() + 4);
        }
        if !s.invocation.is_empty() {
            push_unique(&mut l.invocations, s.invocation, INVOCATIONS_MAX);
        }
        if l.latest.as_deref().is_none_or(|d| d < s.date) {
            l.latest = Some(s.date.to_string());
        }
        self.resize(id);
        (id, created)
    }

    fn over(&self, lines: usize, bytes: usize) -> bool {
        self.lines > lines || self.bytes > bytes
    }

    fn maybe_bound(&mut self) {
        if self.over(2 * MEMORY_MAX_LINES, 2 * MEMORY_MAX_BYTES) {
            self.enforce_bound();
        }
    }

    /// Cuts MEMORY.md to its bounds by the drop order ([`DROP_ORDER`]).
    fn enforce_bound(&mut self) {
        for tier in DROP_ORDER {
            if !self.over(MEMORY_MAX_LINES, MEMORY_MAX_BYTES) {
                return;
            }
            let mut candidates: Vec<(usize, String, u32)> = self.order[tier.section as usize]
                .iter()
                .filter_map(|&id| {
                    let l = &self.live[&id];
                    (tier.pick)(&l.item, self.cx.features).then(|| {
                        let weight = if tier.by_evidence { l.item.sightings() } else { 0 };
                        (weight, l.item.date.clone().unwrap_or_default(), id)
                    })
                })
                .collect();
            candidates.sort();
            let mut gone = BTreeSet::new();
            for (_, _, id) in candidates {
                if !self.over(MEMORY_MAX_LINES, MEMORY_MAX_BYTES) {
                    break;
                }
                self.drop_item(id, Cow::Borrowed(tier.reason));
                gone.insert(id);
            }
            self.order[tier.section as usize].retain(|id| !gone.contains(id));
        }
    }

    /// Removes a live item; the caller fixes `order`.
    fn drop_item(&mut self, id: u32, reason: Cow<'static, str>) {
        let Some(l) = self.live.remove(&id) else { return };
        self.index.remove(id);
        self.lines -= l.lines;
        self.bytes -= l.bytes;
        *self.drops.entry(format!("{} ({})", reason, l.section.name())).or_default() += 1;
        if !l.born {
            self.removed.push(RemovedItem {
                from: format!("MEMORY.md {}", l.section.heading()),
                line: l.item.render(),
                reason: reason.to_string(),
            });
        }
        self.states[id as usize] = State::Dropped(reason);
    }

    /// Finishes the pass's decisions: stale drops, promotions to identity, the final bound.
    pub(crate) fn finish(mut self, ids: &mut Identities, ledger: &mut Ledger) -> MergeResult {
        let mut out = Promotions::default();
        self.drop_stale();
        self.graduate_tricks(ids, &mut out);
        self.note_ledger(ledger);
        self.promote_conventions(ids, ledger, &mut out);
        self.promote_failures(ids, ledger, &mut out);
        self.promote_general_lessons(ids, &mut out);
        self.enforce_bound();
        let mut notes = Vec::new();
        for (reason, n) in &self.drops {
            notes.push(format!("dropped {n} item(s): {reason}"));
        }
        if self.near_format_count > 0 {
            notes.push(format!(
                "{} near-format line(s) read leniently: {}{}",
                self.near_format_count,
                self.near_format.join(" | "),
                if self.near_format_count > self.near_format.len() { " | …" } else { "" }
            ));
        }
        for (role, file) in ids.iter_mut() {
            // Every file over its bound, not only those this pass appended to: a person's edit
            // or an older version may have left one over (every bound is checked each pass).
            if !out.changed.contains(role) && file.within_bounds() {
                continue;
            }
            let (compacted, removed) = file.enforce_bounds();
            if compacted {
                notes.push(format!("IDENTITY compacted {role}"));
            }
            if !removed.is_empty() {
                notes.push(format!(
                    "IDENTITY compaction-overflow {role}: {} oldest entr(y/ies) archived",
                    removed.len()
                ));
            }
            for line in removed {
                self.removed.push(RemovedItem {
                    from: format!("identity/{role}.md"),
                    line,
                    reason: "identity file over its bound after compaction (oldest first)".into(),
                });
            }
        }
        let mut doc = MemoryDoc { preamble: self.preamble, sections: Default::default() };
        let mut finals = HashMap::new();
        for section in Section::ALL {
            for id in &self.order[section as usize] {
                let l = &self.live[id];
                finals.insert(*id, (section, l.item.render()));
                doc.items_mut(section).push(l.item.clone());
            }
        }
        MergeResult {
            doc,
            fates: self.fates,
            states: self.states,
            finals,
            also: out.also,
            removed: self.removed,
            identity_appends: out.appends,
            notes,
        }
    }

    /// §6 stale drops, for items this pass did not sight (an entry written today about a path is
    /// not stale news, and it is already in the archive if it was wrong).
    fn drop_stale(&mut self) {
        for section in Section::ALL {
            let stale: Vec<(u32, String)> = self.order[section as usize]
                .iter()
                .filter_map(|id| {
                    let l = &self.live[id];
                    if l.touched || l.born {
                        return None;
                    }
                    stale_reason(&l.item, self.cx.project, self.cx.features).map(|r| (*id, r))
                })
                .collect();
            for (id, reason) in &stale {
                self.drop_item(*id, Cow::Owned(format!("stale: {reason}")));
            }
            let gone: BTreeSet<u32> = stale.iter().map(|(id, _)| *id).collect();
            self.order[section as usize].retain(|id| !gone.contains(id));
        }
    }

    fn touched(&self, section: Section) -> Vec<u32> {
        self.order[section as usize].iter().copied().filter(|id| self.live[id].touched).collect()
    }

    /// §4.2: a general TRICK lemma seen by ≥ 2 distinct features leaves MEMORY.md for
    /// `identity/worker.md` (the count includes evidence carried from earlier passes).
    fn graduate_tricks(&mut self, ids: &mut Identities, out: &mut Promotions) {
        let mut gone = BTreeSet::new();
        for id in self.touched(Section::Lessons) {
            let l = &self.live[&id];
            // A lemma the worker's identity already holds needs no second feature: the sighting
            // confirms it there instead of starting over as a MEMORY.md candidate.
            let known = ids
                .get("worker")
                .is_some_and(|f| f.has_lemma(IdentitySection::Patterns, &l.item.statement));
            if !l.trick || l.specific || (l.item.sightings() < 2 && !known) {
                continue;
            }
            let entry = IdentityEntry {
                date: l.latest.clone().unwrap_or_else(|| self.cx.date.to_string()),
                statement: sentence(&l.item.statement),
                evidence: l.item.evidence.clone(),
                missions: vec![self.cx.mission.to_string()],
                reconfirmed: None,
            };
            let (statement, merged) =
                match out.append(ids, "worker", IdentitySection::Patterns, entry.clone()) {
                    Some(existing) => (existing, true),
                    None => (entry.statement, false),
                };
            let target = format!("identity/worker.md {}", IdentitySection::Patterns.heading());
            let l = self.live.remove(&id).expect("live");
            self.index.remove(id);
            self.lines -= l.lines;
            self.bytes -= l.bytes;
            self.states[id as usize] = State::Graduated { target, statement, merged };
            gone.insert(id);
        }
        self.order[Section::Lessons as usize].retain(|id| !gone.contains(id));
    }

    /// Records this pass's History and Lessons items in the cross-mission ledger (§4.5).
    fn note_ledger(&self, ledger: &mut Ledger) {
        for section in [Section::History, Section::Lessons] {
            for id in self.touched(section) {
                let l = &self.live[&id];
                let kind = match section {
                    Section::History => LedgerKind::Failure,
                    _ if l.forgetter.is_some() => LedgerKind::Convention,
                    _ => LedgerKind::Lesson,
                };
                let roles = match (&l.forgetter, kind) {
                    (Some(f), LedgerKind::Convention) => vec![f.clone()],
                    _ => l.roles.clone(),
                };
                for role in roles {
                    ledger.note(LedgerRecord {
                        role,
                        kind,
                        lemma: mission_free(&l.item.statement),
                        mission: self.cx.mission.to_string(),
                        date: l.latest.clone().unwrap_or_else(|| self.cx.date.to_string()),
                        evidence: l.item.evidence.clone(),
                    });
                }
            }
        }
    }

    /// §4.5: a convention forgotten by ≥ 2 distinct invocations of one role (or in ≥ 2 missions)
    /// → that role's `## Context shortcuts`, once. The role is the forgetter named in the text
    /// ("the worker forgot …"), else the author (issue 16).
    fn promote_conventions(&mut self, ids: &mut Identities, ledger: &Ledger, out: &mut Promotions) {
        for id in self.touched(Section::Lessons) {
            let l = &self.live[&id];
            let Some(role) = l.forgetter.clone() else { continue };
            let mut invocations: BTreeSet<&str> =
                l.item.evidence.iter().map(String::as_str).collect();
            invocations.extend(l.invocations.iter().map(String::as_str));
            let distinct = invocations.len().max(l.item.sightings());
            let statement = mission_free(&l.item.statement);
            let missions = ledger.missions(&role, LedgerKind::Convention, &statement);
            if distinct < 2 && missions.len() < 2 {
                continue;
            }
            let entry = IdentityEntry {
                date: l.latest.clone().unwrap_or_else(|| self.cx.date.to_string()),
                statement: sentence(&statement),
                evidence: Vec::new(),
                missions: Vec::new(),
                reconfirmed: None,
            };
            out.append(ids, &role, IdentitySection::Shortcuts, entry);
            out.also(id, format!("identity/{role}.md {}", IdentitySection::Shortcuts.heading()));
        }
    }

    /// §4.5: a failure lemma recorded in ≥ 2 distinct missions → `## Failures I've seen`.
    fn promote_failures(&mut self, ids: &mut Identities, ledger: &Ledger, out: &mut Promotions) {
        let history: Vec<(u32, String)> = self
            .touched(Section::History)
            .into_iter()
            .map(|id| (id, mission_free(&self.live[&id].item.statement)))
            .collect();
        for r in ledger.records_of(self.cx.mission, LedgerKind::Failure) {
            let missions = ledger.missions(&r.role, LedgerKind::Failure, &r.lemma);
            if missions.len() < 2 {
                continue;
            }
            let entry = IdentityEntry {
                date: r.date.clone(),
                statement: sentence(&r.lemma),
                evidence: missions,
                missions: Vec::new(),
                reconfirmed: None,
            };
            out.append(ids, &r.role, IdentitySection::Failures, entry);
            if let Some((id, _)) = history.iter().find(|(_, lemma)| *lemma == r.lemma) {
                out.also(
                    *id,
                    format!("identity/{}.md {}", r.role, IdentitySection::Failures.heading()),
                );
            }
        }
    }

    /// §4.5 rule (d): a Lesson with no codebase-specific token and evidence from ≥ 2 distinct
    /// features → `## Patterns I've learned` of the role(s) that wrote it (or that it names).
    /// Conventions never go here (they belong in Context shortcuts), nor does a lemma the role's
    /// identity file already holds in any section.
    fn promote_general_lessons(&mut self, ids: &mut Identities, out: &mut Promotions) {
        for id in self.touched(Section::Lessons) {
            let l = &self.live[&id];
            if l.forgetter.is_some()
                || is_convention(&l.item.statement)
                || l.item.sightings() < 2
                || l.specific
                || self.cx.project.is_codebase_specific(&l.item.statement)
            {
                continue;
            }
            let mut roles = l.roles.clone();
            if roles.is_empty() {
                let lower = l.item.statement.to_lowercase();
                roles = KNOWN_ROLES
                    .iter()
                    .filter(|r| {
                        lower.split(|c: char| !(c.is_alphanumeric() || c == '-')).any(|w| w == **r)
                    })
                    .map(|r| r.to_string())
                    .collect();
            }
            for role in roles {
                if ids.get(&role).is_some_and(|f| {
                    IdentitySection::ALL.iter().any(|s| f.has_lemma(*s, &l.item.statement))
                }) {
                    continue;
                }
                let entry = IdentityEntry {
                    date: l.latest.clone().unwrap_or_else(|| self.cx.date.to_string()),
                    statement: sentence(&l.item.statement),
                    evidence: l.item.evidence.clone(),
                    missions: vec![self.cx.mission.to_string()],
                    reconfirmed: None,
                };
                out.append(ids, &role, IdentitySection::Patterns, entry);
                out.also(id, format!("identity/{role}.md {}", IdentitySection::Patterns.heading()));
            }
        }
    }
}

/// One sighting of an item: who wrote it, when, in which invocation, with which features.
#[derive(Debug)]
struct Sighting<'s> {
    role: &'s str,
    date: &'s str,
    invocation: &'s str,
    fids: Vec<String>,
}

/// Identity appends of one pass.
#[derive(Debug, Default)]
struct Promotions {
    appends: Vec<(String, IdentitySection, String)>,
    changed: BTreeSet<String>,
    also: HashMap<u32, Vec<String>>,
}

impl Promotions {
    /// Appends unless the section already holds the lemma; then returns that entry's statement.
    fn append(
        &mut self,
        ids: &mut Identities,
        role: &str,
        section: IdentitySection,
        entry: IdentityEntry,
    ) -> Option<String> {
        let file = ids.entry(role.to_string()).or_insert_with(|| IdentityFile::seed(role));
        if let Some(existing) = file.find_lemma(section, &entry.statement) {
            return Some(existing.statement);
        }
        self.appends.push((role.to_string(), section, entry.statement.clone()));
        self.changed.insert(role.to_string());
        file.append(section, &entry);
        None
    }
    fn also(&mut self, id: u32, target: String) {
        let v = self.also.entry(id).or_default();
        if !v.contains(&target) {
            v.push(target);
        }
    }
}

/// A date at the start of a verbatim line (`[2026-04-24 …`), to date its item.
fn leading_date(text: &str) -> Option<&str> {
    let t = text.trim_start_matches(['-', '*', '+', ' ', '[']);
    let d = t.get(..10)?;
    let b = d.as_bytes();
    (b[4] == b'-' && b[7] == b'-' && d.chars().filter(char::is_ascii_digit).count() == 8)
        .then_some(d)
}

/// An entry's resolved disposition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub(crate) disposition: Disposition,
    /// Where its content is now.
    pub(crate) to: Vec<String>,
    /// The item line or identity statement it became part of.
    pub(crate) item: Option<String>,
    pub(crate) reason: Option<String>,
}

impl MergeResult {
    /// What `fate` finally means.
    pub(crate) fn disposition(&self, fate: Fate) -> Resolved {
        match fate {
            Fate::Absorbed(reason) => Resolved {
                disposition: Disposition::Absorbed,
                to: Vec::new(),
                item: None,
                reason: Some(reason.to_string()),
            },
            Fate::Fed { item, created, verbatim } => {
                let base = if verbatim {
                    Disposition::Kept
                } else if created {
                    Disposition::Promoted
                } else {
                    Disposition::Merged
                };
                match &self.states[item as usize] {
                    State::Live => {
                        let (section, line) = &self.finals[&item];
                        let mut to = vec![format!("MEMORY.md {}", section.heading())];
                        to.extend(self.also.get(&item).into_iter().flatten().cloned());
                        Resolved {
                            disposition: base,
                            to,
                            item: Some(line.clone()),
                            reason: verbatim
                                .then(|| "could not be read as an entry; kept verbatim".into()),
                        }
                    }
                    State::Graduated { target, statement, merged } => Resolved {
                        disposition: if *merged { Disposition::Merged } else { base },
                        to: vec![target.clone()],
                        item: Some(statement.clone()),
                        reason: Some(if *merged {
                            "TRICK the worker's identity already holds: confirmed there".into()
                        } else {
                            "TRICK seen by two features: graduated to identity".into()
                        }),
                    },
                    State::Dropped(reason) => Resolved {
                        disposition: Disposition::Dropped,
                        to: Vec::new(),
                        item: None,
                        reason: Some(reason.to_string()),
                    },
                }
            }
        }
    }

    /// Whether the entry of `fate` is a TRICK promoted this pass (it leaves raw.md, §2.3 step 2).
    pub(crate) fn is_promoted_trick(&self, fate: Fate, trick: bool) -> bool {
        trick && matches!(fate, Fate::Fed { .. })
    }
}
