-- curator-pg schema, version 7: terms mode splits text written without spaces (Han, Hiragana,
-- Katakana, Hangul) into overlapping character bigrams (curator-store `index/cjk.rs`), so a
-- Chinese or Japanese step finds memory through the words it shares, not only through a whole
-- clause written the same way. The columns are unchanged; what changes is what the analyzer
-- puts in `title_terms` and `any_terms`, recomputed in Rust for the rows already stored whose
-- text is not ASCII (migrate.rs, `Backfill::NonAsciiTermArrays`; ASCII text analyzes as
-- before). Never edit a released migration: add 0008_*.sql instead.

SELECT 1;
