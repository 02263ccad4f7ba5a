"""The HTTP front of a sharded index on Ray Serve: `apcache serve`'s native search and its
Elasticsearch subset, answered by a `ShardedIndex` coordinator, in the same request and
response shapes (crates/server/src/native.rs and elastic.rs). docs/distributed.md lists
what is served and what is not.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple
from urllib.parse import unquote

from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .. import __version__
from .._apcache import ApcacheError, QueryError, escape_query
from ._shards import ShardedIndex, ShardedResult, ShardError

COMPATIBLE_VERSION = "8.11.0"
"""The Elasticsearch version whose API the subset follows (as `apcache serve`)."""

SNIPPET_CHARS = 200
MAX_RESULTS = 10_000
MAX_QUERY_BYTES = 16 * 1024

_STATUS = {
    "query_parse_error": 400,
    "query_too_large": 400,
    "illegal_argument_exception": 400,
    "parse_exception": 400,
    "index_not_found_exception": 404,
    "resource_not_found_exception": 404,
    "method_not_allowed_exception": 405,
    "search_phase_execution_exception": 503,
    "internal_server_error": 500,
}


class ApiError(Exception):
    """A request's failure: an Elasticsearch error type and a reason."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason

    def response(self) -> JSONResponse:
        status = _STATUS[self.kind]
        cause = {"type": self.kind, "reason": self.reason}
        body = {"error": {**cause, "root_cause": [cause]}, "status": status}
        return _json(body, status)


def _illegal(reason: str) -> ApiError:
    return ApiError("illegal_argument_exception", reason)


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


def _json(body: Any, status: int = 200) -> JSONResponse:
    response = JSONResponse(body, status_code=status)
    response.headers["x-elastic-product"] = "Elasticsearch"
    return response


def _count_param(name: str, text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = -1
    if value < 0:
        raise _illegal(f"{name} must be a whole number of at least 0, not {text!r}")
    return value


def _bool_param(name: str, text: str) -> bool:
    if text in ("", "true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise _illegal(f"{name} must be true or false, not {text!r}")


def _default_op(text: Optional[str]) -> str:
    if text is None:
        return "or"
    if text.lower() in ("or", "and"):
        return text.lower()
    raise _illegal(f"default_operator must be 'or' or 'and', not {text!r}")


def _check_window(offset: int, k: int) -> None:
    if offset + k > MAX_RESULTS:
        raise _illegal(
            "Result window is too large, from + size must be less than or equal to: "
            f"[{MAX_RESULTS}] but was [{offset + k}]"
        )


def _check_query(q: str) -> None:
    size = len(q.encode("utf-8"))
    if size > MAX_QUERY_BYTES:
        raise ApiError(
            "query_too_large", f"the query is {size} bytes; at most {MAX_QUERY_BYTES} are accepted"
        )


def _escape_words(text: str) -> str:
    """A match query's text as words: syntax escaped, lone operators lowercased."""
    words = escape_query(text).split(" ")
    return " ".join(w.lower() if w in ("AND", "OR", "NOT") else w for w in words)


class _Wanted:
    """What an Elasticsearch request's query becomes: text and an operator, or everything."""

    def __init__(self, text: Optional[str], default_op: str = "or") -> None:
        self.text = text
        self.default_op = default_op


def _query_clause(clause: Any) -> _Wanted:
    if not isinstance(clause, dict) or len(clause) != 1:
        raise ApiError("parse_exception", "query must be an object with one clause")
    (kind, value), = clause.items()
    if kind == "match_all":
        return _Wanted(None)
    if kind == "query_string":
        if not isinstance(value, dict) or "query" not in value:
            raise ApiError("parse_exception", "query_string needs a query")
        unknown = set(value) - {"query", "default_operator", "default_field"}
        if unknown:
            raise ApiError("parse_exception", f"unknown field [{sorted(unknown)[0]}] in query_string")
        field = value.get("default_field")
        if field is not None and field not in ("body", "*"):
            raise _illegal(f"unknown field [{field}]: the searchable field is body")
        return _Wanted(str(value["query"]), _default_op(value.get("default_operator")))
    if kind == "match":
        if not isinstance(value, dict) or len(value) != 1:
            raise _illegal("match takes exactly one field")
        (field, spec), = value.items()
        if field != "body":
            raise _illegal(f"unknown field [{field}]: the searchable field is body")
        if isinstance(spec, str):
            return _Wanted(_escape_words(spec))
        if isinstance(spec, dict) and "query" in spec:
            return _Wanted(_escape_words(str(spec["query"])), _default_op(spec.get("operator")))
        raise ApiError("parse_exception", "match takes a text or {query, operator}")
    raise ApiError("parse_exception", f"unknown query [{kind}]: query_string, match or match_all")


def _source_fields(value: Any) -> Tuple[bool, bool]:
    if value is True:
        return True, True
    if value is False:
        return False, False
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list):
        raise _illegal("_source must be true, false or a list of fields")
    title = body = False
    for name in names:
        name = str(name).strip()
        if name == "title":
            title = True
        elif name == "body":
            body = True
        elif name == "*":
            title = body = True
        elif name:
            raise _illegal(f"unknown _source field [{name}]: the fields are title and body")
    return title, body


class SearchFront:
    """The HTTP routes over one sharded index named `name` (a Ray Serve deployment's body)."""

    def __init__(self, name: str, index: ShardedIndex) -> None:
        self.name = name
        self.index = index

    async def __call__(self, request: Request) -> Response:
        try:
            return await self._route(request)
        except ApiError as error:
            return error.response()
        except QueryError as error:
            return ApiError("query_parse_error", str(error)).response()
        except ShardError as error:
            return ApiError("search_phase_execution_exception", str(error)).response()
        except ApcacheError as error:
            return ApiError("internal_server_error", str(error)).response()
        except (ValueError, TypeError, KeyError) as error:
            # A body field of the wrong type (a text where a number belongs, ...).
            return ApiError("parse_exception", f"the request is not valid: {error}").response()

    async def _route(self, request: Request) -> Response:
        parts = [unquote(p) for p in request.url.path.strip("/").split("/") if p]
        method = request.method
        url = dict(request.query_params)
        if not parts:
            self._method(method, ("GET", "HEAD"), request)
            return self._root()
        if parts == ["health"]:
            return _json({"status": "green", "indexes": [self.name]})
        if parts[0] == "indexes" and len(parts) == 3 and parts[2] == "search":
            self._method(method, ("GET", "POST"), request)
            self._known(parts[1])
            return await self._native_search(url, await request.body() if method == "POST" else b"")
        if len(parts) == 2 and parts[1] in ("_search", "_count"):
            self._method(method, ("GET", "POST"), request)
            self._known(parts[0])
            body = await request.body()
            if parts[1] == "_search":
                return await self._es_search(url, body)
            return await self._es_count(url, body)
        if len(parts) == 3 and parts[1] == "_doc":
            self._method(method, ("GET",), request)
            self._known(parts[0])
            return await self._es_document(parts[2])
        raise ApiError(
            "resource_not_found_exception",
            f"no route for {method} {request.url.path} (the sharded front serves the search "
            "endpoints only: see docs/distributed.md)",
        )

    @staticmethod
    def _method(method: str, allowed: Tuple[str, ...], request: Request) -> None:
        if method not in allowed:
            raise ApiError("method_not_allowed_exception", f"{method} is not allowed on {request.url.path}")

    def _known(self, name: str) -> None:
        if name != self.name:
            raise ApiError("index_not_found_exception", f"no such index [{name}]")

    def _root(self) -> Response:
        return _json(
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

    async def _search(
        self, q: str, k: int, offset: int, count: bool, default_op: str, fields: bool
    ) -> ShardedResult:
        _check_window(offset, k)
        _check_query(q)
        return await asyncio.to_thread(
            self.index.search, q, k, offset=offset, count=count, default_op=default_op, fields=fields
        )

    async def _native_search(self, url: Mapping[str, str], body: bytes) -> Response:
        arrived = time.perf_counter()
        if body.strip():
            params = _json_body(body)
            unknown = set(params) - {"q", "k", "offset", "count", "default_operator"}
            if "q" not in params or unknown:
                raise ApiError("parse_exception", "the body must be a JSON object with q (and k, offset, count, default_operator)")
            q, k, offset = str(params["q"]), int(params.get("k", 10)), int(params.get("offset", 0))
            count, op = bool(params.get("count", False)), _default_op(params.get("default_operator"))
        else:
            if "q" not in url:
                raise _illegal("the parameter q (the query) is missing")
            q = url["q"]
            k = _count_param("k", url["k"]) if "k" in url else 10
            offset = _count_param("offset", url["offset"]) if "offset" in url else 0
            count = _bool_param("count", url["count"]) if "count" in url else False
            op = _default_op(url.get("default_operator"))
        result = await self._search(q, k, offset, count, op, True)
        answer: Dict[str, Any] = {
            "index": self.name,
            "query": result.query,
            "total": {"value": result.total, "exact": result.exact},
            "took_us": int((time.perf_counter() - arrived) * 1e6),
            "offset": offset,
            "k": k,
            "hits": [
                {
                    "id": hit.id,
                    "score": hit.score,
                    "title": hit.title,
                    "snippet": snippet(hit.body or ""),
                }
                for hit in result.hits
            ],
        }
        if result.notes:
            answer["notes"] = result.notes
        return _json(answer)

    def _es_request(self, url: Mapping[str, str], body: bytes) -> Dict[str, Any]:
        parsed = _json_body(body) if body.strip() else {}
        unknown = set(parsed) - {"query", "from", "size", "track_total_hits", "_source"}
        if unknown:
            raise ApiError("parse_exception", f"unknown field [{sorted(unknown)[0]}] in the request body")
        if "query" in parsed:
            wanted = _query_clause(parsed["query"])
        elif "q" in url:
            wanted = _Wanted(url["q"], _default_op(url.get("default_operator")))
        else:
            wanted = _Wanted(None)
        offset = parsed["from"] if "from" in parsed else (_count_param("from", url["from"]) if "from" in url else 0)
        size = parsed["size"] if "size" in parsed else (_count_param("size", url["size"]) if "size" in url else 10)
        track = parsed.get("track_total_hits", url.get("track_total_hits"))
        if isinstance(track, bool):
            exact = track
        elif isinstance(track, int) or (isinstance(track, str) and track.isdigit()):
            exact = False
        elif track is None:
            exact = False
        elif isinstance(track, str):
            exact = _bool_param("track_total_hits", track)
        else:
            raise _illegal("track_total_hits must be true, false or a number")
        if "_source" in parsed:
            source = _source_fields(parsed["_source"])
        elif "_source" in url:
            text = url["_source"]
            source = _source_fields(True if text == "true" else False if text == "false" else text)
        else:
            source = (True, True)
        return {"wanted": wanted, "from": int(offset), "size": int(size), "exact": exact, "source": source}

    def _shards(self) -> Dict[str, int]:
        return {"total": self.index.shards, "successful": self.index.shards, "skipped": 0, "failed": 0}

    async def _es_search(self, url: Mapping[str, str], body: bytes) -> Response:
        arrived = time.perf_counter()
        request = self._es_request(url, body)
        title, text = request["source"]
        fields = title or text
        wanted: _Wanted = request["wanted"]
        _check_window(request["from"], request["size"])
        if wanted.text is None:
            found = await asyncio.to_thread(
                self.index.first_documents, request["size"], offset=request["from"], fields=fields
            )
            total, exact, hits = len(self.index), True, found
        else:
            result = await self._search(
                wanted.text, request["size"], request["from"], request["exact"], wanted.default_op, fields
            )
            total, exact, hits = result.total, result.exact, result.hits
        listed: List[Dict[str, Any]] = []
        for hit in hits:
            entry: Dict[str, Any] = {"_index": self.name, "_id": hit.id, "_score": hit.score}
            if fields:
                source: Dict[str, Any] = {}
                if title:
                    source["title"] = hit.title
                if text:
                    source["body"] = hit.body
                entry["_source"] = source
            listed.append(entry)
        return _json(
            {
                "took": int((time.perf_counter() - arrived) * 1000),
                "timed_out": False,
                "_shards": self._shards(),
                "hits": {
                    "total": {"value": total, "relation": "eq" if exact else "gte"},
                    "max_score": listed[0]["_score"] if listed else None,
                    "hits": listed,
                },
            }
        )

    async def _es_count(self, url: Mapping[str, str], body: bytes) -> Response:
        request = self._es_request(url, body)
        wanted: _Wanted = request["wanted"]
        if wanted.text is None:
            count = len(self.index)
        else:
            _check_query(wanted.text)
            count = await asyncio.to_thread(self.index.count, wanted.text, default_op=wanted.default_op)
        return _json({"count": count, "_shards": self._shards()})

    async def _es_document(self, doc_id: str) -> Response:
        stored = await asyncio.to_thread(self.index.document, doc_id)
        if stored is None:
            return _json({"_index": self.name, "_id": doc_id, "found": False}, 404)
        return _json(
            {
                "_index": self.name,
                "_id": doc_id,
                "_version": 1,
                "_seq_no": 0,
                "_primary_term": 1,
                "found": True,
                "_source": {"title": stored["title"], "body": stored["body"]},
            }
        )


def _json_body(body: bytes) -> Dict[str, Any]:
    try:
        parsed = json.loads(body)
    except ValueError as error:
        raise ApiError("parse_exception", f"the request body is not valid: {error}") from None
    if not isinstance(parsed, dict):
        raise ApiError("parse_exception", "the request body must be a JSON object")
    return parsed


SearchDeployment = serve.deployment(
    name="apcache-sharded", ray_actor_options={"num_cpus": 0}, max_ongoing_requests=64
)(SearchFront)
"""`SearchFront` as a Ray Serve deployment."""


def serve_sharded(
    index: ShardedIndex,
    name: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    replicas: int = 1,
) -> str:
    """Serves `index` as `name` over HTTP with Ray Serve on `host`:`port` (`replicas`
    copies of the front, each a coordinator of the same shard actors); returns the base
    URL. `serve.shutdown()` stops it."""
    serve.start(http_options={"host": host, "port": port})
    app = SearchDeployment.options(num_replicas=replicas).bind(name, index)
    serve.run(app, name=f"apcache-{name}", route_prefix="/")
    return f"http://{host}:{port}"
