"""Makes the sample's known-item topics and their judgements (sample-topics.txt, sample.qrels).

The procedure, deterministic and without any ranking involved:
  - the documents are data/enwiki-sample.tsv's lines, numbered from 0 as `apcache index`
    numbers them (the number is the docno of runs over that index);
  - topic i (1..20) is document 87*(i-1)'s title, as a classic TREC topic (<top>, <num>,
    <title>), with a description saying what is sought;
  - the relevant documents of a topic are every document with exactly that title (grade 1);
    every other document is unjudged, which evaluation counts as not relevant.

So each topic seeks a known item by its name: a navigational task. The titles keep their
punctuation (parentheses, commas), which is why topics are read as bags of words.

    python3 data/trec/make_sample_topics.py
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "enwiki-sample.tsv"
STEP, TOPICS = 87, 20


def main() -> None:
    titles = [line.split("\t", 1)[0] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    topics, qrels = [], []
    for i in range(TOPICS):
        qid, title = str(i + 1), titles[STEP * i]
        topics.append(
            f"<top>\n<num> Number: {qid}\n<title> {title}\n\n<desc> Description:\n"
            f"Find the encyclopedia article titled \"{title}\".\n</top>\n"
        )
        for doc, other in enumerate(titles):
            if other == title:
                qrels.append(f"{qid} 0 {doc} 1\n")
    (HERE / "sample-topics.txt").write_text("\n".join(topics), encoding="utf-8")
    (HERE / "sample.qrels").write_text("".join(qrels), encoding="utf-8")


if __name__ == "__main__":
    main()
