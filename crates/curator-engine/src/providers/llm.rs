//! The LLM provider: an OpenAI-compatible `POST <base_url>/chat/completions` with structured
//! output (ARCHITECTURE.md, "Decision providers"; agent-qa-memory §5.2–§5.3, fixing §11.19).
//!
//! The answer must match agent-qa's decision schema: the request asks for it with
//! `response_format: {type: "json_schema", strict: true}`, and the reply is validated again here
//! because not every compatible server enforces schemas. Unlike agent-qa (`maxRetries: 0`),
//! rate limits (429), server errors (5xx), timeouts and dropped connections are retried with
//! exponential backoff (honouring a `Retry-After` in seconds, capped); other 4xx answers and
//! schema-invalid replies fail at once, since repeating the same request would not change them.
//!
//! The client is blocking: the curator calls it *before* taking the store lock and applies the
//! answer afterwards, so no lock is ever held across the network. Call it from a plain thread
//! (or `spawn_blocking` in an async server), never directly on an async runtime.
//!
//! Errors quote the endpoint (its error body helps a person fix a wrong model name), but never
//! the credentials the request carried: a misbehaving server or proxy may echo the
//! `Authorization` header back, and the message ends up on stderr, in `--json` output and in
//! CI logs. Every error message is redacted before it leaves this module ([`redact`]): the API
//! key itself, any `Bearer` credential, and the user-info part of a URL (issue 13 item 3).

use std::time::Duration;

use serde_json::{Value, json};

use crate::curate::{Decisions, TokenUsage, UnknownKeys};

use super::prompt::build_prompt;
use super::{CuratorInput, DecisionProvider, ProviderAnswer, ProviderError};

/// Where and how to call the model.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// The API base, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the API key; `None` sends no `Authorization`.
    pub api_key_env: Option<String>,
    /// Per-attempt timeout (connect + whole response).
    pub timeout: Duration,
    /// Retries after the first attempt, on 429 / 5xx / timeouts / connection errors.
    pub max_retries: u32,
    /// First backoff; doubled per retry, capped at [`MAX_BACKOFF`].
    pub backoff: Duration,
    /// How many existing observations the prompt lists at most.
    pub max_observations: usize,
}

/// The longest single wait between attempts, whatever `Retry-After` says.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: "https://api.openai.com/v1".to_owned(),
            model: String::new(),
            api_key_env: Some("OPENAI_API_KEY".to_owned()),
            timeout: Duration::from_secs(60),
            max_retries: 3,
            backoff: Duration::from_millis(500),
            max_observations: 40,
        }
    }
}

/// Calls an OpenAI-compatible endpoint for decisions.
#[derive(Debug, Clone)]
pub struct LlmProvider {
    config: LlmConfig,
    client: reqwest::blocking::Client,
    api_key: Option<String>,
}

impl LlmProvider {
    /// Checks the configuration and reads the API key from the named variable.
    pub fn new(config: LlmConfig) -> Result<Self, ProviderError> {
        if config.model.trim().is_empty() {
            return Err(ProviderError::Config(
                "curator.llm.model is not set: give the config a `curator:` block with \
                 `llm: {model: …}` (and `baseUrl`, `apiKeyEnv` unless OpenAI's defaults fit)"
                    .into(),
            ));
        }
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(ProviderError::Config(format!(
                "curator.llm.baseUrl must start with http:// or https://, got {:?}",
                config.base_url
            )));
        }
        let api_key = match &config.api_key_env {
            None => None,
            Some(var) => match std::env::var(var) {
                // A key that cannot be an HTTP header value fails every call the same way:
                // a configuration error now, not a call to retry later.
                Ok(key) if key.chars().any(|c| c.is_control()) => {
                    return Err(ProviderError::Config(format!(
                        "the API key in {var} (curator.llm.apiKeyEnv) holds a line break or \
                         another control character"
                    )));
                }
                Ok(key) if !key.is_empty() => Some(key),
                _ => {
                    return Err(ProviderError::Config(format!(
                        "the API key variable {var} (curator.llm.apiKeyEnv) is not set"
                    )));
                }
            },
        };
        let client = reqwest::blocking::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .build()
            .map_err(|e| ProviderError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(LlmProvider { config, client, api_key })
    }

    fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    fn endpoint(&self) -> String {
        let base = self.config.base_url.trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        }
    }

    /// Sends any chat-completions request body with this provider's endpoint, key, timeout and
    /// retry policy, and returns the reply's JSON: for callers with their own prompt and schema
    /// (the harness curator's entry judge, issue 16).
    pub fn post_chat(&self, body: &Value) -> Result<Value, ProviderError> {
        self.send(body)
    }

    /// The configured model name.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// The request body for `input`.
    pub fn request_body(&self, input: &CuratorInput<'_>) -> Value {
        let prompt = build_prompt(input, self.config.max_observations);
        json!({
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user}
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "curator_decisions",
                    "description": "A.U.D.N. decisions for observation management",
                    "strict": true,
                    "schema": Decisions::json_schema()
                }
            }
        })
    }

    /// Sends `body`, retrying what may succeed on a second try; returns the reply's JSON.
    fn send(&self, body: &Value) -> Result<Value, ProviderError> {
        let mut attempt = 0;
        loop {
            let mut request = self.client.post(self.endpoint()).json(body);
            if let Some(key) = &self.api_key {
                request = request.bearer_auth(key);
            }
            let (retryable, message, retry_after) = match request.send() {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    if status.is_success() {
                        // The body is read before it is parsed: a reply cut off or stalled
                        // mid-body is a failed call worth another try, a complete body that is
                        // not JSON is not.
                        match response.bytes() {
                            Ok(bytes) => {
                                return parse_json(&String::from_utf8_lossy(&bytes)).map_err(|e| {
                                    ProviderError::CallFailed(format!("reply is not JSON: {e}"))
                                });
                            }
                            Err(e) => {
                                let kind = if e.is_timeout() { "timed out" } else { "failed" };
                                (true, format!("reading the reply {kind}: {e}"), None)
                            }
                        }
                    } else {
                        // Redacted before it is cut, so a key at the cut is not left half-visible.
                        let text = redact(&response.text().unwrap_or_default(), self.api_key());
                        let excerpt: String = text.chars().take(300).collect();
                        let retryable = status.as_u16() == 429 || status.is_server_error();
                        (retryable, format!("HTTP {status}: {excerpt}"), retry_after)
                    }
                }
                Err(e) => {
                    let retryable =
                        e.is_timeout() || e.is_connect() || e.is_request() || e.is_body();
                    let kind = if e.is_timeout() { "timed out" } else { "request failed" };
                    (retryable, format!("{kind}: {e}"), None)
                }
            };
            if !retryable || attempt >= self.config.max_retries {
                let tries = attempt + 1;
                return Err(ProviderError::CallFailed(format!(
                    "{message} (after {tries} attempt(s))"
                )));
            }
            let backoff = self.config.backoff.saturating_mul(1 << attempt.min(16));
            std::thread::sleep(retry_after.unwrap_or(backoff).min(MAX_BACKOFF));
            attempt += 1;
        }
    }
}

/// `text` without credentials: every occurrence of `key`, the credential of any `Bearer`
/// (`Authorization: Bearer sk-…` echoed in a body), and the user-info of any URL
/// (`https://user:secret@host/` in a connection error) become `[redacted]`.
pub(crate) fn redact(text: &str, key: Option<&str>) -> String {
    let text = match key.filter(|k| !k.is_empty()) {
        Some(key) => text.replace(key, REDACTED),
        None => text.to_owned(),
    };
    let text = replace_after(&text, "bearer", |rest| {
        let gap = rest.len() - rest.trim_start_matches([' ', '\t', '=', ':']).len();
        let end = rest[gap..]
            .find(|c: char| c.is_whitespace() || "\"',;})\\".contains(c))
            .map_or(rest.len(), |i| gap + i);
        (gap > 0 && end > gap).then_some(gap..end)
    });
    replace_after(&text, "://", |rest| {
        let authority = rest.find(|c: char| c.is_whitespace() || "/\"')".contains(c));
        let at = rest[..authority.unwrap_or(rest.len())].rfind('@')?;
        Some(0..at)
    })
}

/// What a redacted credential reads as.
const REDACTED: &str = "[redacted]";

/// `text` with, after each (ASCII case-insensitive) occurrence of `marker`, the range `secret`
/// finds in the text that follows replaced by [`REDACTED`]. One pass, linear in `text`.
fn replace_after(
    text: &str,
    marker: &str,
    secret: impl Fn(&str) -> Option<std::ops::Range<usize>>,
) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut search) = (0, 0);
    while let Some(found) = lower[search..].find(marker) {
        let after = search + found + marker.len();
        if let Some(range) = secret(&text[after..]) {
            out.push_str(&text[copied..after + range.start]);
            out.push_str(REDACTED);
            copied = after + range.end;
        }
        search = after.max(copied);
    }
    out.push_str(&text[copied..]);
    out
}

/// JSON text parsed as `JSON.parse` reads it: a lone UTF-16 surrogate escape (`"\ud800"`, a
/// model's emoji cut in half), which serde refuses, becomes U+FFFD, the character the file
/// agent-qa writes would hold. Text that parses is never touched.
fn parse_json(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str(text).or_else(|e| match without_lone_surrogates(text) {
        Some(mended) => serde_json::from_str(&mended),
        None => Err(e),
    })
}

/// `text` with every `\uD800`–`\uDFFF` escape that is not half of a high–low pair replaced by
/// `\uFFFD`; `None` when there is none.
fn without_lone_surrogates(text: &str) -> Option<String> {
    let hex_at = |i: usize| {
        text.get(i..i + 6)
            .filter(|s| s.starts_with("\\u"))
            .and_then(|s| u16::from_str_radix(&s[2..], 16).ok())
    };
    let (mut out, mut copied, mut i, mut mended) = (String::new(), 0, 0, false);
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match hex_at(i) {
            Some(0xD800..=0xDBFF) if matches!(hex_at(i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
            Some(0xD800..=0xDFFF) => {
                out.push_str(&text[copied..i]);
                out.push_str("\\ufffd");
                (i, copied, mended) = (i + 6, i + 6, true);
            }
            // Any other escape: skip the backslash and the character it escapes.
            _ => i += 2,
        }
    }
    mended.then(|| out + &text[copied..])
}

/// The message of a reply that is an error object (`{"error": {"message": …}}` or
/// `{"error": "…"}`), cut to 300 characters.
fn provider_error(reply: &Value) -> Option<String> {
    let error = reply.get("error")?;
    let message = error["message"].as_str().or(error.as_str())?;
    Some(message.chars().take(300).collect())
}

/// Reads the decisions and the token usage out of a chat-completions reply.
pub(crate) fn parse_reply(reply: &Value) -> Result<ProviderAnswer, ProviderError> {
    let message = &reply["choices"][0]["message"];
    if let Some(refusal) = message["refusal"].as_str().filter(|r| !r.is_empty()) {
        return Err(ProviderError::CallFailed(format!("the model refused: {refusal}")));
    }
    let content = match &message["content"] {
        Value::String(s) if !s.trim().is_empty() => s,
        Value::Null | Value::String(_) => return Err(ProviderError::Empty),
        other => {
            return Err(ProviderError::CallFailed(format!("message content is not text: {other}")));
        }
    };
    let fail =
        |e: String| ProviderError::CallFailed(format!("answer breaks the decision schema: {e}"));
    let value = parse_json(content)
        .map_err(|e| fail(format!("decisions: (document): not valid JSON: {e}")))?;
    // A model's extra key is no user's typo: ignored, as agent-qa's zod schema does.
    let decisions =
        Decisions::from_value_with(&value, UnknownKeys::Ignore).map_err(|e| fail(e.to_string()))?;
    let usage = &reply["usage"];
    let token_usage = usage.is_object().then(|| {
        let prompt = usage["prompt_tokens"].as_u64().unwrap_or(0);
        let completion = usage["completion_tokens"].as_u64().unwrap_or(0);
        TokenUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
        }
    });
    Ok(ProviderAnswer { decisions: decisions.decisions, token_usage })
}

impl DecisionProvider for LlmProvider {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn decide(&self, input: &CuratorInput<'_>) -> Result<ProviderAnswer, ProviderError> {
        let answer = self.send(&self.request_body(input)).and_then(|reply| {
            if reply["choices"].as_array().is_none_or(|c| c.is_empty()) {
                // Some gateways answer 200 with `{"error": …}`: their message says why.
                return Err(match provider_error(&reply) {
                    Some(message) => ProviderError::CallFailed(format!(
                        "the provider answered with an error: {message}"
                    )),
                    None => ProviderError::Empty,
                });
            }
            parse_reply(&reply)
        });
        answer.map_err(|e| match e {
            ProviderError::CallFailed(message) => {
                ProviderError::CallFailed(redact(&message, self.api_key()))
            }
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lone_surrogate_escapes_are_mended() {
        let mend = |t: &str| without_lone_surrogates(t);
        assert_eq!(mend(r#""a\ud800b""#).as_deref(), Some(r#""a\ufffdb""#));
        assert_eq!(
            mend(r#""\udc00\ud83d\ude00\ud83d""#).as_deref(),
            Some(r#""\ufffd\ud83d\ude00\ufffd""#)
        );
        // An escaped backslash followed by `ud800` is text, not an escape; pairs and other
        // escapes are kept.
        assert_eq!(mend(r#""\\ud800 \ud83d\ude00 \n é""#), None);
        assert_eq!(mend(r#""\\\ud800""#).as_deref(), Some(r#""\\\ufffd""#));
        assert_eq!(mend("\\"), None, "a trailing backslash is left to the parser");
        assert_eq!(parse_json(r#"["\ud800"]"#).unwrap(), serde_json::json!(["\u{fffd}"]));
        assert!(parse_json("[1,").is_err());
    }

    #[test]
    fn credentials_are_redacted_wherever_an_endpoint_echoes_them() {
        let key = "sk-test-0123456789abcdef";
        let body = format!(
            r#"{{"error": "bad model", "echo": {{"authorization": "Bearer {key}"}}, "raw": "{key}"}}"#
        );
        let clean = redact(&body, Some(key));
        assert!(!clean.contains(key) && !clean.contains("0123456789"), "{clean}");
        assert!(clean.contains("bad model"), "the endpoint's words stay: {clean}");
        // A credential that is not the configured key (a proxy's, another header's).
        let clean = redact("authorization: BEARER other-secret; next", None);
        assert_eq!(clean, "authorization: BEARER [redacted]; next");
        let clean =
            redact("error sending request for url (https://user:pa55@llm.example/v1)", None);
        assert_eq!(clean, "error sending request for url (https://[redacted]@llm.example/v1)");
        assert_eq!(redact("no secrets: bearer-less text", None), "no secrets: bearer-less text");
        assert_eq!(redact("", Some(key)), "");
    }
}
