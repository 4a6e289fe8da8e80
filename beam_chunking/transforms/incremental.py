"""Incremental re-ingestion: process only what changed since the previous run of an output.

``ChunkFiles(..., incremental=True)`` (``--incremental``, spec ``incremental: true``) reads
the previous run's documents table through its manifest and joins it, by document id, with
the files matched now (one shuffle of small records: file metadata and the previous
documents rows). Per document:

- ``unchanged``: the previous run processed it (status ``ok`` or ``empty``) and its bytes
  (SHA-256), detected content type and strategy fingerprint are the same, under the same job
  options (:func:`options_fingerprint`, in the manifest). Its file is read and hashed, never
  parsed, chunked or embedded; its chunks, parents and documents rows are copied from the
  previous run's files into this run's, before the commit (which removes the previous files).
- ``changed`` (anything else, including a document that failed last time) and ``new`` (no
  previous row) are processed as in a full run.
- ``deleted``: in the previous documents table, matched no more (removed, or now excluded).

The changes table lists every one of them with ``delete_chunk_ids``: the previous chunk ids
of changed and deleted documents, which a store fed from the previous run must delete (see
:class:`~beam_chunking.transforms.pgvector.ApplyChanges`). The step that copies the previous
chunks files finds them (the rows it leaves behind), so only the ids of documents that
changed or left are shuffled, to be joined with their changes rows. The run commits like any
other, so a run that fails leaves the previous output whole.

Unchanged files are always read and hashed: the SHA-256 is the contract. Size and
modification time could skip the read, but a modification time proves nothing about the
bytes (copies, restores and checkouts set it at will; object stores report the upload time),
and hashing costs about one read of the corpus, a small part of a run (bench/incremental.py).

Copying works file by file and is told which documents' rows go (the changed and deleted
ones, usually few): a previous file that holds none of them is copied byte for byte (with
nothing changed, without reading a column; else its ``document_id`` column is read to tell);
others are filtered row group by row group. A table that has gathered more than
:data:`MERGE_SMALL_FILES` small files has those merged (:func:`copy_groups`), rewritten even
when nothing changed. So an incremental run cannot promise a fixed file count, and refuses
``num_shards``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import posixpath
import shutil
import types
import uuid
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes, FileMetadata
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsList, TaggedOutput

from beam_chunking.errors import ConfigError, OutputExistsError
from beam_chunking.ids import display_uri, document_id, fingerprint
from beam_chunking.parsers.compressed import is_gzip
from beam_chunking.schema import CHANGES, CHANGES_SCHEMA, change_row
from beam_chunking.strategies.base import Chunker
from beam_chunking.transforms._common import LeanDoFn, NAMESPACE, Values
from beam_chunking.transforms._files import is_glob
from beam_chunking.transforms.runners import mixes_tagged_outputs, reshuffle_is_noop
from beam_chunking.transforms._shards import BundleFilesFn, ShardRef, _Buffer, _ShardWriter
from beam_chunking.transforms.manifest import MANIFEST, read_manifest, table_files
from beam_chunking.transforms.progress import PROGRESS
from beam_chunking.transforms.read import MatchFn, ReadDocuments, _ReadFn
from beam_chunking.transforms.records import Stage, failure_from
from beam_chunking.transforms.write import existing_files
from beam_chunking.types import Document
from beam_chunking.version import __version__

#: The manifest key holding :func:`options_fingerprint`.
OPTIONS_FINGERPRINT = "options_fingerprint"
#: Tables whose unchanged rows are copied into the new run (``changes`` is rewritten).
COPIED_TABLES = ("chunks", "parents", "documents")
#: Most sources (patterns, previous files) read where they are listed, without a shuffle to
#: spread them.
SPREAD_FILES = 8
#: More small previous files than this in one table are merged by the copy (see
#: :func:`copy_groups`).
MERGE_SMALL_FILES = 8
#: Bytes of the input files a merged file is made of, at most (the output is about as large).
MERGED_FILE_BYTES = 64 * 2**20
#: A previous file under this many bytes is small: half a merged file, so that what a merge
#: makes can be merged again while it is far from full.
SMALL_FILE_BYTES = MERGED_FILE_BYTES // 2
#: Input files of one merged file, at most (each is one step's work).
MERGED_FILES = 256
#: Statuses of previous documents whose rows can be kept (a failed one is retried).
_KEPT_STATUSES = ("ok", "empty")
#: Documents-table columns the comparison reads.
_PREVIOUS_COLUMNS = ("document_id", "uri", "status", "sha256", "content_type", "strategy_fingerprint")
#: Parquet's names of the codecs of :data:`beam_chunking.schema.COMPRESSIONS`.
_PARQUET_CODECS = {"zstd": "ZSTD", "snappy": "SNAPPY", "gzip": "GZIP", "none": "UNCOMPRESSED"}


def options_fingerprint(config: Any, embedder: Any = None) -> str:
    """12 hex digits over the job options that shape every document's rows besides its
    strategy: ``token_counter``, ``decode_errors``, ``limits`` (its caps; not ``watchdog``,
    which decides where a document is parsed, not what it becomes), ``keep``, ``ocr`` (and
    whether the OCR engine is installed), ``metadata``, ``content_types``, the embedder, its
    context template and
    this package's version (a new version may parse or chunk differently). Recorded in every run's manifest; when it differs, an incremental
    run treats every document as changed.

    Args:
        config: The :class:`~beam_chunking.config.JobConfig`.
        embedder: The resolved embedder, or ``None`` (no embedding stage). A dataclass
            embedder is fingerprinted by its fields; another by its class and ``name``.
    """
    if embedder is None or dataclasses.is_dataclass(embedder):
        model: Any = embedder
    else:
        model = f"{type(embedder).__module__}.{type(embedder).__qualname__}:{getattr(embedder, 'name', '')}"
    return fingerprint({"version": __version__, "content_types": [list(p) for p in config.content_types],
                        "token_counter": config.token_counter, "decode_errors": config.decode_errors,
                        "limits": _caps(config.limits), "keep": sorted(config.keep), "metadata": dict(config.metadata),
                        "embed": model, **_ocr(config),
                        # Only when set, so that runs before templates existed keep their fingerprint.
                        **({"embed_context": config.embed_context} if config.embed_context else {})})


def _ocr(config: Any) -> Dict[str, Any]:
    # What "auto" does depends on the ocr extra: installing it must re-read the scans that a
    # run without it skipped. (Judged where the pipeline is built: workers should match.)
    from beam_chunking.parsers.ocr import ocr_available

    return {"ocr": config.ocr, "ocr_engine": config.ocr != "never" and ocr_available()}


def _caps(limits: Any) -> Dict[str, Any]:
    # A document stopped by the watchdog fails, and failed documents are parsed again anyway.
    return {f.name: getattr(limits, f.name) for f in dataclasses.fields(limits) if f.name != "watchdog"}


class PreviousRun(NamedTuple):
    """What an incremental run needs of the output's committed run: each table's files
    (full paths) and the run's :func:`options_fingerprint` (``None`` if it recorded none)."""

    run_id: Optional[str]
    files: Dict[str, List[str]]
    options_fingerprint: Optional[str]


def previous_run(output: str, overwrite: bool = False) -> Optional[PreviousRun]:
    """The committed run an incremental run of ``output`` compares with, read when the
    pipeline is built; ``None`` when the folder is empty or missing, or its manifest names no
    documents table (every document is new).

    Raises:
        OutputExistsError: the folder holds files but no manifest, and ``overwrite`` is
            false: it is not a beam-chunking output, so there is nothing to compare with.
    """
    output = output.rstrip("/") or "/"
    try:
        manifest = read_manifest(output)
    except ValueError as exc:
        raise ConfigError(f"--incremental: {exc}, so there is nothing to compare with; run with --overwrite "
                          "instead for a full run that replaces the output") from None
    if manifest is None:
        found = existing_files(output)
        if found and not overwrite:
            raise OutputExistsError(
                f"--incremental: output folder {output} holds files ({found[0]} ...) but no {MANIFEST}, so it is "
                "not the output of a previous run; point --output at that output, or pass --overwrite to "
                "replace the folder with a full run")
        return None
    if "documents" not in manifest["tables"]:
        # Not written by this package: without its documents no row could be told apart, so
        # none is kept (every document is new and the run replaces the tables).
        return None
    files = {t: table_files(output, t, manifest) for t in COPIED_TABLES if t in manifest["tables"]}
    return PreviousRun(manifest.get("run_id"), files, manifest.get(OPTIONS_FINGERPRINT))


def _previous_rows(path: str):
    """A previous documents file -> ``(document_id, ("document", row))`` per row."""
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        parquet = pq.ParquetFile(f)  # only the named columns are read
        names = [c for c in _PREVIOUS_COLUMNS if c in parquet.schema_arrow.names]  # older outputs lack some
        rows = parquet.read(columns=names).to_pylist()
    for row in rows:
        yield row["document_id"], ("document", row)


@beam.typehints.with_output_types(Any)  # declared: not inferred from the bytecode at build
class _SourcesFn(LeanDoFn):
    """What the comparison joins, keyed by document id: ``("pattern", p)`` -> each file ``p``
    matches as ``("file", metadata)``; ``("file", metadata)`` (listed when the pipeline was
    built) the same; ``("documents", path)`` -> each row of a previous documents
    file as ``("document", row)``. One step, so that listing and reading the previous rows
    cost the runner no stage of their own before the join."""

    def __init__(self, matcher: MatchFn):
        self.matcher = matcher

    def process(self, source: Tuple[str, Any]):
        kind, value = source
        if kind == "documents":
            yield from _previous_rows(value)
            return
        for meta in (self.matcher.match(value) if kind == "pattern" else [value]):
            # As FileMetadata (pickled by the shuffle's coder): a local name that is not valid
            # UTF-8 holds surrogates, which a string coder refuses.
            yield document_id(meta.path), ("file", meta)


@beam.typehints.with_output_types(Any)  # declared: not inferred from the bytecode at build
class _CompareFn(BundleFilesFn):
    """A document's file and previous row -> its change; the document itself (or its read
    failure) when it must be processed. The changes rows of new and unchanged documents are
    written here, one file per bundle (an output per document would cost the runner more
    than writing it). Tagged outputs: ``refs`` (the :class:`ShardRef` of each changes file,
    when it opens), ``stale`` (``(document_id, row)`` of changed and deleted documents, whose
    ``delete_chunk_ids`` are filled in later) and ``stale_ids`` (their ids alone: their
    previous rows are the ones not copied)."""

    def __init__(self, reader: _ReadFn, strategy: Chunker, same_options: bool, changes_folder: str, codec: str):
        super().__init__({"changes": changes_folder}, {"changes": CHANGES_SCHEMA}, codec)
        self.reader = reader
        self.strategy = strategy
        self.same_options = same_options
        self.counters = {c: beam.metrics.Metrics.counter(NAMESPACE, f"documents_{c}") for c in CHANGES}

    def setup(self):
        self._fingerprints: Dict[int, Tuple[Chunker, str]] = {}

    def _fingerprint(self, document: Document) -> Optional[str]:
        try:  # a router picks by content type, which is known before parsing
            strategy = self.strategy.resolve(document)
        except Exception:  # no route for it: processing it again reports the error
            return None
        # Routes are the same objects every time; the (kept) object guards the id.
        cached = self._fingerprints.get(id(strategy))
        if cached is None or cached[0] is not strategy:
            cached = self._fingerprints[id(strategy)] = (strategy, strategy.fingerprint)
        return cached[1]

    def _unchanged(self, previous: Optional[dict], document: Document, sha256: str) -> bool:
        if not (self.same_options and previous) or previous["status"] not in _KEPT_STATUSES:
            return False
        if previous["sha256"] != sha256 or not previous.get("strategy_fingerprint"):
            return False
        return self._fingerprint(document) == previous["strategy_fingerprint"]

    def _change(self, doc_id: str, uri: Optional[str], change: str):
        self.counters[change].inc()
        row = change_row(doc_id, uri, change)
        if change in ("new", "unchanged"):
            for ref in self._files.add("changes", row):
                yield TaggedOutput("refs", ref)
        else:
            yield TaggedOutput("stale", (doc_id, row))
            yield TaggedOutput("stale_ids", doc_id)  # for the copy, which needs no rows

    def _read(self, doc_id: str, meta: FileMetadata, previous: Optional[dict]):
        """``(document or failure, sha256 or None)``. Same options, name and bytes give the
        same detected content type, so a file whose bytes hash as before takes its previous
        content type and skips detection."""
        readable = fileio.ReadableFile(meta)
        try:
            data = self.reader.read_bytes(readable)
            if previous is not None and previous.get("content_type") and not is_gzip(data):
                sha256 = hashlib.sha256(data).hexdigest()
                if sha256 == previous["sha256"]:
                    return Document(doc_id, display_uri(meta.path), data, previous["content_type"],
                                    dict(self.reader.metadata)), sha256
            document = self.reader.document(meta.path, data)
        except Exception as exc:  # as the read stage does: the document fails, the job goes on
            return failure_from(readable, exc, Stage.READ), None
        return document, hashlib.sha256(document.data).hexdigest()

    def process(self, keyed):
        doc_id, values = keyed
        files, previous = [], None
        for kind, value in values:
            if kind == "file":
                files.append(value)
            else:
                previous = value
        files = [m for m in files if not m.path.endswith("/")]  # folders are no documents
        if not files:
            if previous is not None:
                yield from self._change(doc_id, previous["uri"], "deleted")
            return
        document, sha256 = self._read(doc_id, files[0], previous)  # a file matched twice is read once
        if sha256 is not None and self._unchanged(previous, document, sha256):
            PROGRESS.add(len(document.data))
            yield from self._change(doc_id, document.uri, "unchanged")
            return
        yield document
        yield from self._change(doc_id, document.uri, "new" if previous is None else "changed")


class _CopyUnchangedFn(LeanDoFn):
    """Previous files of one table -> their rows, less those of the documents that go, in
    one file of this run (its ref); for chunks files also ``stale``: ``(document_id, chunk
    ids)`` of the rows left behind.

    The side input names the documents whose rows go (changed and deleted ones): usually far
    fewer than those that stay, and none when nothing changed, when a file taken alone is
    copied whole without reading a column. Several files (small ones, see
    :func:`copy_groups`) are merged into one."""

    def __init__(self, folders: Dict[str, str], schemas: Dict[str, pa.Schema], codec: str):
        self.folders, self.schemas, self.codec = folders, schemas, codec
        self._source = None
        self.copied = beam.metrics.Metrics.counter(NAMESPACE, "rows_copied")

    def _value_set(self, stale) -> pa.Array:
        if self._source is not stale:  # a side input is the same object within a bundle
            self._source, self._ids = stale, pa.array(sorted(set(stale)), pa.string())
        return self._ids

    def process(self, item: Tuple[str, Tuple[str, ...]], stale):
        table, paths = item
        ids = self._value_set(stale)
        target = f"{self.folders[table]}/part-copy-{uuid.uuid4().hex}.parquet"
        buffer, writer, kept = _Buffer(self.schemas[table]), None, 0
        try:
            for path in paths:
                with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
                    parquet = pq.ParquetFile(f)
                    documents, drop, dropped = _dropped(parquet, ids)
                    if dropped and table == "chunks":
                        yield from _left_behind(parquet, documents, drop)
                    rows = parquet.metadata.num_rows - dropped
                    kept += rows
                    if not rows:
                        continue
                    if len(paths) == 1 and not dropped and self._same_layout(parquet, table):
                        _copy_file(path, target)  # byte for byte: nothing to decode or encode
                        continue
                    writer = writer or _ShardWriter(target, buffer.schema, self.codec)
                    _add_kept(parquet, drop if dropped else None, buffer, writer)
            if writer is not None:
                rest = buffer.take()
                if rest is not None:
                    writer.write(rest)
                writer.close()
        except BaseException:
            if writer is not None:
                writer.abort()  # a failed bundle's file takes no space until the sweep
            raise
        if kept:
            self.copied.inc(kept)
            yield ShardRef(table, target)

    def _same_layout(self, parquet: pq.ParquetFile, table: str) -> bool:
        """Whether ``parquet`` has this run's schema and codec (so it can be taken whole)."""
        return (parquet.schema_arrow.equals(self.schemas[table])
                and parquet.metadata.row_group(0).column(0).compression == _PARQUET_CODECS[self.codec])


def _dropped(parquet: pq.ParquetFile, ids: pa.Array) -> Tuple[Optional[pa.Array], Optional[pa.Array], int]:
    """``(document_id column, mask of the rows whose document is in ids, their count)``;
    nothing is read when ``ids`` is empty."""
    if not len(ids):
        return None, None, 0
    # Here, not at the top: a run that filters no rows never pays its import (bench/README).
    import pyarrow.compute as pc

    documents = parquet.read(columns=["document_id"]).column(0)
    drop = pc.is_in(documents, value_set=ids)
    return documents, drop, pc.sum(drop).as_py() or 0


def _left_behind(parquet: pq.ParquetFile, documents: pa.Array, drop: pa.Array):
    """``stale`` outputs: the chunk ids of each document whose rows ``drop`` leaves out."""
    left = pa.table({"document_id": documents, "chunk_id": parquet.read(columns=["chunk_id"]).column(0)})
    left = left.filter(drop).group_by("document_id").aggregate([("chunk_id", "list")])
    for doc, chunk_ids in zip(left.column(0).to_pylist(), left.column(1).to_pylist()):
        yield TaggedOutput("stale", (doc, ("chunk_ids", chunk_ids)))


def _add_kept(parquet: pq.ParquetFile, drop: Optional[pa.Array], buffer: _Buffer, writer: _ShardWriter) -> None:
    """Write ``parquet``'s rows that ``drop`` keeps through ``buffer``, in row groups of the
    size the bundle writers use: merged small files would otherwise keep every input's row
    groups, footers included."""
    keep = None
    if drop is not None:
        import pyarrow.compute as pc  # see _dropped

        keep = pc.invert(drop)
    offset = 0
    for i in range(parquet.num_row_groups):
        group = parquet.read_row_group(i)
        rows = group.num_rows
        if keep is not None:  # the file's mask, cut to the group's rows
            group = group.filter(keep.slice(offset, rows))
        offset += rows
        if group.num_rows:
            # An older previous file may lack newer nullable columns.
            for batch in _conform(group, buffer.schema).to_batches():
                buffer.add(batch)
                if buffer.full:
                    writer.write(buffer.take())


def _copy_file(source: str, target: str) -> None:
    """Copy a previous file into this run: a hard link on a local disk (the files of a run
    are never changed, only removed), a copy made by the store itself for an object store."""
    if FileSystems.get_scheme(source) is None:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            os.link(source, target)
            return
        except OSError:  # another device, or a filesystem without hard links
            pass
        shutil.copyfile(source, target)
        return
    FileSystems.copy([source], [target])


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    columns = [table.column(f.name) if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
               for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


class _WriteChangesFn(BundleFilesFn):
    """Changes-table rows -> one file per bundle (its ref yielded when it opens)."""

    def __init__(self, folder: str, codec: str):
        super().__init__({"changes": folder}, {"changes": CHANGES_SCHEMA}, codec)

    def process(self, row: dict):
        yield from self._files.add("changes", row)


class _AsPairs(LeanDoFn):
    """``fn`` with each output as ``(tag, value)``: the main ones under ``main``."""

    def __init__(self, fn: beam.DoFn, main: str):
        self.fn, self.main = fn, main

    def setup(self):
        self.fn.setup()

    def start_bundle(self):
        self.fn.start_bundle()

    def process(self, element, *side_inputs):
        for out in self.fn.process(element, *side_inputs):
            yield (out.tag, out.value) if isinstance(out, TaggedOutput) else (self.main, out)

    def finish_bundle(self):
        self.fn.finish_bundle()

    def teardown(self):
        self.fn.teardown()


def _pick(pair, tag):
    return [pair[1]] if pair[0] == tag else []


def _with_outputs(pcoll, label: str, fn: beam.DoFn, side_inputs: tuple, tags: Tuple[str, ...], main: str):
    """``pcoll | ParDo(fn).with_outputs(*tags, main=main)``, also on runners that mix the
    tagged outputs up (there, each output travels as a ``(tag, value)`` pair, told apart by
    one filter per tag). The outputs are attributes named by the tags."""
    if not mixes_tagged_outputs(pcoll.pipeline.runner):
        return pcoll | label >> beam.ParDo(fn, *side_inputs).with_outputs(*tags, main=main)
    pairs = pcoll | label >> beam.ParDo(_AsPairs(fn, main), *side_inputs)
    return types.SimpleNamespace(**{tag: pairs | f"{label}_{tag}" >> beam.FlatMap(_pick, tag)
                                    for tag in (main, *tags)})


def compare(pbegin, read: ReadDocuments, previous: PreviousRun, strategy: Chunker, same_options: bool,
            changes_folder: str, codec: str):
    """Join the files matched now with the previous run's documents by id and classify each.

    Args:
        pbegin: The pipeline's start.
        read: The job's reader (its patterns, exclusions, limits, tags and forced content types).
        previous: :func:`previous_run`.
        strategy: The job's strategy (or router), for each document's strategy fingerprint.
        same_options: Whether the previous run had this run's :func:`options_fingerprint`.
        changes_folder: Where the changes rows of new and unchanged documents go.
        codec: Their Parquet codec.

    Returns:
        The tagged outputs of :class:`_CompareFn`: ``documents`` (Documents and read
        Failures to process), ``refs``, ``stale`` and ``stale_ids``.
    """
    documents = [("documents", path) for path in previous.files.get("documents", [])]
    if reshuffle_is_noop(pbegin.pipeline.runner):  # the files are listed and partitioned when built
        files = read.files(pbegin, spread=False) | "FileSources" >> beam.Map(lambda meta: ("file", meta))
        previous_documents = pbegin | "PreviousDocuments" >> Values(documents)
        sources = (files, previous_documents) | "AllSources" >> beam.Flatten()
    else:
        listed = [("pattern", p) for p in read.patterns] + documents
        # Spreading a handful of sources costs a shuffle and gains nothing.
        sources = pbegin | "Sources" >> Values(listed, spread=len(listed) > SPREAD_FILES)
    joined = (sources
              | "FilesAndPrevious" >> beam.ParDo(_SourcesFn(read.matcher()))
              | "ByDocument" >> beam.GroupByKey())
    return _with_outputs(joined, "Compare", _CompareFn(read.reader(), strategy, same_options, changes_folder, codec),
                         (), ("refs", "stale", "stale_ids"), "documents")


def copy_groups(files: List[str]) -> List[Tuple[str, ...]]:
    """A table's previous files as the copy takes them: each alone, unless the table holds
    more than :data:`MERGE_SMALL_FILES` files under :data:`SMALL_FILE_BYTES`; then those are
    merged, in path order, into files of up to about :data:`MERGED_FILE_BYTES` and
    :data:`MERGED_FILES` inputs each.

    Each run that processes documents writes their rows to new files, so without merging an
    output re-run every night would gain files for as long as its documents change. A table
    of few files is never rewritten for it: a run with nothing changed still copies each file
    whole. The sizes come from one listing of each folder the files are in, made only for a
    table of more than :data:`MERGE_SMALL_FILES` files; when it fails, nothing is merged.
    """
    if len(files) <= MERGE_SMALL_FILES:
        return [(path,) for path in files]
    sizes = _sizes(files)
    small = sorted(path for path in files if sizes.get(path, SMALL_FILE_BYTES) < SMALL_FILE_BYTES)
    if len(small) <= MERGE_SMALL_FILES:
        return [(path,) for path in files]
    merged = set(small)
    groups = [(path,) for path in files if path not in merged]
    group: List[str] = []
    total = 0
    for path in small:
        if group and (total + sizes[path] > MERGED_FILE_BYTES or len(group) == MERGED_FILES):
            groups.append(tuple(group))
            group, total = [], 0
        group.append(path)
        total += sizes[path]
    groups.append(tuple(group))
    return groups


def _sizes(files: List[str]) -> Dict[str, int]:
    """``path -> bytes`` of ``files``, from one listing per folder (an object store lists
    sizes a thousand at a time; asking per file would cost two requests each). Empty when a
    folder cannot be listed, or its name would be read as a pattern."""
    folders = sorted({posixpath.dirname(path) for path in files})
    if any(is_glob(folder) for folder in folders):
        return {}
    try:
        results = FileSystems.match([f"{folder}/*" for folder in folders])
    except Exception:  # merging is an optimisation: without sizes the files are copied alone
        return {}
    wanted = set(files)
    return {m.path: m.size_in_bytes for r in results for m in r.metadata_list if m.path in wanted}


def copy_unchanged(pbegin, previous: PreviousRun, stale, folders: Dict[str, str], schemas: Dict[str, pa.Schema],
                   codec: str):
    """Copy the unchanged documents' rows of every previous file into this run's folders.

    Args:
        pbegin: The pipeline's start.
        previous: :func:`previous_run`; its files, grouped by :func:`copy_groups`, are
            spread over the workers when there are more than :data:`SPREAD_FILES` groups.
        stale: :func:`compare`'s ``stale_ids``: the documents whose previous rows are left out.

    Returns:
        The tagged outputs ``refs`` (the :class:`ShardRef` of each file written, for the
        commit) and ``stale`` (the previous chunk ids of the other documents).
    """
    sources = [(t, group) for t in COPIED_TABLES for group in copy_groups(previous.files.get(t, []))]
    files = pbegin | "PreviousFiles" >> Values(sources, spread=len(sources) > SPREAD_FILES)
    return _with_outputs(files, "CopyUnchanged", _CopyUnchangedFn(folders, schemas, codec), (AsList(stale),),
                         ("stale",), "refs")


def _with_chunk_ids(keyed):
    _, values = keyed
    rows = [v for v in values if isinstance(v, dict)]
    ids = [i for v in values if not isinstance(v, dict) for i in v[1]]
    for row in rows:  # none for ids of a document that no previous documents row names
        yield {**row, "delete_chunk_ids": sorted(ids)}


def write_stale_changes(stale_rows, stale_ids, folder: str, codec: str):
    """Write the changes rows of changed and deleted documents (``stale_rows``, from
    :func:`compare`) to ``folder``, once joined with their previous chunk ids (``stale_ids``,
    from :func:`copy_unchanged`).

    Returns:
        The refs of the files written (for the commit to gather).
    """
    return ((stale_rows, stale_ids)
            | "StaleRowsAndIds" >> beam.Flatten()
            | "StaleByDocument" >> beam.GroupByKey()
            | "WithChunkIds" >> beam.FlatMap(_with_chunk_ids)
            | "WriteStaleChanges" >> beam.ParDo(_WriteChangesFn(folder, codec)))
