#!/usr/bin/env python3
"""curator's MCP server driven by a client that is not ours: the official Python `mcp` SDK.

Issue 6 item 3 ("MCP tested with a real client"). Every scenario runs on a fresh copy of
examples/agent-qa-memory, over each transport and each way the SDK can connect:

  stdio  -- the SDK spawns `curator --root <copy> mcp`
  http   -- `curator --root <copy> serve --listen 127.0.0.1:<free port>`, client on /mcp

  legacy -- the `initialize` handshake (protocol 2025-11-25)
  auto   -- the SDK's default: `server/discover`, then the stateless 2026-07-28 protocol;
            these servers also allow review over MCP (`mcp --allow-review`, `serve --mcp-review`)

and checks: initialize (server name/version/instructions), list tools (names, schemas), query
memory for a step (observations + the <memory-context> block, injection recorded), record a
passed run whose step had that injection, and the trust change it caused (0.5 -> 0.55, read
back with get_observation); plus bad input answered as a tool error (isError), an unknown id,
propose_decisions (its add waits in the review queue: list_pending shows it, review_pending
approves it only where the server allows review over MCP), list_observations,
observation_history / undo_run (refused where review is), and the harness tools (a call's own state_dir is
accepted over stdio, refused over HTTP). The SDK validates every structured result against
the tool's advertised output schema, so a schema that lies fails here.

Run: tests/mcp/run.sh (builds the binary), or `python3 tests/mcp/test_mcp.py` with
CURATOR_BIN pointing at a built `curator`. Prints one line per check and a final
`N passed, N failed`; exits 1 when anything failed. Also collectable by pytest (test_all).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "agent-qa-memory"
PRODUCT = "acme-shop"
TEST_ID = "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel"
# products/acme-shop, trust 0.5 in the example: "Product reviews widget is flaky ..."
REVIEWS = "obs_hover-ginger-harbor-echo-citrus-ginger"
STEP = "Check the product reviews widget shows reviews"
TOOLS = [
    "query_memory",
    "record_run",
    "propose_decisions",
    "list_observations",
    "get_observation",
    "observation_history",
    "undo_run",
    "list_pending",
    "review_pending",
    "harness_append",
    "harness_issue",
    "harness_context",
    "harness_curate",
    "harness_trace",
]


def curator_bin() -> str:
    explicit = os.environ.get("CURATOR_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "debug" / "curator")


def curator_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout
    return out.split()[-1]  # "curator 0.1.0"


class Results:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    async def check(self, label: str, body: Callable[[], Awaitable[None]]) -> None:
        try:
            await body()
        except Exception:  # noqa: BLE001 - every failure is reported, none stops the run
            self.failed += 1
            print(f"FAIL {label}")
            traceback.print_exc(file=sys.stdout)
        else:
            self.passed += 1
            print(f"ok   {label}")


def fresh_root(tmp: Path, name: str) -> Path:
    root = tmp / name / "memory"
    shutil.copytree(EXAMPLE, root)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """`curator serve` on a free loopback port, stopped with SIGTERM."""

    def __init__(
        self, binary: str, root: Path, log: Path, extra: list[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(
            [binary, "--root", str(root), "serve", "--listen", f"127.0.0.1:{self.port}", *(extra or [])],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"curator serve exited with {self.proc.returncode}; see {log}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"curator serve did not listen on {self.port} within 30 s; see {log}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, f"tool error: {result.content}"
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, f"expected a tool error, got {result.structured_content}"
    text = " ".join(getattr(c, "text", "") for c in result.content)
    error = (result.structured_content or {}).get("error", {})
    assert error.get("code") and error.get("message"), result
    assert error["code"] in text and error["message"] in text, text
    return error


async def scenario(
    results: Results, label: str, client: Client, version: str, state_dir: Path
) -> None:
    run_id = f"r_py-{label.replace('/', '-')}"
    # legacy: the initialize handshake; auto: server/discover, then the stateless protocol.
    expected_protocol = "2025-11-25" if label.endswith("legacy") else "2026-07-28"

    async def initialize() -> None:
        info = client.server_info
        assert info is not None, "the server did not identify itself"
        assert info.name == "curator", info
        assert info.version == version, (info.version, version)
        assert client.instructions and "query_memory" in client.instructions, client.instructions
        assert client.server_capabilities.tools is not None
        assert client.protocol_version == expected_protocol, client.protocol_version

    async def list_tools() -> None:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == TOOLS, [t.name for t in listed]
        for t in listed:
            assert t.input_schema.get("type") == "object", t.name
            assert t.output_schema and t.output_schema.get("type") == "object", t.name
            assert t.description, t.name
        query = next(t for t in listed if t.name == "query_memory")
        assert {"product", "test", "step_text"} <= set(query.input_schema["required"])

    async def trust_before() -> None:
        got = structured(await client.call_tool("get_observation", {"id": REVIEWS}))
        assert got["trust"] == 0.5, got
        assert (got["tier"], got["scope"], got["place"]) == ("products", PRODUCT, "memory"), got
        assert got["evidence"]["runs"] == 0, got

    async def query() -> None:
        args = {"product": PRODUCT, "test": TEST_ID, "step_text": STEP, "run_id": run_id, "step_index": 1}
        out = structured(await client.call_tool("query_memory", args))
        ids = [o["id"] for o in out["observations"]]
        assert REVIEWS in ids, ids
        block = out["formatted"]
        assert block.startswith("<memory-context>") and block.rstrip().endswith("</memory-context>"), block
        assert "Product reviews widget is flaky" in block, block
        assert out["recorded"] is True and out["run_id"] == run_id and out["step_index"] == 1, out

    async def record_run() -> None:
        run = {
            "run_id": run_id,
            "product": PRODUCT,
            "test": {"id": TEST_ID, "name": "product reviews"},
            "status": "passed",
            "steps": [
                {"name": "Open the product page", "status": "passed"},
                {"name": STEP, "status": "passed"},
            ],
        }
        log = structured(await client.call_tool("record_run", {"run_record": run}))
        assert log["run_id"] == run_id and log["case"] == "passed", log
        assert log["confirmed"] >= 1 and log["errors"] == [], log
        confirmed = [d["observationId"] for d in log["deltas"] if d["action"] == "confirm"]
        assert REVIEWS in confirmed, log["deltas"]
        assert log["already_applied"] is False and log["generation"] == 1, log
        # An agent that retries the call (its answer lost) changes nothing twice (issue 13).
        # `run` is the deprecated spelling of `run_record`, still accepted for one release.
        again = structured(await client.call_tool("record_run", {"run": run}))
        assert again["already_applied"] is True and again["generation"] == 1, again
        assert again["confirmed"] == 0 and again["deltas"] == [], again

    async def trust_after() -> None:
        got = structured(await client.call_tool("get_observation", {"id": REVIEWS}))
        assert abs(got["trust"] - 0.55) < 1e-9, got
        assert got["confirmed_count"] == 3, got
        assert got["evidence"]["runs"] == 1 and got["evidence"]["passed"] == 1, got

    async def bad_input() -> None:
        result = await client.call_tool("query_memory", {"test": TEST_ID, "step_text": STEP})
        error = error_of(result)
        assert error["code"] == "invalid_arguments" and "product" in error["message"], error
        # A name that cannot be a folder is skipped with a warning and the rest served, as
        # agent-qa skips the folder (issue 13 item 5).
        result = await client.call_tool("query_memory", {"product": "../etc", "test": TEST_ID, "step_text": STEP})
        skipped = structured(result)
        assert any("invalid product name skipped" in w for w in skipped["warnings"]), skipped

    async def history_and_undo() -> None:
        entries = structured(await client.call_tool("observation_history", {"id": REVIEWS}))["entries"]
        mine = [e for e in entries if e["run_id"] == run_id]
        assert [e["action"] for e in mine] == ["confirm"], entries
        assert mine[0]["reasoning"].startswith("Injected into step 1 "), mine
        if not label.endswith("auto"):
            # An agent's own server may not undo: an undo reverts a person's decisions too.
            refused = error_of(await client.call_tool("undo_run", {"run_id": run_id}))
            assert refused["code"] == "review_not_allowed", refused
            return
        undone = structured(await client.call_tool("undo_run", {"run_id": run_id}))
        assert undone["generation"] == 1 and undone["reverted"], undone
        got = structured(await client.call_tool("get_observation", {"id": REVIEWS}))
        assert got["trust"] == 0.5, got
        assert undone["already_applied"] is False, undone
        again = structured(await client.call_tool("undo_run", {"run_id": run_id}))
        assert again["already_applied"] is True and again["reverted"] == [], again
        assert error_of(await client.call_tool("undo_run", {"run_id": "../../x"}))["code"] == "invalid_run_id"
        # Put the run back (recorded again after the undo: generation 2), as later checks expect.
        log = structured(await client.call_tool("record_run", {"run_record": {
            "run_id": run_id, "product": PRODUCT, "test": {"id": TEST_ID, "name": "product reviews"},
            "status": "passed", "steps": [{"name": "Open the product page", "status": "passed"},
                                          {"name": STEP, "status": "passed"}]}}))
        assert log["generation"] == 2, log

    async def unknown_id() -> None:
        missing = "obs_lake-lake-lake-lake-lake-lake-lake-lake-lake-lake"
        assert error_of(await client.call_tool("get_observation", {"id": missing}))["code"] == "not_found"

    async def propose_and_list() -> None:
        decisions = [
            {
                "action": "add",
                "title": "Wishlist heart fills after a click",
                "content": "The heart icon on a product card turns solid red within 300 ms.",
                "scope": "product",
                "reasoning": f"learned over MCP ({label})",
            }
        ]
        log = structured(
            await client.call_tool(
                "propose_decisions", {"product": PRODUCT, "test": TEST_ID, "decisions": decisions}
            )
        )
        assert log.get("proposed") == 1 and log["added"] == 0 and log["errors"] == [], log
        proposal = next(d["observationId"] for d in log["deltas"] if d["action"] == "propose")
        listing = {"tier": "products", "scope": PRODUCT, "text": "wishlist"}
        page = structured(await client.call_tool("list_observations", listing))
        assert page["total"] == 0, f"a proposal is not served before review: {page}"
        queue = structured(await client.call_tool("list_pending", {}))
        assert [p["id"] for p in queue["pending"]] == [proposal], queue
        assert queue["pending"][0]["place"] == "pending", queue
        decision = {"id": proposal, "decision": "approve", "reasoning": f"checked ({label})"}
        result = await client.call_tool("review_pending", decision)
        if not label.endswith("auto"):
            # The agent's own server may not approve what the agent proposed.
            assert error_of(result)["code"] == "review_not_allowed"
            return
        outcome = structured(result)
        assert outcome["action"] == "approve" and outcome["place"] == "memory", outcome
        page = structured(await client.call_tool("list_observations", listing))
        assert page["total"] == 1 and page["observations"][0]["trust"] == 0.5, page
        assert structured(await client.call_tool("list_pending", {}))["pending"] == []

    async def harness() -> None:
        args = {"state_dir": str(state_dir), "role": "worker", "feature": "F-001", "text": "seed the db first"}
        result = await client.call_tool("harness_append", args)
        if label.startswith("http"):
            # Over HTTP a client may not choose where the server writes.
            assert error_of(result)["code"] == "state_dir_not_allowed"
            assert not state_dir.exists()
            return
        line = structured(result)["line"]
        assert line.endswith("worker F-001 -: seed the db first"), line
        assert line in (state_dir / "memory" / "raw.md").read_text()
        issue = {"state_dir": str(state_dir), "title": "Seed script is slow", "severity": "minor",
                 "found_during": "F-001"}
        filed = structured(await client.call_tool("harness_issue", issue))
        assert "Seed script is slow" in Path(filed["pending_path"]).read_text(), filed
        out = structured(await client.call_tool("harness_context", {"role": "worker", "state_dir": str(state_dir)}))
        assert out["role"] == "worker" and out["context"], out
        # A pass, then where the line went (issue 16).
        run = structured(await client.call_tool("harness_curate", {"state_dir": str(state_dir)}))
        assert run["line"].startswith("CURATED ") and run["partial"] is False, run
        trace = structured(await client.call_tool("harness_trace", {"text": "seed the db", "state_dir": str(state_dir)}))
        places = [h["place"] for h in trace["hits"]]
        assert "raw.md" in places and "MEMORY.md ## Lessons" in places, trace

    for name, body in [
        ("initialize", initialize),
        ("list tools", list_tools),
        ("trust before is 0.5", trust_before),
        ("query memory for a step", query),
        ("record a passed run", record_run),
        ("trust after is 0.55", trust_after),
        ("history of an observation, undo of a run", history_and_undo),
        ("bad input is a tool error", bad_input),
        ("unknown id is a tool error", unknown_id),
        ("propose decisions, list observations", propose_and_list),
        ("harness append, context, curate and trace", harness),
    ]:
        await results.check(f"{label}: {name}", body)


async def run_all() -> Results:
    binary = curator_bin()
    if not Path(binary).is_file():
        raise SystemExit(f"no curator binary at {binary} (build it, or set CURATOR_BIN)")
    version = curator_version(binary)
    results = Results()
    with tempfile.TemporaryDirectory(prefix="curator-mcp-") as tmp_name:
        tmp = Path(tmp_name)
        for mode in ("legacy", "auto"):
            label = f"stdio/{mode}"
            root = fresh_root(tmp, label.replace("/", "-"))
            # The identity dir (for state_dir calls) inside the temp dir, never the user's home.
            env = {"CURATOR_IDENTITY": str(root.parent / "identity")}
            extra = ["--allow-review"] if mode == "auto" else []
            params = StdioServerParameters(command=binary, args=["--root", str(root), "mcp", *extra], env=env)
            state_dir = root.parent / ".harness"
            await connect_and_run(results, label, lambda: Client(params, mode=mode), version, state_dir)
        for mode in ("legacy", "auto"):
            label = f"http/{mode}"
            root = fresh_root(tmp, label.replace("/", "-"))
            try:
                extra = ["--mcp-review"] if mode == "auto" else []
                server = HttpServer(binary, root, tmp / f"serve-{mode}.log", extra)
            except RuntimeError as e:
                results.failed += 1
                print(f"FAIL {label}: start curator serve: {e}")
                continue
            try:
                client = lambda: Client(server.url, mode=mode)  # noqa: E731
                await connect_and_run(results, label, client, version, root.parent / ".harness")
            finally:
                server.stop()
    return results


async def connect_and_run(
    results: Results, label: str, make: Callable[[], Client], version: str, state_dir: Path
) -> None:
    try:
        with anyio.fail_after(120):
            async with make() as client:
                await scenario(results, label, client, version, state_dir)
    except Exception:  # noqa: BLE001 - a transport that cannot connect is one failure
        results.failed += 1
        print(f"FAIL {label}: connect")
        traceback.print_exc(file=sys.stdout)


def main() -> int:
    results = anyio.run(run_all)
    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if results.failed == 0 and results.passed > 0 else 1


def test_all() -> None:
    """pytest entry point: every check above must pass."""
    results = anyio.run(run_all)
    assert results.failed == 0 and results.passed > 0, f"{results.failed} MCP checks failed"


if __name__ == "__main__":
    sys.exit(main())
