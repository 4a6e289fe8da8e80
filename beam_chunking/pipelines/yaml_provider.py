"""Beam YAML transforms: beam-chunking in a Beam YAML pipeline, locally or on Dataflow.

A pipeline names the transforms through a ``python`` provider (``templates/yaml/provider.yaml``
holds one to ``include``)::

    pipeline:
      type: chain
      source:
        type: ChunkFiles
        config:
          input: "docs/*"
          strategy: {name: sentence, max_chunk_size: 256, overlap: 32}
      transforms:
        - type: WriteToJson
          config: {path: out/chunks}
    providers:
      - type: python
        config: {}             # {packages: [gs://bucket/beam-chunking-0.1.0.tar.gz]} on Dataflow
        transforms:
          ChunkFiles: beam_chunking.pipelines.yaml_provider.ChunkFiles
          ChunkText: beam_chunking.pipelines.yaml_provider.ChunkText

Beam passes each ``config:`` key as a keyword argument. Everything but the transform's own
keys (``id_field``, ``text_field`` ...) is a key of the YAML spec of ``beam-chunking run``
(``strategy``, ``routes``, ``refine``, ``token_counter``, ``metadata`` ...), validated by
:func:`~beam_chunking.pipelines.spec.parse_spec`, so a bad option fails when the pipeline is
built with the command line's message (``strategy.max_chunk_size: ...``).

Both transforms emit rows with the chunks table's columns and types (:data:`CHUNK_ROW`,
derived from :data:`~beam_chunking.schema.CHUNKS_SCHEMA`). A document that fails fails the
pipeline, as Beam YAML's own transforms do, unless ``error_handling: {output: NAME}`` sends it
to output ``NAME`` in Beam's error format (``element``, ``msg``, ``stack``).
``ChunkFiles`` with ``output`` writes our Parquet tables instead, exactly as the command line
does (failures become rows of the documents table), and emits one :data:`SUMMARY_ROW`.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import apache_beam as beam
from apache_beam.portability.api import schema_pb2
from apache_beam.typehints import arrow_type_compatibility, schemas
from apache_beam.typehints.row_type import RowTypeConstraint

from beam_chunking.config import JobConfig
from beam_chunking.errors import ChunkingError, ConfigError
from beam_chunking.ids import document_id
from beam_chunking.parsers import PARSERS, closest_content_type
from beam_chunking.pipelines.spec import failures_allowed, parse_spec
from beam_chunking.pipelines.summary import summarize
from beam_chunking.rowcheck import check_rows
from beam_chunking.schema import CHUNKS_SCHEMA, chunk_rows
from beam_chunking.strategies import ParentChildChunker, Router
from beam_chunking.transforms import ChunkDocuments, ChunkedDocument, EmbedChunks, Failure, ParseDocuments
from beam_chunking.transforms import ReadDocuments
from beam_chunking.transforms.records import DocumentHeader, Stage, failure_from
from beam_chunking.transforms.compose import ChunkFiles as ChunkFilesToTables
from beam_chunking.transforms.fused import FusedFn
from beam_chunking.types import Document

#: The Beam type of a chunk row: the chunks table's columns with their types (int32, int64,
#: list<string>, map<string, struct>, list<float32>), taken from the Arrow schema.
CHUNK_ROW: RowTypeConstraint = schemas.typing_from_runner_api(schema_pb2.FieldType(
    row_type=schema_pb2.RowType(schema=arrow_type_compatibility.beam_schema_from_arrow_schema(CHUNKS_SCHEMA))))
#: One row per ``ChunkFiles`` run that writes tables: the output folder and the counts that the
#: command line prints.
SUMMARY_ROW = RowTypeConstraint.from_fields([
    ("output", str), ("documents", int), ("ok", int), ("empty", int), ("failed", int), ("chunks", int),
    ("parents", int), ("bytes", int)])
#: Spec keys that apply to rows: the strategy and what runs with it (no files, no tables).
ROW_KEYS = ("strategy", "routes", "refine", "sanitise", "token_counter", "metadata", "limits", "keep", "embed",
            "llm")


def _plain(value: Any) -> Any:
    """Config as YAML wrote it: on Dataflow the config reaches the transform through an
    expansion service, which may hand nested mappings over as rows (named tuples)."""
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _has_parents(strategy: Any) -> bool:
    """Whether ``strategy`` (or a route, refinement or side inside it) cuts parent chunks."""
    if isinstance(strategy, ParentChildChunker):
        return True
    if isinstance(strategy, Router):
        return any(_has_parents(s) for s in [*strategy.routes.values(), strategy.default] if s is not None)
    return dataclasses.is_dataclass(strategy) and any(
        _has_parents(getattr(strategy, f.name)) for f in dataclasses.fields(strategy) if f.init)


def _refuse_parents(config: JobConfig, transform: str) -> None:
    if _has_parents(config.strategy):
        raise ConfigError(f"strategy: {transform} emits chunk rows, which have no place for the parents of "
                          "parent_child; use ChunkFiles with output: to write the parents table")


def _beam_row(row: Dict[str, Any]) -> beam.Row:
    """A chunks-table row (:func:`~beam_chunking.schema.chunk_rows`) as a ``beam.Row``."""
    fields = dict(row)
    fields["metadata"] = {key: beam.Row(**slot) for key, slot in row["metadata"]}
    return beam.Row(**fields)


def _message(failure: Failure) -> str:
    where = "" if failure.error_message.startswith(failure.uri) else f"{failure.uri}: "
    return f"{where}{failure.stage.value} failed: {failure.error_type}: {failure.error_message}"


def _error(element: Any, failure: Failure) -> beam.Row:
    # Beam YAML's error format (yaml_errors.map_errors_to_standard_format).
    return beam.Row(element=element, msg=_message(failure), stack="")


class _ChunkRowsFn(FusedFn):
    """Runs the stage DoFns of the transforms (read, parse, chunk, embed) on one element as one
    fused DoFn and emits its chunk rows, or its failure to ``error_tag`` (raised when there is
    none)."""

    def __init__(self, fns: Sequence[beam.DoFn], error_tag: Optional[str]):
        super().__init__(fns)
        self.error_tag = error_tag

    def _document(self, element: Any) -> Any:
        return element

    def _error_element(self, element: Any, failure: Failure) -> Any:
        return beam.Row(uri=failure.uri, document_id=failure.document_id)

    def process(self, element):
        # Each stage passes earlier failures through untouched.
        for item in self._through([self._document(element)], 0):
            if isinstance(item, ChunkedDocument):
                try:
                    rows = chunk_rows(list(item.chunks), strategy=item.strategy, content_type=item.content_type,
                                      fingerprint=item.strategy_fingerprint, uri=item.uri)
                    check_rows(rows, CHUNKS_SCHEMA)  # the writer's check: a value that does not fit its column
                except ChunkingError as exc:
                    item = failure_from(item, exc, Stage.VALIDATE)
                else:
                    yield from (_beam_row(r) for r in rows)
                    continue
            if self.error_tag is None:
                raise ChunkingError(_message(item))
            yield beam.pvalue.TaggedOutput(self.error_tag, _error(self._error_element(element, item), item))


class _RowsToChunkRowsFn(_ChunkRowsFn):
    """:class:`_ChunkRowsFn` for input rows: each row becomes a text document first."""

    def __init__(self, fns, error_tag, id_field: str, text_field: str, content_type: str,
                 metadata_fields: Sequence[str], metadata: Mapping[str, Any]):
        super().__init__(fns, error_tag)
        self.id_field, self.text_field, self.content_type = id_field, text_field, content_type
        self.metadata_fields, self.metadata = tuple(metadata_fields), dict(metadata)

    def _document(self, row):
        uri = str(getattr(row, self.id_field))
        text = getattr(row, self.text_field)
        if text is not None and not isinstance(text, str):
            header = DocumentHeader(document_id(uri), uri, self.content_type)
            return Failure(header, Stage.READ, "TypeError",
                           f"field {self.text_field!r} holds {type(text).__name__}, not text")
        tags = {**self.metadata, **{name: getattr(row, name) for name in self.metadata_fields}}
        # A missing text is an empty document: no chunks, as for an empty file.
        return Document(document_id(uri), uri, (text or "").encode("utf-8"), self.content_type, tags)

    def _error_element(self, element, failure):
        return element


def _error_tag(error_handling: Any) -> Optional[str]:
    """The error output's name from Beam YAML's ``error_handling: {output: NAME}``."""
    if error_handling is None:
        return None
    spec = _plain(error_handling)
    if not isinstance(spec, dict) or not isinstance(spec.get("output"), str) or set(spec) != {"output"}:
        raise ConfigError(f"error_handling: expected {{output: NAME}}, got {error_handling!r}")
    return spec["output"]


def _chunk_rows(pcoll, fn: _ChunkRowsFn, element_type: Any):
    """Apply ``fn``; the chunk rows, or with an error tag ``{"chunks": ..., tag: errors}``."""
    chunk = beam.ParDo(fn).with_output_types(CHUNK_ROW)
    if fn.error_tag is None:
        return pcoll | "ChunkRows" >> chunk
    result = pcoll | "ChunkRows" >> chunk.with_outputs(fn.error_tag, main="chunks")
    error_row = RowTypeConstraint.from_fields([("element", element_type), ("msg", str), ("stack", str)])
    errors = result[fn.error_tag] | "Errors" >> beam.Map(lambda row: row).with_output_types(error_row)
    return {"chunks": result["chunks"], fn.error_tag: errors}


class ChunkFiles(beam.PTransform):
    """Read, parse and chunk the files matching ``input``; emit their chunk rows, or write the
    chunks and documents tables to ``output``.

    Beam YAML: ``type: ChunkFiles`` with no input (it starts a pipeline) and
    ``config: {input: "docs/*", strategy: {name: sentence, max_chunk_size: 256}}``.

    Args:
        input: File pattern, or a list of them (local or ``gs://``).
        output: Output folder of the Parquet tables, written exactly as ``beam-chunking run``
            writes them (manifest, atomic commit; failed documents are rows of the documents
            table). Default ``None``: no tables; chunk rows are emitted instead.
        error_handling: ``{output: NAME}``: failed documents go to output ``NAME`` (rows of
            ``element`` (``uri``, ``document_id``), ``msg``, ``stack``) and the chunks to
            output ``chunks``. Default ``None``: a failed document fails the pipeline. Not
            with ``output`` (the documents table records failures).
        **options: Any other key of the ``beam-chunking run`` spec (``strategy``, ``routes``,
            ``exclude``, ``content_types``, ``token_counter``, ``metadata``, ``max_bytes``,
            ``limits``, ``keep``, ``refine``, ``sanitise``, ``embed``, ``llm``; with
            ``output`` also ``overwrite``, ``compression``, ``num_shards``,
            ``max_failures``), with the spec's defaults: the strategy chosen per document by
            its content type, ``cl100k_base`` token counts.

    Returns:
        Rows of :data:`CHUNK_ROW`; with ``output``, one :data:`SUMMARY_ROW` after the commit
        (the run fails there, tables written, when more documents failed than
        ``max_failures`` allows, as the command line exits 3).

    Raises:
        ConfigError: an option the spec refuses, with the spec's message.
    """

    # Beam YAML asks for an input unless a transform's name starts with "Read" or says this.
    _yaml_requires_inputs = False

    def __init__(self, input: Union[str, Sequence[str], None] = None, output: Optional[str] = None,
                 error_handling: Optional[Mapping[str, str]] = None, **options: Any):
        super().__init__()
        spec = _plain({"input": input, **options, **({"output": output} if output is not None else {})})
        self.config = parse_spec(spec, source="ChunkFiles")
        if not self.config.input:
            raise ConfigError("input: required (a file pattern or a list of them)")
        self.error_tag = _error_tag(error_handling)
        if self.config.output is not None:
            if self.error_tag is not None:
                raise ConfigError("error_handling: ChunkFiles with output records failed documents in the "
                                  "documents table; remove error_handling or output")
            self.tables = ChunkFilesToTables(config=self.config)  # checks the output against the input
        else:
            _refuse_parents(self.config, "ChunkFiles without output")
            for key in ("overwrite", "compression", "num_shards", "max_failures"):
                if key in spec:
                    raise ConfigError(f"{key}: applies to the tables; set output: to write them")

    def expand(self, pbegin):
        config = self.config
        if config.output is not None:
            output, max_failures = config.output, config.max_failures
            return (pbegin | "ChunkFilesToTables" >> self.tables
                    | "Summary" >> beam.Map(lambda _: _summary_row(output, max_failures)).with_output_types(
                        SUMMARY_ROW))
        read = ReadDocuments(config.input, max_bytes=config.max_bytes, metadata=dict(config.metadata),
                             exclude=config.exclude, content_types=config.content_types)
        fns = [*read.fns(), *ParseDocuments(config.decode_errors, config.limits, config.keep, ocr=config.ocr).fns(),
               *ChunkDocuments(config.strategy, config.token_counter).fns(),
               *(EmbedChunks(config.embed).fns() if config.embed is not None else [])]
        failed_file = RowTypeConstraint.from_fields([("uri", str), ("document_id", str)])
        return _chunk_rows(read.files(pbegin), _ChunkRowsFn(fns, self.error_tag), failed_file)

    def display_data(self):
        return {"input": ", ".join(self.config.input), "output": self.config.output or "",
                "strategy": self.config.strategy.name, "fingerprint": self.config.strategy.fingerprint}


def _summary_row(output: str, max_failures: str) -> beam.Row:
    """The committed run's counts; raises when more documents failed than allowed."""
    s = summarize(output, 0.0, max_failures=max_failures)
    if s.failed > failures_allowed(max_failures, s.documents):
        reasons = "; ".join(f"{n} x {etype} at {stage} (e.g. {uri})" for etype, stage, n, uri, _ in s.failures)
        raise ChunkingError(f"{s.failed} of {s.documents} documents failed, more than max_failures={max_failures} "
                            f"allows (the tables in {output} are written): {reasons}")
    return beam.Row(output=s.output, documents=s.documents, ok=s.ok, empty=s.empty, failed=s.failed,
                    chunks=s.chunks, parents=s.parents, bytes=s.bytes)


class ChunkText(beam.PTransform):
    """Chunk the text of each input row (rows read from BigQuery, JSON, CSV, Kafka ...) and
    emit chunk rows.

    Each row is one document: its ``uri`` column is the row's ``id_field`` value (as a string)
    and its ``document_id`` the usual 16 hex digits of SHA-256 over it, so the chunk ids of a
    row are the same on every run. The text is parsed as ``content_type`` (Markdown headings
    become ``heading`` and ``section_path`` ...), then chunked.

    Beam YAML: ``type: ChunkText`` with
    ``config: {id_field: id, text_field: body, strategy: {name: sentence, max_chunk_size: 256}}``.

    Args:
        id_field: The field holding the row's id (any type; written as a string).
        text_field: The field holding the text; a null text is an empty document (no chunks).
        content_type: How to parse the text: ``"text/plain"`` (default), ``"text/markdown"``,
            ``"text/html"`` or any other text type with a parser.
        metadata_fields: Fields copied into every chunk's ``metadata`` map under their names
            (values str, int, float, bool, null or a list of str). Default none.
        error_handling: ``{output: NAME}``: rows that fail go to output ``NAME`` in Beam's
            error format (``element``: the input row, ``msg``, ``stack``), chunks to output
            ``chunks``. Default ``None``: a failed row fails the pipeline.
        **options: The spec keys that apply to text (:data:`ROW_KEYS`): ``strategy``,
            ``routes``, ``refine``, ``sanitise``, ``token_counter``, ``metadata``, ``limits``,
            ``keep``, ``embed``, ``llm``, with the spec's defaults.

    Raises:
        ConfigError: an unknown key or an option the spec refuses (the spec's message); an
            ``id_field`` or ``text_field`` that the input rows lack.
    """

    def __init__(self, id_field: str, text_field: str, content_type: str = "text/plain",
                 metadata_fields: Sequence[str] = (), error_handling: Optional[Mapping[str, str]] = None,
                 **options: Any):
        super().__init__()
        for key in options:
            if key not in ROW_KEYS:
                own = ("id_field", "text_field", "content_type", "metadata_fields", "error_handling")
                raise ConfigError(f"ChunkText: unknown key {key!r} (known: {', '.join(own + ROW_KEYS)})")
        self.config = parse_spec(_plain(options), source="ChunkText")
        _refuse_parents(self.config, "ChunkText")
        if not isinstance(content_type, str) or content_type not in PARSERS:
            hint = closest_content_type(content_type) if isinstance(content_type, str) else ""
            raise ConfigError(f"content_type: {content_type!r} has no parser{hint}")
        names = [metadata_fields] if isinstance(metadata_fields, str) else list(_plain(metadata_fields))
        self.id_field, self.text_field, self.content_type = id_field, text_field, content_type
        self.metadata_fields = tuple(names)
        self.error_tag = _error_tag(error_handling)

    def _check_fields(self, pcoll) -> None:
        try:
            known = [name for name, _ in schemas.named_fields_from_element_type(pcoll.element_type)]
        except Exception:  # rows without a schema: their fields are known only at run time
            return
        wanted = [("id_field", self.id_field), ("text_field", self.text_field),
                  *(("metadata_fields", name) for name in self.metadata_fields)]
        for key, name in wanted:
            if name not in known:
                raise ConfigError(f"{key}: the input rows have no field {name!r} (fields: {', '.join(known)})")

    def expand(self, pcoll):
        self._check_fields(pcoll)
        config = self.config
        fns = [*ParseDocuments(config.decode_errors, config.limits, config.keep, ocr=config.ocr).fns(),
               *ChunkDocuments(config.strategy, config.token_counter).fns(),
               *(EmbedChunks(config.embed).fns() if config.embed is not None else [])]
        fn = _RowsToChunkRowsFn(fns, self.error_tag, self.id_field, self.text_field, self.content_type,
                                self.metadata_fields, config.metadata)
        return _chunk_rows(pcoll, fn, pcoll.element_type)

    def display_data(self):
        return {"id_field": self.id_field, "text_field": self.text_field, "content_type": self.content_type,
                "strategy": self.config.strategy.name, "fingerprint": self.config.strategy.fingerprint}
