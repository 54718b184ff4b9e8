-- curator-pg schema, version 6: terms mode judges rows as the file store's index judges
-- documents. Each row keeps the analyzed terms of its title and of its title + content
-- (curator's terms analyzer: unicode61 folding, stop words and step verbs dropped, English
-- stemming), computed in Rust on write and, for the rows already stored, by this migration
-- (migrate.rs, `Backfill::TermArrays`). `terms_tsv` holds the same terms as a GIN-indexed
-- tsvector, which finds the rows holding a step's terms and the terms a stem begins.
-- PostgreSQL's own English configuration (`search_tsv`, ranked by `ts_rank`) is dropped: it
-- split, stopped and stemmed words differently, so the two stores injected different memory.
-- Never edit a released migration: add 0007_*.sql instead.

ALTER TABLE observations DROP COLUMN search_tsv;
ALTER TABLE observations
    ADD COLUMN title_terms text[] NOT NULL DEFAULT '{}',
    ADD COLUMN any_terms   text[] NOT NULL DEFAULT '{}',
    ADD COLUMN terms_tsv   tsvector GENERATED ALWAYS AS (array_to_tsvector(any_terms)) STORED;
CREATE INDEX observations_terms ON observations USING gin (terms_tsv);

ALTER TABLE pending_observations DROP COLUMN search_tsv;
ALTER TABLE pending_observations
    ADD COLUMN title_terms text[] NOT NULL DEFAULT '{}',
    ADD COLUMN any_terms   text[] NOT NULL DEFAULT '{}',
    ADD COLUMN terms_tsv   tsvector GENERATED ALWAYS AS (array_to_tsvector(any_terms)) STORED;
CREATE INDEX pending_observations_terms ON pending_observations USING gin (terms_tsv);
