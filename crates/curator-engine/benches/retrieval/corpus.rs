//! The benchmark corpus: a deterministic, realistic agent-qa memory root (agent-qa-memory §1.1,
//! §1.6) and the step queries a test agent would send against it (§3.6).
//!
//! Invariant: the same `(size, seed)` always gives byte-identical files and the same queries, so
//! runs on different machines measure the same work. Files are written with the real codec
//! (`write_observation`), so both engines read exactly what agent-qa would have written.
//!
//! Shape (per `size` observations): 20 products; about `size / 25` tests and `size / 250` suites
//! of 3–6 child tests each, every test and suite belonging to one product. Observations go 35 %
//! to product folders, 10 % to suite folders (60 % of those positioned, some with a stale
//! snapshot that must not be injected) and 55 % to test folders, so a step reads one product
//! folder (≈ 1.75 % of the root) plus a small test folder, as in a real memory root. Texts are
//! QA facts built from a shared UI vocabulary plus product-specific features; steps are phrased
//! the way test agents phrase them, so terms mode has matches to rank and phrase mode mostly
//! finds nothing, as it does in practice.

use std::path::{Path, PathBuf};

use curator_core::codec::{ExtraKeys, write_observation};
use curator_core::{Observation, ObservationId, ScopeName, SnapshotEntry, SuitePlacement, Tier};
use curator_engine::SuiteContext;

/// splitmix64: tiny, seedable and stable across platforms and crate versions.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`); the modulo bias is irrelevant at these sizes.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True with probability `pct` percent.
    fn chance(&mut self, pct: u64) -> bool {
        self.next_u64() % 100 < pct
    }
}

const ID_WORDS: &[&str] = &[
    "amber", "anchor", "apple", "aspen", "basil", "beacon", "birch", "bison", "blaze", "bloom",
    "brave", "breeze", "brick", "brook", "cabin", "cactus", "camel", "canoe", "cedar", "cider",
    "cinder", "clay", "cobalt", "comet", "coral", "crane", "crisp", "daisy", "delta", "denim",
    "desert", "dingo", "dove", "dune", "eagle", "ember", "falcon", "fern", "flame", "flint",
    "forest", "fox", "frost", "garnet", "gecko", "ginger", "glade", "glow", "grape", "gravel",
    "grove", "gull", "heron", "honey", "husky", "iris", "ivory", "jasper", "kettle", "kite",
    "koala", "lake", "lemon", "lime",
];

const DOMAINS: &[&str] = &[
    "store",
    "bank",
    "crm",
    "helpdesk",
    "travel",
    "payroll",
    "analytics",
    "cms",
    "school",
    "booking",
    "invoices",
    "inventory",
    "chat",
    "mail",
    "calendar",
    "maps",
    "music",
    "video",
    "forum",
    "wiki",
];

const FEATURES: &[&str] = &[
    "Sign in",
    "Sign up",
    "Checkout",
    "Add to cart",
    "Export CSV",
    "Import contacts",
    "Dashboard",
    "Settings",
    "Profile",
    "Billing",
    "Invoices",
    "Reports",
    "Search",
    "Filters",
    "Notifications",
    "Team members",
    "Permissions",
    "API keys",
    "Audit log",
    "Calendar",
    "Upload",
    "Download",
    "Share",
    "Comments",
    "Attachments",
    "Wishlist",
    "Coupon",
    "Shipping address",
    "Payment method",
    "Order history",
    "Refunds",
    "Tickets",
    "Knowledge base",
    "Live chat",
    "Newsletter",
    "Cookie consent",
    "Password reset",
    "Two factor",
    "Language",
    "Dark mode",
    "Saved views",
    "Bulk edit",
    "Archive",
    "Trash",
    "Favourites",
    "Recent activity",
    "Onboarding tour",
    "Pricing",
    "Plans",
    "Support",
    "Café menu",
    "Résumé upload",
    "Delivery slots",
    "Gift cards",
];

const ELEMENTS: &[&str] = &[
    "button", "link", "modal", "dialog", "dropdown", "toast", "banner", "tab", "checkbox", "field",
    "table", "spinner", "tooltip", "menu", "drawer", "card", "badge", "toggle", "page", "form",
];

const FACTS: &[&str] = &[
    "is disabled until the form is valid",
    "appears only after a spinner of about {n} seconds",
    "opens in a new browser tab",
    "is hidden behind the {other} menu on narrow screens",
    "needs scrolling to the bottom of the page before it is clickable",
    "shows a confirmation toast that disappears after {n} s",
    "is only visible to admin users",
    "ignores the first click while the page is still hydrating",
    "keeps the previous value after a reload",
    "resets when the {other} filter changes",
    "is labelled differently in the German locale",
    "loads lazily, so wait for the network to go idle",
    "moves below the fold when the cookie banner is open",
    "requires confirming a second dialog",
    "is rendered inside an iframe",
    "closes by itself after {n} seconds",
    "is duplicated in the footer; use the one in the header",
    "only accepts dates in the format DD/MM/YYYY",
    "shows stale data until the {other} tab is opened once",
    "fails silently when the session expired; sign in again",
];

const ADVICE: &[&str] = &[
    "Wait for the spinner to disappear before clicking.",
    "Scroll the element into view first.",
    "Use the search field to find it faster.",
    "Retry once if the first click does nothing.",
    "Dismiss the cookie banner before interacting.",
    "The seeded test account already has {n} items here.",
    "Clicking twice creates a duplicate entry.",
    "The element's text is \"{feature}\" (with a capital letter).",
    "On staging this takes up to {n} s longer.",
    "This was confirmed across several runs.",
];

const STEPS: &[&str] = &[
    "Click the {feature} {element}",
    "Open the {feature} page and wait for the {element}",
    "Verify that the {feature} {element} is visible",
    "Type \"{value}\" into the {feature} field and press Enter",
    "Click the {feature} button and wait for the modal",
    "Dismiss the {feature} {element}",
    "Navigate to {feature} and check the {element} shows the latest data",
    "Select the first option in the {feature} dropdown",
    "{feature} {element}",
    "Go to the {other} page, then open {feature}",
    "Scroll down and click {feature}",
    "Log out and log back in as the admin user",
];

/// One test of the corpus.
#[derive(Debug, Clone)]
pub(crate) struct TestInfo {
    pub(crate) id: String,
    pub(crate) product: usize,
}

/// One suite: its product, its children (test indices) and the snapshot they form now.
#[derive(Debug, Clone)]
pub(crate) struct SuiteInfo {
    pub(crate) id: String,
    pub(crate) children: Vec<usize>,
    pub(crate) snapshot: Vec<SnapshotEntry>,
}

/// A test run: one scope set (product, maybe suite, test) and the steps sent for it.
#[derive(Debug, Clone)]
pub(crate) struct TestRun {
    pub(crate) product: ScopeName,
    pub(crate) test: ScopeName,
    pub(crate) suite: Option<SuiteContext>,
    pub(crate) steps: Vec<String>,
}

/// A generated memory root.
#[derive(Debug)]
pub(crate) struct Corpus {
    pub(crate) root: PathBuf,
    pub(crate) products: Vec<String>,
    pub(crate) tests: Vec<TestInfo>,
    pub(crate) suites: Vec<SuiteInfo>,
    /// Features each product's texts draw from (indices into `FEATURES`).
    features: Vec<Vec<usize>>,
    /// Every observation file written, relative to the root.
    pub(crate) files: Vec<PathBuf>,
}

fn word_id(rng: &mut Rng, prefix: &str) -> String {
    let words: Vec<&str> = (0..10).map(|_| *rng.pick(ID_WORDS)).collect();
    format!("{prefix}_{}", words.join("-"))
}

fn fill(template: &str, rng: &mut Rng, feature: &str, other: &str) -> String {
    let element = *rng.pick(ELEMENTS);
    let n = 1 + rng.below(9);
    let value = format!("qa-user-{}@example.com", rng.below(1000));
    template
        .replace("{feature}", feature)
        .replace("{other}", other)
        .replace("{element}", element)
        .replace("{n}", &n.to_string())
        .replace("{value}", &value)
}

fn iso(rng: &mut Rng) -> String {
    format!(
        "2026-0{}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        1 + rng.below(3),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
        rng.below(60),
        rng.below(1000)
    )
}

impl Corpus {
    /// Writes `size` observations under `root` (which must be empty).
    pub(crate) fn generate(root: &Path, size: usize, seed: u64) -> std::io::Result<Corpus> {
        let mut rng = Rng::new(seed);
        let products: Vec<String> =
            DOMAINS.iter().map(|d| format!("{}-{d}", rng.pick(ID_WORDS))).collect();
        let features =
            products.iter().map(|_| (0..25).map(|_| rng.below(FEATURES.len())).collect()).collect();
        let tests: Vec<TestInfo> = (0..(size / 25).max(8))
            .map(|_| TestInfo { id: word_id(&mut rng, "t"), product: rng.below(products.len()) })
            .collect();
        let mut suites = Vec::new();
        for _ in 0..(size / 250).max(2) {
            let product = rng.below(products.len());
            let mine: Vec<usize> =
                (0..tests.len()).filter(|&t| tests[t].product == product).collect();
            if mine.len() < 3 {
                continue;
            }
            let want = 3 + rng.below(4).min(mine.len() - 3);
            let mut children = Vec::new();
            while children.len() < want {
                let t = *rng.pick(&mine);
                if !children.contains(&t) {
                    children.push(t);
                }
            }
            let snapshot = children
                .iter()
                .enumerate()
                .map(|(i, &t)| SnapshotEntry {
                    test: format!("tests/{}/{i:02}.yaml", products[product]),
                    id: tests[t].id.clone(),
                })
                .collect();
            suites.push(SuiteInfo { id: word_id(&mut rng, "s"), children, snapshot });
        }
        let mut corpus =
            Corpus { root: root.to_owned(), products, tests, suites, features, files: Vec::new() };
        for _ in 0..size {
            corpus.write_one(&mut rng)?;
        }
        Ok(corpus)
    }

    fn write_one(&mut self, rng: &mut Rng) -> std::io::Result<()> {
        let roll = rng.below(100);
        let (tier, scope, product, suite) = if roll < 35 || (roll < 45 && self.suites.is_empty()) {
            let p = rng.below(self.products.len());
            (Tier::Products, self.products[p].clone(), p, None)
        } else if roll < 45 {
            let s = rng.pick(&self.suites).clone();
            let product = self.tests[s.children[0]].product;
            let placement = rng.chance(60).then(|| {
                let mut snapshot = s.snapshot.clone();
                // A snapshot from before the suite changed: agent-qa must not inject it.
                if rng.chance(15) {
                    snapshot.pop();
                }
                SuitePlacement {
                    position: rng.below(s.children.len()) as u64,
                    suite_snapshot: snapshot,
                }
            });
            (
                Tier::Suites,
                s.id.clone(),
                product,
                placement.filter(|p| !p.suite_snapshot.is_empty()),
            )
        } else {
            let t = rng.pick(&self.tests).clone();
            (Tier::Tests, t.id.clone(), t.product, None)
        };
        let feature = FEATURES[*rng.pick(&self.features[product])];
        let other = FEATURES[*rng.pick(&self.features[product])];
        let element = *rng.pick(ELEMENTS);
        let fact = fill(rng.pick::<&str>(FACTS), rng, feature, other);
        let title = format!("{feature} {element} {fact}");
        let mut content = format!("On the {feature} page the {element} {fact}.");
        for _ in 0..1 + rng.below(3) {
            content.push(' ');
            content.push_str(&fill(rng.pick::<&str>(ADVICE), rng, feature, other));
        }
        if rng.chance(20) {
            content.push_str("\nSeen on the `");
            content.push_str(&self.products[product]);
            content.push_str("` staging host.");
        }
        let created = iso(rng);
        let obs = Observation {
            id: ObservationId::parse(&word_id(rng, "obs"))
                .expect("generated ids have the canonical shape"),
            title,
            content,
            trust: (20 + 5 * rng.below(17)) as f64 / 100.0,
            last_confirmed: created.clone(),
            created,
            confirmed_count: rng.below(8) as u64,
            contradicted_count: rng.below(3) as u64,
            source_test: rng.pick(&self.tests).id.clone(),
            suite,
            extra: ExtraKeys::default(),
        };
        let text = write_observation(&obs).map_err(|e| std::io::Error::other(e.to_string()))?;
        let rel = Path::new(tier.dir_name()).join(&scope).join(format!("{}.md", obs.id));
        let path = self.root.join(&rel);
        std::fs::create_dir_all(path.parent().expect("has a parent"))?;
        std::fs::write(&path, text)?;
        self.files.push(rel);
        Ok(())
    }

    /// `runs` test runs of `steps` steps each; a quarter run as suite children when suites exist.
    pub(crate) fn test_runs(&self, runs: usize, steps: usize, seed: u64) -> Vec<TestRun> {
        let mut rng = Rng::new(seed ^ 0x5eed);
        (0..runs)
            .map(|_| {
                let (test, suite) = if !self.suites.is_empty() && rng.chance(25) {
                    let s = rng.pick(&self.suites);
                    let pos = rng.below(s.children.len());
                    let ctx = SuiteContext::new(&s.id, Some(s.snapshot.clone()), Some(pos as u64))
                        .expect("generated suite ids are valid scope names");
                    (s.children[pos], Some(ctx))
                } else {
                    (rng.below(self.tests.len()), None)
                };
                let info = &self.tests[test];
                let steps = (0..steps)
                    .map(|_| {
                        let feature = FEATURES[*rng.pick(&self.features[info.product])];
                        let other = FEATURES[*rng.pick(&self.features[info.product])];
                        fill(rng.pick::<&str>(STEPS), &mut rng, feature, other)
                    })
                    .collect();
                TestRun {
                    product: ScopeName::new(self.products[info.product].as_str()).expect("valid"),
                    test: ScopeName::new(info.id.as_str()).expect("valid"),
                    suite,
                    steps,
                }
            })
            .collect()
    }
}
