//! The server over real HTTP on an index of the bundled sample: bad input gets its status and
//! a JSON error, a full queue a 503 with Retry-After, a deadline a 504 with the query
//! cancelled where it stood, a panic in a query thread a 500 with the pool still whole, a
//! closed connection cancels its query, and a file cut under the running server fails the
//! requests that read it with a 500 while the others are served. Faults are injected with
//! fail points; every test holds the fail-point scenario, so they run one at a time.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use apcache_index::format::{FileKind, HEADER_LEN};
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_server::metrics::Metrics;
use apcache_server::{AppState, Catalog, QueryLimits, ServedIndex, ServerConfig};
use apcache_tier::loader::{LoaderKind, READ_FAULT, SHORT_READ_FAULT};
use apcache_tier::region::TierSpec;
use apcache_tier::serving::{LiveConfig, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack};
use apcache_tier::ServingMode;
use serde_json::Value;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// A server on a free port over a fresh index of the sample; it lives until the test ends.
struct TestServer {
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

fn start(threads: usize, queue_depth: usize, timeout: Duration) -> TestServer {
    start_serving(threads, queue_depth, timeout, ServingConfig::default())
}

/// Like [`start`], serving through `serving`.
fn start_serving(
    threads: usize,
    queue_depth: usize,
    timeout: Duration,
    serving: ServingConfig,
) -> TestServer {
    start_on(sample(), threads, queue_depth, timeout, serving)
}

/// Like [`start_serving`], over an index of `input` (still named `sample`).
fn start_on(
    input: PathBuf,
    threads: usize,
    queue_depth: usize,
    timeout: Duration,
    serving: ServingConfig,
) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("sample");
    build_index(
        vec![Input::from_arg(input)],
        &index,
        &IndexOptions::default(),
        |_, _| {},
    )
    .unwrap();
    let stack = ServingStack::assemble(&index, &serving, |_| {}).unwrap();
    let service = LiveService::start(
        Arc::new(stack),
        LiveConfig {
            threads,
            queue_depth,
        },
    )
    .unwrap();
    let mut catalog = Catalog::new();
    assert!(catalog.insert(ServedIndex::new("sample".into(), service).unwrap()));
    let state = Arc::new(AppState {
        catalog,
        config: ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            threads,
            queue_depth,
            timeout,
            limits: QueryLimits {
                max_body_bytes: 64 * 1024,
                ..QueryLimits::default()
            },
        },
        metrics: Metrics::new(),
    });
    TestServer {
        addr: common::serve_in_background(state),
        _dir: dir,
    }
}

/// A native search response's total and hits (ids and scores), without its timing.
fn hits(body: &str) -> (Value, Vec<(Value, Value)>) {
    let json: Value = serde_json::from_str(body).unwrap();
    let hits = json["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["id"].clone(), h["score"].clone()))
        .collect();
    (json["total"].clone(), hits)
}

/// A response: status, headers (lowercased names), body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn send(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> Response {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    // The server may answer (413) before reading a body it refuses: a failed write is fine.
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Response {
        status,
        headers,
        body: body.to_string(),
    }
}

fn get(addr: SocketAddr, path: &str) -> Response {
    send(addr, "GET", path, b"")
}

/// The sum of a metric's samples in `/metrics`.
fn metric(addr: SocketAddr, name: &str) -> f64 {
    get(addr, "/metrics")
        .body
        .lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn bad_requests_get_their_status_and_a_json_error() {
    let scenario = fail::FailScenario::setup();
    let server = start(1, 8, Duration::from_secs(10));
    let addr = server.addr;

    let ok = get(addr, "/indexes/sample/search?q=river&k=3&count=true");
    assert_eq!(ok.status, 200, "{}", ok.body);
    let ok = ok.json();
    assert_eq!(ok["hits"].as_array().unwrap().len(), 3);
    assert_eq!(ok["total"]["exact"], true);

    let parse = get(addr, "/indexes/sample/search?q=river%20(valley");
    assert_eq!(parse.status, 400);
    assert_eq!(parse.json()["error"]["type"], "query_parse_error");
    assert_eq!(parse.json()["error"]["position"], 6);

    let unknown = get(addr, "/nope/_search?q=river");
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"]["type"], "index_not_found_exception");

    for path in [
        "/indexes/sample/search?q=river&k=-1",
        "/indexes/sample/search?q=river&k=9999&offset=2",
        "/indexes/sample/search?k=3",
        "/sample/_search?q=river&size=20000",
    ] {
        let response = get(addr, path);
        assert_eq!(response.status, 400, "{path}: {}", response.body);
        assert_eq!(response.json()["status"], 400);
    }

    let deep = format!(
        "/indexes/sample/search?q={}a{}",
        "(".repeat(40),
        ")".repeat(40)
    );
    assert_eq!(get(addr, &deep).status, 400);
    let many: Vec<String> = (0..1100).map(|i| format!("w{i}")).collect();
    let many = get(
        addr,
        &format!("/indexes/sample/search?q={}", many.join("%20")),
    );
    assert_eq!(many.status, 400);
    assert_eq!(many.json()["error"]["type"], "query_too_large");
    // A word written more times than the limit counts every time; at the limit it runs.
    let repeated =
        |times: usize| format!("/indexes/sample/search?q={}", "%2Briver%20".repeat(times));
    let past = get(addr, &repeated(1025));
    assert_eq!(past.status, 400, "{}", past.body);
    assert_eq!(past.json()["error"]["type"], "query_too_large");
    let reason = past.json()["error"]["reason"].to_string();
    assert!(reason.contains("the query has 1025 clauses"), "{reason}");
    let at = get(addr, &repeated(1024));
    assert_eq!(at.status, 200, "{}", at.body);

    let huge = vec![b' '; 100 * 1024];
    let too_long = send(addr, "POST", "/sample/_search", &huge);
    assert_eq!(too_long.status, 413);

    let not_json = send(addr, "POST", "/sample/_search", b"{\"query\": ");
    assert_eq!(not_json.status, 400);
    assert_eq!(get(addr, "/no/such/route/here").status, 404);
    scenario.teardown();
}

#[test]
fn a_panic_is_a_500_and_the_pool_stays_whole() {
    let scenario = fail::FailScenario::setup();
    let server = start(1, 8, Duration::from_secs(10));
    fail::cfg("apcache::live::evaluate", "1*panic(injected)").unwrap();
    let failed = get(server.addr, "/indexes/sample/search?q=river");
    assert_eq!(failed.status, 500);
    assert!(failed.body.contains("injected"), "{}", failed.body);
    // The one query thread is still there.
    for _ in 0..3 {
        assert_eq!(
            get(server.addr, "/indexes/sample/search?q=river").status,
            200
        );
    }
    assert_eq!(metric(server.addr, "apcache_panics_total"), 1.0);
    scenario.teardown();
}

#[test]
fn storage_faults_and_damaged_terms_fail_only_what_they_touch() {
    let scenario = fail::FailScenario::setup();
    let serving = ServingConfig {
        mode: ServingMode::HybridPrefetch,
        tier: TierSpec::Anonymous,
        loader: LoaderKind::Pread,
        cache_bytes: Some(16 << 20),
        ..ServingConfig::default()
    };
    let server = start_serving(1, 8, Duration::from_secs(10), serving);
    let addr = server.addr;
    let search = |q: &str| get(addr, &format!("/indexes/sample/search?q={q}&count=true"));
    let sound = search("river+valley");
    assert_eq!(sound.status, 200);

    // A storage read of the cache's loader fails: the loader gives up on the term, the query
    // reads it from the postings file and answers exactly; the failure is counted.
    fail::cfg(READ_FAULT, "1*return(eio)").unwrap();
    let fallback = search("observatory");
    fail::remove(READ_FAULT);
    assert_eq!(fallback.status, 200, "{}", fallback.body);
    assert_eq!(metric(addr, "apcache_load_errors_total"), 1.0);
    let reference = start(1, 8, Duration::from_secs(10));
    let exact = |q: &str| {
        get(
            reference.addr,
            &format!("/indexes/sample/search?q={q}&count=true"),
        )
    };
    assert_eq!(hits(&fallback.body), hits(&exact("observatory").body));
    // Asked again, it loads into the cache and answers the same.
    assert_eq!(hits(&search("observatory").body), hits(&fallback.body));

    // Short reads: every pread returns half of what it asks for; the loader reads on.
    fail::cfg(SHORT_READ_FAULT, "return").unwrap();
    for q in ["album", "film+OR+music", "%2Bunited+%2Bstates"] {
        let short = search(q);
        assert_eq!(short.status, 200, "{}", short.body);
        assert_eq!(hits(&short.body), hits(&exact(q).body), "{q}");
    }
    fail::remove(SHORT_READ_FAULT);

    // A damaged term: one flipped byte in its postings fails the queries that read it with
    // a 500 naming the file and the term, counted as a failure and as damage; the others are
    // answered as before.
    let index = server._dir.path().join("sample");
    let reader = apcache_index::search::IndexReader::open(&index).unwrap();
    let segment = &reader.segments()[0];
    let info = segment.term("telescope").unwrap().unwrap();
    let post = segment
        .meta()
        .file(FileKind::Postings)
        .unwrap()
        .name
        .clone();
    let path = index.join(&post);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[HEADER_LEN + info.postings_offset as usize + 1] ^= 0x20;
    std::fs::write(&path, bytes).unwrap();
    for _ in 0..2 {
        let damaged = search("telescope");
        assert_eq!(damaged.status, 500, "{}", damaged.body);
        assert_eq!(damaged.json()["error"]["type"], "corrupt_index_exception");
        assert!(
            damaged.body.contains(&post) && damaged.body.contains("telescope"),
            "{}",
            damaged.body
        );
    }
    assert_eq!(metric(addr, "apcache_failed_total"), 2.0);
    assert_eq!(metric(addr, "apcache_corrupt_reads_total"), 2.0);
    assert_eq!(hits(&search("river+valley").body), hits(&sound.body));

    // A damaged store block: the documents it holds answer 500, counted as damage; the
    // documents of other blocks are read as before.
    let store = segment.meta().file(FileKind::Store).unwrap().name.clone();
    let path = index.join(&store);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[HEADER_LEN + 20] ^= 0x10;
    std::fs::write(&path, bytes).unwrap();
    let mut damaged = 0;
    for id in 0..40 {
        let doc = get(addr, &format!("/indexes/sample/docs/{id}"));
        if doc.status == 500 {
            assert_eq!(doc.json()["error"]["type"], "corrupt_index_exception");
            assert!(doc.body.contains(&store), "{}", doc.body);
            damaged += 1;
        } else {
            assert_eq!(doc.status, 200, "{}", doc.body);
        }
    }
    assert!(
        damaged > 0 && damaged < 40,
        "{damaged} of 40 documents failed"
    );
    assert_eq!(
        metric(addr, "apcache_corrupt_reads_total"),
        2.0 + damaged as f64
    );
    assert_eq!(metric(addr, "apcache_failed_total"), 2.0);
    scenario.teardown();
}

#[test]
fn a_file_cut_under_the_server_fails_the_requests_that_read_it() {
    let scenario = fail::FailScenario::setup();
    let cached = ServingConfig {
        mode: ServingMode::HybridPrefetch,
        tier: TierSpec::Anonymous,
        loader: LoaderKind::Mmap,
        cache_bytes: Some(16 << 20),
        ..ServingConfig::default()
    };
    // `base` reads postings through the segment's mapping; `hybrid-prefetch` with the mmap
    // loader copies them into the cache through a mapping of its own first.
    for serving in [ServingConfig::default(), cached] {
        let mode = serving.mode;
        let server = start_serving(1, 8, Duration::from_secs(10), serving);
        let addr = server.addr;
        let search = |q: &str| get(addr, &format!("/indexes/sample/search?q={q}&count=true"));
        assert_eq!(search("river+valley").status, 200);
        assert_eq!(search("telescope").status, 200);

        // The postings file is emptied under the live mappings: the next read of a posting
        // gets SIGBUS, which must fail the request, not the process.
        let index = server._dir.path().join("sample");
        let manifest = apcache_index::Manifest::load(&index).unwrap();
        let post = &manifest.segments[0].file(FileKind::Postings).unwrap().name;
        std::fs::OpenOptions::new()
            .write(true)
            .open(index.join(post))
            .unwrap()
            .set_len(0)
            .unwrap();
        // A term no earlier query read, so that no cache holds it.
        for _ in 0..2 {
            let failed = search("observatory");
            assert_eq!(failed.status, 500, "{mode:?}: {}", failed.body);
            let error = &failed.json()["error"];
            assert_eq!(error["type"], "io_exception", "{mode:?}: {}", failed.body);
            let reason = error["reason"].as_str().unwrap();
            assert!(
                reason.contains(post.as_str()) && reason.contains("read error"),
                "{reason}"
            );
        }
        assert_eq!(metric(addr, "apcache_failed_total"), 2.0, "{mode:?}");
        if mode == ServingMode::HybridPrefetch {
            // The cache's loader met the failed page first and gave the term up.
            assert!(metric(addr, "apcache_load_errors_total") >= 1.0);
        }
        // What does not read postings is answered as before.
        assert_eq!(get(addr, "/health").status, 200);
        assert_eq!(get(addr, "/_cat/indices").status, 200);
        let document = get(addr, "/indexes/sample/docs/0");
        assert_eq!(document.status, 200, "{}", document.body);
    }
    scenario.teardown();
}

#[test]
fn a_full_queue_answers_503_at_once() {
    let scenario = fail::FailScenario::setup();
    let server = start(1, 1, Duration::from_secs(10));
    let addr = server.addr;
    fail::cfg("apcache::live::evaluate", "sleep(600)").unwrap();
    // One request runs (asleep), one waits; the third finds the queue full.
    let running = std::thread::spawn(move || get(addr, "/indexes/sample/search?q=river"));
    std::thread::sleep(Duration::from_millis(150));
    let waiting = std::thread::spawn(move || get(addr, "/indexes/sample/search?q=valley"));
    std::thread::sleep(Duration::from_millis(150));
    let started = Instant::now();
    let refused = get(addr, "/indexes/sample/search?q=town");
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "refused at once"
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(
        refused.json()["error"]["type"],
        "rejected_execution_exception"
    );
    fail::cfg("apcache::live::evaluate", "off").unwrap();
    assert_eq!(running.join().unwrap().status, 200);
    assert_eq!(waiting.join().unwrap().status, 200);
    assert_eq!(metric(addr, "apcache_rejected_total"), 1.0);
    scenario.teardown();
}

#[test]
fn a_deadline_is_a_504_and_the_query_is_cancelled() {
    let scenario = fail::FailScenario::setup();
    let server = start(1, 8, Duration::from_millis(200));
    let addr = server.addr;
    // The query thread is held past the deadline, then evaluates with its flag raised: it
    // stops at its first block instead of answering.
    fail::cfg("apcache::live::evaluate", "1*sleep(500)").unwrap();
    let started = Instant::now();
    let late = get(addr, "/indexes/sample/search?q=river&count=true");
    assert_eq!(late.status, 504, "{}", late.body);
    assert!(started.elapsed() < Duration::from_millis(450));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        metric(addr, "apcache_queries_total"),
        0.0,
        "the late query did not complete"
    );
    assert!(metric(addr, "apcache_timeouts_total") >= 1.0);
    // A deadline already past when a query thread takes it: not run at all.
    assert_eq!(get(addr, "/indexes/sample/search?q=river").status, 200);
    assert_eq!(metric(addr, "apcache_queries_total"), 1.0);
    scenario.teardown();
}

/// A query that runs long (no fail point: a sloppy phrase of one word written 63 times, whose
/// sweep in each document takes a large part of a second) gets its 504 at the deadline, and
/// its query thread stops at once: the next query, which waits for that one thread, is
/// answered within its own deadline.
#[test]
fn a_deadline_frees_the_query_thread_of_a_long_query() {
    // No fail point, but the scenario's lock keeps the other tests' load off the timings.
    let scenario = fail::FailScenario::setup();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("dense.tsv");
    let body = "w ".repeat(40_000);
    let lines: String = (0..30).map(|i| format!("doc {i}\t{body}x\n")).collect();
    std::fs::write(&input, lines).unwrap();
    let timeout = Duration::from_millis(300);
    let server = start_on(input, 1, 8, timeout, ServingConfig::default());
    let addr = server.addr;
    let phrase = format!("%22{}x%22~8", "w%20".repeat(63));
    let started = Instant::now();
    let late = get(addr, &format!("/indexes/sample/search?q={phrase}&k=10"));
    assert_eq!(late.status, 504, "{}", late.body);
    let waited = started.elapsed();
    assert!(waited < timeout * 2, "the 504 came after {waited:?}");
    let quick = get(addr, "/indexes/sample/search?q=doc&k=3&count=true");
    assert_eq!(quick.status, 200, "{}", quick.body);
    assert_eq!(quick.json()["total"]["value"], 30, "{}", quick.body);
    assert!(metric(addr, "apcache_timeouts_total") >= 1.0);
    // Sorted by fields, the query runs off the query threads, under the same deadline; each
    // abandoned one stops, so however many came before, the slots are free for the next.
    for _ in 0..5 {
        let started = Instant::now();
        let late = get(
            addr,
            &format!("/indexes/sample/search?q={phrase}&k=10&sort=_doc"),
        );
        assert_eq!(late.status, 504, "{}", late.body);
        assert!(started.elapsed() < timeout * 2);
    }
    let quick = get(addr, "/indexes/sample/search?q=doc&k=3&sort=_doc:desc");
    assert_eq!(quick.status, 200, "{}", quick.body);
    assert_eq!(quick.json()["hits"][0]["_id"], "29", "{}", quick.body);
    scenario.teardown();
}

/// Tab-separated documents have no ids of their own: each one's id is its number, found by
/// `_doc`, shown in hits, and paged through with `search_after`; their mapping is a title and a
/// body, searched together, and `ids` is refused rather than answered wrong.
#[test]
fn tab_separated_documents_are_numbered_and_mapped_as_title_and_body() {
    let server = start(1, 8, Duration::from_secs(10));
    let addr = server.addr;
    let mapping = get(addr, "/sample/_mapping");
    assert_eq!(mapping.status, 200, "{}", mapping.body);
    assert_eq!(
        mapping.json()["sample"]["mappings"]["properties"],
        serde_json::json!({"body": {"type": "text"}, "title": {"type": "text"}})
    );
    let doc = get(addr, "/sample/_doc/3");
    assert_eq!(doc.status, 200, "{}", doc.body);
    let source = &doc.json()["_source"];
    assert!(
        source["title"].is_string() && source["body"].is_string(),
        "{source}"
    );
    let native = get(addr, "/indexes/sample/docs/3").json();
    assert_eq!(&native["source"], source);
    assert_eq!(
        (native["id"].clone(), native["_id"].clone()),
        ("3".into(), "3".into())
    );
    assert_eq!(get(addr, "/sample/_doc/99999999").status, 404);

    // `match` on body or title: both search the one stream of words, as query_string does.
    let by_match = send(
        addr,
        "POST",
        "/sample/_search",
        br#"{"query": {"match": {"title": "river"}}, "size": 5}"#,
    );
    let by_text = send(
        addr,
        "POST",
        "/sample/_search",
        br#"{"query": {"query_string": {"query": "river"}}, "size": 5}"#,
    );
    assert_eq!(by_match.status, 200, "{}", by_match.body);
    assert_eq!(by_match.json()["hits"], by_text.json()["hits"]);

    // Paging by document order with search_after visits what one big page holds.
    let query = r#"{"bool": {"must": {"query_string": {"query": "river"}}, "filter": {"match": {"body": "the"}}}}"#;
    let whole = send(
        addr,
        "POST",
        "/sample/_search",
        format!(r#"{{"query": {query}, "sort": ["_doc"], "size": 12}}"#).as_bytes(),
    )
    .json();
    let whole: Vec<Value> = whole["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_id"].clone())
        .collect();
    assert_eq!(whole.len(), 12);
    let mut paged = Vec::new();
    let mut after = String::new();
    while paged.len() < 12 {
        let body = format!(r#"{{"query": {query}, "sort": ["_doc"], "size": 4 {after}}}"#);
        let page = send(addr, "POST", "/sample/_search", body.as_bytes());
        assert_eq!(page.status, 200, "{}", page.body);
        let hits = page.json()["hits"]["hits"].as_array().unwrap().clone();
        paged.extend(hits.iter().map(|h| h["_id"].clone()));
        after = format!(r#", "search_after": {}"#, hits.last().unwrap()["sort"]);
    }
    assert_eq!(paged, whole);

    let ids = send(
        addr,
        "POST",
        "/sample/_search",
        br#"{"query": {"ids": {"values": ["3"]}}}"#,
    );
    assert_eq!(ids.status, 400, "{}", ids.body);
    assert!(ids.body.contains("no _id of their own"), "{}", ids.body);
    let exists = send(
        addr,
        "POST",
        "/sample/_search",
        br#"{"query": {"exists": {"field": "title"}}, "size": 0}"#,
    );
    // Every tab-separated document has a title (an empty string is a value).
    assert_eq!(exists.status, 200, "{}", exists.body);
    let all = send(addr, "POST", "/sample/_count", b"{}");
    let count = |body: &str| -> u64 {
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        json["hits"]["total"]["value"]
            .as_u64()
            .or_else(|| json["count"].as_u64())
            .unwrap()
    };
    assert_eq!(count(&exists.body), count(&all.body));
}

#[test]
fn a_closed_connection_cancels_its_query() {
    let scenario = fail::FailScenario::setup();
    let server = start(1, 8, Duration::from_secs(10));
    let addr = server.addr;
    fail::cfg("apcache::live::evaluate", "1*sleep(400)").unwrap();
    {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(b"GET /indexes/sample/search?q=river HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
    } // closed while the query thread sleeps
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(metric(addr, "apcache_cancelled_total"), 1.0);
    assert_eq!(metric(addr, "apcache_queries_total"), 0.0);
    scenario.teardown();
}

/// Phrases run, and both APIs mark where the query matched: the native API's `highlight`
/// and Elasticsearch's `highlight.fields`, with its tags and fragment options.
#[test]
fn phrases_search_and_highlights_mark_the_matches() {
    let server = start(1, 8, Duration::from_secs(10));
    let addr = server.addr;
    let native = get(
        addr,
        "/indexes/sample/search?q=%22united%20states%22&k=3&highlight=true",
    );
    assert_eq!(native.status, 200, "{}", native.body);
    let native = native.json();
    let hits = native["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{native}");
    for hit in hits {
        let fragments = hit["highlight"].as_array().unwrap();
        let text = fragments
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect::<String>();
        assert!(
            text.to_lowercase()
                .contains("<em>united</em> <em>states</em>"),
            "{text}"
        );
    }
    let body = br#"{"query": {"query_string": {"query": "\"united states\" river"}}, "size": 2,
        "highlight": {"pre_tags": ["[["], "post_tags": ["]]"], "fragment_size": 40,
                      "number_of_fragments": 2, "fields": {"body": {}, "title": {}}}}"#;
    let es = send(addr, "POST", "/sample/_search", body);
    assert_eq!(es.status, 200, "{}", es.body);
    let es = es.json();
    for hit in es["hits"]["hits"].as_array().unwrap() {
        let body = hit["highlight"]["body"].as_array().unwrap();
        assert!(body.len() <= 2, "{hit}");
        assert!(
            body.iter().all(|f| f.as_str().unwrap().contains("[[")),
            "{hit}"
        );
    }
    let bad = send(
        addr,
        "POST",
        "/sample/_search",
        br#"{"query": {"match_all": {}}, "highlight": {"fields": {"abstract": {}}}}"#,
    );
    assert_eq!(bad.status, 400, "{}", bad.body);
}

/// Under `partial2` matching, a disjunction with no entry of its own is answered from the
/// entry of one of its terms, and the answer says it is approximate, in the native API and
/// the Elasticsearch one; an exact answer says it is not.
#[test]
fn partial2_answers_are_marked_approximate() {
    let scenario = fail::FailScenario::setup();
    let serving = ServingConfig {
        result_cache: Some(apcache_tier::result_cache::ResultCacheConfig {
            matching: apcache_tier::result_cache::Matching::Partial2,
            ..Default::default()
        }),
        ..ServingConfig::default()
    };
    let server = start_serving(1, 8, Duration::from_secs(10), serving);
    let addr = server.addr;

    // `river` is evaluated and stored; `river valley` then has no entry of its own.
    let exact = get(addr, "/indexes/sample/search?q=river&k=3");
    assert_eq!(exact.status, 200, "{}", exact.body);
    assert_eq!(exact.json()["approximate"], false);
    let river = exact.json()["hits"].clone();
    let approximate = get(addr, "/indexes/sample/search?q=river%20valley&k=3");
    assert_eq!(approximate.status, 200, "{}", approximate.body);
    let approximate = approximate.json();
    assert_eq!(approximate["approximate"], true);
    assert_eq!(approximate["hits"], river, "the answer of `river`");
    assert_eq!(approximate["total"]["exact"], false);
    // Exact answers carry no such field in the Elasticsearch API.
    let plain = get(addr, "/sample/_search?q=river&size=3");
    assert_eq!(plain.status, 200, "{}", plain.body);
    assert!(plain.json().get("approximate").is_none(), "{}", plain.body);
    let elastic = get(addr, "/sample/_search?q=river%20valley&size=3");
    assert_eq!(elastic.status, 200, "{}", elastic.body);
    assert_eq!(elastic.json()["approximate"], true, "{}", elastic.body);
    scenario.teardown();
}
