"""Topics in, runs out: read_topics, batch_search and write_trec_run against `apcache search
--topics --trec`."""

from __future__ import annotations

import pytest

import apcache
from conftest import REPO, run_cli

TOPICS = REPO / "data" / "trec" / "sample-topics.txt"

CLASSIC = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.
</top>

<top>
<num> Number: 302
<title> c++ u.s. AT&T: don't
</top>
"""


def test_read_topics_in_both_forms(tmp_path):
    sgml = tmp_path / "topics.301-302"
    sgml.write_text(CLASSIC)
    assert apcache.read_topics(sgml) == {
        "301": "International Organized Crime",
        "302": "c++ u.s. AT&T: don't",
    }
    tsv = tmp_path / "topics.tsv"
    tsv.write_text("1\tobama family tree\n2\tc++: a/b\n")
    assert apcache.read_topics(tsv) == {"1": "obama family tree", "2": "c++: a/b"}
    assert apcache.read_topics(tsv, format="tsv") == apcache.read_topics(tsv)


WEB_TRACK = """<?xml version="1.0"?>
<!DOCTYPE webtrack2009 [
<!ELEMENT webtrack2009 (topic+)>
<!ATTLIST topic number CDATA #REQUIRED type (ambiguous|faceted) #REQUIRED>
]>
<webtrack2009>
<topic number="1" type="faceted">
  <query>lighthouse keeper history</query>
  <description>Find the history of lighthouse keepers.</description>
  <subtopic number="1" type="inf">Find accounts by keepers.</subtopic>
</topic>
</webtrack2009>
"""


def test_read_topics_takes_the_releases_as_shipped(tmp_path):
    web = tmp_path / "wt09.topics.full.xml"
    web.write_text("\ufeff" + WEB_TRACK, encoding="utf-8")
    assert apcache.read_topics(web) == {"1": "lighthouse keeper history"}
    mq = tmp_path / "08.million-query-topics"
    mq.write_text("\ufeff10001:state tax rates\n10002:star trek: voyager\n", encoding="utf-8")
    expected = {"10001": "state tax rates", "10002": "star trek: voyager"}
    assert apcache.read_topics(mq) == expected
    assert apcache.read_topics(mq, format="colon") == expected
    tsv = tmp_path / "queries.dev.tsv"
    tsv.write_text("\ufeff1048585\twhat is paula deen's brother\n", encoding="utf-8")
    assert apcache.read_topics(tsv) == {"1048585": "what is paula deen's brother"}


def test_malformed_topics_name_the_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("1\tfine\n2 no tab\n")
    with pytest.raises(apcache.TopicError, match="line 2: expected qid<TAB>query"):
        apcache.read_topics(bad)
    unclosed = tmp_path / "unclosed.txt"
    unclosed.write_text("<top>\n<num> Number: 1\n<title> x\n")
    with pytest.raises(apcache.TopicError, match="line 1: the <top> opened here is never closed"):
        apcache.read_topics(unclosed)
    with pytest.raises(OSError):
        apcache.read_topics(tmp_path / "missing")
    with pytest.raises(ValueError):
        apcache.read_topics(bad, format="xml")


def test_python_run_equals_the_cli_run(cli_index, tmp_path):
    cli_run = tmp_path / "cli.run"
    run_cli(
        "search", str(cli_index), "--topics", str(TOPICS), "--trec", "--run-tag", "bm25",
        "-k", "100", "--threads", "2", "--output", str(cli_run),
    )
    topics = apcache.read_topics(TOPICS)
    assert len(topics) == 20
    with apcache.Index(cli_index) as index:
        results = index.batch_search(topics, k=100, threads=2)
    py_run = tmp_path / "py.run"
    lines = apcache.write_trec_run(results, py_run, tag="bm25")
    assert py_run.read_text() == cli_run.read_text()
    rows = [line.split() for line in py_run.read_text().splitlines()]
    assert len(rows) == lines > 20 * 50
    for qid, q0, docno, rank, score, tag in rows:
        assert qid in topics and q0 == "Q0" and tag == "bm25"
        int(docno), float(score)
    ranks = [int(row[3]) for row in rows if row[0] == rows[0][0]]
    assert ranks == list(range(1, len(ranks) + 1))


def test_write_trec_run_refuses_what_would_break_the_format(cli_index, tmp_path):
    with apcache.Index(cli_index) as index:
        results = index.batch_search({"1": "river"}, k=2)
    with pytest.raises(ValueError, match="run tag"):
        apcache.write_trec_run(results, tmp_path / "r", tag="two words")
    with pytest.raises(ValueError, match="topic number"):
        apcache.write_trec_run({"a b": results["1"]}, tmp_path / "r")
    with pytest.raises(TypeError):
        apcache.write_trec_run({"1": ["not a hit"]}, tmp_path / "r")


def test_results_as_a_dataframe(cli_index):
    with apcache.Index(cli_index) as index:
        results = index.batch_search({"1": "river", "2": "valley"}, k=3)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            apcache.results_to_dataframe(results)
        return
    frame = apcache.results_to_dataframe(results, {"1": "river", "2": "valley"})
    assert list(frame.columns) == ["qid", "docno", "rank", "score", "query"]
    assert len(frame) == 6 and list(frame["rank"][:3]) == [0, 1, 2]
