#!/usr/bin/env bash
# curator's MCP server against the official Python MCP SDK (issue 6 item 3): builds the binary,
# makes sure the SDK is importable, and runs tests/mcp/test_mcp.py over stdio and HTTP, then
# tests/mcp/test_naming.py (one vocabulary: the CLI, HTTP and MCP agree).
#
# Python: $PYTHON when set; else python3 if it can already `import mcp`; else a venv under
# $CARGO_TARGET_DIR (default target/)/mcp-venv with the pinned SDK installed from PyPI.
# Exit status is the test's: 0 only when every check passed.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
# The SDK version the tests were written against (needs Python >= 3.10).
mcp_requirement="mcp==2.3.0"

cargo build --quiet --bin curator
export CURATOR_BIN="$target/debug/curator"

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if python3 -c 'import mcp' >/dev/null 2>&1; then
    python=python3
  else
    venv="$target/mcp-venv"
    if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
      echo "tests/mcp: installing $mcp_requirement into $venv" >&2
      python3 -m venv "$venv"
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$mcp_requirement"
    fi
    python="$venv/bin/python"
  fi
fi

"$python" -c 'import importlib.metadata as m; print("tests/mcp: mcp", m.version("mcp"), "on", __import__("sys").version.split()[0])' >&2
"$python" "$repo/tests/mcp/test_mcp.py"
# The same request through the CLI, HTTP and MCP gives the same result (issue 15).
exec "$python" "$repo/tests/mcp/test_naming.py"
