//! What a person's browser and a script cost the server on a large memory root (issue 13 item
//! 3): 20,000 observations (10 products × 1,000, 100 suites × 50, 1,000 tests × 5), served by
//! the app `curator serve` runs, driven in process (no socket, so the figures are the server's
//! own work).
//!
//! `cargo bench -p curator-server --bench large_root` measures, each over repeated runs:
//! - the UI overview `/`: its size in bytes and its latency;
//! - `/api/v1/observations?limit=100`: the first page of a listing;
//! - `/api/v1/changes?since=…`: one live-refresh poll when nothing changed (what every open tab
//!   asks every 3 s), with its wall-clock latency and the CPU time of the whole process, and
//!   one poll right after a file changed on disk.
//!
//! `LARGE_ROOT_OBSERVATIONS=N` changes the size; `LARGE_ROOT_RUNS=N` the number of runs.
#![allow(clippy::print_stdout, missing_docs)]

use std::path::Path;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, header};
use curator_core::codec::write_observation;
use curator_core::{Observation, ObservationId};
use curator_server::{AppState, ServerOptions, app};
use curator_store::{FileStore, FileStoreOptions};
use http_body_util::BodyExt;
use tower::ServiceExt;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Writes `n` observations spread like a real root: half in 10 products, a quarter in 100
/// suites, a quarter in 1,000 tests.
fn build_root(root: &Path, n: usize) {
    let places: Vec<(String, usize)> = [("products", 10, n / 2), ("suites", 100, n / 4)]
        .into_iter()
        .chain([("tests", 1000, n - n / 2 - n / 4)])
        .flat_map(|(tier, scopes, count)| {
            (0..scopes).map(move |s| {
                let name = match tier {
                    "products" => format!("products/product-{s:02}"),
                    "suites" => format!("suites/s_suite-{s:03}"),
                    _ => format!("tests/t_test-{s:04}"),
                };
                (name, count / scopes + usize::from(s < count % scopes))
            })
        })
        .collect();
    for (i, (dir, count)) in places.iter().enumerate() {
        let dir = root.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        for j in 0..*count {
            let obs = Observation {
                id: ObservationId::generate(),
                title: format!(
                    "Checkout step {j} of scope {i}: the total updates after a short delay"
                ),
                content:
                    "After the coupon is applied the order total is recomputed on the server; \
                          the page shows the old total for about a second, then the new one. \
                          Wait for the total to change before asserting it."
                        .repeat(2),
                trust: 0.3 + ((i * 7 + j) % 70) as f64 / 100.0,
                created: "2026-04-10T12:00:00.000Z".into(),
                last_confirmed: "2026-04-10T12:00:00.000Z".into(),
                confirmed_count: (j % 5) as u64,
                contradicted_count: (j % 3) as u64,
                source_test: "t_test-0001".into(),
                suite: None,
                extra: Default::default(),
            };
            let text = write_observation(&obs).unwrap();
            std::fs::write(dir.join(format!("{}.md", obs.id)), text).unwrap();
        }
    }
    for tier in ["products", "suites", "tests"] {
        std::fs::create_dir_all(root.join(tier)).unwrap();
    }
}

/// One GET; the status, the body and how long it took.
async fn get(app: &Router, uri: &str) -> (u16, Vec<u8>, Duration) {
    let request =
        Request::get(uri).header(header::HOST, "127.0.0.1:7878").body(Body::empty()).unwrap();
    let started = Instant::now();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, body, started.elapsed())
}

/// CPU time of the whole process so far (every thread: the blocking pool does the work).
fn process_cpu_time() -> Duration {
    // /proc/self/stat fields 14 and 15: utime and stime in clock ticks (100 per second on Linux).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    // Counted from field 3 (the state letter); some fields may be negative, so none is skipped.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    let ticks = field(11) + field(12);
    Duration::from_millis(ticks * 10)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n = env_or("LARGE_ROOT_OBSERVATIONS", 20_000);
    let runs = env_or("LARGE_ROOT_RUNS", 9).max(1);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("memory");
    let started = Instant::now();
    build_root(&root, n);
    println!("root: {n} observations written in {:.1} s", started.elapsed().as_secs_f64());
    let store = FileStore::open(&root, FileStoreOptions::default()).unwrap();
    let app = app(AppState::new(store, ServerOptions::default()));

    let (status, page, _) = get(&app, "/").await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&page));
    let mut overview = Vec::new();
    for _ in 0..runs {
        overview.push(get(&app, "/").await.2);
    }
    println!("UI overview /: {} bytes, median {} ({runs} runs)", page.len(), ms(median(overview)));

    let (status, body, _) = get(&app, "/api/v1/observations?limit=100").await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let mut list = Vec::new();
    for _ in 0..runs {
        list.push(get(&app, "/api/v1/observations?limit=100").await.2);
    }
    println!("/api/v1/observations?limit=100: {} bytes, median {}", body.len(), ms(median(list)));

    let (_, first, _) = get(&app, "/api/v1/changes").await;
    let first: serde_json::Value = serde_json::from_slice(&first).unwrap();
    let since = format!("/api/v1/changes?since={}", first["fingerprint"].as_str().unwrap());
    let polls = runs * 10;
    let cpu_before = process_cpu_time();
    let mut changes = Vec::new();
    for _ in 0..polls {
        let (status, body, took) = get(&app, &since).await;
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&body).contains("\"changed\":false"));
        changes.push(took);
    }
    let cpu = (process_cpu_time() - cpu_before) / polls as u32;
    println!(
        "/api/v1/changes poll, nothing changed: median {}, CPU {} per poll ({polls} polls)",
        ms(median(changes)),
        ms(cpu)
    );
    // A change on disk made by another process is seen by the next poll.
    let file = std::fs::read_dir(root.join("products/product-03")).unwrap().next().unwrap();
    let path = file.unwrap().path();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}More.\n")).unwrap();
    let seen = Instant::now();
    loop {
        let (_, body, took) = get(&app, &since).await;
        if String::from_utf8_lossy(&body).contains("\"changed\":true") {
            println!(
                "/api/v1/changes poll after one file changed: changed=true, {} (seen {} after the write)",
                ms(took),
                ms(seen.elapsed())
            );
            break;
        }
        assert!(seen.elapsed() < Duration::from_secs(10), "the change was never seen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
