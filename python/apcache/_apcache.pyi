"""Type stubs of apcache's native module (python/src/lib.rs); see the package docstring."""

from os import PathLike
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__version__: str

_Path = Union[str, "PathLike[str]"]
_Size = Union[int, str]
_Queries = Union[Mapping[str, str], Iterable[Union[str, Tuple[object, str]]]]
CollectionStats = Dict[str, Any]
"""``{"doc_count": int, "total_tokens": int, "doc_freqs": {term: int}, "fields": {text field:
{"documents": int, "tokens": int}}}`` (``fields`` optional when given back)."""
_Document = Union[Tuple[Union[str, int], str, str], Mapping[str, object]]
_Sort = Union[str, Sequence[Union[str, Tuple[str, str]]]]
"""``"size:desc,package"``, ``["size:desc", "package"]`` or ``[("size", "desc")]``."""
_DefaultField = Union[str, Sequence[str]]

class ApcacheError(Exception):
    """The base of every error apcache raises."""

class IndexError(ApcacheError):  # noqa: A001 - apcache.IndexError, not the builtin
    """An index that cannot be opened, read or built. Not Python's builtin IndexError."""

class QueryError(ApcacheError):
    """A query that cannot be parsed; the message is the engine's, followed by the query."""

    position: Optional[int]
    """The byte of the query the error points at (the message names it too), or None when
    it points at none (an empty query, a field query)."""

class TopicError(ApcacheError):
    """A topic file that cannot be read; the message gives the line."""

class Hit:
    """One ranked document."""

    id: str
    """The document's id: the one given to IndexWriter.add, else its number in input order."""
    doc: int
    """The index's number of the document (from 0, in input order)."""
    score: float
    """The BM25 score (Lucene's arithmetic)."""
    title: Optional[str]
    """The stored title; None when the search asked for no fields."""
    body: Optional[str]
    """The stored body; None when the search asked for no fields."""
    _id: Optional[str]
    """For an index of JSON documents, the document's id (as `id`); None for title/body
    documents."""
    _source: Optional[Dict[str, Any]]
    """For an index of JSON documents, the document as given (without its ``_id``); None for
    title/body documents and when the search asked for no fields."""
    sort: Optional[List[Any]]
    """The hit's value of each sort key when the search sorted by fields (None where the
    document has no value; dates in milliseconds since the epoch); None otherwise."""
    def to_dict(self) -> dict: ...

class Index:
    """An index opened for searching: a serving stack and a fixed pool of query threads.

    `mode` is base (mmap and the page cache; the default), base-prefetch, hybrid or
    hybrid-prefetch (a postings cache in the tier, the default when `tier_dir` or
    `cache_size` is given). `cache_size` and `memory_limit` are bytes or sizes such as
    "256MiB". `memory_limit` moves this whole process into a memory cgroup with that limit
    (root and cgroup v1/v2 needed; otherwise a warning in stats()["warnings"]). `threads` is
    the query pool (default: the CPU count). Raises IndexError when there is no index at
    `path`, ValueError for a bad setting.
    """

    def __init__(
        self,
        path: _Path,
        mode: Optional[str] = None,
        cache_size: Optional[_Size] = None,
        tier_dir: Optional[_Path] = None,
        memory_limit: Optional[_Size] = None,
        threads: Optional[int] = None,
        loader: str = "direct",
    ) -> None: ...
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        parse: str = "lucene",
        default_op: str = "or",
        fields: bool = True,
        stats: Optional[CollectionStats] = None,
        filter: Optional[str] = None,
        sort: Optional[_Sort] = None,
        default_field: Optional[_DefaultField] = None,
    ) -> list[Hit]:
        """The best `k` documents for `query`, best first (QueryError if it does not parse).

        `filter` is a query (Lucene syntax: ``"section:games AND size:[10 TO *]"``) that the
        hits must match too, adding nothing to their scores. `sort` orders the matches by
        fields instead of by score: keys ``"field"``, ``"field:asc"``, ``"field:desc"`` or
        ``(field, order)`` on keyword, number, date and boolean fields, ``_score`` and
        ``_doc``; documents without a value come last; each hit carries its values in
        ``hit.sort``, and a sort without ``_score`` computes no score (NaN). ValueError for
        an unknown or text field. `default_field` names the text fields words without a
        field search (``["title^3", "summary"]``; default: every text field).

        With `stats` (a whole sharded collection's statistics: every shard's
        `collection_stats` summed) the index scores as a shard of that collection: BM25 with
        the given documents, tokens and document frequencies instead of its own, so its
        scores equal those of one index of every shard's documents. KeyError or TypeError
        for a malformed `stats`."""
    def search_with_total(
        self,
        query: str,
        k: int = 10,
        *,
        count: bool = True,
        parse: str = "lucene",
        default_op: str = "or",
        fields: bool = True,
        stats: Optional[CollectionStats] = None,
        filter: Optional[str] = None,
        sort: Optional[_Sort] = None,
        default_field: Optional[_DefaultField] = None,
    ) -> Tuple[int, bool, list[Hit]]:
        """`(total, exact, hits)` in one evaluation: the best `k` documents (scored with
        `stats` when given, as `search`) and the number of matches, exact when `count`
        (else a lower bound; `exact` says which), as `apcache serve`'s search reports them.
        `filter`, `sort` and `default_field` as `search`; sorted by fields the total is exact."""
    def count(
        self,
        query: str,
        *,
        parse: str = "lucene",
        default_op: str = "or",
        filter: Optional[str] = None,
        default_field: Optional[_DefaultField] = None,
    ) -> int:
        """The exact number of documents matching `query` (and `filter`) (statistics do not
        change it: a sharded count is the shards' counts summed)."""
    def collection_stats(
        self, query: str, *, parse: str = "lucene", default_op: str = "or"
    ) -> CollectionStats:
        """This index's statistics for the terms of `query`: ``doc_count`` (documents),
        ``total_tokens`` and ``doc_freqs`` (``{term: documents holding it}``). Summed over
        the shards of a sharded index they are what `search(..., stats=)` scores with."""
    def parse_query(self, query: str, *, default_op: str = "or") -> Tuple[str, list[str]]:
        """`(canonical, notes)`: `query` in canonical form (as `apcache serve` reports it)
        and what the analyzer changed or dropped in its words (QueryError if it does not
        parse)."""
    def query_clauses(self, query: str, *, default_op: str = "or") -> int:
        """How many clauses `query` has as `apcache serve` counts them against its limit:
        every term each time it is written, and every word of a phrase (QueryError if it does
        not parse)."""
    def batch_search(
        self,
        queries: _Queries,
        k: int = 10,
        threads: Optional[int] = None,
        *,
        parse: str = "plain",
        default_op: str = "or",
        fields: bool = False,
    ) -> dict[str, list[Hit]]:
        """The best `k` documents of each query, by query id, run in parallel on the query
        threads (`threads` other than the index's starts a pool of that size for the call)
        with the GIL released. `queries` is {qid: text}, (qid, text) pairs, or texts
        (numbered "0", "1", ...). Queries are bags of words unless parse="lucene"."""
    def doc(self, id: Union[str, int]) -> dict:
        """The stored document with this external id (or number): id, doc, title, body, and
        for an index of JSON documents _id and _source. KeyError when there is none."""
    def analyze(self, text: str) -> list[str]:
        """The terms the index's analyzer makes of `text`."""
    def highlight(
        self,
        query: str,
        text: str,
        *,
        pre_tag: str = "<em>",
        post_tag: str = "</em>",
        fragment_size: int = 100,
        number_of_fragments: int = 5,
        parse: str = "lucene",
        default_op: str = "or",
    ) -> list[str]:
        """The fragments of `text` with the words `query` matches marked between `pre_tag`
        and `post_tag`, as `apcache serve` highlights a hit's field (Elasticsearch's options
        and defaults).

        `text` is analyzed with the index's analyzer, so a marked word is exactly a word
        indexed as one of the query's terms: a term marks each of its occurrences, an exact
        phrase only the words of its occurrences, a sloppy phrase its terms; prohibited
        clauses mark nothing. Fragments are about `fragment_size` characters around marked
        words, cut at whitespace; the best `number_of_fragments` (most distinct marked words,
        then earliest) are returned in text order, and ``number_of_fragments=0`` returns the
        whole text, marked, as one fragment. An empty list when nothing in `text` is marked.
        Typically a hit's stored field::

            for hit in index.search(q, k=10):
                print(hit.title, index.highlight(q, hit.body, fragment_size=150))

        QueryError if `query` does not parse; ValueError for a `fragment_size` of 0."""
    def stats(self) -> dict:
        """Documents, tokens, segments, generation, the serving mode and its counters; also
        what `apcache serve` reports of an index (`GET /indexes`): ``search_bytes`` (the
        files queries read: postings, skip entries, dictionary, term infos, norms),
        ``store_bytes`` (the document store), both of the commit the index opened, and
        ``cache_segments`` (the postings cache's segments; 0 without a cache)."""
    def close(self) -> None:
        """Stops the query threads."""
    def __enter__(self) -> "Index": ...
    def __exit__(self, *args: object) -> bool: ...
    def __len__(self) -> int: ...

class IndexWriter:
    """Builds an index at `path` from documents added one at a time.

    Documents are JSON documents (dicts), indexed under `mapping` (Elasticsearch's form,
    ``{"properties": {"summary": {"type": "text"}, "size": {"type": "long"}}}``) or, without
    one, a mapping inferred from them; a document's id is its ``_id``, else its `id_field`'s
    value. A document that does not fit the mapping is refused by `add` (ValueError naming
    the field and why). The older form, ``add(id, title, body)``, builds a title/body index
    whose text is one field; a writer takes one form, set by `mapping`/`id_field` or by its
    first document (a dict of only id, title and body, or contents, is the older form).

    Documents are spooled to a file beside the index, not held in memory; commit() builds
    the index from all of them (a later commit rebuilds it with the documents added since
    too). `positions` (on by default, as for `apcache index`) keeps each term's positions,
    which phrase queries ("a b", "a b"~2) need; positions=False makes a smaller index
    without them. `overwrite=True` replaces an index already at
    `path` (else committing over one raises IndexError). As a context manager it commits on
    a clean exit.
    """

    def __init__(
        self,
        path: _Path,
        codec: str = "pfor-delta-simd",
        threads: int = 2,
        positions: bool = True,
        memory_budget: Optional[_Size] = None,
        stop_words: bool = False,
        stem: bool = False,
        overwrite: bool = False,
        mapping: Optional[Mapping[str, Any]] = None,
        id_field: Optional[str] = None,
    ) -> None: ...
    def add(
        self,
        document: Union[Mapping[str, Any], str, int, None] = None,
        title: Optional[str] = None,
        body: Optional[str] = None,
        *,
        id: Union[str, int, None] = None,
    ) -> None:
        """Adds one document: ``add({"_id": "a", "summary": ...})``, or ``add(id, title,
        body)`` (ValueError for an empty id, one with whitespace or one already added, 1 and
        "1" being the same id; TypeError for a bool; ValueError for a JSON document that
        does not fit the mapping, or of the other form than the writer's)."""
    def add_many(self, documents: Iterable[_Document]) -> int:
        """Adds every document of an iterable, one at a time; returns how many."""
    def commit(self) -> dict:
        """Builds and commits the index; returns the build's report."""
    def __enter__(self) -> "IndexWriter": ...
    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> bool: ...
    def __len__(self) -> int: ...

def read_topics(path: _Path, format: Optional[str] = None) -> dict[str, str]:
    """{qid: query} from a TREC topic file (<top> or <topic> form, any root element),
    qid<TAB>query lines or qid:query lines (format "trec", "tsv" or "colon"; default:
    detected). TopicError, naming the line, if malformed."""

def write_trec_run(results: Mapping[str, list[Hit]], path: _Path, tag: str = "apcache") -> int:
    """Writes batch_search's results as a six-column TREC run; returns the lines written."""

def escape_query(text: str) -> str:
    """`text` with every character of the query syntax escaped, so that it parses as plain
    words (what an Elasticsearch `match` query's text becomes)."""
