//! The router, the shared state, the responses every route has in common, and serving with a
//! graceful shutdown.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use serde_json::json;

use crate::api_error::{ApiError, ErrorKind};
use crate::catalog::Catalog;
use crate::config::ServerConfig;
use crate::metrics::Metrics;
use crate::{elastic, native, ui};

/// What every handler shares.
pub struct AppState {
    /// The served indexes.
    pub catalog: Catalog,
    /// How the server runs.
    pub config: ServerConfig,
    /// The counters behind `/metrics`.
    pub metrics: Metrics,
}

/// The shared state as handlers receive it.
pub type Shared = Arc<AppState>;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut cause = json!({"type": self.kind.name(), "reason": self.reason});
        if let Some(position) = self.position {
            cause["position"] = json!(position);
        }
        let mut body = json!({"error": cause.clone(), "status": status.as_u16()});
        body["error"]["root_cause"] = json!([cause]);
        let mut response = (status, Json(body)).into_response();
        if self.kind == ErrorKind::Overloaded {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// A request body as bytes, whatever its content type (Elasticsearch clients send
/// `application/vnd.elasticsearch+json`); over the limit, a 413.
pub fn body_bytes(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                ErrorKind::ContentTooLong,
                "the request body is over the limit",
            )
        } else {
            ApiError::new(ErrorKind::Parse, rejection.body_text())
        }
    })
}

/// A JSON body, or `None` when the body is empty.
pub fn json_body<T: serde::de::DeserializeOwned>(bytes: &Bytes) -> Result<Option<T>, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(bytes).map(Some).map_err(|e| {
        ApiError::new(
            ErrorKind::Parse,
            format!("the request body is not valid: {e}"),
        )
    })
}

/// Counts every request by route and status, times it, and marks the response as
/// Elasticsearch's so its official clients accept it.
async fn observe(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let endpoint = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let mut response = as_json_error(next.run(request).await).await;
    state
        .metrics
        .observe_request(&endpoint, response.status().as_u16(), started.elapsed());
    response.headers_mut().insert(
        "x-elastic-product",
        HeaderValue::from_static("Elasticsearch"),
    );
    response
}

/// The response, with a plain-text client error (an extractor's rejection: a path segment that
/// is not valid percent-encoded UTF-8, a malformed query string) rewritten as the JSON error
/// every other failure gets, so clients parse one error shape.
async fn as_json_error(response: Response) -> Response {
    let kind = match response.status() {
        StatusCode::BAD_REQUEST => ErrorKind::IllegalArgument,
        StatusCode::NOT_FOUND => ErrorKind::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ErrorKind::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorKind::ContentTooLong,
        _ => return response,
    };
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }
    // Rejection texts are a line or two; anything longer is cut, not buffered whole.
    let text = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    ApiError::new(kind, text).into_response()
}

async fn health(State(state): State<Shared>) -> Response {
    let indexes: Vec<_> = state.catalog.iter().map(|i| i.name.clone()).collect();
    Json(json!({"status": "green", "indexes": indexes})).into_response()
}

async fn not_found(request: Request) -> ApiError {
    ApiError::new(
        ErrorKind::NotFound,
        format!("no route for {} {}", request.method(), request.uri().path()),
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(
        ErrorKind::MethodNotAllowed,
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// The routes over `state`.
pub fn router(state: Shared) -> Router {
    let body_limit = state.config.limits.max_body_bytes;
    Router::new()
        .route("/", get(elastic::root))
        .route("/ui", get(ui::page))
        .route("/health", get(health))
        .route("/metrics", get(crate::metrics::endpoint))
        .route("/indexes", get(native::list))
        .route("/indexes/{name}", get(native::describe))
        .route(
            "/indexes/{name}/search",
            get(native::search_get).post(native::search_post),
        )
        .route("/indexes/{name}/docs/{id}", get(native::document))
        .route("/_cat/indices", get(elastic::cat_indices))
        .route(
            "/{index}/_search",
            get(elastic::search).post(elastic::search),
        )
        .route("/{index}/_count", get(elastic::count).post(elastic::count))
        .route("/{index}/_doc/{id}", get(elastic::document))
        .route("/{index}/_mapping", get(elastic::mapping))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(state)
}

/// Serves `state` on its address until SIGINT or SIGTERM, then stops accepting, finishes the
/// requests in flight and stops the query threads. `ready` hears the bound address.
pub async fn serve(state: Shared, ready: impl FnOnce(std::net::SocketAddr)) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(state.config.addr).await?;
    ready(listener.local_addr()?);
    let app = router(state.clone());
    // Small responses go out at once: without TCP_NODELAY a response written in two parts
    // can wait on the client's delayed acknowledgement.
    // A socket that refuses the option still serves, only slower.
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    let catalog_state = state.clone();
    tokio::task::spawn_blocking(move || catalog_state.catalog.shutdown())
        .await
        .map_err(std::io::Error::other)?;
    Ok(())
}

/// Resolves on the first SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        // Without signal handlers the server runs until killed.
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
}
