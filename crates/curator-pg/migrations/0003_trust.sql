-- curator-pg schema, version 3 (issue 18): the review queue, outcome evidence, probation.
-- Never edit a released migration: add 0004_*.sql instead.

-- Proposals waiting for review: the same columns as observations, in their own table so that
-- nothing that serves memory (listing, search) can ever read them by mistake. An id lives in
-- one place: writers check the other table under row locks.
CREATE TABLE pending_observations (LIKE observations INCLUDING ALL);

-- Which tree a journal row changed: served memory or the review queue.
ALTER TABLE journal ADD COLUMN place text NOT NULL DEFAULT 'memory'
    CHECK (place IN ('memory', 'pending'));

-- For the evidence and retract rows: the run whose outcome evidence starts or stops counting,
-- so undo reverts a run's evidence with the rest of its application.
ALTER TABLE journal ADD COLUMN evidence jsonb;

-- The observation a step got on probation (one of its injected ids; at most one step a run).
ALTER TABLE run_steps ADD COLUMN probation text;

-- Outcome evidence: one row per recorded run (the exactly-once key) with its facts, and the
-- counters they add up to, per observation and per test, kept by additive upserts in the
-- recording transaction.
CREATE TABLE evidence_runs (
    run_id      text PRIMARY KEY,
    test        text NOT NULL,
    record      jsonb NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE evidence (
    id               text PRIMARY KEY,
    runs             bigint NOT NULL DEFAULT 0,
    passed           bigint NOT NULL DEFAULT 0,
    failed           bigint NOT NULL DEFAULT 0,
    before_failure   bigint NOT NULL DEFAULT 0,
    just_before      bigint NOT NULL DEFAULT 0,
    ablation_blamed  bigint NOT NULL DEFAULT 0,
    ablation_cleared bigint NOT NULL DEFAULT 0,
    probation_passed bigint NOT NULL DEFAULT 0,
    probation_failed bigint NOT NULL DEFAULT 0
);
CREATE TABLE evidence_tests (
    test              text PRIMARY KEY,
    runs              bigint NOT NULL DEFAULT 0,
    runs_failed       bigint NOT NULL DEFAULT 0,
    steps             bigint NOT NULL DEFAULT 0,
    steps_failed      bigint NOT NULL DEFAULT 0,
    steps_doomed      bigint NOT NULL DEFAULT 0,
    steps_just_before bigint NOT NULL DEFAULT 0,
    bare_steps        bigint NOT NULL DEFAULT 0,
    bare_failed       bigint NOT NULL DEFAULT 0,
    bare_doomed       bigint NOT NULL DEFAULT 0,
    ablation_runs     bigint NOT NULL DEFAULT 0,
    ablation_failed   bigint NOT NULL DEFAULT 0
);
