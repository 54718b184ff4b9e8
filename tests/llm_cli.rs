//! `curate --llm` through the binary against a mock OpenAI-compatible endpoint on 127.0.0.1
//! that echoes every request header back in its error body (issue 13 item 3): the person sees
//! what the endpoint said, never the API key it was sent, on stdout, on stderr (with trace
//! logging on) or in any file the run leaves under the root.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use serde_json::json;

use crate::util::{Dir, ID_A, live_lock, observation_file};

const KEY: &str = "sk-curator-test-4f1c9a7e2b5d8360";

/// A mock endpoint on 127.0.0.1: reads each request (headers, then a `Content-Length` body)
/// and answers `reply(headers)` = (status, JSON body). Returns its base URL.
fn endpoint(reply: impl Fn(&[String]) -> (u16, String) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                headers.push(line.trim_end().to_owned());
            }
            let length = headers
                .iter()
                .find_map(|h| {
                    h.to_ascii_lowercase().strip_prefix("content-length:").map(str::to_owned)
                })
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            let mut request = vec![0u8; length];
            let _ = std::io::Read::read_exact(&mut reader, &mut request);
            let (status, body) = reply(&headers);
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    url
}

/// A server answering every request with `status` and a body quoting the request's headers,
/// `Authorization` included, the way a misconfigured proxy or debug endpoint does. Returns
/// its base URL.
fn echoing_endpoint(status: u16) -> String {
    endpoint(move |headers| {
        let authorization =
            headers.iter().find(|h| h.to_lowercase().starts_with("authorization")).cloned();
        let body = json!({"error": {
            "message": "model `no-such-model` does not exist; your request was:",
            "request_headers": headers,
            "hint": format!("resend with {}", authorization.unwrap_or_default()),
        }});
        (status, body.to_string())
    })
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    crate::util::tree(dir)
        .into_iter()
        .filter(|p| p.is_file())
        .filter(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).contains(needle))
        .map(|p| p.display().to_string())
        .collect()
}

fn curate_with_llm(name: &str, status: u16, json: bool) -> (Dir, String, String, Option<i32>) {
    let dir = Dir::new(name);
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login modal", "0.5", "Appears late."),
    );
    let url = echoing_endpoint(status);
    std::fs::write(
        dir.path().join("agent-qa.config.yaml"),
        format!(
            "curator:\n  llm:\n    baseUrl: {url}\n    model: no-such-model\n    apiKeyEnv: CURATOR_TEST_LLM_KEY\n    maxRetries: 1\n    backoffMs: 0\n    timeoutMs: 5000\n"
        ),
    )
    .unwrap();
    let run = dir.path().join("run.json");
    let record = json!({"run_id": "r_llm-echo", "product": "acme",
        "test": {"id": "t_login", "name": "Login"}, "status": "passed",
        "steps": [{"name": "Log in", "status": "passed", "injected": [ID_A]}]});
    std::fs::write(&run, record.to_string()).unwrap();
    let mut args = vec!["-vv"];
    if json {
        args.push("--json");
    }
    args.extend(["curate", "--run-record", run.to_str().unwrap(), "--llm"]);
    let mut cmd = dir.curator(&args);
    cmd.cmd.env("CURATOR_TEST_LLM_KEY", KEY).env("CURATOR_LOG", "trace");
    let out = cmd.output();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (dir, stdout, stderr, out.status.code())
}

#[test]
fn an_echoed_api_key_never_reaches_output_logs_or_files() {
    for (status, json) in [(401, false), (500, true), (400, true)] {
        let (dir, stdout, stderr, code) =
            curate_with_llm(&format!("llm-echo-{status}"), status, json);
        let all = format!("{stdout}\n{stderr}");
        // agent-qa's curator never throws (§5.1): the MemoryLog holds the error, nothing was
        // applied, and exit 75 asks for a retry.
        assert_eq!(code, Some(75), "HTTP {status}: {all}");
        if json {
            let log: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let error = log["errors"][0].as_str().unwrap_or_default();
            assert!(error.starts_with("LLM call failed: "), "{log}");
            assert_eq!(log["confirmed"], 0, "{log}");
        } else {
            assert!(stdout.contains("Memory: warning -- LLM call failed"), "{stdout}");
        }
        // The call failed, and the person is told what the endpoint said.
        assert!(
            all.contains("does not exist"),
            "HTTP {status}: the endpoint's words are kept:\n{all}"
        );
        assert!(all.contains("[redacted]"), "HTTP {status}: {all}");
        // No piece of the key anywhere: not whole, not the part after its prefix.
        for needle in [KEY, &KEY[3..], &KEY[KEY.len() - 12..]] {
            assert!(!all.contains(needle), "HTTP {status}: the key reached the output:\n{all}");
            let leaked = files_containing(dir.path(), needle);
            assert!(leaked.is_empty(), "HTTP {status}: the key is in {leaked:?}");
        }
    }
}

/// Only a passed run asks the LLM (§5.1, §5.5): with the key variable unset, `curate --llm` of
/// a failed run still applies the failed-run penalty, and a passed run names the setting to fix.
#[test]
fn a_failed_run_is_curated_without_the_llm_settings_it_never_uses() {
    let dir = Dir::new("llm-failed-no-key");
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login modal", "0.5", "Appears late."),
    );
    std::fs::write(
        dir.path().join("agent-qa.config.yaml"),
        "curator:\n  llm:\n    model: m\n    apiKeyEnv: CURATOR_TEST_UNSET_KEY\n",
    )
    .unwrap();
    let record = |status: &str| {
        json!({"run_id": format!("r_{status}"), "product": "acme",
            "test": {"id": "t_login", "name": "Login"}, "status": status,
            "steps": [{"name": "Log in", "status": status, "injected": [ID_A]}]})
        .to_string()
    };
    let mut cmd = dir.curator(&["--json", "curate", "--llm", "-"]);
    cmd.cmd.env_remove("CURATOR_TEST_UNSET_KEY");
    let log: serde_json::Value =
        serde_json::from_str(&cmd.stdin(record("failed")).stdout()).unwrap();
    assert_eq!(log["deprecated"], 1, "{log}");
    let mut cmd = dir.curator(&["curate", "--llm", "-"]);
    cmd.cmd.env_remove("CURATOR_TEST_UNSET_KEY");
    let (_, err) = cmd.stdin(record("passed")).expect_code(1);
    assert!(err.contains("curator.llm.apiKeyEnv") && err.contains("is not set"), "{err}");
}

/// A server answering every request with a valid chat completion holding `content` and a
/// token usage. Returns its base URL.
fn answering_endpoint(content: &str) -> String {
    let body = json!({"id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}})
    .to_string();
    endpoint(move |_| (200, body.clone()))
}

/// The LLM answered, then the lock could not be taken in time: nothing is applied (exit 75),
/// and the MemoryLog still reports the tokens that answer cost.
#[test]
fn a_lock_timeout_after_the_llm_answered_reports_its_token_usage() {
    let dir = Dir::new("llm-lock-timeout");
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login modal", "0.5", "Appears late."),
    );
    let answer =
        json!({"decisions": [{"action": "update", "observationId": ID_A, "reasoning": "held"}]});
    let url = answering_endpoint(&answer.to_string());
    std::fs::write(
        dir.path().join("agent-qa.config.yaml"),
        format!(
            "services:\n  memory:\n    curatorLockTimeout: 1000\ncurator:\n  llm:\n    baseUrl: {url}\n    model: m\n    apiKeyEnv: CURATOR_TEST_LLM_KEY\n    maxRetries: 0\n    timeoutMs: 5000\n"
        ),
    )
    .unwrap();
    let mut holder = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    dir.write(".curator.lock", live_lock(holder.id()));
    let run = dir.path().join("run.json");
    let record = json!({"run_id": "r_llm-lock", "product": "acme",
        "test": {"id": "t_login", "name": "Login"}, "status": "passed",
        "steps": [{"name": "Log in", "status": "passed", "injected": [ID_A]}]});
    std::fs::write(&run, record.to_string()).unwrap();
    let mut cmd =
        dir.curator(&["--json", "curate", "--run-record", run.to_str().unwrap(), "--llm"]);
    cmd.cmd.env("CURATOR_TEST_LLM_KEY", KEY);
    let (out, _) = cmd.expect_code(75);
    holder.kill().unwrap();
    holder.wait().unwrap();
    let log: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(log["errors"], json!(["Curator error: Lock acquisition timed out"]), "{out}");
    assert_eq!(log["tokenUsage"]["totalTokens"], 150, "{out}");
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.5"));
}
