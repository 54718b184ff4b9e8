#!/usr/bin/env bash
# Browser end-to-end test of `curator serve`'s web UI (issue 6 "Must show").
#
# Builds the binary, serves a temp copy of examples/agent-qa-memory (plus a small harness state
# directory) on a free loopback port, runs ui.test.mjs with node's test runner in Debian's
# chromium (/usr/bin/chromium, driven by playwright-core: nothing is downloaded), then
# review.test.mjs (issue 15: run pages, journal diffs, the review list, the create form,
# keyboard use; screenshots in target/e2e-screenshots/), then stops the server with SIGTERM and
# checks that it exited cleanly.
#
# Needs: cargo, node >= 18, npm, and `apt-get install -y chromium`. Installs playwright-core
# from package-lock.json with `npm ci` when node_modules is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
chromium="${CHROMIUM:-/usr/bin/chromium}"

if [[ ! -x "$chromium" ]]; then
  echo "e2e: $chromium not found: apt-get install -y chromium" >&2
  exit 1
fi
if [[ ! -d "$here/node_modules/playwright-core" ]]; then
  (cd "$here" && npm ci --no-audit --no-fund)
fi

(cd "$repo" && cargo build --quiet --bin curator)
bin="${CARGO_TARGET_DIR:-$repo/target}/debug/curator"

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

cp -R "$repo/examples/agent-qa-memory" "$tmp/memory"
mkdir -p "$tmp/project/.harness/memory" "$tmp/identity"
printf '# worker\n- Run the unit tests before reporting DONE.\n' > "$tmp/identity/worker.md"
printf '%s\n' '{"title":"Checkout total ignores the coupon","severity":"major","source":"validator"}' \
  > "$tmp/project/.harness/pending-issues.jsonl"

port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"

# Run from the temp dir so no ./agent-qa.config.yaml of the caller is picked up.
(cd "$tmp" && exec "$bin" --root "$tmp/memory" serve --listen "127.0.0.1:$port" \
   --state-dir "$tmp/project/.harness" --identity "$tmp/identity") > "$tmp/server.log" 2>&1 &
server_pid=$!

status=0
# The files share one server and memory root, so they run one after the other, in this order;
# harness.test.mjs starts its own server from CURATOR_BIN on its own harness state. Screenshots of
# the review and harness pages (issue 15) are left in target/e2e-screenshots/ to be looked at.
shots="${CARGO_TARGET_DIR:-$repo/target}/e2e-screenshots"
for file in ui.test.mjs review.test.mjs harness.test.mjs; do
  CURATOR_URL="http://127.0.0.1:$port" CURATOR_MEMORY="$tmp/memory" CHROMIUM="$chromium" \
    CURATOR_BIN="$bin" CURATOR_SCREENSHOTS="$shots" node --test --test-reporter=spec "$here/$file" || status=$?
done

kill -TERM "$server_pid"
server_status=0
wait "$server_pid" || server_status=$?
server_pid=""
if [[ $server_status -ne 0 ]]; then
  echo "e2e: curator serve exited with $server_status after SIGTERM" >&2
  status=1
fi
if [[ $status -ne 0 ]]; then
  echo "--- curator serve log ---" >&2
  cat "$tmp/server.log" >&2
fi
exit "$status"
