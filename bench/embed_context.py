"""Does embedding a chunk in its context help retrieval? The context template on and off.

    python bench/embed_context.py                      # about 2 minutes the first time (embedding)
    python bench/embed_context.py --template '{section_path}\n\n{text}' --tokens 200,400

On ``../shared/retrieval-dev`` (its README defines the metric): both corpora are parsed as the
pipeline parses them, chunked by ``structural`` at each size (cl100k tokens), and the chunks
embedded with the packaged MiniLM twice: their text alone, and the string the template makes
of each (:mod:`beam_chunking.embeddings.context`; fields from the chunk's metadata and its
document). The 220 questions retrieve the top 5 chunks by cosine over both corpora, scored on
character ranges as ``bench/quality.py`` scores them (recall and IoU, mean over the questions),
with the paired difference (template minus bare) and its 95% bootstrap interval. The chunks are
the same in both arms: only what is embedded differs.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from quality import CORPORA, K, RETRIEVAL, CachedEmbedder, paired_interval, score  # noqa: E402

DEFAULT_TEMPLATE = "{title}\n{section_path}\n\n{text}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--template", default=DEFAULT_TEMPLATE, help="the context template (default: %(default)r)")
    ap.add_argument("--tokens", default="200,400", help="structural sizes, cl100k tokens (default 200,400)")
    args = ap.parse_args()
    template = args.template.encode().decode("unicode_escape")
    from beam_chunking.embeddings import minilm
    from beam_chunking.embeddings.context import check_context, render_context
    from beam_chunking.pipelines.preview import load_document
    from beam_chunking.registry import get
    from beam_chunking.strategies.base import document_outcome

    check_context(template)
    docs = {c: load_document(os.path.join(RETRIEVAL, f"{c}.md")) for c in CORPORA}
    for c, doc in docs.items():
        with open(os.path.join(RETRIEVAL, f"{c}.md"), encoding="utf-8") as f:
            assert doc.text == f.read(), f"{c}: the parsed text differs from the file; offsets would not match"
    with open(os.path.join(RETRIEVAL, "questions.csv"), encoding="utf-8", newline="") as f:
        questions = list(csv.DictReader(f))
    refs = [(q["corpus_id"], [(r["start_index"], r["end_index"]) for r in json.loads(q["references"])])
            for q in questions]
    embedder = CachedEmbedder(minilm())
    qvecs = embedder.embed([q["question"] for q in questions])
    print(f"Template: {template!r}; structural; MiniLM; k = {K}; {len(questions)} questions.\n")
    print("| size | chunks | recall: bare | recall: template | IoU: bare | IoU: template "
          "| recall difference [95% interval] | IoU difference [95% interval] |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.tokens.split(",")):
        strategy = get("structural", max_chunk_size=size)
        pool, bare, framed = [], [], []
        for c, doc in docs.items():
            for chunk in document_outcome(strategy, doc).chunks:
                pool.append((c, chunk.start, chunk.end))
                bare.append(chunk.text)
                framed.append(render_context(template, chunk.text, chunk.metadata, doc.uri))
        results = []
        for texts in (bare, framed):
            vecs = embedder.embed(texts)
            top = np.argsort(-(qvecs @ vecs.T), axis=1, kind="stable")[:, :K]
            results.append(score(refs, [[pool[i] for i in row] for row in top]))
        embedder.save()
        a, b = results
        dr = paired_interval(b["per_question"][:, 0], a["per_question"][:, 0])
        di = paired_interval(b["per_question"][:, 1], a["per_question"][:, 1])
        print(f"| {size} tokens | {len(pool)} | {a['recall'][0]:.1f} | {b['recall'][0]:.1f} | {a['iou'][0]:.2f} "
              f"| {b['iou'][0]:.2f} | {dr[0]:+.1f} [{dr[1]:+.1f}, {dr[2]:+.1f}] | {di[0]:+.2f} [{di[1]:+.2f}, {di[2]:+.2f}] |")
    sample = framed[0][:120].replace("\n", "\\n")
    print(f"\n_First embedded string at the last size: {sample!r}_")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
