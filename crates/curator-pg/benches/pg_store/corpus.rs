//! The benchmark corpus: a deterministic agent-qa memory root of `size` observations and the
//! steps and curator runs a fleet would send against it.
//!
//! Invariant: the same `(size, seed)` gives the same files, steps and runs on every machine.
//! Shape: 8 products; `size / 25` test scopes of one product each; 35 % of the observations in
//! product folders, 65 % in test folders, so a step reads one product folder (≈ 4 % of the root)
//! plus a small test folder. Titles and bodies come from a shared UI vocabulary, so terms-mode
//! steps have candidates to rank and phrase-mode steps (title fragments) have phrases to match.

use std::path::Path;

/// splitmix64: tiny, seedable and stable across platforms.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// 64 words: an observation number in base 64 spells a unique canonical id.
const ID_WORDS: [&str; 64] = [
    "amber", "anchor", "apple", "aspen", "basil", "beacon", "birch", "bison", "blaze", "bloom",
    "brave", "breeze", "brick", "brook", "cabin", "cactus", "camel", "canoe", "cedar", "cider",
    "cinder", "clay", "cobalt", "comet", "coral", "crane", "crisp", "daisy", "delta", "denim",
    "desert", "dingo", "dove", "dune", "eagle", "ember", "falcon", "fern", "flame", "flint",
    "forest", "fox", "frost", "garnet", "gecko", "ginger", "glade", "glow", "grape", "gravel",
    "grove", "gull", "heron", "honey", "husky", "iris", "ivory", "jasper", "kettle", "kite",
    "koala", "lake", "lemon", "lime",
];

const FEATURES: &[&str] = &[
    "login",
    "checkout",
    "cart",
    "search",
    "profile",
    "payment",
    "invoice",
    "settings",
    "export",
    "signup",
    "dashboard",
    "calendar",
    "upload",
    "billing",
    "report",
    "inbox",
    "wishlist",
    "shipping",
    "coupon",
    "password",
    "onboarding",
    "notification",
    "language",
    "filter",
    "sorting",
    "pagination",
    "avatar",
    "address",
    "review",
    "subscription",
];
const ELEMENTS: &[&str] = &[
    "button", "modal", "banner", "spinner", "form", "dropdown", "tooltip", "table", "tab",
    "checkbox", "toast", "sidebar", "header", "link", "field", "dialog", "badge", "menu",
    "carousel", "slider",
];
const BEHAVIOURS: &[&str] = &[
    "appears after a delay",
    "is hidden behind the cookie banner",
    "needs a second click",
    "reloads the page",
    "moves below the fold on small screens",
    "is disabled until the form is valid",
    "shows a stale value after saving",
    "closes when pressing escape",
    "requires scrolling into view",
    "opens in a new tab",
    "loses focus after typing",
    "renders twice during hydration",
    "uses a different label in German",
    "only appears for logged in users",
    "flickers while loading",
];
const ADVICE: &[&str] = &[
    "Wait for the network to go idle before clicking.",
    "Dismiss the cookie banner first.",
    "Scroll the element into view, then retry once.",
    "Use the visible label rather than the icon.",
    "Reload once if the value looks stale.",
    "Check the toast text instead of the page title.",
];
const VERBS: &[&str] = &["Click", "Open", "Check", "Verify", "Use", "Select"];

/// One memory root: the scopes a step reads and the ids a curator run can confirm.
#[derive(Debug)]
pub(crate) struct Corpus {
    pub(crate) tests: Vec<TestScope>,
}

/// A test folder and the product it belongs to, with the ids visible to its steps.
#[derive(Debug, Clone)]
pub(crate) struct TestScope {
    pub(crate) product: String,
    pub(crate) test: String,
    pub(crate) visible: Vec<String>,
}

fn id(n: usize) -> String {
    let mut words = Vec::with_capacity(10);
    let mut rest = n;
    for _ in 0..10 {
        words.push(ID_WORDS[rest % 64]);
        rest /= 64;
    }
    format!("obs_{}", words.join("-"))
}

fn file(id: &str, title: &str, trust: f64, body: &str) -> String {
    format!(
        "---\nid: {id}\ntitle: {title}\ntrust: {trust}\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\ncontradicted_count: 0\n\
         source_test: t_bench\n---\n{body}\n"
    )
}

impl Corpus {
    /// Writes `size` observations under `root` (which must exist).
    pub(crate) fn generate(root: &Path, size: usize, seed: u64) -> std::io::Result<Corpus> {
        let mut rng = Rng::new(seed);
        let products: Vec<String> = (0..8).map(|i| format!("product-{i}")).collect();
        let n_tests = (size / 25).max(4);
        let mut tests: Vec<TestScope> = (0..n_tests)
            .map(|i| TestScope {
                product: products[i % products.len()].clone(),
                test: format!("t-{i:05}"),
                visible: Vec::new(),
            })
            .collect();
        let mut product_ids: Vec<Vec<String>> = vec![Vec::new(); products.len()];
        for n in 0..size {
            let id = id(n);
            let title =
                format!("{} {} {}", rng.pick(FEATURES), rng.pick(ELEMENTS), rng.pick(BEHAVIOURS));
            let title = format!("{}{}", title[..1].to_uppercase(), &title[1..]);
            let body = format!("{} {}", rng.pick(ADVICE), rng.pick(ADVICE));
            let trust = [0.5, 0.6, 0.7, 0.8][rng.below(4)];
            let dir = if rng.below(100) < 35 {
                let p = rng.below(products.len());
                product_ids[p].push(id.clone());
                root.join("products").join(&products[p])
            } else {
                let t = rng.below(tests.len());
                tests[t].visible.push(id.clone());
                root.join("tests").join(&tests[t].test)
            };
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join(format!("{id}.md")), file(&id, &title, trust, &body))?;
        }
        for t in &mut tests {
            let p = products.iter().position(|p| *p == t.product).unwrap_or(0);
            t.visible.extend(product_ids[p].iter().cloned());
        }
        Ok(Corpus { tests })
    }

    /// A step as a test agent writes it (terms mode), or a title fragment (phrase mode).
    pub(crate) fn step(&self, rng: &mut Rng, phrase: bool) -> (TestScope, String) {
        let scope = rng.pick(&self.tests).clone();
        let (f, e) = (rng.pick(FEATURES), rng.pick(ELEMENTS));
        let text = if phrase {
            format!("{f} {e}")
        } else {
            format!("{} the {e} on the {f} page", rng.pick(VERBS))
        };
        (scope, text)
    }
}
