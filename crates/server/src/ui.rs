//! The web search page at `/ui`: one HTML file with its style and script inline, embedded in
//! the binary (no build step, no external resources). It speaks the native API.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The page.
pub const PAGE: &str = include_str!("../assets/ui.html");

/// `GET /ui`.
pub async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
        .into_response()
}
