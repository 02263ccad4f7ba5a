"""Makes the sample's known-item topics and their judgements (sample-topics.txt, sample.qrels).

The procedure, deterministic and without any ranking involved:
  - the documents are data/enwiki-sample.tsv's lines, numbered from 0 as `apcache index`
    numbers them (the number is the docno of runs over that index);
  - topic i (1..20) seeks document 87*(i-1), its "known item"; the topic's <title> (the
    query) is eight words of that document's body: the 21st to the 28th whitespace-separated
    word, as they stand (punctuation included), or the first eight in a body shorter than
    28 words, a passage someone who had read the article might remember (words holding `<`
    or `>`, the sample's few HTML remnants such as `<br>`, are left out: in a topic file
    they would read as tags); the <desc> names the article;
  - the relevant documents of a topic are its known item and every other document whose
    body holds the same eight words in a row (grade 1); every other document is unjudged,
    which evaluation counts as not relevant.

This is simulated known-item search (queries sampled from the sought document, as in
Azzopardi, de Rijke and Balog, SIGIR 2007), in its simplest form: a contiguous passage
rather than terms drawn by weight. It is easy for any bag-of-words ranker, since every query
word is in the known item, but not trivial: the passage's words are common ones as often as
not, and nothing of the title is in the query unless the passage repeats it. Queries keep
their punctuation, which is why topics are read as bags of words.

    python3 data/trec/make_sample_topics.py
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "enwiki-sample.tsv"
STEP, TOPICS = 87, 20


def main() -> None:
    documents = [line.split("\t", 1) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    bodies = [" ".join(body.split()) for _, body in documents]
    topics, qrels = [], []
    for i in range(TOPICS):
        qid, known = str(i + 1), STEP * i
        title, body = documents[known]
        words = [w for w in body.split() if "<" not in w and ">" not in w]
        start = 20 if len(words) >= 28 else 0
        passage = " ".join(words[start : start + 8])
        topics.append(
            f"<top>\n<num> Number: {qid}\n<title> {passage}\n\n<desc> Description:\n"
            f"Find the encyclopedia article \"{title}\", which holds this passage.\n</top>\n"
        )
        for doc, other in enumerate(bodies):
            if doc == known or passage in other:
                qrels.append(f"{qid} 0 {doc} 1\n")
    (HERE / "sample-topics.txt").write_text("\n".join(topics), encoding="utf-8")
    (HERE / "sample.qrels").write_text("".join(qrels), encoding="utf-8")


if __name__ == "__main__":
    main()
