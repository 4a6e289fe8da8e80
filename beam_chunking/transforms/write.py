"""WriteChunkTable: chunked documents and failures -> the chunks, documents, parents and changes tables.

A run writes exactly one consistent set of files, on every runner. Each bundle writes its
rows into the run's own folders (``OUTPUT/chunks/run-<id>/``, ``OUTPUT/documents/run-<id>/``)
and reports each file it opens; a single commit step, after every bundle has finished,
checks the reported files, switches ``OUTPUT/_manifest.json`` to them and only then removes
the previous run's files (see :mod:`beam_chunking.transforms._commit`). Files of failed,
retried or duplicated bundle attempts are reported by no committed bundle, so they are never
published; a run that fails before the switch leaves the previous output as it was.
"""
from __future__ import annotations

import logging
import os
from typing import Dict, List, Mapping, NamedTuple, Optional

import apache_beam as beam
from apache_beam.pvalue import AsList
from apache_beam.io.filesystems import FileSystems

from beam_chunking.errors import ConfigError, OutputExistsError
from beam_chunking.schema import (COMPRESSIONS, CHANGES_SCHEMA, CHUNKS_SCHEMA, DOCUMENTS_SCHEMA, change_row,
                                  chunk_batch, chunk_rows, document_row)
from beam_chunking.rowcheck import check_rows
from beam_chunking.transforms._commit import commit, discard, sweep
from beam_chunking.transforms._files import require_filesystem
from beam_chunking.transforms._common import LeanDoFn, StageFn, Values
from beam_chunking.transforms.fused import MapFn
from beam_chunking.transforms.runners import nests_side_inputs
from beam_chunking.transforms._shards import Rows, ShardRef, WriteBundleShardsFn, WriteShards
from beam_chunking.transforms.lease import LEASE, acquire, held_run, release_held, takes_lease
from beam_chunking.transforms.manifest import TABLES, basename, new_run_id, run_folder
from beam_chunking.transforms.progress import PROGRESS
from beam_chunking.transforms.records import ChunkedDocument, Failure, Stage

_LOG = logging.getLogger(__name__)
#: Parents (of ``parent_child``) have the chunks table's columns; children join them on
#: ``parents.chunk_id = chunks.parent_id``.
SCHEMAS = {"chunks": CHUNKS_SCHEMA, "documents": DOCUMENTS_SCHEMA, "parents": CHUNKS_SCHEMA,
           "changes": CHANGES_SCHEMA}


#: Up to this many rows, a document's rows are checked in Python and converted to Arrow with
#: other documents' rows (converting costs ~170 us per call whatever the rows, checking ~2 us
#: a row); more rows are converted at once, which checks them too.
CHECKED_ROWS = 32


def _checked(rows: List[dict]):
    """``rows`` as they fit the chunks table: a record batch, or the checked rows themselves.

    Raises:
        ChunkingError: a value does not fit its column; only this document fails.
    """
    if len(rows) > CHECKED_ROWS:
        return chunk_batch(rows)
    check_rows(rows, CHUNKS_SCHEMA)
    return rows


class _RowsFn(StageFn):
    stage = Stage.VALIDATE

    def handle(self, item: ChunkedDocument):
        columns = dict(strategy=item.strategy, fingerprint=item.strategy_fingerprint, content_type=item.content_type,
                       uri=item.uri)
        rows = chunk_rows(list(item.chunks), **columns)
        batch = _checked(rows) if rows else None
        parents = _checked(chunk_rows(list(item.parents), **columns)) if item.parents else None
        yield Rows(batch, document_row(
            **item.header.columns(), status="ok" if rows else "empty",
            section_count=item.section_count, chunk_count=len(rows), strategy=item.strategy,
            strategy_fingerprint=item.strategy_fingerprint, decode_replacements=item.decode_replacements,
            dropped=[label for label, _ in item.dropped] or None,
            dropped_characters=sum(n for _, n in item.dropped) if item.dropped else None,
            **item.counts,
        ), parents)


def _as_rows(element) -> Rows:
    PROGRESS.add(element.header.size_bytes if isinstance(element, Failure) else element.document.get("size_bytes"))
    if isinstance(element, Failure):
        return Rows(None, document_row(
            **element.header.columns(), status="failed", stage=element.stage.value,
            error_type=element.error_type, error_message=element.error_message[:4000],
        ))
    return element


def _as_new(element: Rows) -> Rows:
    # A run that compares with nothing lists every document as new (see incremental.py).
    return element._replace(change=change_row(element.document["document_id"], element.document["uri"], "new"))


def existing_files(output: str, limit: int = 500) -> List[str]:
    """Files under ``output``, at any depth (the first ``limit`` or so), except the lease and
    the temporary files of runs racing for it: they are not output."""
    if FileSystems.get_scheme(output) is None:
        found = []
        for folder, _, names in os.walk(output):
            found += [os.path.join(folder, n) for n in names if not n.startswith(LEASE)]
            if len(found) > limit:
                break
    else:
        try:  # '**' crosses '/' ('*' does not), so this lists the whole prefix
            found = [m.path for m in FileSystems.match([f"{output}/**"], limits=[limit + 5])[0].metadata_list
                     if not basename(m.path).startswith(LEASE)]
        except Exception:  # a missing prefix matches nothing
            found = []
    return sorted(found)


def abandon(output: str) -> bool:
    """After a run launched by this process failed: remove the files it wrote (unless its
    commit had switched the manifest to it) and release its lease on ``output``.

    Returns:
        Whether this process held a run's lease on ``output``.
    """
    output = output.rstrip("/") or "/"
    run_id = held_run(output)
    if run_id is None:
        return False
    try:
        discard(output, run_id)
    except Exception as exc:  # never hide the failure being handled; the next run's sweep removes them
        _LOG.warning("could not remove the files of failed run %s under %s: %s", run_id, output, exc)
    release_held(output)
    return True


#: Stands in for "no file" where the reports are gathered by a shuffle (see ``commit``).
_NOTHING = ShardRef("", "")


class _CommitFn(LeanDoFn):
    """The commit of every reported file: given as a side input to one element (whatever it
    is), or as the one group of a shuffle onto one key (``(0, refs)``)."""

    def __init__(self, output: str, run_id: str, codec: str, num_shards: int, fields: Dict[str, str],
                 leased: bool = False):
        self.output, self.run_id, self.codec, self.num_shards = output, run_id, codec, num_shards
        self.fields = fields
        self.leased = leased

    def process(self, element, refs=None):
        if refs is None:  # gathered by a shuffle
            _, refs = element
        yield commit(self.output, self.run_id, [r for r in refs if r.table], SCHEMAS, self.codec, self.num_shards,
                     self.fields, leased=self.leased)


class WritePlan(NamedTuple):
    """A run's id, the folder of each table's files, and whether it holds the output's lease."""

    run_id: str
    folders: Dict[str, str]
    leased: bool = False


class WriteChunkTable(beam.PTransform):
    """Write chunked documents (and failures) to ``OUTPUT/chunks`` and ``OUTPUT/documents``.

    Every document, failed or not, gets one documents-table row (status ``ok``, ``empty`` or
    ``failed``). Rows are validated against the schema per document before the sink, so a bad
    value fails that document (stage ``validate``) rather than the job.

    Args:
        output: Output folder (local path or ``gs://``).
        overwrite: Replace existing output. Default ``False``: a non-empty folder is refused
            when the pipeline is built.
        compression: Parquet codec: ``"zstd"`` (default), ``"snappy"``, ``"gzip"`` or ``"none"``.
        num_shards: Files per table; 0 (default) writes one file per bundle, inside the
            chunking stage (fastest); ``N`` shuffles rows into exactly ``N`` files per table.
        manifest_fields: Extra top-level keys of the manifest; :class:`ChunkFiles` records
            ``options_fingerprint`` there. Default none.

    Every document also gets a changes-table row ``new``: this transform compares with no
    previous run (``ChunkFiles(incremental=True)`` does).

    One run at a time writes a folder: the first takes ``OUTPUT/_lease.json`` when the
    pipeline is built, and a second is refused while it holds it, whatever its ``overwrite``
    (see :mod:`~beam_chunking.transforms.lease`).

    Raises:
        OutputLeasedError: another run is writing ``output`` (when the pipeline is built).
        OutputExistsError: ``output`` holds files and ``overwrite`` is false.
    """

    def __init__(self, output: str, overwrite: bool = False, compression: str = "zstd", num_shards: int = 0,
                 manifest_fields: Optional[Mapping[str, str]] = None):
        super().__init__()
        if compression not in COMPRESSIONS:
            raise ConfigError(f"WriteChunkTable.compression={compression!r} must be one of {COMPRESSIONS}")
        require_filesystem(output)
        self.output = output.rstrip("/") or "/"
        self.overwrite = overwrite
        self.compression = compression
        self.num_shards = num_shards
        self.manifest_fields = dict(manifest_fields or {})

    def plan(self, lease: bool = True) -> "WritePlan":
        """Choose this run's id and folders, take the output's lease, check the folder and
        remove what failed or killed runs left there (once per pipeline; see
        :func:`~beam_chunking.transforms._commit.sweep`).

        Args:
            lease: Take the lease (:mod:`~beam_chunking.transforms.lease`). Default ``True``;
                the build of a classic template takes none.

        Raises:
            OutputLeasedError: another run is writing the folder (whatever ``overwrite``).
            OutputExistsError: the folder holds files and ``overwrite`` is false.
        """
        run_id = new_run_id()
        # The lease comes first: checked before it, two runs starting together into an empty
        # folder would both find it empty.
        held = acquire(self.output, run_id) if lease else None
        if not self.overwrite:
            found = existing_files(self.output)
            if found:
                if held is not None:
                    held.release()
                raise OutputExistsError(
                    f"output folder {self.output} is not empty ({len(found)} files, e.g. {found[0]}); "
                    "pass overwrite=True (--overwrite) to replace it"
                )
        if held is not None:
            # What failed or killed runs left would otherwise take the space this run needs.
            sweep(self.output, run_id)
        return WritePlan(run_id, {table: run_folder(self.output, table, run_id) for table in TABLES}, lease)

    def row_fns(self, changes: bool = True) -> List[beam.DoFn]:
        """The DoFns that turn chunked documents and failures into :class:`Rows`; with
        ``changes`` (default) each also carries its changes-table row ``new``."""
        return [_RowsFn(), MapFn(_as_rows), *([MapFn(_as_new)] if changes else [])]

    def bundle_writer(self, plan: "WritePlan") -> beam.DoFn:
        """The DoFn that writes one file per table per bundle and yields their refs."""
        return WriteBundleShardsFn(plan.folders, SCHEMAS, self.compression)

    def commit(self, refs, plan: "WritePlan"):
        """Gather every file reported by a succeeded bundle into the one commit step.

        Args:
            refs: The file references (:class:`ShardRef`) of the files written: one
                collection, or several (gathered by one Flatten, a single stage on most runners).
        """
        sources = [refs] if isinstance(refs, beam.PCollection) else list(refs)
        commit_fn = _CommitFn(self.output, plan.run_id, self.compression, self.num_shards, self.manifest_fields,
                              plan.leased)
        pipeline = sources[0].pipeline
        if nests_side_inputs(pipeline.runner):
            # The reports are shuffled onto one key instead; a sentinel makes the group
            # exist (and the commit run) when no document came at all.
            nothing = pipeline | "NoFile" >> Values([_NOTHING])
            return ((*sources, nothing)
                    | "AllReportedFiles" >> beam.Flatten()
                    | "OneKey" >> beam.Map(lambda ref: (0, ref))
                    | "GatherFiles" >> beam.GroupByKey()
                    | "Commit" >> beam.ParDo(commit_fn))
        reported = sources[0] if len(sources) == 1 else tuple(sources) | "AllReportedFiles" >> beam.Flatten()
        # A step reads a side input only once it is complete: every bundle that reports into
        # it has succeeded (a retried or duplicated bundle counts once). So one element, read
        # with the reports as a side input, commits once, after every file, and also when no
        # document came at all (a shuffle of the reports onto one key costs two stages more).
        return (pipeline
                | "CommitOnce" >> Values([None])
                | "Commit" >> beam.ParDo(commit_fn, AsList(reported)))

    def expand(self, pcoll):
        plan = self.plan(lease=takes_lease(pcoll.pipeline))
        rows = (pcoll | "ToRows" >> beam.ParDo(_RowsFn()) | "FailuresToRows" >> beam.Map(_as_rows)
                | "AsNew" >> beam.Map(_as_new))
        refs = rows | "WriteFiles" >> WriteShards(plan.folders, SCHEMAS, self.compression, self.num_shards)
        return self.commit(refs, plan)

    def display_data(self):
        return {"output": self.output, "overwrite": self.overwrite, "compression": self.compression,
                "num_shards": self.num_shards}
