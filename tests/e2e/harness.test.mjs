// Browser end-to-end test of the harness page (issue 15 item 5): the raw.md tail, a curator pass
// filling the archive, the archive's dispositions paged and filtered, and the issue actions
// (acknowledge with a note, close, reopen), each done from the keyboard alone. Starts its own
// `curator serve` on a fresh harness state (CURATOR_BIN from run.sh) so it shares nothing with
// ui.test.mjs, and saves screenshots of the page to $CURATOR_SCREENSHOTS (run.sh: target/e2e-screenshots).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, appendFileSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = process.env.CURATOR_BIN;
const SHOTS =
  process.env.CURATOR_SCREENSHOTS || join(process.env.CARGO_TARGET_DIR || join(REPO, "target"), "e2e-screenshots");

let tmp;
let server;
let base;
let context;
let page;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForServer() {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/api/v1/harness`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`curator serve did not answer at ${base}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The state a harness leaves after a while: 60 raw.md entries (progress chatter, a root cause, a
// TRICK, a validator failure, a Latin-1 line), and two issues already triaged.
function writeState() {
  const state = join(tmp, "project", ".harness");
  mkdirSync(join(state, "memory"), { recursive: true });
  mkdirSync(join(tmp, "memory"), { recursive: true });
  mkdirSync(join(tmp, "identity"), { recursive: true });
  const lines = [];
  for (let i = 0; i < 50; i++) {
    const ts = new Date(Date.UTC(2026, 3, 1, 10, i)).toISOString().replace(/\.\d{3}Z$/, "Z");
    lines.push(`[${ts}] worker F-0${10 + (i % 9)} -: Implemented endpoint ${i}`);
  }
  lines.push("[2026-04-01T11:00:00Z] debugger F-031 -: Root cause of the flaky checkout test: the Stripe webhook handler reads STRIPE_SECRET at import time");
  lines.push("[2026-04-01T11:01:00Z] worker F-032 TRICK: pnpm needs the lockfile refreshed after the schema changes");
  lines.push("[2026-04-01T11:02:00Z] validator F-033 -: CI needs the pgcrypto extension before the migration runs");
  for (let i = 0; i < 7; i++) lines.push(`[2026-04-01T11:1${i}:00Z] worker F-034 -: started F-034 cart step ${i}`);
  writeFileSync(join(state, "memory", "raw.md"), lines.join("\n") + "\n");
  appendFileSync(join(state, "memory", "raw.md"), Buffer.from("[2026-04-01T11:30:00Z] ui-qa F-035 -: caf\xe9 banner overlaps the menu\n", "latin1"));
  const issue = (id, title, status) => ({
    id, title, severity: "major", source: "validator", foundAt: "2026-04-01T00:00:00Z",
    foundDuring: "F-033", status, attempts: 0, notes: [],
  });
  writeFileSync(join(state, "issues.json"), JSON.stringify({
    issues: [issue("I-0002", "Coupon total ignores the discount", "open"), issue("I-0001", "Login page flickers on load", "open")],
    nextId: 3,
  }, null, 2) + "\n");
  return state;
}

before(async () => {
  assert.ok(BIN, "run through run.sh (CURATOR_BIN)");
  tmp = mkdtempSync(join(tmpdir(), "curator-e2e-harness-"));
  const state = writeState();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(BIN, ["--root", join(tmp, "memory"), "serve", "--listen", `127.0.0.1:${port}`,
    "--state-dir", state, "--identity", join(tmp, "identity")], { cwd: tmp, stdio: ["ignore", "ignore", "pipe"] });
  server.stderr.on("data", (d) => process.stderr.write(d));
  await waitForServer();
  context = await chromium.launchPersistentContext(join(tmp, "profile"), {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
});

after(async () => {
  await context?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// Moves the keyboard focus to `selector` by pressing Tab, as a person would (at most 200 stops).
async function tabTo(selector) {
  const target = page.locator(selector);
  for (let i = 0; i < 200; i++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

async function issueRow(id) {
  return page.locator(`#issues tr[data-issue="${id}"]`);
}

test("the raw.md tail shows what is not curated yet, bytes kept", async () => {
  await page.goto(`${base}/harness`);
  const tail = await page.textContent("#raw-tail");
  assert.match(tail, /STRIPE_SECRET at import time/);
  assert.match(tail, /caf\uFFFD banner overlaps the menu/, "non-UTF-8 shown as U+FFFD");
  assert.match(await page.textContent("#archive-range"), /No records yet/);
  // The file itself still holds the original byte.
  const raw = readFileSync(join(tmp, "project", ".harness", "memory", "raw.md"));
  assert.ok(raw.includes(Buffer.from("caf\xe9 ", "latin1")));
});

test("a curator pass from the keyboard fills the archive; dispositions paged and filtered", async () => {
  await page.goto(`${base}/harness`);
  await tabTo("#curate");
  await Promise.all([page.waitForURL(/done=curated/), page.keyboard.press("Enter")]);
  assert.match(await page.textContent("#flash"), /Curator pass finished/);

  const counts = await page.textContent("#dispositions");
  assert.match(counts, /absorbed\s*\d+/);
  const api = await (await fetch(`${base}/api/v1/harness/archive?limit=500`)).json();
  assert.ok(api.total > 25, `more than a page archived: ${api.total}`);
  assert.equal(await page.textContent("#archive-range"), `Records 1–25 of ${api.total}, newest first.`);
  assert.equal(await page.locator("#archive-records tbody tr").count(), 25);

  // Older page by keyboard, and back.
  await tabTo("#archive-older");
  await Promise.all([page.waitForURL(/offset=25/), page.keyboard.press("Enter")]);
  assert.match(await page.textContent("#archive-range"), new RegExp(`Records 26–${Math.min(50, api.total)} of ${api.total}`));
  const first = await page.locator("#archive-records tbody tr").first().textContent();
  assert.ok(first.includes(api.records[25].text.slice(0, 30)), "page 2 starts at the 26th newest record");
  await tabTo("#archive-newer");
  await Promise.all([page.waitForURL(/offset=0/), page.keyboard.press("Enter")]);

  // Where the root cause went: promoted to MEMORY.md, said in the table.
  const stripe = page.locator("#archive-records tbody tr", { hasText: "STRIPE_SECRET" });
  assert.equal(await stripe.count(), 1);
  assert.match(await stripe.locator(".disposition").textContent(), /promoted|merged/);
  assert.match(await stripe.textContent(), /MEMORY\.md ## /);

  // Filter to absorbed with the select, from the keyboard.
  await tabTo("#disposition");
  await page.keyboard.type("absorbed"); // a focused select picks the option typed
  assert.equal(await page.inputValue("#disposition"), "absorbed");
  await tabTo("#archive-show");
  await Promise.all([page.waitForURL(/disposition=absorbed/), page.keyboard.press("Enter")]);
  const kinds = await page.locator("#archive-records td.disposition").allTextContents();
  assert.ok(kinds.length > 0);
  assert.deepEqual([...new Set(kinds)], ["absorbed"]);
  assert.match(await page.textContent("#archive-records"), /Implemented endpoint/);
  assert.match(await page.textContent("#archive-range"), /absorbed, newest first/);
});

test("acknowledge an issue with a note, from the keyboard", async () => {
  await page.goto(`${base}/harness`);
  const row = await issueRow("I-0001");
  await tabTo(`#issues tr[data-issue="I-0001"] input[name="note"]`);
  await page.keyboard.type("seen; repro on Firefox only");
  await page.keyboard.press("Tab"); // to Acknowledge
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Acknowledge");
  await Promise.all([page.waitForURL(/done=issue-acknowledged/), page.keyboard.press("Enter")]);
  assert.match(await page.textContent("#flash"), /Issue acknowledged/);
  assert.equal(await row.locator(".issue-status").textContent(), "acknowledged");
  assert.match(await row.textContent(), /Status open → acknowledged by human: seen; repro on Firefox only/);
  assert.equal(await row.getByRole("button", { name: "Acknowledge" }).count(), 0, "done once");
  const issues = await (await fetch(`${base}/api/v1/harness/issues`)).json();
  const saved = issues.issues.find((i) => i.id === "I-0001");
  assert.equal(saved.status, "acknowledged");
  assert.equal(saved.notes.at(-1).text, "Status open → acknowledged by human: seen; repro on Firefox only");
});

test("close an issue, then reopen it", async () => {
  await page.goto(`${base}/harness`);
  const row = await issueRow("I-0002");
  await tabTo(`#issues tr[data-issue="I-0002"] button[value="closed"]`);
  await Promise.all([page.waitForURL(/done=issue-closed/), page.keyboard.press("Enter")]);
  assert.match(await page.textContent("#flash"), /Issue closed/);
  assert.equal(await row.locator(".issue-status").textContent(), "closed");
  const issues = await (await fetch(`${base}/api/v1/harness/issues`)).json();
  assert.equal(issues.issues.find((i) => i.id === "I-0002").status, "closed");

  await tabTo(`#issues tr[data-issue="I-0002"] button[value="open"]`);
  await Promise.all([page.waitForURL(/done=issue-reopened/), page.keyboard.press("Enter")]);
  assert.equal(await row.locator(".issue-status").textContent(), "open");
});

test("an action the spec does not give a person is refused with the reason", async () => {
  // A stale form: acknowledging an issue that was closed meanwhile.
  await fetch(`${base}/api/v1/harness/issues/I-0002/status`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ status: "closed" }),
  });
  const reply = await page.request.post(`${base}/harness/issues/I-0002/status`, { form: { status: "acknowledged" } });
  assert.equal(reply.status(), 400);
  assert.match(await reply.text(), /I-0002 is closed/);
  const missing = await page.request.post(`${base}/harness/issues/I-0404/status`, { form: { status: "closed" } });
  assert.equal(missing.status(), 404);
});

test("screenshot of the harness page for review", async () => {
  await page.goto(`${base}/harness`);
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, "harness.png"), fullPage: true });
  await page.goto(`${base}/harness?disposition=promoted#archive`);
  await page.screenshot({ path: join(SHOTS, "harness-archive-promoted.png"), fullPage: false });
});
