-- curator-pg schema, version 5: phrase mode's tokenizer now uses SQLite's own unicode61 tables
-- (case folds such as ς → σ, diacritics removed only from ASCII-based letters, SQLite's token
-- characters). The stored phrase vectors of rows holding non-ASCII text were built with the old
-- folding, so this migration recomputes them, in Rust, in its own transaction (migrate.rs,
-- `Migration::retokenize`); ASCII-only rows tokenize the same either way. No table changes.
-- Never edit a released migration: add 0006_*.sql instead.
SELECT 1;
