//! `GET /api/v1/openapi.json`: the API described as OpenAPI 3.1, written by hand with
//! `serde_json` (issue 6 item 1 "an OpenAPI document that matches the routes").
//!
//! Hand-written so the document says what the routes mean, not only their types; the test at
//! the bottom keeps it honest by comparing its paths and methods with the `(method, path)` list
//! the router itself recorded while registering ([`crate::routes::ApiRoutes`]), both ways.

use axum::response::Json;
use serde_json::{Map, Value, json};

use crate::routes::PREFIX;

pub(crate) async fn serve() -> Json<Value> {
    Json(document())
}

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn json_body(schema: Value, required: bool) -> Value {
    json!({ "required": required, "content": { "application/json": { "schema": schema } } })
}

fn ok(description: &str, schema: Value) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": schema } } })
}

fn error_response(description: &str) -> Value {
    ok(description, schema_ref("Error"))
}

fn path_param(name: &str, description: &str) -> Value {
    json!({ "name": name, "in": "path", "required": true, "description": description,
            "schema": { "type": "string" } })
}

fn query_param(name: &str, ty: &str, description: &str) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": description,
            "schema": { "type": ty } })
}

/// One operation: summary, parameters, optional body, success status and schema, error statuses.
struct Op<'a> {
    summary: &'a str,
    params: Vec<Value>,
    body: Option<Value>,
    status: &'a str,
    result: Value,
    errors: &'a [(&'a str, &'a str)],
}

impl Op<'_> {
    fn build(self) -> Value {
        let mut responses = Map::new();
        responses.insert(self.status.to_owned(), ok(self.summary, self.result));
        for (status, why) in self.errors {
            responses.insert((*status).to_owned(), error_response(why));
        }
        responses.insert("401".into(), error_response("a token is configured and was not given"));
        let mut op = json!({ "summary": self.summary, "responses": responses });
        if !self.params.is_empty() {
            op["parameters"] = Value::Array(self.params);
        }
        if let Some(body) = self.body {
            op["requestBody"] = body;
        }
        op
    }
}

const BAD: (&str, &str) = ("400", "invalid JSON, a field breaking its rule, or a bad scope/id");
const MISSING: (&str, &str) = ("404", "unknown id");
const TOO_LARGE: (&str, &str) = ("413", "request body over the size limit");
const LOCKED: (&str, &str) = ("503", "the memory root's lock is held by another writer");
const REFUSED: (&str, &str) = ("422", "the security scanner or the codec refused the text");
const NO_HARNESS: (&str, &str) = ("404", "no harness state directory is configured");

/// `Idempotency-Key`: a retried write with the same key is applied once.
fn key_param() -> Value {
    json!({ "name": "Idempotency-Key", "in": "header", "required": false,
            "description": "1-120 of A-Z a-z 0-9 . _ -: the change is journaled under run id req-<key>, and a retry with the same key answers the change already made (already_applied: true) instead of applying it again; 409 idempotency_key_reused when the key named another change",
            "schema": { "type": "string" } })
}

fn id_param() -> Value {
    path_param("id", "observation id (obs_…)")
}

fn run_param() -> Value {
    path_param("run_id", "run id: 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'")
}

fn paths() -> Vec<(&'static str, &'static str, Value)> {
    let obj = || json!({ "type": "object" });
    vec![
        ("/observations", "get", Op {
            summary: "List observations with filters and paging (sorted by tier, scope, id)",
            params: vec![
                query_param("tier", "string", "products|suites|tests (or singular)"),
                query_param("scope", "string", "scope folder name"),
                query_param("min_trust", "number", "only trust >= this"),
                query_param("q", "string", "case-insensitive text in title or content"),
                query_param("offset", "integer", "skip this many (default 0)"),
                query_param("limit", "integer", "page size 1..=1000 (default 100)"),
            ],
            body: None, status: "200", result: schema_ref("ObservationPage"), errors: &[BAD],
        }.build()),
        ("/observations", "post", Op {
            summary: "Create an observation (scanned, validated, journaled)",
            params: vec![key_param()], body: Some(json_body(schema_ref("NewObservation"), true)),
            status: "201", result: schema_ref("Change"),
            errors: &[BAD, TOO_LARGE, ("415", "body is not application/json"), REFUSED, LOCKED],
        }.build()),
        ("/observations/{id}", "get", Op {
            summary: "Read one observation, with its outcome evidence (a proposal waiting for review too: place pending)", params: vec![id_param()],
            body: None, status: "200", result: schema_ref("ObservationEvidence"),
            errors: &[BAD, MISSING],
        }.build()),
        ("/observations/{id}", "patch", Op {
            summary: "Edit title, content and/or trust", params: vec![id_param(), key_param()],
            body: Some(json_body(schema_ref("Edit"), true)), status: "200",
            result: schema_ref("Change"), errors: &[BAD, MISSING, TOO_LARGE, REFUSED, LOCKED],
        }.build()),
        ("/observations/{id}", "delete", Op {
            summary: "Delete an observation", params: vec![id_param(), key_param()],
            body: Some(json_body(schema_ref("Reason"), false)), status: "200",
            result: schema_ref("Change"), errors: &[BAD, MISSING, LOCKED],
        }.build()),
        ("/observations/{id}/confirm", "post", Op {
            summary: "Confirm: trust + confirm delta, confirmed_count + 1",
            params: vec![id_param(), key_param()],
            body: Some(json_body(schema_ref("Reason"), false)), status: "200",
            result: schema_ref("Change"), errors: &[BAD, MISSING, LOCKED],
        }.build()),
        ("/observations/{id}/deprecate", "post", Op {
            summary: "Deprecate: trust - contradict delta, contradicted_count + 1; deleted at 0",
            params: vec![id_param(), key_param()], body: Some(json_body(schema_ref("Reason"), false)),
            status: "200", result: schema_ref("Change"), errors: &[BAD, MISSING, LOCKED],
        }.build()),
        ("/observations/{id}/history", "get", Op {
            summary: "Journal entries of one observation, oldest first", params: vec![id_param()],
            body: None, status: "200",
            result: json!({ "type": "object", "properties": { "entries": { "type": "array", "items": schema_ref("JournalEntry") } } }),
            errors: &[BAD, MISSING],
        }.build()),
        ("/query", "post", Op {
            summary: "The memory one step gets (same result as `curator query --json`)",
            params: vec![], body: Some(json_body(schema_ref("QueryRequest"), true)),
            status: "200", result: schema_ref("QueryOutcome"), errors: &[BAD, TOO_LARGE],
        }.build()),
        ("/runs", "get", Op {
            summary: "Curator runs from the journal, grouped by run id, newest first",
            params: vec![], body: None, status: "200", result: obj(), errors: &[],
        }.build()),
        ("/runs", "post", Op {
            summary: "Start a run session (generates an r_ id unless one is given)", params: vec![],
            body: Some(json_body(json!({ "type": "object", "properties": { "run_id": { "type": "string" } } }), false)),
            status: "201", result: json!({ "type": "object", "properties": { "run_id": { "type": "string" } } }),
            errors: &[BAD],
        }.build()),
        ("/runs/{run_id}", "get", Op {
            summary: "A run's session (injections per step) and its journal entries",
            params: vec![run_param()], body: None, status: "200", result: obj(), errors: &[BAD, MISSING],
        }.build()),
        ("/runs/{run_id}/steps/{step_index}/query", "post", Op {
            summary: "Query for one step of a run; the injected ids are recorded for the curator",
            params: vec![run_param(), path_param("step_index", "0-based step index")],
            body: Some(json_body(schema_ref("QueryRequest"), true)), status: "200",
            result: schema_ref("StepOutcome"), errors: &[BAD, TOO_LARGE],
        }.build()),
        ("/runs/{run_id}/finish", "post", Op {
            summary: "Finish a run: run record (+ optional decisions) → curator → MemoryLog",
            params: vec![run_param()], body: Some(json_body(schema_ref("Finish"), true)),
            status: "200", result: schema_ref("MemoryLog"),
            errors: &[BAD, ("409", "run_conflict: the run id was applied from a record with another verdict"), TOO_LARGE, LOCKED],
        }.build()),
        ("/runs/{run_id}/undo", "post", Op {
            summary: "Revert every change of a run, if the files are still as it left them (a run already undone: 200, already_applied true, nothing changed)",
            params: vec![run_param()], body: None, status: "200", result: obj(),
            errors: &[("400", "not a valid run id"), ("404", "the run is not in the journal, or changed no file"), ("409", "a file changed since"), LOCKED],
        }.build()),
        ("/journal", "get", Op {
            summary: "Journal entries, newest first",
            params: vec![
                query_param("id", "string", "only this observation"),
                query_param("run_id", "string", "only this run"),
                query_param("offset", "integer", "skip this many"),
                query_param("limit", "integer", "page size 1..=1000 (default 100)"),
            ],
            body: None, status: "200", result: obj(), errors: &[BAD],
        }.build()),
        ("/breaker/{key}", "get", Op {
            summary: "Circuit breaker status of a run session or suite",
            params: vec![path_param("key", "run id or suite id")], body: None, status: "200",
            result: schema_ref("Breaker"), errors: &[BAD],
        }.build()),
        ("/breaker/{key}/record", "post", Op {
            summary: "Record one finished run in the breaker's window (once per run_id, or per Idempotency-Key when the body names no run; already_applied: true on a retry)",
            params: vec![path_param("key", "run id or suite id"), key_param()],
            body: Some(json_body(json!({ "type": "object", "required": ["outcome", "memory"], "properties": {
                "outcome": { "enum": ["passed", "failed"] }, "memory": { "enum": ["with", "without"] },
                "run_id": { "type": "string", "description": "the run the outcome belongs to: counted once" } } }), true)),
            status: "200", result: schema_ref("Breaker"), errors: &[BAD],
        }.build()),
        ("/breaker/{key}/reset", "post", Op {
            summary: "Forget every recorded run and un-trip the breaker",
            params: vec![path_param("key", "run id or suite id")], body: None, status: "200",
            result: schema_ref("Breaker"), errors: &[BAD],
        }.build()),
        ("/lint", "get", Op {
            summary: "Every file found but not served (memory and the review queue), and why", params: vec![], body: None,
            status: "200", result: obj(), errors: &[],
        }.build()),
        ("/harness", "get", Op {
            summary: "Harness layers: status against bounds, summary.md, MEMORY.md, identity files",
            params: vec![], body: None, status: "200", result: obj(), errors: &[NO_HARNESS],
        }.build()),
        ("/harness/issues", "get", Op {
            summary: "issues.json, newest first", params: vec![], body: None, status: "200",
            result: obj(), errors: &[NO_HARNESS],
        }.build()),
        ("/harness/context/{role}", "get", Op {
            summary: "The memory preamble of a role's prompt",
            params: vec![path_param("role", "[A-Za-z0-9-]+")], body: None, status: "200",
            result: obj(), errors: &[BAD, NO_HARNESS],
        }.build()),
        ("/harness/trace", "get", Op {
            summary: "Where an entry went: raw.md, the archive (with its disposition), MEMORY.md, identity files",
            params: vec![query_param("text", "string", "text to look for, case-insensitive")],
            body: None, status: "200", result: obj(), errors: &[BAD, NO_HARNESS],
        }.build()),
        ("/harness/raw", "get", Op {
            summary: "The last whole lines of raw.md (non-UTF-8 bytes shown as U+FFFD)",
            params: vec![query_param("bytes", "integer", "bytes from the end, 1..=1048576 (default 65536)")],
            body: None, status: "200",
            result: json!({ "type": "object", "properties": { "total_bytes": { "type": "integer" }, "text": { "type": "string" }, "cut": { "type": "boolean" } } }),
            errors: &[BAD, NO_HARNESS],
        }.build()),
        ("/harness/archive", "get", Op {
            summary: "Archive records newest first: each entry or item that left raw.md or a memory file, its disposition, where it went and why",
            params: vec![
                query_param("disposition", "string", "promoted|merged|kept|absorbed|dropped"),
                query_param("offset", "integer", "records skipped from the newest (default 0)"),
                query_param("limit", "integer", "page size 1..=500 (default 50)"),
            ],
            body: None, status: "200", result: obj(), errors: &[BAD, NO_HARNESS],
        }.build()),
        ("/harness/issues/{id}/status", "post", Op {
            summary: "Acknowledge, close, won't-fix or reopen an issue (a note names who and why); setting the status it has changes nothing",
            params: vec![path_param("id", "issue id (I-NNNN)")],
            body: Some(json_body(json!({ "type": "object", "required": ["status"], "properties": {
                "status": { "enum": ["acknowledged", "closed", "wontfix", "open"] },
                "note": { "type": "string", "maxLength": 2000 },
                "by": { "type": "string", "maxLength": 64 } } }), true)),
            status: "200", result: obj(),
            errors: &[BAD, ("404", "no harness state directory is configured, or no issue with this id"), ("409", "a curator pass is running (the holder is named), or issues.json does not parse"), REFUSED],
        }.build()),
        ("/harness/triage", "post", Op {
            summary: "Merge pending issues into issues.json", params: vec![], body: None,
            status: "200", result: obj(), errors: &[NO_HARNESS, ("409", "a curator pass is running (the holder is named); refused at once")],
        }.build()),
        ("/harness/curate", "post", Op {
            summary: "Run a harness curator pass (trigger manual by default)", params: vec![],
            body: Some(json_body(json!({ "type": "object", "properties": { "trigger": { "enum": ["manual", "done", "escalate", "periodic"] } } }), false)),
            status: "200", result: obj(), errors: &[BAD, NO_HARNESS, ("409", "a curator pass is running (the holder is named); refused at once")],
        }.build()),
        ("/changes", "get", Op {
            summary: "Fingerprint of the files on disk; `changed` when it differs from `since`",
            params: vec![query_param("since", "string", "a fingerprint from an earlier call")],
            body: None, status: "200",
            result: json!({ "type": "object", "properties": { "fingerprint": { "type": "string" }, "changed": { "type": "boolean" } } }),
            errors: &[],
        }.build()),
        ("/pending", "get", Op {
            summary: "The review queue: proposals waiting for approval, with their probation record",
            params: vec![], body: None, status: "200", result: schema_ref("PendingPage"), errors: &[],
        }.build()),
        ("/pending", "post", Op {
            summary: "Propose an observation (an agent's): queued for review unless curator.review is off, at trust 0.5 (another trust is 400); a retry, or a fact a waiting proposal already says, answers 200 with that one",
            params: vec![key_param()], body: Some(json_body(schema_ref("NewObservation"), true)),
            status: "201", result: schema_ref("ReviewOutcome"),
            errors: &[BAD, TOO_LARGE, ("415", "body is not application/json"), REFUSED, LOCKED],
        }.build()),
        ("/pending/{id}", "get", Op {
            summary: "One queued proposal with its probation record", params: vec![id_param()],
            body: None, status: "200", result: schema_ref("ObservationEvidence"),
            errors: &[BAD, ("404", "not waiting for review")],
        }.build()),
        ("/pending/{id}/approve", "post", Op {
            summary: "Approve a proposal: it enters its tier folder unchanged (journaled, undoable)",
            params: vec![id_param()], body: Some(json_body(schema_ref("Reason"), false)),
            status: "200", result: schema_ref("ReviewOutcome"),
            errors: &[BAD, ("404", "not waiting for review"), REFUSED, LOCKED],
        }.build()),
        ("/pending/{id}/reject", "post", Op {
            summary: "Reject a proposal: it leaves the queue (journaled, undoable)",
            params: vec![id_param()], body: Some(json_body(schema_ref("Reason"), false)),
            status: "200", result: schema_ref("ReviewOutcome"),
            errors: &[BAD, ("404", "not waiting for review"), LOCKED],
        }.build()),
        ("/observations/{id}/evidence", "get", Op {
            summary: "An observation's outcome evidence (served or queued)", params: vec![id_param()],
            body: None, status: "200", result: schema_ref("ObservationEvidence"),
            errors: &[BAD, MISSING],
        }.build()),
        ("/openapi.json", "get", Op {
            summary: "This document", params: vec![], body: None, status: "200", result: obj(), errors: &[],
        }.build()),
    ]
}

fn schemas() -> Value {
    let s = json!({ "type": "string" });
    let n = json!({ "type": "number" });
    let i = json!({ "type": "integer" });
    let snapshot_entry = json!({ "type": "object", "required": ["test", "id"],
        "properties": { "test": s, "id": s } });
    json!({
        "Error": { "type": "object", "required": ["error"], "properties": { "error": {
            "type": "object", "required": ["code", "message"],
            "properties": { "code": s, "message": s } } } },
        "Observation": { "type": "object", "properties": {
            "tier": { "enum": ["products", "suites", "tests"] }, "scope": s, "id": s, "title": s,
            "content": s, "trust": n, "created": s, "last_confirmed": s, "confirmed_count": i,
            "contradicted_count": i, "source_test": s, "position": i,
            "suite_snapshot": { "type": "array", "items": snapshot_entry } } },
        "ObservationPage": { "type": "object", "properties": {
            "total": i, "offset": i, "limit": i, "problems": i,
            "next_offset": { "type": ["integer", "null"], "description": "the offset of the next page (null on the last); a page may hold fewer than limit observations when files on it are not served" },
            "observations": { "type": "array", "items": schema_ref("Observation") } } },
        "NewObservation": { "type": "object", "additionalProperties": false,
            "required": ["tier", "scope", "title", "content", "source_test"],
            "properties": { "tier": s, "scope": s, "title": s, "content": s, "source_test": s,
                "trust": n, "position": i, "suite_tests": { "type": "array", "items": snapshot_entry },
                "reasoning": s } },
        "Edit": { "type": "object", "additionalProperties": false,
            "properties": { "title": s, "content": s, "trust": n, "reasoning": s } },
        "Reason": { "type": "object", "additionalProperties": false, "properties": { "reasoning": s } },
        "Change": { "type": "object", "properties": {
            "run_id": s, "action": s, "id": s, "tier": s, "scope": s,
            "observation": { "oneOf": [schema_ref("Observation"), { "type": "null" }] },
            "already_applied": { "type": "boolean" },
            "unchanged": { "type": "boolean", "description": "the observation already held the edit's values: nothing was written or journaled" } } },
        "QueryRequest": { "type": "object", "additionalProperties": false,
            "required": ["product", "test", "step_text"],
            "properties": { "product": s, "test": s, "step_text": s, "suite": s,
                "suite_tests": { "type": "array", "items": snapshot_entry }, "position": i,
                "min_trust": n, "max_injections": i, "mode": { "enum": ["terms", "phrase"] } } },
        "QueryOutcome": { "type": "object", "properties": {
            "observations": { "type": "array", "items": { "type": "object", "properties": {
                "id": s, "title": s, "content": s, "trust": n, "score": n, "tier": s, "scope": s,
                "probation": { "type": "boolean" }, "pending": { "type": "boolean" } } } },
            "formatted": { "type": ["string", "null"] } } },
        "StepOutcome": { "allOf": [schema_ref("QueryOutcome"), { "type": "object", "properties": {
            "run_id": s, "step_index": i, "step": { "type": "integer", "deprecated": true, "description": "same as step_index (the name before issue 15)" }, "breaker_tripped": { "type": "boolean" } } }] },
        "Finish": { "type": "object", "additionalProperties": false, "required": ["run_record"],
            "properties": { "run_record": { "type": "object", "description": "the run record (README: Vocabulary; `record` is a deprecated alias)" },
                "decisions": { "type": "object", "description": "agent-qa's decisions document; rules provider when absent" } } },
        "MemoryLog": { "type": "object", "properties": {
            "run_id": s, "case": s, "provider": s, "added": i, "confirmed": i, "deprecated": i,
            "deleted": i, "proposed": i, "approved": i, "rejected": i,
            "deltas": { "type": "array" }, "errors": { "type": "array", "items": s },
            "curatorDuration": i, "evidence": { "enum": ["recorded", "already_recorded", "unsupported"] } } },
        "JournalEntry": { "type": "object", "properties": {
            "time": s, "run_id": s, "action": s, "tier": s, "scope": s, "id": s, "reasoning": s,
            "before": { "type": ["object", "null"] }, "after": { "type": ["object", "null"] } } },
        "Evidence": { "type": "object", "properties": {
            "runs": i, "passed": i, "failed": i, "before_failure": i, "just_before": i,
            "ablation_blamed": i, "ablation_cleared": i, "probation_passed": i,
            "probation_failed": i } },
        "ObservationEvidence": { "allOf": [schema_ref("Observation"), { "type": "object",
            "properties": { "place": { "enum": ["memory", "pending"] },
                "evidence": schema_ref("Evidence") } }] },
        "PendingPage": { "type": "object", "properties": { "total": i, "problems": i,
            "pending": { "type": "array", "items": schema_ref("ObservationEvidence") } } },
        "ReviewOutcome": { "type": "object", "properties": {
            "run_id": s, "action": { "enum": ["propose", "add", "approve", "reject"] }, "id": s,
            "tier": s, "scope": s, "place": { "enum": ["memory", "pending", null] } } },
        "Breaker": { "type": "object", "properties": {
            "key": s, "enabled": { "type": "boolean" }, "tripped": { "type": "boolean" },
            "window": i, "window_size": i, "baseline_size": i, "threshold": n } },
    })
}

/// The whole document.
pub(crate) fn document() -> Value {
    let mut paths = Map::new();
    for (path, method, op) in self::paths() {
        let entry =
            paths.entry(format!("{PREFIX}{path}")).or_insert_with(|| Value::Object(Map::new()));
        entry[method] = op;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "curator",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Memory engine for autonomous agent harnesses: observations, per-step query, run sessions, curator, journal, breaker, harness memory. Errors are {\"error\": {\"code\", \"message\"}}.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
        },
        "security": [{}, { "bearer": [] }],
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn every_registered_route_is_documented_and_nothing_else() {
        let registered: BTreeSet<(String, String)> = crate::routes::api()
            .registered()
            .iter()
            .map(|(m, p)| ((*m).to_owned(), p.clone()))
            .collect();
        let doc = document();
        let mut documented = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                documented.insert((method.clone(), path.clone()));
            }
        }
        let undocumented: Vec<_> = registered.difference(&documented).collect();
        let phantom: Vec<_> = documented.difference(&registered).collect();
        assert!(undocumented.is_empty(), "routes missing from openapi.json: {undocumented:?}");
        assert!(phantom.is_empty(), "openapi.json documents routes that do not exist: {phantom:?}");
        assert!(registered.len() >= 25, "the API registered only {} routes", registered.len());
    }

    #[test]
    fn every_schema_reference_resolves() {
        let doc = document();
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for part in text.split("#/components/schemas/").skip(1) {
            let name: String = part.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            assert!(schemas.contains_key(&name), "dangling $ref to {name}");
        }
    }
}
