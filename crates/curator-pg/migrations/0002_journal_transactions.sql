-- curator-pg schema, version 2 (issue 13): journal rows name their transaction, and an undo's
-- rows the transaction they revert, so a run's applications (generations) are read the same way
-- as from the file store's journal. Rows written before carry NULL: one application per run id.
ALTER TABLE journal ADD COLUMN txn text;
ALTER TABLE journal ADD COLUMN reverts text;
