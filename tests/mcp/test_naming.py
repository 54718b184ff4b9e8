#!/usr/bin/env python3
"""One vocabulary across the CLI, the HTTP API and MCP (issue 15 item 2, "Must show").

The same request, spelt with the same names, is sent through each surface -- the `curator`
binary, `curator serve`'s JSON API, and `curator mcp` driven by the official Python MCP SDK --
each on its own fresh copy of examples/agent-qa-memory (and its own harness state directory),
and the answers must agree. One check per concept of the README's vocabulary table:

  run id + step index + step text -- a recorded step query: the same observations, the same
                                     <memory-context> block, the same injection recorded
  run record                      -- finishing that run: the same MemoryLog
  observation id (history)        -- the same journal entries, reasons numbered by step index
  run id (undo)                   -- the same reverted files
  state directory                 -- the same harness context for a role, and a filed issue
                                     lands in the same file

Run: tests/mcp/run.sh (runs this after test_mcp.py), or `python3 tests/mcp/test_naming.py` with
CURATOR_BIN pointing at a built `curator`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_mcp import (  # noqa: E402
    PRODUCT,
    REVIEWS,
    STEP,
    TEST_ID,
    HttpServer,
    Results,
    curator_bin,
    fresh_root,
    structured,
)

RUN_ID = "r_naming"
STEP_INDEX = 1


def run_record() -> dict[str, Any]:
    return {
        "run_id": RUN_ID,
        "product": PRODUCT,
        "test": {"id": TEST_ID, "name": "product reviews"},
        "status": "passed",
        "steps": [
            {"name": "Open the product page", "status": "passed"},
            {"name": STEP, "status": "passed"},
        ],
    }


class Cli:
    def __init__(self, binary: str, root: Path, state_dir: Path, env: dict[str, str]) -> None:
        self.binary, self.root, self.state_dir, self.env = binary, root, state_dir, env

    def json(self, *args: str) -> Any:
        out = subprocess.run(
            [self.binary, "--root", str(self.root), "--json", *args],
            check=True,
            capture_output=True,
            text=True,
            env=self.env,
        )
        return json.loads(out.stdout)

    def harness(self, *args: str) -> Any:
        return self.json("harness", "--state-dir", str(self.state_dir), *args)


class Http:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}/api/v1"

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


def session(root: Path) -> Any:
    return json.loads((root / ".curator" / "runs" / f"{RUN_ID}.json").read_text())["injected"]


def log_view(log: dict[str, Any]) -> Any:
    deltas = sorted((d["action"], d["observationId"], d["reasoning"]) for d in log["deltas"])
    return (log["run_id"], log["case"], log["added"], log["confirmed"], log["deprecated"], deltas)


def history_view(entries: list[dict[str, Any]]) -> Any:
    return [(e["action"], e.get("run_id"), e["reasoning"], e["tier"], e["scope"]) for e in entries]


def undo_view(report: dict[str, Any]) -> Any:
    return (report["run_id"], report["generation"], [(r["action"], r["file"]) for r in report["reverted"]])


def pending(state_dir: Path) -> list[dict[str, Any]]:
    lines = (state_dir / "pending-issues.jsonl").read_text().splitlines()
    issues = [json.loads(line) for line in lines if line.strip()]
    for issue in issues:
        issue.pop("found_at", None)  # the filing time differs, nothing else may
    return issues


async def scenario(results: Results, cli: Cli, http: Http, client: Client, roots: dict[str, Path]) -> None:
    async def step_query() -> None:
        by_cli = cli.json(
            "query", "--product", PRODUCT, "--test", TEST_ID,
            "--run-id", RUN_ID, "--step-index", str(STEP_INDEX), "--step-text", STEP,
        )
        body = {"product": PRODUCT, "test": TEST_ID, "step_text": STEP}
        by_http = http.call("POST", f"/runs/{RUN_ID}/steps/{STEP_INDEX}/query", body)
        args = {**body, "run_id": RUN_ID, "step_index": STEP_INDEX}
        by_mcp = structured(await client.call_tool("query_memory", args))
        ids = [[o["id"] for o in out["observations"]] for out in (by_cli, by_http, by_mcp)]
        assert ids[0] == ids[1] == ids[2] and REVIEWS in ids[0], ids
        blocks = [out["formatted"] for out in (by_cli, by_http, by_mcp)]
        assert blocks[0] == blocks[1] == blocks[2] and blocks[0], blocks
        assert (by_http["run_id"], by_http["step_index"]) == (RUN_ID, STEP_INDEX), by_http
        assert (by_mcp["run_id"], by_mcp["step_index"]) == (RUN_ID, STEP_INDEX), by_mcp
        sessions = [session(roots[s]) for s in ("cli", "http", "mcp")]
        assert sessions[0] == sessions[1] == sessions[2] == {str(STEP_INDEX): ids[0]}, sessions

    async def finish_run() -> None:
        record_file = roots["cli"].parent / "run.json"
        record_file.write_text(json.dumps(run_record()))
        by_cli = cli.json("curate", "--run-record", str(record_file))
        by_http = http.call("POST", f"/runs/{RUN_ID}/finish", {"run_record": run_record()})
        by_mcp = structured(await client.call_tool("record_run", {"run_record": run_record()}))
        views = [log_view(log) for log in (by_cli, by_http, by_mcp)]
        assert views[0] == views[1] == views[2], views
        assert ("confirm", REVIEWS) in [(a, i) for a, i, _ in views[0][5]], views[0]

    async def history() -> None:
        by_cli = cli.json("history", REVIEWS)
        by_http = http.call("GET", f"/observations/{REVIEWS}/history")["entries"]
        by_mcp = structured(await client.call_tool("observation_history", {"id": REVIEWS}))["entries"]
        views = [history_view(entries) for entries in (by_cli, by_http, by_mcp)]
        assert views[0] == views[1] == views[2], views
        reasons = [r for _, run, r, _, _ in views[0] if run == RUN_ID]
        assert reasons == [f"Injected into step {STEP_INDEX} ({STEP}), which passed"], reasons

    async def undo() -> None:
        by_cli = cli.json("undo", RUN_ID)
        by_http = http.call("POST", f"/runs/{RUN_ID}/undo")
        by_mcp = structured(await client.call_tool("undo_run", {"run_id": RUN_ID}))
        views = [undo_view(r) for r in (by_cli, by_http, by_mcp)]
        assert views[0] == views[1] == views[2] and views[0][2], views

    async def state_dir() -> None:
        by_cli = cli.harness("context", "--role", "worker")
        by_http = http.call("GET", "/harness/context/worker")
        by_mcp = structured(await client.call_tool("harness_context", {"role": "worker"}))
        texts = [out["context"] for out in (by_cli, by_http, by_mcp)]
        assert texts[0] == texts[1] == texts[2] and texts[0], texts
        assert http.call("GET", "/harness")["state_dir"] == str(roots["http-state"]), "serve --state-dir"
        issue = ["--title", "Sandbox unreachable", "--severity", "major", "--found-during", "F-031", "--source", "worker"]
        cli.harness("issue", *issue)
        args = {"title": "Sandbox unreachable", "severity": "major", "found_during": "F-031", "source": "worker"}
        structured(await client.call_tool("harness_issue", args))
        filed = [pending(roots[s]) for s in ("cli-state", "mcp-state")]
        # foundAt is each filing's own clock (second precision): the two may straddle a second.
        assert all(len(f) == 1 and f[0].pop("foundAt", None) for f in filed), filed
        assert filed[0] == filed[1], filed

    for name, body in [
        ("run id + step index + step text: one recorded step query", step_query),
        ("run record: one MemoryLog", finish_run),
        ("observation id: one history", history),
        ("run id: one undo", undo),
        ("state directory: one harness context and issue file", state_dir),
    ]:
        await results.check(f"naming: {name}", body)


def seed_state(binary: str, state_dir: Path, env: dict[str, str]) -> None:
    line = ["append", "--role", "worker", "--feature", "F-001", "seed the db before the tests"]
    subprocess.run([binary, "harness", "--state-dir", str(state_dir), *line], check=True, env=env)


async def run_all() -> Results:
    binary = curator_bin()
    results = Results()
    with tempfile.TemporaryDirectory(prefix="curator-naming-") as tmp_name:
        tmp = Path(tmp_name)
        env = {"CURATOR_IDENTITY": str(tmp / "identity"), "PATH": "/usr/bin:/bin"}
        roots = {surface: fresh_root(tmp, surface) for surface in ("cli", "http", "mcp")}
        for surface in ("cli", "http", "mcp"):
            roots[f"{surface}-state"] = tmp / surface / ".harness"
            seed_state(binary, roots[f"{surface}-state"], env)
        cli = Cli(binary, roots["cli"], roots["cli-state"], env)
        server = HttpServer(
            binary, roots["http"], tmp / "serve.log", ["--state-dir", str(roots["http-state"])], env
        )
        try:
            params = StdioServerParameters(
                command=binary,
                # A person's client: undo (like review) is refused to an agent's.
                args=["--root", str(roots["mcp"]), "mcp", "--allow-review", "--state-dir", str(roots["mcp-state"])],
                env=env,
            )
            with anyio.fail_after(120):
                async with Client(params) as client:
                    await scenario(results, cli, Http(server.port), client, roots)
        finally:
            server.stop()
    return results


def main() -> int:
    results = anyio.run(run_all)
    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if results.failed == 0 and results.passed > 0 else 1


def test_naming() -> None:
    """pytest entry point: every surface answers the same request the same way."""
    results = anyio.run(run_all)
    assert results.failed == 0 and results.passed > 0, f"{results.failed} naming checks failed"


if __name__ == "__main__":
    sys.exit(main())
