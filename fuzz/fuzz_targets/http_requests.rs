//! Arbitrary HTTP requests to the server's router, in-process: the first byte picks the
//! endpoint and method, the rest is the body (or the query string). Every answer is a
//! complete response whose status is not 500: bad input is the client's error (4xx), never a
//! crash or an internal error.
#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use apcache_server::metrics::Metrics;
use apcache_server::{AppState, Catalog, QueryLimits, ServedIndex, ServerConfig};
use apcache_tier::serving::{LiveConfig, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack};
use axum::body::Body;
use axum::http::{Method, Request};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

struct Server {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let index = apcache_fuzz::fixture().index();
        let stack = ServingStack::assemble(&index, &ServingConfig::default(), |_| {}).expect("stack");
        let service = LiveService::start(Arc::new(stack), LiveConfig { threads: 1, queue_depth: 4 })
            .expect("service");
        let mut catalog = Catalog::new();
        catalog.insert(ServedIndex::new("wiki".into(), service).expect("served"));
        let state = Arc::new(AppState {
            catalog,
            config: ServerConfig {
                timeout: Duration::from_secs(5),
                limits: QueryLimits { max_body_bytes: 64 * 1024, ..QueryLimits::default() },
                ..ServerConfig::default()
            },
            metrics: Metrics::new(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Server { runtime, router: apcache_server::router(state) }
    })
}

/// Endpoints by selector: (method, path; the input is appended to a path ending in `?` or `/`).
const ENDPOINTS: [(&str, &str); 10] = [
    ("POST", "/wiki/_search"),
    ("GET", "/wiki/_search?"),
    ("POST", "/wiki/_count"),
    ("POST", "/indexes/wiki/search"),
    ("GET", "/indexes/wiki/search?"),
    ("GET", "/wiki/_doc/"),
    ("GET", "/indexes/wiki/docs/"),
    ("POST", "/_search"),
    ("GET", "/_cat/indices?"),
    ("PUT", "/wiki/_search"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let (method, path) = ENDPOINTS[usize::from(selector) % ENDPOINTS.len()];
    let (uri, body) = if path.ends_with('?') || path.ends_with('/') {
        let Ok(tail) = std::str::from_utf8(rest) else { return };
        (format!("{path}{tail}"), Vec::new())
    } else {
        (path.to_string(), rest.to_vec())
    };
    let Ok(request) = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).expect("a method"))
        .uri(&uri)
        .header("content-type", "application/json")
        .body(Body::from(body))
    else {
        return; // not a URI: no server ever sees it
    };
    let server = server();
    let response = server
        .runtime
        .block_on(server.router.clone().oneshot(request))
        .expect("the router is infallible");
    let status = response.status();
    assert_ne!(status.as_u16(), 500, "{method} {uri:?}: 500");
    let body = server
        .runtime
        .block_on(axum::body::to_bytes(response.into_body(), 1 << 24))
        .expect("a complete body");
    if !status.is_success() {
        assert!(body.starts_with(b"{"), "{method} {uri:?}: {status} without a JSON error");
    }
});
