"""The HTTP front of a sharded index on Ray Serve: `apcache serve`'s API (crates/server/src),
answered by a `ShardedIndex` coordinator in the same paths, JSON shapes, status codes and
error bodies, so that a client cannot tell which one it speaks to:

- `GET /` (cluster information; a browser is sent to `/ui`), `GET /health`, `GET /ui` (the
  server's own search page, crates/server/assets/ui.html, shipped in this package),
  `GET /metrics` (Prometheus text, `_metrics.py`);
- the native API: `GET /indexes`, `GET /indexes/{name}`, `GET|POST /indexes/{name}/search`,
  `GET /indexes/{name}/docs/{id}`;
- the Elasticsearch subset: `GET /_cat/indices` (`?v`, `?format=json`),
  `GET|POST /{index}/_search`, `GET|POST /{index}/_count`, `GET /{index}/_doc/{id}`.

A search is held to the server's limits (`QueryLimits`, same defaults and messages; a query
that does not parse is a 400 with the byte it points at), admitted into a bounded queue
(503 with `Retry-After` past it) and answered within a deadline (504 past it, the shards'
calls not yet answered cancelled); `FrontConfig` sets them. Highlights (the native
`highlight=true`, the Elasticsearch `highlight`) are the server's, made by the shards that
hold the hits when they fetch their fields. What differs, because the front is sharded:
`_shards.total` and `/_cat/indices`' `pri` count the shards, and a shard that fails answers
503 (`search_phase_execution_exception`, naming it). docs/distributed.md describes it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.resources
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple, TypeVar
from urllib.parse import quote, unquote

from ray import serve
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import __version__
from .._apcache import ApcacheError, QueryError
from ._api import (
    ApiError,
    NATIVE_HIGHLIGHT,
    EsSearch,
    NativeSearch,
    check_window,
    es_request,
    illegal,
    json_response,
    native_from_body,
    native_from_url,
    query_parse_error,
    rust_debug,
)
from ._limits import Admission, FrontConfig, Overloaded, QueryTooLarge, check_query_bytes
from ._metrics import CONTENT_TYPE, IndexCounters, IndexSnapshot, Metrics, process_memory
from ._shards import HighlightFields, QueryTimeout, ShardedHit, ShardedIndex, ShardedResult, ShardError

T = TypeVar("T")

COMPATIBLE_VERSION = "8.11.0"
"""The Elasticsearch version whose API the subset follows (as `apcache serve`)."""

SNIPPET_CHARS = 200
ROUTE_HEADROOM = 16
"""Requests a front replica takes beyond its searches' threads and queue (pages, metrics,
documents), so that Ray Serve hands it the request that overflows the queue, which the front
then refuses with a 503, instead of holding it in Serve's own queue."""
PAGE_RESOURCE = "ui.html"
"""The search page, in this package (a link to crates/server/assets/ui.html in the source)."""


def snippet(text: str, max_chars: int = SNIPPET_CHARS) -> str:
    """The body's first `max_chars` characters, cut at a space, as `apcache serve` cuts it
    (the space's place counted in UTF-8 bytes, as there)."""
    cut = text[:max_chars]
    if len(cut) == len(text):
        return cut
    raw = cut.encode("utf-8")
    space = raw.rfind(b" ")
    if space > max_chars // 2:
        return raw[:space].decode("utf-8") + "…"
    return cut + "…"


Handler = Callable[["SearchFront", Request, Dict[str, str], float], Awaitable[Response]]


@dataclass(frozen=True)
class _Route:
    """A route template (the server's, also its metrics label) and its handlers by method."""

    template: str
    handlers: Dict[str, Handler]

    @property
    def segments(self) -> List[str]:
        return self.template[1:].split("/")

    @property
    def rank(self) -> Tuple[int, ...]:
        """Static segments before captures, left to right (how the server's router ranks
        routes that both match: `/indexes/x` is the native index, not `/{index}/...`)."""
        return tuple(1 if s.startswith("{") else 0 for s in self.segments)

    def match(self, segments: List[str]) -> Optional[Dict[str, str]]:
        """The captures when `segments` (the raw path's) fit, else None."""
        mine = self.segments
        if len(mine) != len(segments):
            return None
        captured: Dict[str, str] = {}
        for want, got in zip(mine, segments):
            if want.startswith("{"):
                if not got:
                    return None
                captured[want[1:-1]] = got
            elif want != got:
                return None
        return captured

    def allowed(self) -> str:
        """The `Allow` header of a 405 (HEAD with GET, as the server's router adds it)."""
        methods: List[str] = []
        for method in self.handlers:
            methods.append(method)
            if method == "GET":
                methods.append("HEAD")
        return ",".join(methods)


def _decoded(segment: str) -> str:
    """A path capture, percent-decoded as UTF-8 (a 400 when it is not)."""
    try:
        return unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise illegal(f"Invalid URL: the path segment {rust_debug(segment)} is not UTF-8") from None


class SearchFront:
    """The HTTP routes over one sharded index named `name` (a Ray Serve deployment's body,
    or called directly with a Starlette request)."""

    def __init__(self, name: str, index: ShardedIndex, config: Optional[FrontConfig] = None) -> None:
        self.name = name
        self.index = index
        self.config = (config or FrontConfig()).resolved()
        self.limits = self.config.limits
        assert self.config.threads is not None and self.config.queue_depth is not None
        self.admission = Admission(self.config.threads, self.config.queue_depth)
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.config.threads, thread_name_prefix="apcache-front"
        )
        self.metrics = Metrics()
        self.counters = IndexCounters()
        self._description: Optional[Dict[str, Any]] = None
        self._page: Optional[str] = None

    # ---- dispatch -------------------------------------------------------------------------

    async def __call__(self, request: Request) -> Response:
        """The answer to `request`, every failure an error body; counted by route and status
        (a request whose client went away is cancelled and, as in the server, not counted)."""
        arrived = time.monotonic()
        endpoint = "unmatched"
        try:
            route, raw = self._route(request)
            endpoint = route.template
            method = "GET" if request.method == "HEAD" else request.method
            handler = route.handlers.get(method)
            if handler is None:
                raise _NotAllowed(route.allowed())
            captures = {name: _decoded(value) for name, value in raw.items()}
            response = await handler(self, request, captures, arrived)
        except _NotAllowed as refused:
            error = ApiError(
                "method_not_allowed_exception",
                f"{request.method} is not allowed on {_raw_path(request)}",
            )
            response = error.response({"Allow": refused.allow})
        except ApiError as error:
            response = error.response()
        except Exception as error:  # noqa: BLE001 - every failure is an answer, never a dropped connection
            # A bug of the front (the server's panics): answered 500, counted, served on.
            self.counters.panics += 1
            response = ApiError("internal_server_error", f"{type(error).__name__}: {error}").response()
        response.headers["x-elastic-product"] = "Elasticsearch"
        self.metrics.observe_request(endpoint, response.status_code, time.monotonic() - arrived)
        return response

    def _route(self, request: Request) -> Tuple[_Route, Dict[str, str]]:
        """The route of the request's raw path, and its captures (still percent-encoded);
        404 when none fits."""
        path = _raw_path(request)
        segments = path[1:].split("/") if path.startswith("/") else path.split("/")
        matches = [(route, found) for route in _ROUTES if (found := route.match(segments)) is not None]
        if not matches:
            raise ApiError("resource_not_found_exception", f"no route for {request.method} {path}")
        return min(matches, key=lambda pair: pair[0].rank)

    def _known(self, name: str) -> None:
        if name != self.name:
            raise ApiError("index_not_found_exception", f"no such index [{name}]")

    async def _body(self, request: Request) -> bytes:
        body = await request.body()
        if len(body) > self.limits.max_body_bytes:
            raise ApiError("content_too_long_exception", "the request body is over the limit")
        return body

    # ---- running a search: admission, deadline, errors ------------------------------------

    async def _guarded(self, work: Callable[[float], T], query: str, arrived: float) -> T:
        """`work(deadline)` on one of the front's threads, admitted into the bounded queue,
        answered by the deadline (a `time.monotonic()` value: the request's arrival, plus the
        timeout); its failures as the server's errors."""
        deadline = arrived + self.config.timeout_ms / 1000.0
        try:
            self.admission.admit()
        except Overloaded as error:
            raise ApiError("rejected_execution_exception", str(error)) from None
        future = self._executor.submit(work, deadline)
        future.add_done_callback(lambda _: self.admission.release())
        try:
            left = max(0.0, deadline - time.monotonic())
            answer = await asyncio.wait_for(asyncio.wrap_future(future), timeout=left)
        except (asyncio.TimeoutError, QueryTimeout):
            future.cancel()
            self.counters.timeouts += 1
            raise ApiError(
                "timeout_exception",
                f"the query ran past the {self.config.timeout_ms} ms deadline and was cancelled",
            ) from None
        except asyncio.CancelledError:
            future.cancel()
            self.counters.cancelled += 1
            raise
        except QueryError as error:
            raise query_parse_error(error, query) from None
        except QueryTooLarge as error:
            raise ApiError("query_too_large", str(error)) from None
        except ShardError as error:
            self.counters.failed += 1
            for shard in error.shards:
                self.counters.shard_failures[shard] = self.counters.shard_failures.get(shard, 0) + 1
            raise ApiError("search_phase_execution_exception", str(error)) from None
        except ApcacheError as error:
            self.counters.failed += 1
            raise ApiError("internal_server_error", str(error)) from None
        self.counters.queries += 1
        return answer

    async def _search(
        self,
        q: str,
        k: int,
        offset: int,
        count: bool,
        default_op: str,
        fields: bool,
        arrived: float,
        highlight: Optional[HighlightFields] = None,
    ) -> ShardedResult:
        """A search under the server's checks, in its order: the result window, the query's
        bytes, then (in the shards) its parse, terms and nesting."""
        check_window(offset, k, self.limits.max_results)
        self._check_bytes(q)
        limits = self.limits.parsed()
        return await self._guarded(
            lambda deadline: self.index.search(
                q, k, offset=offset, count=count, default_op=default_op, fields=fields,
                highlight=highlight, limits=limits, deadline=deadline,
            ),
            q,
            arrived,
        )

    async def _count(self, q: str, default_op: str, arrived: float) -> int:
        self._check_bytes(q)
        limits = self.limits.parsed()
        return await self._guarded(
            lambda deadline: self.index.count(q, default_op=default_op, limits=limits, deadline=deadline),
            q,
            arrived,
        )

    def _check_bytes(self, q: str) -> None:
        try:
            check_query_bytes(q, self.limits)
        except QueryTooLarge as error:
            raise ApiError("query_too_large", str(error)) from None

    async def _shard_call(self, work: Callable[[], T]) -> T:
        """A call to the shards outside the search queue (documents, descriptions), with a
        shard's failure as a 503."""
        try:
            return await asyncio.to_thread(work)
        except ShardError as error:
            self.counters.failed += 1
            for shard in error.shards:
                self.counters.shard_failures[shard] = self.counters.shard_failures.get(shard, 0) + 1
            raise ApiError("search_phase_execution_exception", str(error)) from None
        except ApcacheError as error:
            raise ApiError("internal_server_error", str(error)) from None

    # ---- operational routes ---------------------------------------------------------------

    async def _root(self, request: Request, _: Dict[str, str], arrived: float) -> Response:
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse("/ui", status_code=303)
        return json_response(
            {
                "name": "apcache",
                "cluster_name": "apcache",
                "cluster_uuid": "apcache",
                "version": {
                    "number": COMPATIBLE_VERSION,
                    "build_flavor": "default",
                    "build_type": "apcache",
                    "lucene_version": "9.12.0",
                    "minimum_wire_compatibility_version": "7.17.0",
                    "minimum_index_compatibility_version": "7.0.0",
                    "apcache": __version__,
                },
                "indexes": [self.name],
                "tagline": "You Know, for Search",
            }
        )

    async def _health(self, request: Request, _: Dict[str, str], arrived: float) -> Response:
        return json_response({"status": "green", "indexes": [self.name]})

    async def _ui(self, request: Request, _: Dict[str, str], arrived: float) -> Response:
        if self._page is None:
            resource = importlib.resources.files(__package__).joinpath(PAGE_RESOURCE)
            try:
                self._page = resource.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise ApiError(
                    "internal_server_error",
                    f"the search page is not installed ({__package__}/{PAGE_RESOURCE}): "
                    "reinstall apcache from a source tree that has crates/server/assets/ui.html",
                ) from None
        return Response(
            self._page,
            media_type="text/html; charset=utf-8",
            headers={"Cache-Control": "no-cache"},
        )

    async def _metrics(self, request: Request, _: Dict[str, str], arrived: float) -> Response:
        shard_stats = await asyncio.to_thread(
            self.index.shard_stats_answered, self.config.stats_timeout_s
        )
        snapshot = IndexSnapshot(
            name=self.name,
            queue_depth=self.admission.waiting,
            admitted=self.admission.admitted,
            rejected=self.admission.rejected,
            counters=self.counters,
            shard_stats=shard_stats,
        )
        text = self.metrics.render([snapshot], process_memory())
        return Response(text, headers={"Content-Type": CONTENT_TYPE})

    async def _description_of_index(self) -> Dict[str, Any]:
        """`GET /indexes/{name}`'s body (the shards do not change while served: asked once)."""
        if self._description is None:
            described = await self._shard_call(self.index.describe)
            self._description = {"name": self.name, **described}
        return self._description

    # ---- native API -----------------------------------------------------------------------

    async def _list(self, request: Request, _: Dict[str, str], arrived: float) -> Response:
        return json_response({"indexes": [await self._description_of_index()]})

    async def _describe(self, request: Request, captures: Dict[str, str], arrived: float) -> Response:
        self._known(captures["name"])
        return json_response(await self._description_of_index())

    async def _native_get(self, request: Request, captures: Dict[str, str], arrived: float) -> Response:
        self._known(captures["name"])
        return await self._native(native_from_url(request.query_params), arrived)

    async def _native_post(self, request: Request, captures: Dict[str, str], arrived: float) -> Response:
        self._known(captures["name"])
        return await self._native(native_from_body(await self._body(request)), arrived)

    async def _native(self, params: NativeSearch, arrived: float) -> Response:
        highlight = NATIVE_HIGHLIGHT if params.highlight else None
        result = await self._search(
            params.q, params.k, params.offset, params.count, params.default_op, True, arrived, highlight
        )
        hits: List[Dict[str, Any]] = []
        for hit in result.hits:
            entry: Dict[str, Any] = {
                "id": hit.id, "_id": hit.id, "score": hit.score, "title": hit.title or "",
                "snippet": snippet(hit.body or ""),
                "source": {"title": hit.title or "", "body": hit.body or ""},
            }
            if highlight is not None:
                # The body's fragments, an empty list when none of its words is marked.
                entry["highlight"] = (hit.highlight or {}).get("body", [])
            hits.append(entry)
        answer: Dict[str, Any] = {
            "index": self.name,
            "query": result.query,
            "total": {"value": result.total, "exact": result.exact},
            # The shards keep no result cache, so no answer is an approximate one.
            "approximate": False,
            "took_us": int((time.monotonic() - arrived) * 1e6),
            "offset": params.offset,
            "k": params.k,
            "hits": hits,
        }
        if result.notes:
            answer["notes"] = result.notes
        return json_response(answer)

    async def _native_document(self, request: Request, captures: Dict[str, str], arrived: float) -> Response:
        name, doc_id = captures["name"], captures["id"]
        self._known(name)
        stored = await self._shard_call(lambda: self.index.document(doc_id))
        if stored is None:
            raise ApiError(
                "resource_not_found_exception", f"no document with id {rust_debug(doc_id)} in [{name}]"
            )
        source = {"title": stored["title"], "body": stored["body"]}
        return json_response({"id": doc_id, "_id": doc_id, **source, "source": source})

    # ---- Elasticsearch subset -------------------------------------------------------------

    def _shards(self) -> Dict[str, int]:
        return {"total": self.index.shards, "successful": self.index.shards, "skipped": 0, "failed": 0}

    async def _cat_indices(self, request: Request, _: Dict[str, str], arrived: float) -> Response:
        described = await self._description_of_index()
        replicas = len(self.index.replicas[0]) if self.index.replicas else 1
        header = ["health", "status", "index", "uuid", "pri", "rep", "docs.count", "docs.deleted", "store.size"]
        row = [
            "green", "open", self.name, self.name, str(self.index.shards), str(replicas - 1),
            str(described["docs"]), "0", str(described["search_bytes"] + described["store_bytes"]),
        ]
        url = request.query_params
        if url.get("format") == "json":
            return json_response([dict(zip(header, row))])
        text = (" ".join(header) + "\n" if "v" in url else "") + " ".join(row) + "\n"
        return Response(text, headers={"Content-Type": "text/plain; charset=UTF-8"})

    async def _es_search(self, request: Request, captures: Dict[str, str], arrived: float) -> Response:
        self._known(captures["index"])
        wanted = es_request(request.query_params, await self._body(request))
        check_window(wanted.offset, wanted.size, self.limits.max_results)
        if wanted.wanted.text is None:
            # Every document, unscored: nothing to highlight (as the server answers it).
            hits = await self._shard_call(
                lambda: self.index.first_documents(wanted.size, offset=wanted.offset, fields=wanted.fields)
            )
            total, exact = len(self.index), True
        else:
            result = await self._search(
                wanted.wanted.text, wanted.size, wanted.offset, wanted.exact_total,
                wanted.wanted.default_op, wanted.fields, arrived, wanted.highlight,
            )
            total, exact, hits = result.total, result.exact, result.hits
        listed = [self._es_hit(wanted, hit) for hit in hits]
        return json_response(
            {
                "took": int((time.monotonic() - arrived) * 1000),
                "timed_out": False,
                "_shards": self._shards(),
                "hits": {
                    "total": {"value": total, "relation": "eq" if exact else "gte"},
                    "max_score": listed[0]["_score"] if listed else None,
                    "hits": listed,
                },
            }
        )

    def _es_hit(self, wanted: EsSearch, hit: ShardedHit) -> Dict[str, Any]:
        entry: Dict[str, Any] = {"_index": self.name, "_id": hit.id, "_score": hit.score}
        if wanted.fields:
            source: Dict[str, Any] = {}
            if wanted.title:
                source["title"] = hit.title or ""
            if wanted.body:
                source["body"] = hit.body or ""
            entry["_source"] = source
        if hit.highlight is not None:
            entry["highlight"] = hit.highlight
        return entry

    async def _es_count(self, request: Request, captures: Dict[str, str], arrived: float) -> Response:
        self._known(captures["index"])
        wanted = es_request(request.query_params, await self._body(request))
        if wanted.wanted.text is None:
            count = len(self.index)
        else:
            count = await self._count(wanted.wanted.text, wanted.wanted.default_op, arrived)
        return json_response({"count": count, "_shards": self._shards()})

    async def _es_document(self, request: Request, captures: Dict[str, str], arrived: float) -> Response:
        name, doc_id = captures["index"], captures["id"]
        self._known(name)
        stored = await self._shard_call(lambda: self.index.document(doc_id))
        if stored is None:
            return json_response({"_index": name, "_id": doc_id, "found": False}, 404)
        return json_response(
            {
                "_index": name,
                "_id": doc_id,
                "_version": 1,
                "_seq_no": 0,
                "_primary_term": 1,
                "found": True,
                "_source": {"title": stored["title"], "body": stored["body"]},
            }
        )


class _NotAllowed(Exception):
    """A route that exists, asked with a method it does not take."""

    def __init__(self, allow: str) -> None:
        super().__init__(allow)
        self.allow = allow


def _raw_path(request: Request) -> str:
    """The request's path as sent (percent-encoded), as the server routes and reports it."""
    raw = request.scope.get("raw_path")
    if isinstance(raw, (bytes, bytearray)):
        return raw.decode("latin-1").split("?", 1)[0]
    return quote(request.scope.get("path", "/"), safe="/:@!$&'()*+,;=-._~")


_ROUTES = [
    _Route("/", {"GET": SearchFront._root}),
    _Route("/ui", {"GET": SearchFront._ui}),
    _Route("/health", {"GET": SearchFront._health}),
    _Route("/metrics", {"GET": SearchFront._metrics}),
    _Route("/indexes", {"GET": SearchFront._list}),
    _Route("/indexes/{name}", {"GET": SearchFront._describe}),
    _Route("/indexes/{name}/search", {"GET": SearchFront._native_get, "POST": SearchFront._native_post}),
    _Route("/indexes/{name}/docs/{id}", {"GET": SearchFront._native_document}),
    _Route("/_cat/indices", {"GET": SearchFront._cat_indices}),
    _Route("/{index}/_search", {"GET": SearchFront._es_search, "POST": SearchFront._es_search}),
    _Route("/{index}/_count", {"GET": SearchFront._es_count, "POST": SearchFront._es_count}),
    _Route("/{index}/_doc/{id}", {"GET": SearchFront._es_document}),
]
"""The server's routes (crates/server/src/app.rs), in its templates."""


SearchDeployment = serve.deployment(
    name="apcache-sharded", ray_actor_options={"num_cpus": 0}
)(SearchFront)
"""`SearchFront` as a Ray Serve deployment."""


def serve_sharded(
    index: ShardedIndex,
    name: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    replicas: int = 1,
    config: Optional[FrontConfig] = None,
) -> str:
    """Serves `index` as `name` over HTTP with Ray Serve on `host`:`port` (`replicas`
    copies of the front, each a coordinator of the same shard actors, each with the limits,
    admission and deadline of `config`); returns the base URL. `serve.shutdown()` stops it."""
    resolved = (config or FrontConfig()).resolved()
    assert resolved.threads is not None and resolved.queue_depth is not None
    serve.start(http_options={"host": host, "port": port})
    app = SearchDeployment.options(
        num_replicas=replicas,
        max_ongoing_requests=resolved.threads + resolved.queue_depth + ROUTE_HEADROOM,
    ).bind(name, index, resolved)
    serve.run(app, name=f"apcache-{name}", route_prefix="/")
    return f"http://{host}:{port}"
