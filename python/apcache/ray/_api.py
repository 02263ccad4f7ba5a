"""The request and error shapes of `apcache serve` (crates/server/src: api_error.rs, app.rs,
native.rs, elastic.rs, highlight_request.rs), for the Ray front to answer in: the error kinds
and their statuses, the parameters' parsing and messages, and the two APIs' request bodies.

Errors are answered as the server answers them::

    {"error": {"type": ..., "reason": ..., ["position": ...,] "root_cause": [{...}]},
     "status": ...}

with `Retry-After: 1` on a 503 of a full queue. Bodies are read as the server's serde types
read them: a field of the wrong type is a `parse_exception`, a value out of range an
`illegal_argument_exception`, with the server's messages where they are the server's own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from starlette.responses import Response

from .._apcache import QueryError, escape_query
from ._shards import HIGHLIGHT_DEFAULTS, HighlightFields

_STATUS = {
    "query_parse_error": 400,
    "query_too_large": 400,
    "illegal_argument_exception": 400,
    "parse_exception": 400,
    "parsing_exception": 400,
    "index_not_found_exception": 404,
    "resource_not_found_exception": 404,
    "method_not_allowed_exception": 405,
    "content_too_long_exception": 413,
    "rejected_execution_exception": 503,
    "node_closed_exception": 503,
    "search_phase_execution_exception": 503,
    "timeout_exception": 504,
    "corrupt_index_exception": 500,
    "io_exception": 500,
    "internal_server_error": 500,
}
"""Each error type and its status, as `ErrorKind` maps them; `search_phase_execution_exception`
(Elasticsearch's name for shards that failed) is the sharded front's own."""


def json_response(body: Any, status: int = 200, headers: Optional[Mapping[str, str]] = None) -> Response:
    """`body` as JSON with keys sorted, as the server's serde_json maps write them."""
    text = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return Response(text, status_code=status, media_type="application/json", headers=dict(headers or {}))


class ApiError(Exception):
    """A request's failure: an error type (Elasticsearch's exception names), a reason for the
    person who sent the request, and for a query that does not parse the byte it points at."""

    def __init__(self, kind: str, reason: str, position: Optional[int] = None) -> None:
        if kind not in _STATUS:
            raise ValueError(f"unknown error kind {kind!r}")
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.position = position

    @property
    def status(self) -> int:
        """The HTTP status."""
        return _STATUS[self.kind]

    def response(self, headers: Optional[Mapping[str, str]] = None) -> Response:
        """The error as the server answers it."""
        cause: Dict[str, Any] = {"type": self.kind, "reason": self.reason}
        if self.position is not None:
            cause["position"] = self.position
        body = {"error": {**cause, "root_cause": [dict(cause)]}, "status": self.status}
        extra = dict(headers or {})
        if self.kind == "rejected_execution_exception":
            extra["Retry-After"] = "1"
        return json_response(body, self.status, extra)


def illegal(reason: str) -> ApiError:
    """A 400 for a parameter."""
    return ApiError("illegal_argument_exception", reason)


def parse_error(reason: str) -> ApiError:
    """A 400 for a body that is not the JSON expected."""
    return ApiError("parse_exception", f"the request body is not valid: {reason}")


def rust_debug(text: str) -> str:
    """`text` quoted as Rust's `{:?}` writes a string (the server's messages quote so)."""
    out = ['"']
    for c in text:
        if c in ('"', "\\"):
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == "\0":
            out.append("\\0")
        elif ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0:
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def query_parse_error(error: QueryError, query: str) -> ApiError:
    """The server's `query_parse_error` of a QueryError from the bindings: their message is
    the engine's, followed by `(in "query")`, which the server does not add; the position is
    the error's `position` (the byte the engine's error points at, or None)."""
    message = str(error)
    suffix = f" (in {rust_debug(query)})"
    if message.endswith(suffix):
        reason = message[: -len(suffix)]
    else:
        cut = message.find(' (in "')
        reason = message[:cut] if cut >= 0 else message
    return ApiError("query_parse_error", reason, error.position)


# ---- Parameters of the query string --------------------------------------------------------


def count_param(name: str, text: str) -> int:
    """A whole number of at least 0 (`k`, `offset`, `size`, `from`), as Rust's `usize` parses
    it (digits only, an optional `+`; surrounding whitespace trimmed)."""
    stripped = text.strip()
    digits = stripped[1:] if stripped.startswith("+") else stripped
    if not digits or not digits.isascii() or not digits.isdigit() or int(digits) >= 1 << 64:
        raise illegal(f"{name} must be a whole number of at least 0, not {rust_debug(text)}")
    return int(digits)


def bool_param(name: str, text: str) -> bool:
    """A boolean parameter: empty, true or 1; false or 0."""
    if text in ("", "true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise illegal(f"{name} must be true or false, not {rust_debug(text)}")


def default_operator(text: str) -> str:
    """`or` or `and`, in any case."""
    lowered = text.lower()
    if lowered in ("or", "and"):
        return lowered
    raise illegal(f"default_operator must be 'or' or 'and', not {rust_debug(text)}")


def check_window(offset: int, k: int, max_results: int) -> None:
    """`offset + k` within the result window."""
    if offset + k > max_results:
        raise illegal(
            "Result window is too large, from + size must be less than or equal to: "
            f"[{max_results}] but was [{offset + k}]"
        )


# ---- JSON bodies, read as serde reads them -------------------------------------------------


def json_body(body: bytes) -> Optional[Any]:
    """The parsed body, or None when it is empty (whitespace only)."""
    if not body.strip(b" \t\r\n\x0c"):
        return None
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise parse_error(str(error)) from None


def _kind(value: Any) -> str:
    """A JSON value's kind, in serde's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, list):
        return "sequence"
    return "map"


def _object(value: Any, what: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise parse_error(f"invalid type: {_kind(value)}, expected {what}")
    return value


# serde's messages, less the line and column it adds.


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise parse_error(f"invalid type: {_kind(value)}, expected a string")
    return value


def _optional_string(value: Any) -> Optional[str]:
    return None if value is None else _string(value)


def _usize(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise parse_error(f"invalid type: {_kind(value)}, expected usize")
    if value < 0 or value >= 1 << 64:
        raise parse_error(f"invalid value: {_kind(value)}, expected usize")
    return value


def _body_count(value: Any, name: str) -> int:
    """A body's whole number of at least 0 (`from`, `size`), refused as the server refuses it."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise illegal(f"[{name}] must be a whole number of at least 0, not {json.dumps(value)}")
    return value


def _one_stream(query: str, field: str) -> ApiError:
    """The server's refusal of a clause on one text field of a title-and-body index."""
    return illegal(
        f"[{query}] on the text field [{field}]: this index joins the text fields of its "
        "documents (tab-separated title and body) into one stream of words, and cannot search "
        "one of them alone; search them all with a query_string query without default_field"
    )


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise parse_error(f"invalid type: {_kind(value)}, expected a boolean")
    return value


@dataclass(frozen=True)
class NativeSearch:
    """A native search's parameters (`GET ...?q=` or a `POST` body)."""

    q: str
    k: int = 10
    offset: int = 0
    count: bool = False
    default_op: str = "or"
    highlight: bool = False


def native_from_url(url: Mapping[str, str]) -> NativeSearch:
    """The parameters of `GET /indexes/{name}/search`, in the server's order of checks."""
    if "q" not in url:
        raise illegal("the parameter q (the query) is missing")
    k = count_param("k", url["k"]) if "k" in url else 10
    offset = count_param("offset", url["offset"]) if "offset" in url else 0
    count = bool_param("count", url["count"]) if "count" in url else False
    op = default_operator(url["default_operator"]) if "default_operator" in url else "or"
    highlight = bool_param("highlight", url["highlight"]) if "highlight" in url else False
    return NativeSearch(url["q"], k, offset, count, op, highlight)


_NATIVE_FIELDS = ("q", "k", "offset", "count", "default_operator", "highlight")


def native_from_body(body: bytes) -> NativeSearch:
    """The JSON body of `POST /indexes/{name}/search`: q, and k, offset, count,
    default_operator, highlight (no other field)."""
    parsed = json_body(body)
    if parsed is None:
        raise illegal("the body must be a JSON object with q")
    fields = _object(parsed, "struct SearchBody")
    for name in fields:
        if name not in _NATIVE_FIELDS:
            expected = ", ".join(f"`{f}`" for f in _NATIVE_FIELDS)
            raise parse_error(f"unknown field `{name}`, expected one of {expected}")
    if "q" not in fields:
        raise parse_error("missing field `q`")
    q = _string(fields["q"])
    k = _usize(fields["k"]) if "k" in fields else 10
    offset = _usize(fields["offset"]) if "offset" in fields else 0
    count = _bool(fields["count"]) if "count" in fields else False
    highlight = _bool(fields["highlight"]) if "highlight" in fields else False
    op_text = _optional_string(fields.get("default_operator"))
    op = default_operator(op_text) if op_text is not None else "or"
    return NativeSearch(q, k, offset, count, op, highlight)


@dataclass(frozen=True)
class Wanted:
    """What an Elasticsearch request's query becomes: query text and its operator, or every
    document (`text` None)."""

    text: Optional[str]
    default_op: str = "or"


@dataclass(frozen=True)
class EsSearch:
    """An Elasticsearch search or count, as the URL and the body ask for it (the body wins
    where both say)."""

    wanted: Wanted
    offset: int
    size: int
    exact_total: bool
    title: bool
    body: bool
    highlight: Optional[HighlightFields]
    """The fields to highlight with their options, when the body asks for `highlight`."""

    @property
    def fields(self) -> bool:
        """Whether any stored field is returned."""
        return self.title or self.body


def _escape_words(text: str) -> str:
    """A match query's text as words: its syntax escaped, a lone operator word lowercased."""
    words = escape_query(text).split(" ")
    return " ".join(w.lower() if w in ("AND", "OR", "NOT") else w for w in words)


def _query_clause(value: Any) -> Wanted:
    """A body's `query`: query_string, match or match_all (read whole before its values are
    checked, as serde reads it)."""
    clause = _object(value, "enum QueryClause")
    if len(clause) != 1:
        raise parse_error("a query holds exactly one clause: query_string, match or match_all")
    (kind, inner), = clause.items()
    if kind == "query_string":
        spec = _object(inner, "struct QueryString")
        for key in spec:
            if key not in ("query", "default_operator", "default_field", "boost"):
                raise ApiError("parsing_exception", f"[query_string] query does not support [{key}]")
        if "query" not in spec:
            raise parse_error("query_string: missing field `query`")
        text = _string(spec["query"])
        op = _optional_string(spec.get("default_operator"))
        field = _optional_string(spec.get("default_field"))
        if field is not None and field not in ("body", "*"):
            raise illegal(f"unknown field [{field}]: the searchable field is body")
        return Wanted(text, default_operator(op) if op is not None else "or")
    if kind == "match":
        fields = _object(inner, "a map")
        read: List[Tuple[str, str, Optional[str]]] = []
        for field, spec in fields.items():
            if isinstance(spec, str):
                read.append((field, spec, None))
            elif isinstance(spec, dict) and isinstance(spec.get("query"), str):
                read.append((field, spec["query"], _optional_string(spec.get("operator"))))
            else:
                raise parse_error("data did not match any variant of untagged enum MatchValue")
        if len(read) != 1:
            raise illegal("match takes exactly one field")
        field, text, op = read[0]
        if field not in ("body", "title"):
            raise illegal(f"unknown field [{field}]: the searchable field is body")
        return Wanted(_escape_words(text), default_operator(op) if op is not None else "or")
    if kind == "term" and isinstance(inner, dict) and len(inner) == 1:
        (field, _), = inner.items()
        if field in ("body", "title"):
            raise _one_stream("term", field)
    if kind == "match_all":
        return Wanted(None)
    raise parse_error(
        f"unknown variant `{kind}`, expected one of `query_string`, `match`, `match_all`"
    )


def _source_fields(value: Any) -> Tuple[bool, bool]:
    """(title, body) of a `_source` value: true, false, "title,body" or ["title", "body"]."""
    if value is True:
        return True, True
    title = body = False

    def add(name: str) -> None:
        nonlocal title, body
        if name == "title":
            title = True
        elif name == "body":
            body = True
        elif name == "*":
            title = body = True
        else:
            raise illegal(f"unknown _source field [{name}]: the fields are title and body")

    if value is False:
        pass
    elif isinstance(value, str):
        for name in value.split(","):
            if name:
                add(name.strip())
    elif isinstance(value, list):
        for name in value:
            if not isinstance(name, str):
                raise illegal("_source must list field names as strings")
            add(name)
    else:
        raise illegal("_source must be true, false, a list of fields or {\"includes\", \"excludes\"}")
    return title, body


_MAX_FRAGMENTS = 100
_IGNORED_HIGHLIGHT_OPTIONS = {"type", "order", "require_field_match", "encoder", "fields"}
"""Accepted and ignored, as the server does (it has one highlighter)."""

NATIVE_HIGHLIGHT: HighlightFields = {"body": dict(HIGHLIGHT_DEFAULTS)}
"""The native API's `highlight=true`: the body, with the defaults."""


def _highlight_options(base: Dict[str, Any], value: Any) -> Dict[str, Any]:
    """`base` with one level of highlight options over it, checked as the server checks them
    (keys in the order the request gives them, as its JSON objects hold them)."""
    if not isinstance(value, dict):
        raise illegal("highlight options must be an object")
    options = dict(base)
    for key in value:
        v = value[key]
        if key in ("pre_tags", "post_tags"):
            tag = v[0] if isinstance(v, list) and v else v
            if not isinstance(tag, str):
                raise illegal(f"[{key}] must be a list of strings")
            options["pre_tag" if key == "pre_tags" else "post_tag"] = tag
        elif key == "fragment_size":
            if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= 100_000:
                raise illegal("[fragment_size] must be 1 to 100000")
            options["fragment_size"] = v
        elif key == "number_of_fragments":
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _MAX_FRAGMENTS:
                raise illegal(f"[number_of_fragments] must be 0 to {_MAX_FRAGMENTS}")
            options["number_of_fragments"] = v
        elif key not in _IGNORED_HIGHLIGHT_OPTIONS:
            raise illegal(f"unknown highlight option [{key}]")
    return options


def highlight_request(value: Any) -> HighlightFields:
    """A body's `highlight`, read as the server reads it (the same 400s for the same
    mistakes): options at the top apply to every field, a field's own override them;
    `fields` is an object or a list of one-key objects, its names `body`, `title` or `*`
    (both); a field named again takes its later options. Returns the fields with their
    options (`apcache.Index.highlight`'s keyword arguments)."""
    base = _highlight_options(HIGHLIGHT_DEFAULTS, value)
    fields = value.get("fields")
    named: List[Tuple[str, Any]] = []
    if isinstance(fields, dict):
        named.extend((name, fields[name]) for name in fields)
    elif isinstance(fields, list):
        for item in fields:
            if not isinstance(item, dict) or len(item) != 1:
                raise illegal("highlight fields as a list take one-key objects")
            named.extend(item.items())
    elif "fields" not in value:
        raise illegal("highlight needs [fields]")
    else:
        raise illegal("highlight [fields] must be an object")
    chosen: HighlightFields = {}
    for name, value_of_field in named:
        options = _highlight_options(base, value_of_field)
        targets = {"body": ("body",), "title": ("title",), "*": ("title", "body")}.get(name)
        if targets is None:
            raise illegal(f"unknown highlight field [{name}]: the fields are title and body")
        for target in targets:
            chosen[target] = dict(options)
    return chosen


def es_request(url: Mapping[str, str], body: bytes) -> EsSearch:
    """An Elasticsearch search or count: the body's query, else `q` (a query string), else
    every document; from, size, track_total_hits, _source and highlight. Fields the server
    does not know are ignored, as it ignores them."""
    parsed = json_body(body)
    fields = _object(parsed, "struct SearchBody") if parsed is not None else {}
    clause = fields.get("query")
    body_from = None if fields.get("from") is None else _body_count(fields["from"], "from")
    body_size = None if fields.get("size") is None else _body_count(fields["size"], "size")
    if clause is not None:
        wanted = _query_clause(clause)
    elif "q" in url:
        op = default_operator(url["default_operator"]) if "default_operator" in url else "or"
        wanted = Wanted(url["q"], op)
    else:
        wanted = Wanted(None)
    if body_from is not None:
        offset = body_from
    else:
        offset = count_param("from", url["from"]) if "from" in url else 0
    if body_size is not None:
        size = body_size
    else:
        size = count_param("size", url["size"]) if "size" in url else 10
    track = fields.get("track_total_hits")
    if isinstance(track, bool):
        exact = track
    elif isinstance(track, (int, float)):
        exact = False
    elif track is not None:
        raise illegal("track_total_hits must be true, false or a number")
    elif "track_total_hits" in url:
        text = url["track_total_hits"]
        exact = False if text.isascii() and text.isdigit() else bool_param("track_total_hits", text)
    else:
        exact = False
    source = fields.get("_source")
    if source is not None:
        title, text_field = _source_fields(source)
    elif "_source" in url:
        text = url["_source"]
        title, text_field = _source_fields(True if text == "true" else False if text == "false" else text)
    else:
        title, text_field = True, True
    highlight = fields.get("highlight")
    marked = highlight_request(highlight) if highlight is not None else None
    return EsSearch(wanted, offset, size, exact, title, text_field, marked)
