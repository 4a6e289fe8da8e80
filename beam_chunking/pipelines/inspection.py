"""The numbers ``inspect`` and ``preview`` report, read from an output's committed tables.

:func:`inspect_output` reads the chunks and documents tables through the manifest and
computes chunk counts and size percentiles (characters, and ``token_count`` tokens) overall,
per content type and per strategy; the smallest and largest chunks; the failed documents,
grouped by reason; the parts strategies left out on purpose; and a few documents' chunk
boxes, for the report's page thumbnails. The results are plain frozen values, rendered as
text by :mod:`beam_chunking.pipelines.inspect` and as HTML by
:mod:`beam_chunking.pipelines.report`. Also here: the helpers the two commands share.

Nothing here imports Beam at import time (the manifest reader is imported when a table is
read), so ``preview`` stays Beam-free.
"""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

import numpy as np

from beam_chunking.pipelines.escape import escape_text  # noqa: F401 (re-exported: callers know it here)

if TYPE_CHECKING:
    from beam_chunking.pipelines.report_pages import PlacedDocument

#: Percentiles reported for every size distribution, besides the maximum.
PERCENTILES = (5, 50, 95)
#: Columns of the chunks table that inspect reads.
CHUNK_COLUMNS = ["chunk_id", "uri", "text", "token_count", "strategy", "content_type"]
_NONE = "(none)"


class UsageError(Exception):
    """Bad command-line usage; the command prints it as one line and exits with status 2."""


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors raise :class:`UsageError` instead of exiting."""

    def error(self, message: str):  # noqa: D401 - argparse's signature
        raise UsageError(f"{message} (see {self.prog} --help)")


def percentiles(values: Sequence[int]) -> Dict[str, Optional[int]]:
    """Nearest-rank percentiles of integer sizes.

    Args:
        values: Sizes (characters or tokens); ``None`` entries must be removed first.

    Returns:
        ``{"p5": ..., "p50": ..., "p95": ..., "max": ...}``, each an observed value, or all
        ``None`` when ``values`` is empty.
    """
    arr = np.asarray(values)
    keys = [f"p{q}" for q in PERCENTILES] + ["max"]
    if arr.size == 0:
        return dict.fromkeys(keys)
    found = np.percentile(arr, PERCENTILES, method="inverted_cdf")
    return dict(zip(keys, [int(v) for v in found] + [int(arr.max())]))


@dataclass(frozen=True)
class SizeStats:
    """Chunk count and size percentiles of one group of chunks (see :func:`percentiles`)."""

    chunks: int
    characters: Dict[str, Optional[int]]
    tokens: Dict[str, Optional[int]]


@dataclass(frozen=True)
class ChunkExample:
    """One chunk shown as an extreme: its id, its document's URI, sizes and the start of its text."""

    chunk_id: str
    characters: int
    tokens: Optional[int]
    text: str
    uri: str = ""


@dataclass(frozen=True)
class FailureGroup:
    """Failed documents that share a stage, an error type and a message (file names aside)."""

    stage: str
    error_type: str
    count: int
    example_uri: str
    example_message: str


@dataclass(frozen=True)
class Inspection:
    """Everything ``inspect`` reports about one output; build it with :func:`inspect_output`.

    ``sizes`` maps each strategy to its chunks' character sizes and token counts (nulls
    removed), for the report's histograms. ``failures`` rows are ``(uri, stage, error_type,
    message)``; ``dropped`` rows are ``(uri, labels, characters)``, largest first.
    ``placed`` holds the few documents whose chunk boxes the HTML report draws on their pages
    (:func:`beam_chunking.pipelines.report_pages.placed_documents`); ``placed_total`` counts
    every document whose chunks have boxes.
    """

    output: str
    run_id: Optional[str]
    statuses: Dict[str, int]
    documents_by_type: Dict[str, Dict[str, int]]
    overall: SizeStats
    by_content_type: Dict[str, SizeStats]
    by_strategy: Dict[str, SizeStats]
    sizes: Dict[str, Tuple[np.ndarray, np.ndarray]]
    smallest: List[ChunkExample]
    largest: List[ChunkExample]
    failures: List[Tuple[str, str, str, str]]
    failure_groups: List[FailureGroup]
    dropped: List[Tuple[str, List[str], int]]
    placed: Tuple[PlacedDocument, ...] = ()
    placed_total: int = 0


def _stats(chars: np.ndarray, tokens: np.ndarray) -> SizeStats:
    return SizeStats(int(chars.size), percentiles(chars), percentiles(tokens[tokens >= 0]))


def _grouped(keys: np.ndarray, chars: np.ndarray, tokens: np.ndarray) -> Dict[str, SizeStats]:
    return {str(k): _stats(chars[keys == k], tokens[keys == k]) for k in sorted(set(keys.tolist()))}


def _reason(uri: str, message: str) -> str:
    """The message with what differs from file to file blanked, so alike failures group: the
    file's URI and name, parenthesised details, byte strings and numbers."""
    if uri:
        message = message.replace(uri, "<file>")
        name = uri.rstrip("/").rsplit("/", 1)[-1]
        message = message.replace(name, "<file>") if name else message
    message = re.sub(r"b'(?:[^'\\]|\\.)*'|b\"(?:[^\"\\]|\\.)*\"", "b'...'", message)
    message = re.sub(r"\([^()]*\)", "(...)", message)
    return re.sub(r"0x[0-9a-fA-F]+|\d[\d,.]*", "N", message)


def _group_failures(failures: List[Tuple[str, str, str, str]]) -> List[FailureGroup]:
    groups: Dict[Tuple[str, str, str], List[Tuple[str, str, str, str]]] = {}
    for row in failures:
        groups.setdefault((row[1], row[2], _reason(row[0], row[3])), []).append(row)
    ordered = sorted(groups.values(), key=lambda rows: (-len(rows), rows[0][1], rows[0][2], rows[0][0]))
    return [FailureGroup(r[0][1], r[0][2], len(r), r[0][0], r[0][3]) for r in ordered]


def inspect_output(output: str, *, top: int = 5) -> Inspection:
    """Read an output's committed tables and compute what ``inspect`` reports.

    Args:
        output: The output folder (local path or ``gs://``).
        top: How many smallest and largest chunks to keep. Default 5.

    Raises:
        FileNotFoundError: The output has no manifest (no run committed there).
        ValueError: The manifest is not valid.

    Example::

        ins = inspect_output("out")
        print(ins.overall.characters["p95"], [(g.error_type, g.count) for g in ins.failure_groups])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from beam_chunking.pipelines.report_pages import COLUMNS as PLACE_COLUMNS
    from beam_chunking.pipelines.report_pages import placed_documents
    from beam_chunking.transforms.manifest import manifest_run, read_manifest, read_table

    output = output.rstrip("/")
    manifest = read_manifest(output)
    if manifest is None:
        raise FileNotFoundError(f"{output}: no _manifest.json; no run has been committed there")
    try:
        columns = CHUNK_COLUMNS + [c for c in PLACE_COLUMNS if c not in CHUNK_COLUMNS]
        chunks = read_table(output, "chunks", columns=columns)
    except ValueError:  # an output written before the boxes column: nothing to place
        chunks = read_table(output, "chunks", columns=CHUNK_COLUMNS)
    docs = read_table(output, "documents")
    docs_rows = docs.to_pylist() if docs is not None else []
    statuses: Dict[str, int] = {}
    by_type: Dict[str, Dict[str, int]] = {}
    for d in docs_rows:
        statuses[d["status"]] = statuses.get(d["status"], 0) + 1
        per = by_type.setdefault(d["content_type"] or _NONE, {})
        per[d["status"]] = per.get(d["status"], 0) + 1
    failures = sorted((d["uri"] or d["document_id"], d["stage"] or _NONE, d["error_type"] or _NONE,
                       d["error_message"] or "") for d in docs_rows if d["status"] == "failed")
    dropped = sorted(((d["uri"] or d["document_id"], list(d["dropped"]), int(d["dropped_characters"] or 0))
                      for d in docs_rows if d["dropped"]), key=lambda r: (-r[2], r[0]))
    if chunks is None or chunks.num_rows == 0:
        empty = np.zeros(0, dtype=np.int64)
        chars = tokens = empty
        strategies = ctypes = np.array([], dtype=object)
        ids, texts, uris = [], None, None
    else:
        chars = pc.utf8_length(chunks["text"]).to_numpy(zero_copy_only=False).astype(np.int64)
        tokens = pc.fill_null(chunks["token_count"], -1).to_numpy(zero_copy_only=False).astype(np.int64)
        strategies = np.array(pc.fill_null(chunks["strategy"], _NONE).to_pylist(), dtype=object)
        ctypes = np.array(pc.fill_null(chunks["content_type"], _NONE).to_pylist(), dtype=object)
        ids, texts, uris = chunks["chunk_id"], chunks["text"], chunks["uri"]
    placed, placed_total = placed_documents(chunks, docs_rows)
    # Ties broken by chunk id, so the extremes are the same on every read.
    by_size = pa.table({"n": chars, "id": ids}) if chars.size else None

    def extremes(direction: str) -> List[int]:
        if by_size is None or not top:
            return []
        order = pc.sort_indices(by_size, sort_keys=[("n", direction), ("id", "ascending")])
        return order[:top].to_pylist()

    def example(i: int) -> ChunkExample:
        return ChunkExample(ids[i].as_py(), int(chars[i]), int(tokens[i]) if tokens[i] >= 0 else None,
                            texts[i].as_py()[:200], uris[i].as_py() or "")

    return Inspection(
        output=output, run_id=manifest_run(manifest), statuses=statuses, documents_by_type=by_type,
        overall=_stats(chars, tokens), by_content_type=_grouped(ctypes, chars, tokens),
        by_strategy=_grouped(strategies, chars, tokens),
        sizes={k: (chars[strategies == k], tokens[(strategies == k) & (tokens >= 0)])
               for k in sorted(set(strategies.tolist()))},
        smallest=[example(i) for i in extremes("ascending")],
        largest=[example(i) for i in extremes("descending")],
        failures=failures, failure_groups=_group_failures(failures), dropped=dropped,
        placed=placed, placed_total=placed_total,
    )
