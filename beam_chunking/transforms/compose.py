"""ChunkFiles: the whole job as one composite transform."""
from __future__ import annotations

import logging
import re
from typing import Any, Optional, Sequence, Union

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from beam_chunking.config import JobConfig, token_count_units
from beam_chunking.errors import ConfigError
from beam_chunking.ids import normalize_uri
from beam_chunking.strategies.base import Chunker
from beam_chunking.transforms.fused import FusedFn
from beam_chunking.transforms.runners import drops_finish_bundle_output, keeps_pardo_outputs
from beam_chunking.transforms._shards import WriteShards
from beam_chunking.transforms.chunk import ChunkDocuments
from beam_chunking.transforms.deletions import check_deletions
from beam_chunking.transforms.embed import EmbedChunks
from beam_chunking.transforms.incremental import (OPTIONS_FINGERPRINT, compare, copy_unchanged, options_fingerprint,
                                                  previous_run, write_stale_changes)
from beam_chunking.transforms.lease import takes_lease
from beam_chunking.transforms.manifest import read_manifest
from beam_chunking.transforms.parse import ParseDocuments
from beam_chunking.transforms.read import ReadDocuments
from beam_chunking.transforms.write import SCHEMAS, WriteChunkTable

#: The manifest key saying what each strategy's ``token_count`` counts (``{"structural":
#: "hf:all-MiniLM-L6-v2-onnx-int8/tokenizer.json tokens (2 special included)"}``).
TOKEN_COUNT_FIELD = "token_count"

_LOG = logging.getLogger(__name__)


def _glob_regex(pattern: str) -> "re.Pattern[str]":
    """A glob as Beam's filesystems read it: ``**`` crosses folders; ``*`` and ``?`` do not on
    local disks, and do on object stores (which match with ``fnmatch``)."""
    one = "[^/]" if FileSystems.get_scheme(pattern) is None else "."
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append(one + "*")
            i += 1
        elif pattern[i] == "?":
            out.append(one)
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def refuse_output_inside_input(output: str, patterns: Sequence[str]) -> None:
    """Raise :class:`ConfigError` when an input pattern would match the files of ``output``
    (its manifest or its tables), which the next run would then read as documents."""
    out = normalize_uri(output).rstrip("/")
    written = [f"{out}/_manifest.json", f"{out}/chunks/run-x/part-x.parquet"]
    for pattern in patterns:
        if any(_glob_regex(pattern).match(path) for path in written):
            raise ConfigError(f"output {output} is inside the input {pattern}: its tables would be read as "
                              "documents by the next run; write the output elsewhere or narrow the pattern")


class ChunkFiles(beam.PTransform):
    """Read, parse, chunk (and embed) and write: the whole job as one transform.

    ``p | ChunkFiles("docs/*", "out/", strategy, overwrite=True)`` or
    ``p | ChunkFiles(config=JobConfig(...))``: the options are the fields of
    :class:`~beam_chunking.config.JobConfig`, declared there once.

    Args:
        input: File pattern (or patterns) to read.
        output: Output folder; it may not lie where an input pattern would read its tables
            back as documents.
        strategy: A strategy or Router, used for every document; default: chosen per document
            by its content type (:func:`~beam_chunking.default_strategy.default_strategy`).
        config: A whole :class:`JobConfig` instead of the arguments above.
        **options: Any other :class:`JobConfig` field (``overwrite``, ``incremental``,
            ``num_shards``, ``embed`` ...).

    With ``incremental=True`` only new and changed files are parsed, chunked and embedded;
    see :mod:`beam_chunking.transforms.incremental`.

    Raises:
        ConfigError: an unknown option, the output inside the input, or ``incremental`` with
            ``num_shards``.
    """

    def __init__(self, input: Union[str, Sequence[str], None] = None, output: Optional[str] = None,
                 strategy: Optional[Chunker] = None, *, config: Optional[JobConfig] = None, **options: Any):
        super().__init__()
        if config is None:
            config = JobConfig.of(input=input, output=output, strategy=strategy, **options)
        elif input is not None or output is not None or strategy is not None or options:
            raise ConfigError("ChunkFiles: pass either config= or the job's options, not both")
        if not config.input or not config.output:
            raise ConfigError("ChunkFiles needs an input pattern and an output folder")
        self.config = config
        self.strategy = config.strategy
        self.read = ReadDocuments(config.input, max_bytes=config.max_bytes, metadata=dict(config.metadata),
                                  exclude=config.exclude, content_types=config.content_types)
        refuse_output_inside_input(config.output, self.read.patterns)
        self.parse = ParseDocuments(config.decode_errors, config.limits, config.keep, ocr=config.ocr)
        self.chunk = ChunkDocuments(config.strategy, config.token_counter)
        self.embed = EmbedChunks(config.embed, context=config.embed_context) if config.embed is not None else None
        if config.incremental and config.num_shards:
            raise ConfigError(f"incremental: an incremental run copies unchanged rows file by file, so it cannot keep "
                              f"exactly num_shards={config.num_shards} files per table; use num_shards 0")
        self.options_fingerprint = options_fingerprint(config, self.embed.embedder if self.embed else None)
        # An incremental run replaces the output it compares with: overwrite is implied.
        self.write = WriteChunkTable(config.output, overwrite=config.overwrite or config.incremental,
                                     compression=config.compression, num_shards=config.num_shards,
                                     manifest_fields={OPTIONS_FINGERPRINT: self.options_fingerprint,
                                                      # what token_count counts, per strategy
                                                      TOKEN_COUNT_FIELD: token_count_units(config)})

    def expand(self, pbegin):
        if self.config.overwrite and not self.config.incremental:
            try:
                read_manifest(self.config.output)
            except ValueError as exc:  # said now, not after the whole run
                _LOG.warning("%s; --overwrite replaces it", exc)
        check_deletions(self.config)  # before any work, the lease included
        # The lease first, so that no other run replaces the previous run's files while this
        # one compares with them and copies the unchanged rows.
        plan = self.write.plan(lease=takes_lease(pbegin.pipeline))
        # Where the runner delivers what a bundle emits when it finishes, a document's token
        # counts may be taken on another core while the next documents are chunked.
        late = not drops_finish_bundle_output(pbegin.pipeline.runner)
        previous = previous_run(self.config.output, self.config.overwrite) if self.config.incremental else None
        if previous is None:
            front = [*self.read.fns(), *self.parse.fns(), *self.chunk.fns(defer_counts=late)]
            out = self._process(pbegin, self.read.files(pbegin), front, plan, late_outputs=late)
            if self.write.num_shards:  # out holds rows: shuffle them into the fixed shards
                out = out | "WriteFiles" >> WriteShards(plan.folders, SCHEMAS, self.write.compression,
                                                        self.write.num_shards)
            return self.write.commit(out, plan)
        same = previous.options_fingerprint == self.options_fingerprint
        # The join with the previous documents spreads the files over the workers.
        split = compare(pbegin, self.read, previous, self.strategy, same, plan.folders["changes"],
                        self.write.compression)
        out = self._process(pbegin, split.documents, [*self.parse.fns(), *self.chunk.fns(defer_counts=late)], plan,
                            changes=False, late_outputs=late)
        copied = copy_unchanged(pbegin, previous, split.stale_ids, plan.folders, SCHEMAS, self.write.compression)
        stale = write_stale_changes(split.stale, copied.stale, plan.folders["changes"], self.write.compression)
        return self.write.commit([out, split.refs, stale, copied.refs], plan)

    def _process(self, pbegin, inputs, front, plan, changes: bool = True, late_outputs: bool = False):
        """``inputs`` through ``front`` (and embedding) to rows, written per bundle unless
        ``num_shards`` is set (then rows are returned for the shuffle). ``late_outputs``:
        whether the fused stages may emit when their bundle finishes."""
        # The stages run as fused DoFns, not one ParDo each: every ParDo costs the runner
        # per-element work, and Beam's DaskRunner keeps each ParDo's outputs until the job
        # ends. Embedding stays a stage of its own where batches may span documents.
        back = self.write.row_fns(changes)
        if self.embed is not None and keeps_pardo_outputs(pbegin.pipeline.runner):
            front, separate_embed = front + self.embed.fns(), False
        else:
            separate_embed = self.embed is not None
        writer = [] if self.write.num_shards else [self.write.bundle_writer(plan)]
        if separate_embed:
            docs = inputs | "Documents" >> beam.ParDo(FusedFn(front, late_outputs)) | "EmbedChunks" >> self.embed
            return docs | "Rows" >> beam.ParDo(FusedFn(back + writer, late_outputs))
        return inputs | "Documents" >> beam.ParDo(FusedFn(front + back + writer, late_outputs))
