//! Which `Host` a request may name, and the headers every response carries (issue 13 item 3).
//!
//! **DNS rebinding.** A web page at `evil.example` can have its name re-resolved to 127.0.0.1
//! and then talk to `curator serve` from the person's own browser: the browser sends the
//! page's name as `Host`, and the same-origin checks see nothing wrong, because for the
//! browser it *is* the same origin. The server is the only party that can tell, so every
//! route (the API, the UI, `/mcp`, the static files) refuses a `Host` that is not the listen
//! address, `localhost`, or a name listed in the config (`curator.serve.allowedHosts`). An IP
//! literal cannot be rebound, so when the server listens on every address (`0.0.0.0`, `::`)
//! any IP literal is one of its addresses. The port is not compared: a rebinding page names
//! its own host, whatever the port. A request without `Host` (and without an HTTP/2
//! authority) is refused too: HTTP/1.1 requires one, and every browser sends it.
//!
//! **Headers.** Every response says `Content-Security-Policy` (scripts, styles and requests
//! only from the server itself, no inline script or style, forms posting only to it, no
//! framing), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` and
//! `X-Frame-Options: DENY`. The UI's templates and assets carry no inline script, style or
//! event handler, so the policy costs the pages nothing (a test reads every template).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// The policy of every response: nothing inline, nothing from elsewhere, no framing.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; \
    frame-ancestors 'none'; base-uri 'none'";

/// The `Host` names one server answers.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    /// The listen address: its IP as a literal, or any IP literal when it is unspecified.
    listen: IpAddr,
    /// Names from the config, lowercase, each with the port it requires, if any.
    names: Vec<(String, Option<u16>)>,
}

impl AllowedHosts {
    /// The hosts of a server listening on `listen` (the loopback address when unknown, as for
    /// [`crate::app`] in tests), plus the configured `names` (`host` or `host:port`).
    pub(crate) fn new(listen: Option<SocketAddr>, names: &[String]) -> Self {
        let listen = listen.map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |a| a.ip());
        let names = names.iter().filter_map(|n| split_authority(n)).collect();
        AllowedHosts { listen, names }
    }

    /// Whether a request naming `authority` (a `Host` value) is served.
    pub(crate) fn allows(&self, authority: &str) -> bool {
        let Some((host, port)) = split_authority(authority) else { return false };
        if host == "localhost" {
            return true;
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            return ip == self.listen || self.listen.is_unspecified() || self.named(&host, port);
        }
        self.named(&host, port)
    }

    fn named(&self, host: &str, port: Option<u16>) -> bool {
        self.names.iter().any(|(name, want)| name == host && want.is_none_or(|p| Some(p) == port))
    }
}

/// `host[:port]` (IPv6 in brackets) as a lowercase host without brackets and its port;
/// `None` when it is not an authority (a scheme, a path, user info, spaces).
fn split_authority(text: &str) -> Option<(String, Option<u16>)> {
    let authority: axum::http::uri::Authority = text.trim().parse().ok()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let host = authority.host().trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return None;
    }
    Some((host.to_ascii_lowercase(), authority.port_u16()))
}

/// Refuses a request whose `Host` this server does not answer (403), or that names none (400).
pub(crate) async fn require_allowed_host(
    State(hosts): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    let named = match request.headers().get(header::HOST) {
        Some(value) => value.to_str().ok().map(str::to_owned),
        // HTTP/2 carries the host as the `:authority` of the URI.
        None => request.uri().authority().map(|a| a.as_str().to_owned()),
    };
    match named {
        None if request.headers().contains_key(header::HOST) => {
            ApiError::new(StatusCode::BAD_REQUEST, "bad_host", "the Host header is not valid text")
                .into_response()
        }
        None => ApiError::new(
            StatusCode::BAD_REQUEST,
            "missing_host",
            "the request names no Host: send a Host header naming this server",
        )
        .into_response(),
        Some(host) if !hosts.allows(&host) => ApiError::new(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            format!(
                "this server does not answer Host {host:?}: it answers its listen address, \
                 localhost and the names in curator.serve.allowedHosts (a guard against DNS \
                 rebinding)"
            ),
        )
        .into_response(),
        Some(_) => next.run(request).await,
    }
}

/// Adds the security headers to a response that does not set them itself.
pub(crate) async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ];
    for (name, value) in set {
        headers.entry(name).or_insert(HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(listen: &str, names: &[&str]) -> AllowedHosts {
        let names: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        AllowedHosts::new(Some(listen.parse().unwrap()), &names)
    }

    #[test]
    fn the_listen_address_and_localhost_are_answered_any_other_name_is_not() {
        let h = hosts("127.0.0.1:7878", &[]);
        for ok in ["127.0.0.1:7878", "127.0.0.1", "localhost:7878", "LOCALHOST", "localhost:1"] {
            assert!(h.allows(ok), "{ok} refused");
        }
        for bad in [
            "evil.example",
            "evil.example:7878",
            "127.0.0.2:7878",
            "[::1]:7878",
            "localhost.evil.example",
            "evil.localhost",
            "",
            "user@127.0.0.1",
            "http://127.0.0.1",
            "127.0.0.1/x",
        ] {
            assert!(!h.allows(bad), "{bad} allowed");
        }
    }

    #[test]
    fn configured_names_are_answered_with_their_port_if_they_give_one() {
        let h = hosts("0.0.0.0:7878", &["memory.example", "ci.internal:8080"]);
        assert!(h.allows("Memory.Example:7878"));
        assert!(h.allows("ci.internal:8080"));
        assert!(!h.allows("ci.internal:7878"));
        assert!(!h.allows("other.example"));
        // Listening on every address: any IP literal is one of ours, no name is.
        assert!(h.allows("192.168.1.5:7878") && h.allows("[fe80::1]:7878"));
        let v6 = hosts("[::1]:7878", &[]);
        assert!(v6.allows("[::1]:7878") && !v6.allows("127.0.0.1:7878"));
    }
}
