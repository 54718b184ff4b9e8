-- curator-pg schema, version 1 (issue 7). Applied once, inside one transaction, by PgStore::connect.
-- Never edit a released migration: add 0002_*.sql instead (the checksum in schema_version says so).

-- One row per observation. `file_text` is the exact agent-qa file (frontmatter + body) and is the
-- truth: unknown frontmatter keys and the writer's exact bytes live there, so export is
-- byte-exact. Every other column is derived from it at write time, for filtering and search.
CREATE TABLE observations (
    id                 text PRIMARY KEY,             -- an id lives in one place (tier, scope)
    tier               text NOT NULL CHECK (tier IN ('products', 'suites', 'tests')),
    scope              text NOT NULL CHECK (scope <> ''),
    title              text NOT NULL,
    content            text NOT NULL,
    trust              double precision NOT NULL CHECK (trust >= 0 AND trust <= 1),
    created            text NOT NULL,                -- ISO strings kept exactly as written
    last_confirmed     text NOT NULL,
    confirmed_count    bigint NOT NULL CHECK (confirmed_count >= 0),
    contradicted_count bigint NOT NULL CHECK (contradicted_count >= 0),
    source_test        text NOT NULL,
    position           bigint CHECK (position >= 0),  -- suite observations only
    suite_snapshot     jsonb,                        -- [{"test","id"}], suite observations only
    file_text          text NOT NULL,
    version            bigint NOT NULL DEFAULT 1,     -- +1 on every write
    updated_at         timestamptz NOT NULL DEFAULT now(),
    -- agent-qa's unicode61 tokens (computed by curator), for phrase mode: title positions first,
    -- content after a gap so no phrase spans the two; token_len is FTS5's row length D.
    phrase_tsv         tsvector NOT NULL,
    token_len          bigint NOT NULL,
    -- terms mode: English stemming and stop words, title weighted above content.
    search_tsv         tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, title), 'A')
        || setweight(to_tsvector('english'::regconfig, content), 'B')
    ) STORED,
    CHECK ((position IS NULL) = (suite_snapshot IS NULL))
);
CREATE INDEX observations_scope ON observations (tier, scope, id);
CREATE INDEX observations_search ON observations USING gin (search_tsv);
CREATE INDEX observations_phrase ON observations USING gin (phrase_tsv);

-- The journal: the same fields as curator_store::JournalEntry; seq gives "oldest first".
CREATE TABLE journal (
    seq         bigserial PRIMARY KEY,
    time        text NOT NULL,
    run_id      text,
    action      text NOT NULL,
    tier        text NOT NULL,
    scope       text NOT NULL,
    id          text NOT NULL,
    reasoning   text NOT NULL,
    before      jsonb,
    after       jsonb,
    before_file text,
    after_file  text
);
CREATE INDEX journal_id ON journal (id, seq);
CREATE INDEX journal_run ON journal (run_id, seq);

-- Run sessions (agent-qa-memory §3.4): which observations were injected into which step.
CREATE TABLE run_steps (
    run_id     text NOT NULL,
    step       bigint NOT NULL CHECK (step >= 0),
    injected   text[] NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, step)
);

-- Circuit-breaker state (agent-qa-memory §9): one JSON window per key.
CREATE TABLE breaker_state (
    key        text PRIMARY KEY,
    state      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
