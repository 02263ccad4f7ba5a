//! What the server's integration tests share: a server started on a free port.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apcache_server::AppState;

/// Serves `state` on its own runtime (two worker threads) on a thread that lives until the
/// test process ends; returns the address it listens on.
pub fn serve_in_background(state: Arc<AppState>) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime
            .block_on(apcache_server::serve(state, move |addr| {
                tx.send(addr).unwrap()
            }))
            .unwrap();
    });
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}
