-- curator-pg schema, version 4: what each curated run reported (its outcome, steps, errors and
-- injections), kept beside the memory as the file store keeps it under `.curator/runs/`, so the
-- web UI's run page and `curator runs` explain a deprecation on a shared database too.
-- Never edit a released migration: add 0005_*.sql instead.

-- One row per run id; a later curate of the same run replaces it (the last report counts).
CREATE TABLE run_records (
    run_id  text PRIMARY KEY,
    record  jsonb NOT NULL,
    kept_at timestamptz NOT NULL DEFAULT now()
);
