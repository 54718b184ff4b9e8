//! `/static/*`: the stylesheet and script, embedded in the binary with rust-embed (issue 6
//! "embedded in the binary"; the `debug-embed` feature embeds them in debug builds too, so a
//! debug binary run from elsewhere serves the same files).

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "assets/"]
struct Assets;

/// The content type of the few kinds of files embedded.
fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

pub(crate) async fn serve(Path(path): Path<String>) -> Response {
    match Assets::get(&path) {
        Some(file) => (
            [
                (header::CONTENT_TYPE, content_type(&path)),
                (header::CACHE_CONTROL, "no-cache"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            file.data.into_owned(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stylesheet_and_script_are_embedded() {
        for name in ["app.css", "app.js"] {
            let file = Assets::get(name).unwrap_or_else(|| panic!("{name} not embedded"));
            assert!(!file.data.is_empty());
        }
        assert!(Assets::get("../Cargo.toml").is_none());
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
    }
}
