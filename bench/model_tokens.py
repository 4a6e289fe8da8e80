"""Chunks sized in MiniLM's own tokens against cl100k at the same nominal size.

    python bench/model_tokens.py                  # markdown table on stdout (about 1 min)
    python bench/model_tokens.py --size 256 --repeat 3

Each token strategy chunks the two corpora of ``../shared/retrieval-dev`` (parsed as the
pipeline parses them) at ``--size`` tokens twice: counted in cl100k (``tokenizer:
cl100k_base``, the default) and in the packaged MiniLM's tokenizer (``tokenizer: embedder``
with ``embed: minilm``, which counts [CLS] and [SEP] as the model does). MiniLM embeds at
most ``max_tokens`` = 256 tokens per pass, so a chunk of more than 256 MiniLM tokens is
windowed by the embedder: its vector is a mean over windows, not one pass over the chunk.

Columns:

- **chunks**: how many chunks the strategy made;
- **over MiniLM's 256**: chunks whose MiniLM count (special tokens included) is above 256;
- **seconds**: chunking time, best of ``--repeat`` runs, parse excluded;
- **HF / tiktoken**: the MiniLM-sized run's time over the cl100k-sized run's, in this run.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
SHARED = next((p for p in (os.path.join(HERE, "..", "..", "shared"), "/work/shared") if os.path.isdir(p)), "")
RETRIEVAL = os.environ.get("BEAM_CHUNKING_RETRIEVAL_DEV") or os.path.join(SHARED, "retrieval-dev")
#: MiniLM's positions per pass as the packaged embedder runs it (``OnnxEmbedder.max_tokens``).
MINILM_WINDOW = 256


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="max_chunk_size in tokens (default 256)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per cell; the best is kept (default 3)")
    args = parser.parse_args(argv)

    from beam_chunking.config import JobConfig
    from beam_chunking.embeddings.minilm import minilm_paths
    from beam_chunking.pipelines.preview import load_document
    from beam_chunking.sizing import HFTokenizerSizer
    from beam_chunking.strategies import SentenceChunker, StructuralChunker, TokenChunker

    paths = sorted(p for p in glob.glob(os.path.join(RETRIEVAL, "*.md")) if not p.endswith("README.md"))
    if not paths:
        print(f"no corpus under {RETRIEVAL}; set BEAM_CHUNKING_RETRIEVAL_DEV", file=sys.stderr)
        return 2
    docs = [load_document(p, content_types={"*.md": "text/plain"}) for p in paths]
    minilm = HFTokenizerSizer(minilm_paths()[1])
    size = args.size
    kinds = {
        "token": lambda tok: TokenChunker(max_chunk_size=size, overlap=size // 8, tokenizer=tok),
        "sentence": lambda tok: SentenceChunker(max_chunk_size=size, overlap=size // 8, tokenizer=tok),
        "structural": lambda tok: StructuralChunker(max_chunk_size=size, tokenizer=tok),
    }
    chars = sum(len(d.text) for d in docs)
    print(f"{len(docs)} documents, {chars:,} characters, max_chunk_size {size}\n")
    print("| strategy | sized in | chunks | over MiniLM's 256 | seconds | HF / tiktoken |")
    print("|---|---|---|---|---|---|")
    for name, build in kinds.items():
        times = {}
        for label, tok in (("cl100k", "cl100k_base"), ("MiniLM", "embedder")):
            # tokenizer: embedder is resolved by the job, as a spec or the CLI would.
            strategy = JobConfig(strategy=build(tok), embed="minilm").strategy
            for d in docs:  # warm: tokenizers loaded, caches built
                strategy.chunk_document(d)
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                chunks = [c for d in docs for c in strategy.chunk_document(d)]
                best = min(best, time.perf_counter() - t)
            times[label] = best
            over = sum(minilm.count(c.text) > MINILM_WINDOW for c in chunks)
            ratio = f"{times['MiniLM'] / times['cl100k']:.1f}x" if label == "MiniLM" else ""
            print(f"| {name} | {label} | {len(chunks)} | {over} | {best:.3f} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
