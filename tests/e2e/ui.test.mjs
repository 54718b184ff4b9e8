// Browser end-to-end test of curator's web UI: browse, open an observation, deprecate it, see
// the journal entry, run the query playground, watch live refresh pick up a change on disk,
// triage harness issues, and approve and reject an agent's proposals in the review queue.
// Started by run.sh, which provides CURATOR_URL and CURATOR_MEMORY.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const BASE = process.env.CURATOR_URL;
const MEMORY = process.env.CURATOR_MEMORY;
const CART_BADGE = "obs_noble-poppy-winter-dingo-hazel-storm-bloom-orbit-coral-sage";
const PRODUCT = "acme-shop";
const TEST_ID = "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel";

let context;
let page;
let profile;

async function waitForServer() {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(`${BASE}/api/v1/changes`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`curator serve did not answer at ${BASE}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

before(async () => {
  assert.ok(BASE && MEMORY, "run through run.sh (CURATOR_URL, CURATOR_MEMORY)");
  await waitForServer();
  profile = mkdtempSync(join(tmpdir(), "curator-e2e-profile-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test("browse the overview and open an observation", async () => {
  await page.goto(`${BASE}/`);
  assert.equal(await page.textContent("#count-total"), "19");
  for (const heading of ["Products", "Suites", "Tests"]) {
    assert.equal(await page.locator("h2", { hasText: heading }).count(), 1, heading);
  }
  const shop = page.locator(`.scope[data-scope="${PRODUCT}"]`);
  assert.equal(await shop.locator("tbody tr").count(), 7);
  await shop.getByRole("link", { name: "Cart badge updates about one second after Add to cart" }).click();
  await page.waitForURL(`**/observations/${CART_BADGE}`);
  assert.equal(await page.textContent("#obs-title"), "Cart badge updates about one second after Add to cart");
  assert.equal(await page.textContent("#obs-trust"), "0.8");
  assert.match(await page.textContent("#obs-content"), /keeps the old number/);
  assert.match(await page.textContent("body"), /confirmed_count\s*6/);
});

test("deprecate it and see the journal entry", async () => {
  await page.goto(`${BASE}/observations/${CART_BADGE}`);
  const form = page.locator(`form[action="/observations/${CART_BADGE}/deprecate"]`);
  await form.locator('input[name="reasoning"]').fill("badge updates instantly since the redesign");
  await Promise.all([page.waitForURL(/done=deprecated/), page.click("#deprecate")]);
  assert.equal(await page.textContent("#obs-trust"), "0.7");
  assert.match(await page.textContent("#flash"), /Deprecated\. Journaled as run req-r_[a-z0-9-]+-deprecate/);
  const entry = page.locator("#timeline li.entry").first();
  assert.match(await entry.textContent(), /deprecate/);
  assert.match(await entry.textContent(), /trust 0\.8 → 0\.7/);
  assert.match(await entry.textContent(), /badge updates instantly since the redesign/);

  // The change is in the file and the journal, as the API reads them.
  const api = await (await fetch(`${BASE}/api/v1/observations/${CART_BADGE}`)).json();
  assert.equal(api.trust, 0.7);
  assert.equal(api.contradicted_count, 1);
  const history = await (await fetch(`${BASE}/api/v1/observations/${CART_BADGE}/history`)).json();
  assert.equal(history.entries.at(-1).action, "deprecate");

  // The run that made it is listed with its MemoryLog.
  const run = await entry.locator("a").first().textContent();
  await page.goto(`${BASE}/runs`);
  await page.getByRole("link", { name: run }).click();
  assert.match(await page.textContent("#memory-log"), /deprecate[\s\S]*0\.8 → 0\.7/);
});

test("the query playground shows the exact memory-context block", async () => {
  await page.goto(`${BASE}/query`);
  await page.fill('input[name="product"]', PRODUCT);
  await page.fill('input[name="test"]', TEST_ID);
  await page.fill('textarea[name="text"]', "click Add to cart and check the cart badge");
  await Promise.all([page.waitForURL(/text=/), page.click("#run-query")]);
  const block = await page.textContent("#memory-context");
  const expected = await (
    await fetch(`${BASE}/api/v1/query`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ product: PRODUCT, test: TEST_ID, text: "click Add to cart and check the cart badge" }),
    })
  ).json();
  assert.equal(block, expected.formatted, "the page shows exactly what the API (and a step) gets");
  assert.match(block, /^<memory-context>/);
  assert.match(block, /Cart badge updates about one second after Add to cart/);
  assert.match(block, /\(trust: 0\.70\)/, "the deprecation is visible in what the step would get");
});

test("live refresh picks up a change made on disk by another process", async () => {
  await page.goto(`${BASE}/`);
  assert.equal(await page.textContent("#count-total"), "19");
  await page.waitForTimeout(500); // let the script take its first fingerprint
  // A person (or agent-qa) writes a new observation file straight into the root.
  const id = "obs_amber-amber-amber-amber-amber-amber-amber-amber-amber-amber";
  const text = readFileSync(join(MEMORY, "products", PRODUCT, `${CART_BADGE}.md`), "utf8")
    .replace(`id: ${CART_BADGE}`, `id: ${id}`)
    .replace(/^title: .*$/m, "title: Written on disk while the page was open");
  writeFileSync(join(MEMORY, "tests", TEST_ID, `${id}.md`), text);
  await page.waitForFunction(() => document.querySelector("#count-total")?.textContent === "20", null, {
    timeout: 15_000,
  });
  assert.match(await page.textContent("body"), /Written on disk while the page was open/);
});

test("harness panels: triage pending issues from the UI", async () => {
  await page.goto(`${BASE}/harness`);
  assert.match(await page.textContent("body"), /Run the unit tests before reporting DONE/);
  assert.equal(await page.locator("#issues").count(), 0, "nothing triaged yet");
  await Promise.all([page.waitForURL(/done=triaged/), page.click("#triage")]);
  assert.match(await page.textContent("#issues"), /Checkout total ignores the coupon/);
});

test("every page runs under its Content-Security-Policy without a violation", async () => {
  const violations = [];
  const watch = (message) => {
    if (/Content Security Policy|Refused to (execute|apply|load|connect)/i.test(message.text())) {
      violations.push(message.text());
    }
  };
  page.on("console", watch);
  for (const path of ["/", `/observations/${CART_BADGE}`, "/query", "/runs", "/lint", "/harness", "/review"]) {
    const response = await page.goto(`${BASE}${path}`);
    const headers = response.headers();
    assert.match(headers["content-security-policy"], /frame-ancestors 'none'/, path);
    assert.doesNotMatch(headers["content-security-policy"], /unsafe-inline/, path);
    assert.equal(headers["x-content-type-options"], "nosniff", path);
    assert.equal(headers["referrer-policy"], "no-referrer", path);
  }
  // The script itself ran: live refresh reported in.
  await page.goto(`${BASE}/`);
  await page.waitForFunction(() => document.querySelector("#live")?.textContent === "live");
  page.off("console", watch);
  assert.deepEqual(violations, []);
});

test("deleting asks first, through the page's own script", async () => {
  const victim = "obs_spruce-apple-hover-lynx-crisp-moss-amber-wave-bloom-willow";
  await page.goto(`${BASE}/observations/${victim}`);
  page.once("dialog", (dialog) => dialog.dismiss());
  await page.click("#delete");
  await page.waitForTimeout(300);
  assert.ok(page.url().endsWith(`/observations/${victim}`), "dismissed: nothing was posted");
  assert.equal((await fetch(`${BASE}/api/v1/observations/${victim}`)).status, 200);
  page.once("dialog", (dialog) => dialog.accept());
  await Promise.all([page.waitForURL(/done=deleted/), page.click("#delete")]);
  assert.equal((await fetch(`${BASE}/api/v1/observations/${victim}`)).status, 404);
});

async function propose(title) {
  const r = await fetch(`${BASE}/api/v1/pending`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      tier: "product", scope: PRODUCT, title, content: "Proposed by an agent.", source_test: TEST_ID,
    }),
  });
  const body = await r.text();
  assert.equal(r.status, 201, body);
  return JSON.parse(body).id;
}

test("review queue: an agent's proposals are approved and rejected from the browser", async () => {
  const keep = await propose("Wishlist heart fills red after a click");
  const drop = await propose("Checkout always needs two clicks");
  await page.goto(`${BASE}/`);
  assert.doesNotMatch(await page.textContent("body"), /Wishlist heart fills red/, "not served yet");
  await page.getByRole("link", { name: "Review queue" }).click();
  await page.waitForURL(`**/review`);
  const card = page.locator(`#pending-${keep}`);
  assert.match(await card.textContent(), /Wishlist heart fills red after a click/);
  assert.match(await card.textContent(), /probation passed \/ failed\s*0 \/ 0/);
  await card.locator('input[name="reasoning"]').first().fill("checked on staging");
  await Promise.all([page.waitForURL(/done=approved/), card.locator("button.approve").click()]);
  assert.match(await page.textContent("#flash"), /Approved into memory\. Journaled as run r_/);
  assert.equal(await page.locator(`#pending-${keep}`).count(), 0);
  const rejecting = page.locator(`#pending-${drop}`);
  await Promise.all([page.waitForURL(/done=rejected/), rejecting.locator("button.reject").click()]);
  assert.match(await page.textContent("#flash"), /Rejected from the review queue/);
  assert.equal(await page.locator("#queue-empty").count(), 1);
  // The approved observation is served now, with its (empty) outcome record.
  await page.goto(`${BASE}/observations/${keep}`);
  assert.equal(await page.textContent("#obs-title"), "Wishlist heart fills red after a click");
  assert.match(await page.textContent("body"), /Outcome evidence[\s\S]*runs injected\s*0/);
  const history = await (await fetch(`${BASE}/api/v1/journal?id=${drop}`)).json();
  assert.deepEqual(history.entries.map((e) => e.action), ["reject", "propose"]);
});
