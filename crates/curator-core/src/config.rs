//! `agent-qa.config.yaml`: the `services.memory` block (agent-qa-memory §2) and curator's own
//! top-level `curator:` block.
//!
//! One file serves both tools, so the rules are agent-qa's where agent-qa reads the file and
//! strict in the same way where only curator does:
//!
//! * `services.memory` is a zod *strict* object in agent-qa: an unknown key, a wrong type or an
//!   out-of-range value is an error. Here too, and the error names the key path and the rule
//!   (`services.memory.minTrust: must be between 0 and 1, got 1.5`). Schema defaults apply to
//!   keys missing from a present block; with no block the code-level fallbacks apply.
//! * Every other top-level key and every other `services.*` entry belongs to agent-qa and is
//!   ignored, except `curator:`, which agent-qa never reads and which is strict as well.
//! * Deliberate fix of §11.2: agent-qa's trust deltas are 0.05/0.10 when the block exists but
//!   0.02/0.05 when it does not. curator always uses the schema defaults 0.05/0.10 (or the
//!   configured values); [`MemoryConfig::block_present`] and
//!   [`MemoryConfig::agent_qa_trust_deltas`] keep agent-qa's behaviour visible.
//! * Also unlike agent-qa (§11.1), `minTrust` and `maxInjections` are honoured.
//!
//! The YAML is read by the same loader as observation frontmatter ([`crate::codec`]), which
//! reads text as agent-qa's `yaml` 2.8.4 does (YAML 1.2 core schema: `1_0` and `0b1` are
//! strings, `<<` is an ordinary key, duplicate keys and several documents are errors) under
//! budgets against alias bombs, so a config agent-qa refuses is refused here too. Nothing here touches the filesystem: the caller
//! reads the file and passes the folder it came from; [`Config::memory_root`] resolves the root
//! lexically, as Node's `path.resolve`/`path.normalize` do.

use std::path::{Component, Path, PathBuf};

use crate::codec::{ParseError, YamlValue, load_yaml};

/// The memory root when `services.memory.dir` is not set.
pub const DEFAULT_DIR: &str = "agent-qa-memory";
/// A config file larger than this is refused before parsing.
const MAX_CONFIG_BYTES: usize = 1 << 20;

const MEMORY_PATH: &str = "services.memory";
const MEMORY_KEYS: [&str; 14] = [
    "enabled",
    "provider",
    "dir",
    "minTrust",
    "maxInjections",
    "curatorEnabled",
    "curatorLockTimeout",
    "trustConfirmDelta",
    "trustContradictDelta",
    "ablationEnabled",
    "circuitBreakerEnabled",
    "circuitBreakerWindowSize",
    "circuitBreakerBaselineSize",
    "circuitBreakerThreshold",
];
const CURATOR_PATH: &str = "curator";
const CURATOR_KEYS: [&str; 8] =
    ["queryMode", "llm", "store", "unknownKeys", "serve", "policy", "review", "probationRate"];
const SERVE_PATH: &str = "curator.serve";
const SERVE_KEYS: [&str; 1] = ["allowedHosts"];
const LLM_PATH: &str = "curator.llm";
const LLM_KEYS: [&str; 7] =
    ["baseUrl", "model", "apiKeyEnv", "timeoutMs", "maxRetries", "backoffMs", "maxObservations"];

/// Why a config text was refused. Messages name the key path and the rule broken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not one YAML document within the parser's budgets.
    #[error("invalid YAML: {message}")]
    Yaml {
        /// The parser's message (with line and column).
        message: String,
    },
    /// The text is larger than a config file may be.
    #[error("config is {bytes} bytes; the limit is {MAX_CONFIG_BYTES}")]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// A key has a wrong type or value, or is unknown in a strict block.
    #[error("{path}: {rule}")]
    Invalid {
        /// The key path, e.g. `services.memory.minTrust`.
        path: String,
        /// What is wrong, e.g. `must be between 0 and 1, got 1.5`.
        rule: String,
    },
}

/// The memory provider (`services.memory.provider`); agent-qa knows only `local`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryProvider {
    /// Files under the memory root.
    #[default]
    Local,
}

/// How step text is matched against memory (`curator.queryMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueryMode {
    /// Tokenised, folded, any-term match with a relevance floor (curator's default).
    #[default]
    Terms,
    /// The whole sanitised step as one phrase: agent-qa's behaviour.
    Phrase,
}

/// How a failure proven by ablation is blamed on memory (`curator.policy`, issue 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlamePolicy {
    /// curator's default: outcome evidence decides which observations injected at or before
    /// the failure are deprecated, observations below minTrust get probation injections, and a
    /// recorded run tries unproven memory one observation at a time.
    #[default]
    Evidence,
    /// agent-qa's exact rules (spec §5.5, §8): every failed run deprecates what was injected
    /// into its first failed step, whatever the ablation rerun showed; no probation, and every
    /// match is injected.
    AgentQa,
}

/// Whether new memory proposed by an agent or a model waits for review (`curator.review`,
/// issue 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReviewMode {
    /// Proposals are written to their tier folder at once, as agent-qa does.
    Off,
    /// Proposals wait in the review queue; they are approved by a person, or after passing
    /// probation injections (curator's default).
    #[default]
    Auto,
    /// Proposals wait in the review queue until a person approves or rejects them.
    Manual,
}

/// The default chance that a step of a run gets a probation injection (issue 18); at most one
/// step of a run gets one.
pub const DEFAULT_PROBATION_RATE: f64 = 1.0;

/// The effective memory settings curator uses.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryConfig {
    /// `enabled`: memory on.
    pub enabled: bool,
    /// `provider`.
    pub provider: MemoryProvider,
    /// `dir`, trimmed: the memory root, relative to the config file's folder unless absolute.
    pub dir: String,
    /// `minTrust`, in `[0, 1]`: observations below it are never injected.
    pub min_trust: f64,
    /// `maxInjections`: at most this many observations per step.
    pub max_injections: usize,
    /// `curatorEnabled`.
    pub curator_enabled: bool,
    /// `curatorLockTimeout` in milliseconds, at least 1000.
    pub lock_timeout_ms: u64,
    /// `trustConfirmDelta`, in `[0, 1]`.
    pub trust_confirm_delta: f64,
    /// `trustContradictDelta`, in `[0, 1]`.
    pub trust_contradict_delta: f64,
    /// `ablationEnabled`.
    pub ablation_enabled: bool,
    /// `circuitBreakerEnabled`.
    pub circuit_breaker_enabled: bool,
    /// `circuitBreakerWindowSize`, at least 5.
    pub circuit_breaker_window_size: usize,
    /// `circuitBreakerBaselineSize`, at least 2.
    pub circuit_breaker_baseline_size: usize,
    /// `circuitBreakerThreshold`, in `[0, 1]`.
    pub circuit_breaker_threshold: f64,
    /// Whether the file had a `services.memory` block (agent-qa's deltas depend on it).
    pub block_present: bool,
}

impl Default for MemoryConfig {
    /// The values with no `services.memory` block (equal to the schema defaults, §11.2 fixed).
    fn default() -> Self {
        MemoryConfig {
            enabled: true,
            provider: MemoryProvider::Local,
            dir: DEFAULT_DIR.to_owned(),
            min_trust: 0.3,
            max_injections: 3,
            curator_enabled: true,
            lock_timeout_ms: 120_000,
            trust_confirm_delta: 0.05,
            trust_contradict_delta: 0.10,
            ablation_enabled: true,
            circuit_breaker_enabled: true,
            circuit_breaker_window_size: 20,
            circuit_breaker_baseline_size: 3,
            circuit_breaker_threshold: 0.15,
            block_present: false,
        }
    }
}

impl MemoryConfig {
    /// The (confirm, contradict) deltas agent-qa itself would use with this file: the configured
    /// ones when the block exists, else its curator's fallbacks 0.02/0.05 (§2, §11.2).
    pub fn agent_qa_trust_deltas(&self) -> (f64, f64) {
        if self.block_present {
            (self.trust_confirm_delta, self.trust_contradict_delta)
        } else {
            (0.02, 0.05)
        }
    }
}

/// curator's own options: the top-level `curator:` block, which agent-qa ignores.
#[derive(Debug, Clone, PartialEq)]
pub struct CuratorOptions {
    /// `queryMode`: `terms` (default) or `phrase`.
    pub query_mode: QueryMode,
    /// Whether the file had a `curator:` block.
    pub block_present: bool,
    /// `llm`: the OpenAI-compatible endpoint of `curate --llm`.
    pub llm: LlmOptions,
    /// `store`: where observations live when neither `--store` nor `$CURATOR_STORE` says
    /// (`postgres://…` for curator-pg, `file` for the memory root); `None` is the file store.
    pub store: Option<String>,
    /// `unknownKeys`: `reject` (default: a key a run record or decisions document does not
    /// define is an error naming the nearest known key) or `ignore` (agent-qa's zod behaviour).
    pub ignore_unknown_keys: bool,
    /// `policy`: `evidence` (default) or `agent-qa`.
    pub policy: BlamePolicy,
    /// `review`: `off`, `auto` (default) or `manual`.
    pub review: ReviewMode,
    /// `probationRate`: the chance in `[0, 1]` that a step of a run gets a probation
    /// injection (default [`DEFAULT_PROBATION_RATE`]; 0 turns probation off).
    pub probation_rate: f64,
    /// `serve`: settings of `curator serve`.
    pub serve: ServeOptions,
}

impl Default for CuratorOptions {
    fn default() -> Self {
        CuratorOptions {
            query_mode: QueryMode::default(),
            block_present: false,
            llm: LlmOptions::default(),
            store: None,
            policy: BlamePolicy::default(),
            review: ReviewMode::default(),
            probation_rate: DEFAULT_PROBATION_RATE,
            ignore_unknown_keys: false,
            serve: ServeOptions::default(),
        }
    }
}

/// `curator.serve`: settings of `curator serve` (issue 13 item 3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServeOptions {
    /// `allowedHosts`: host names the server answers besides its listen address and
    /// `localhost` (a request naming any other `Host` is refused, so a web page cannot reach
    /// the server through DNS rebinding). Each is a name, optionally with `:port`.
    pub allowed_hosts: Vec<String>,
}

/// `curator.llm`: where `curate --llm` sends its chat-completions request (issue 4).
#[derive(Debug, Clone, PartialEq)]
pub struct LlmOptions {
    /// `baseUrl` (default `https://api.openai.com/v1`); `/chat/completions` is appended.
    pub base_url: String,
    /// `model` (no default: `curate --llm` refuses to run without one).
    pub model: String,
    /// `apiKeyEnv`: name of the variable holding the key (default `OPENAI_API_KEY`; `""` = none).
    pub api_key_env: Option<String>,
    /// `timeoutMs` per attempt (default 60000, >= 1).
    pub timeout_ms: u64,
    /// `maxRetries` on 429 / 5xx / timeouts (default 3).
    pub max_retries: u32,
    /// `backoffMs`, the first wait, doubled per retry (default 500).
    pub backoff_ms: u64,
    /// `maxObservations` listed in the prompt (default 40, >= 1).
    pub max_observations: usize,
}

impl Default for LlmOptions {
    fn default() -> Self {
        LlmOptions {
            base_url: "https://api.openai.com/v1".to_owned(),
            model: String::new(),
            api_key_env: Some("OPENAI_API_KEY".to_owned()),
            timeout_ms: 60_000,
            max_retries: 3,
            backoff_ms: 500,
            max_observations: 40,
        }
    }
}

/// A parsed config file.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The `services.memory` settings.
    pub memory: MemoryConfig,
    /// The `curator:` settings.
    pub curator: CuratorOptions,
    /// The folder of the config file; relative `dir` values are resolved against it.
    pub config_dir: PathBuf,
}

impl Config {
    /// Parses config text. `config_dir` is the folder the file was read from (pass an absolute
    /// path to get an absolute memory root). Empty text is a config with no blocks.
    pub fn from_yaml_str(text: &str, config_dir: &Path) -> Result<Self, ConfigError> {
        if text.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge { bytes: text.len() });
        }
        let root = parse_yaml(text)?;
        let top = match &root {
            YamlValue::Null => None,
            YamlValue::Map(map) => Some(map.as_slice()),
            other => {
                return Err(invalid(
                    "(top level)",
                    format!("must be a mapping, got {}", show(other)),
                ));
            }
        };
        let services = match top.and_then(|t| get(t, "services")) {
            None => None,
            Some(YamlValue::Map(map)) => Some(map.as_slice()),
            Some(other) => {
                return Err(invalid("services", format!("must be a mapping, got {}", show(other))));
            }
        };
        let memory = match services.and_then(|s| get(s, "memory")) {
            None => MemoryConfig::default(),
            Some(YamlValue::Map(map)) => memory_block(map)?,
            Some(other) => {
                return Err(invalid(
                    MEMORY_PATH,
                    format!("must be a mapping, got {}", show(other)),
                ));
            }
        };
        let curator = match top.and_then(|t| get(t, "curator")) {
            None => CuratorOptions::default(),
            Some(YamlValue::Map(map)) => curator_block(map)?,
            Some(other) => {
                return Err(invalid(
                    CURATOR_PATH,
                    format!("must be a mapping, got {}", show(other)),
                ));
            }
        };
        Ok(Config { memory, curator, config_dir: config_dir.to_path_buf() })
    }

    /// agent-qa's `resolveMemoryRoot`: an absolute `dir` normalised, a relative one joined to the
    /// config folder and normalised. Lexical only: no filesystem access, symlinks not followed.
    pub fn memory_root(&self) -> PathBuf {
        let dir = Path::new(&self.memory.dir);
        if dir.is_absolute() { normalize(dir) } else { normalize(&self.config_dir.join(dir)) }
    }
}

impl Default for Config {
    /// No config file: every default, root `./agent-qa-memory`.
    fn default() -> Self {
        Config {
            memory: MemoryConfig::default(),
            curator: CuratorOptions::default(),
            config_dir: PathBuf::from("."),
        }
    }
}

fn parse_yaml(text: &str) -> Result<YamlValue, ConfigError> {
    load_yaml(text, 1).map_err(|e| ConfigError::Yaml {
        message: match e {
            ParseError::Yaml(message) => message,
            other => other.to_string(),
        },
    })
}

/// The value of `key` in a mapping's entries (keys are unique: the loader refuses duplicates).
fn get<'a>(map: &'a [(String, YamlValue)], key: &str) -> Option<&'a YamlValue> {
    map.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn memory_block(map: &[(String, YamlValue)]) -> Result<MemoryConfig, ConfigError> {
    let b = Block { path: MEMORY_PATH, map };
    b.deny_unknown(&MEMORY_KEYS)?;
    let d = MemoryConfig::default();
    Ok(MemoryConfig {
        enabled: b.bool("enabled", d.enabled)?,
        provider: match b.string("provider")? {
            None => d.provider,
            Some("local") => MemoryProvider::Local,
            Some(other) => {
                return Err(b.err("provider", format!("must be \"local\", got {other:?}")));
            }
        },
        dir: match b.string("dir")? {
            None => d.dir,
            Some(s) if s.trim().is_empty() => {
                return Err(b.err(
                    "dir",
                    format!("must be at least 1 character after trimming, got {s:?}"),
                ));
            }
            Some(s) => s.trim().to_owned(),
        },
        min_trust: b.unit("minTrust", d.min_trust)?,
        max_injections: saturate(b.int("maxInjections", 0, d.max_injections as u64)?),
        curator_enabled: b.bool("curatorEnabled", d.curator_enabled)?,
        lock_timeout_ms: b.int("curatorLockTimeout", 1000, d.lock_timeout_ms)?,
        trust_confirm_delta: b.unit("trustConfirmDelta", d.trust_confirm_delta)?,
        trust_contradict_delta: b.unit("trustContradictDelta", d.trust_contradict_delta)?,
        ablation_enabled: b.bool("ablationEnabled", d.ablation_enabled)?,
        circuit_breaker_enabled: b.bool("circuitBreakerEnabled", d.circuit_breaker_enabled)?,
        circuit_breaker_window_size: saturate(b.int("circuitBreakerWindowSize", 5, 20)?),
        circuit_breaker_baseline_size: saturate(b.int("circuitBreakerBaselineSize", 2, 3)?),
        circuit_breaker_threshold: b
            .unit("circuitBreakerThreshold", d.circuit_breaker_threshold)?,
        block_present: true,
    })
}

fn curator_block(map: &[(String, YamlValue)]) -> Result<CuratorOptions, ConfigError> {
    let b = Block { path: CURATOR_PATH, map };
    b.deny_unknown(&CURATOR_KEYS)?;
    let query_mode = match b.string("queryMode")? {
        None => QueryMode::default(),
        Some("terms") => QueryMode::Terms,
        Some("phrase") => QueryMode::Phrase,
        Some(other) => {
            return Err(
                b.err("queryMode", format!("must be \"terms\" or \"phrase\", got {other:?}"))
            );
        }
    };
    let llm = match get(map, "llm") {
        None => LlmOptions::default(),
        Some(YamlValue::Map(m)) => llm_block(m)?,
        Some(other) => return Err(b.err("llm", format!("must be a mapping, got {}", show(other)))),
    };
    let store = b.string("store")?.map(str::to_owned);
    let ignore_unknown_keys = match b.string("unknownKeys")? {
        None | Some("reject") => false,
        Some("ignore") => true,
        Some(other) => {
            return Err(
                b.err("unknownKeys", format!("must be \"reject\" or \"ignore\", got {other:?}"))
            );
        }
    };
    let serve = match get(map, "serve") {
        None => ServeOptions::default(),
        Some(YamlValue::Map(m)) => serve_block(m)?,
        Some(other) => {
            return Err(b.err("serve", format!("must be a mapping, got {}", show(other))));
        }
    };
    let policy = match b.string("policy")? {
        None => BlamePolicy::default(),
        Some("evidence") => BlamePolicy::Evidence,
        Some("agent-qa") => BlamePolicy::AgentQa,
        Some(other) => {
            return Err(
                b.err("policy", format!("must be \"evidence\" or \"agent-qa\", got {other:?}"))
            );
        }
    };
    let review = match b.string("review")? {
        None => ReviewMode::default(),
        Some("off") => ReviewMode::Off,
        Some("auto") => ReviewMode::Auto,
        Some("manual") => ReviewMode::Manual,
        Some(other) => {
            return Err(
                b.err("review", format!("must be \"off\", \"auto\" or \"manual\", got {other:?}"))
            );
        }
    };
    let probation_rate = b.unit("probationRate", DEFAULT_PROBATION_RATE)?;
    Ok(CuratorOptions {
        query_mode,
        block_present: true,
        llm,
        store,
        policy,
        review,
        probation_rate,
        ignore_unknown_keys,
        serve,
    })
}

fn serve_block(map: &[(String, YamlValue)]) -> Result<ServeOptions, ConfigError> {
    let b = Block { path: SERVE_PATH, map };
    b.deny_unknown(&SERVE_KEYS)?;
    let allowed_hosts = match get(map, "allowedHosts") {
        None => Vec::new(),
        Some(YamlValue::Seq(items)) => items
            .iter()
            .map(|item| match item {
                YamlValue::String(s) if is_host_name(s) => Ok(s.to_ascii_lowercase()),
                other => Err(b.err(
                    "allowedHosts",
                    format!(
                        "each entry must be a host name (optionally :port), got {}",
                        show(other)
                    ),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(b.err("allowedHosts", format!("must be a list, got {}", show(other))));
        }
    };
    Ok(ServeOptions { allowed_hosts })
}

/// A host name or address as a `Host` header carries it, with an optional `:port`: letters,
/// digits, `-`, `.`, `_`, `:` and the brackets of an IPv6 literal; no scheme, path or spaces.
fn is_host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':' | b'[' | b']')
        })
}

fn llm_block(map: &[(String, YamlValue)]) -> Result<LlmOptions, ConfigError> {
    let b = Block { path: LLM_PATH, map };
    b.deny_unknown(&LLM_KEYS)?;
    let d = LlmOptions::default();
    Ok(LlmOptions {
        base_url: b.string("baseUrl")?.map_or(d.base_url, str::to_owned),
        model: b.string("model")?.map_or(d.model, str::to_owned),
        api_key_env: match b.string("apiKeyEnv")? {
            None => d.api_key_env,
            Some("") => None,
            Some(name) => Some(name.to_owned()),
        },
        timeout_ms: b.int("timeoutMs", 1, d.timeout_ms)?,
        max_retries: u32::try_from(b.int("maxRetries", 0, u64::from(d.max_retries))?)
            .unwrap_or(u32::MAX),
        backoff_ms: b.int("backoffMs", 0, d.backoff_ms)?,
        max_observations: saturate(b.int("maxObservations", 1, d.max_observations as u64)?),
    })
}

/// One strict mapping and its path, with typed getters that name the key on error.
struct Block<'a> {
    path: &'static str,
    map: &'a [(String, YamlValue)],
}

impl Block<'_> {
    fn err(&self, key: &str, rule: String) -> ConfigError {
        invalid(&format!("{}.{key}", self.path), rule)
    }

    fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ConfigError> {
        match self.map.iter().map(|(k, _)| k).find(|k| !allowed.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(self.err(k, format!("unknown key (allowed: {})", allowed.join(", ")))),
        }
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match get(self.map, key) {
            None => Ok(default),
            Some(YamlValue::Bool(b)) => Ok(*b),
            Some(other) => {
                Err(self.err(key, format!("must be true or false, got {}", show(other))))
            }
        }
    }

    fn string(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        match get(self.map, key) {
            None => Ok(None),
            Some(YamlValue::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.err(key, format!("must be a string, got {}", show(other)))),
        }
    }

    /// A number in `[0, 1]` (zod `z.number().min(0).max(1)`).
    fn unit(&self, key: &str, default: f64) -> Result<f64, ConfigError> {
        let Some(v) = get(self.map, key) else { return Ok(default) };
        match v.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
            Some(_) => Err(self.err(key, format!("must be between 0 and 1, got {}", show(v)))),
            None => {
                Err(self.err(key, format!("must be a number between 0 and 1, got {}", show(v))))
            }
        }
    }

    /// An integer at least `min` (zod `z.number().int().min(min)`: `3.0` is an integer too).
    fn int(&self, key: &str, min: u64, default: u64) -> Result<u64, ConfigError> {
        /// JavaScript's `Number.MAX_SAFE_INTEGER`.
        const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
        let Some(v) = get(self.map, key) else { return Ok(default) };
        let int = match v {
            YamlValue::Int(i) => u64::try_from(*i).ok(), // None: negative
            YamlValue::Float(f) => {
                // Integral values count, as in JavaScript; 2^53 is where integers stop being exact.
                if f.fract() != 0.0 || !f.is_finite() {
                    return Err(self.err(key, format!("must be an integer, got {}", show(v))));
                }
                // Past 2^53 the value only has to fail the safe-integer test below.
                (*f >= 0.0).then_some(if *f > MAX_SAFE_INTEGER as f64 {
                    u64::MAX
                } else {
                    *f as u64
                })
            }
            other => return Err(self.err(key, format!("must be an integer, got {}", show(other)))),
        };
        match int {
            // zod's `.int()` takes safe integers only (`Number.isSafeInteger`).
            Some(u) if u > MAX_SAFE_INTEGER => Err(self
                .err(key, format!("must be a safe integer (at most 2^53 - 1), got {}", show(v)))),
            Some(u) if u >= min => Ok(u),
            _ => Err(self.err(key, format!("must be an integer >= {min}, got {}", show(v)))),
        }
    }
}

fn invalid(path: &str, rule: String) -> ConfigError {
    ConfigError::Invalid { path: path.to_owned(), rule }
}

/// A value as an error message shows it: scalars as written, collections by kind.
fn show(v: &YamlValue) -> String {
    match v {
        YamlValue::String(s) => format!("{s:?}"),
        YamlValue::Seq(_) => "a list".to_owned(),
        YamlValue::Map(_) => "a mapping".to_owned(),
        scalar => scalar.js_string(),
    }
}

fn saturate(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Lexical normalisation, as Node's `path.normalize`: `.` dropped, `..` pops a component (never
/// above the root of an absolute path), repeated separators collapsed.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    let mut normal = 0usize;
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir if normal > 0 => {
                out.pop();
                normal -= 1;
            }
            Component::ParentDir if out.has_root() => {}
            Component::ParentDir => out.push(".."),
            Component::Normal(s) => {
                out.push(s);
                normal += 1;
            }
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical() {
        let cases = [
            ("/a/./b/../c", "/a/c"),
            ("/../../x", "/x"),
            ("/a//b/", "/a/b"),
            ("a/../../b", "../b"),
            ("./a/..", "."),
            ("../../a/b/..", "../../a"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize(Path::new(input)), PathBuf::from(want), "{input}");
        }
    }

    #[test]
    fn show_renders_scalars_as_written() {
        assert_eq!(show(&YamlValue::Float(1.5)), "1.5");
        assert_eq!(show(&YamlValue::String("yes".into())), "\"yes\"");
        assert_eq!(show(&YamlValue::Null), "null");
        assert_eq!(show(&YamlValue::Seq(vec![])), "a list");
    }

    #[test]
    fn curator_llm_block_is_strict_and_has_defaults() {
        let dir = Path::new("/cfg");
        let c = Config::from_yaml_str(
            "curator:\n  llm:\n    model: m1\n    apiKeyEnv: \"\"\n    maxRetries: 0\n",
            dir,
        )
        .unwrap();
        let llm = &c.curator.llm;
        assert_eq!(
            (llm.model.as_str(), llm.api_key_env.as_deref(), llm.max_retries),
            ("m1", None, 0)
        );
        assert_eq!(llm.timeout_ms, 60_000);
        assert_eq!(Config::from_yaml_str("", dir).unwrap().curator.llm, LlmOptions::default());
        let c = Config::from_yaml_str("curator:\n  store: postgres://db/memory\n", dir).unwrap();
        assert_eq!(c.curator.store.as_deref(), Some("postgres://db/memory"));
        let err = Config::from_yaml_str("curator:\n  store: 5\n", dir).unwrap_err();
        assert!(err.to_string().contains("curator.store"), "{err}");
        let c = Config::from_yaml_str(
            "curator:\n  serve:\n    allowedHosts: [Memory.Example, \"10.0.0.5:7878\"]\n",
            dir,
        )
        .unwrap();
        assert_eq!(c.curator.serve.allowed_hosts, ["memory.example", "10.0.0.5:7878"]);
        for bad in
            ["allowedHosts: [\"http://x\"]", "allowedHosts: x", "hosts: []", "allowedHosts: [1]"]
        {
            let text = format!("curator:\n  serve:\n    {bad}\n");
            let err = Config::from_yaml_str(&text, dir).unwrap_err();
            assert!(err.to_string().contains("curator.serve"), "{bad}: {err}");
        }
        let err = Config::from_yaml_str("curator:\n  llm:\n    modell: x\n", dir).unwrap_err();
        assert!(err.to_string().contains("curator.llm.modell"), "{err}");
        let err = Config::from_yaml_str("curator:\n  llm:\n    timeoutMs: 0\n", dir).unwrap_err();
        assert!(err.to_string().contains("curator.llm.timeoutMs"), "{err}");
    }

    #[test]
    fn unknown_keys_are_rejected_unless_the_parity_setting_says_ignore() {
        let dir = Path::new("/cfg");
        assert!(!Config::from_yaml_str("", dir).unwrap().curator.ignore_unknown_keys);
        let c = Config::from_yaml_str("curator:\n  unknownKeys: ignore\n", dir).unwrap();
        assert!(c.curator.ignore_unknown_keys);
        let c = Config::from_yaml_str("curator:\n  unknownKeys: reject\n", dir).unwrap();
        assert!(!c.curator.ignore_unknown_keys);
        let err = Config::from_yaml_str("curator:\n  unknownKeys: maybe\n", dir).unwrap_err();
        assert!(err.to_string().contains("curator.unknownKeys"), "{err}");
    }

    #[test]
    fn policy_review_and_probation_rate_have_defaults_and_named_errors() {
        let dir = Path::new("/cfg");
        let c = Config::from_yaml_str("", dir).unwrap();
        assert_eq!(
            (c.curator.policy, c.curator.review, c.curator.probation_rate),
            (BlamePolicy::Evidence, ReviewMode::Auto, DEFAULT_PROBATION_RATE)
        );
        let c = Config::from_yaml_str(
            "curator:\n  policy: agent-qa\n  review: off\n  probationRate: 0\n",
            dir,
        )
        .unwrap();
        assert_eq!(
            (c.curator.policy, c.curator.review, c.curator.probation_rate),
            (BlamePolicy::AgentQa, ReviewMode::Off, 0.0)
        );
        let c = Config::from_yaml_str("curator:\n  review: manual\n", dir).unwrap();
        assert_eq!(c.curator.review, ReviewMode::Manual);
        for (text, key) in [
            ("curator:\n  policy: strict\n", "curator.policy"),
            ("curator:\n  review: yes\n", "curator.review"),
            ("curator:\n  review: true\n", "curator.review"),
            ("curator:\n  probationRate: 2\n", "curator.probationRate"),
        ] {
            let err = Config::from_yaml_str(text, dir).unwrap_err().to_string();
            assert!(err.starts_with(key), "{text}: {err}");
        }
    }
}
