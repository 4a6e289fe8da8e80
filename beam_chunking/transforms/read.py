"""ReadDocuments: file pattern -> :class:`Document` (local paths, ``gs://``, any Beam FileSystem).

Matched files are redistributed before they are read, so that reading, parsing, chunking and
writing, fused into one stage, spread over the workers: on most runners by a Reshuffle of
the file names. Beam's DaskRunner runs a Reshuffle as a no-op and keeps a pipeline's source
in a single partition, so there the files are matched when the pipeline is built and handed
to Dask as several partitions balanced by bytes.
"""
from __future__ import annotations

import fnmatch
import math
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystem import FileMetadata
from apache_beam.io.filesystems import FileSystems

from beam_chunking.ids import display_uri, document_id, normalize_uri, uri_bytes
from beam_chunking.parsers import check_content_types
from beam_chunking.parsers.compressed import gunzip, is_gzip
from beam_chunking.parsers.detect import ContentTypes, content_type_pairs, detect_content_type, path_pattern
from beam_chunking.parsers.limits import DEFAULT_MAX_BYTES
from beam_chunking.transforms._common import LeanDoFn, NAMESPACE, StageFn, Values
from beam_chunking.transforms._files import check_regular_file, input_roots, is_glob, require_filesystem
from beam_chunking.transforms._listing import list_local
from beam_chunking.transforms.fused import OpenFn
from beam_chunking.transforms.runners import reshuffle_is_noop
from beam_chunking.transforms.records import Stage
from beam_chunking.types import Document

#: Bytes of input per partition aimed at when files are partitioned at build time.
PARTITION_BYTES = 8 * 1024 * 1024
#: Fewest partitions made at build time (when there are that many files): enough for a
#: small cluster to balance its workers.
MIN_PARTITIONS = 16


def exclude_pattern(pattern: str) -> str:
    """An exclude pattern as matched against absolute paths: one that starts with a wildcard
    (``*.pdf``, ``*/drafts/*``), an absolute path or a URI stays as it is; a relative path
    (``docs/drafts/*``) is made absolute like an input pattern (see
    :func:`~beam_chunking.parsers.detect.path_pattern`)."""
    return path_pattern(pattern)


def excluded(path: str, exclude: Sequence[str]) -> bool:
    """Whether ``path`` matches one of the ``exclude`` globs (``fnmatch``: ``*`` crosses ``/``)."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in exclude)


def matched_files(patterns: Sequence[str], exclude: Sequence[str] = (), allow_empty: bool = True) -> List[Any]:
    """List the files the patterns match now, each once, exclusions left out (metadata in
    path order), as :class:`MatchFn` lists each pattern. Patterns are normalised as
    :class:`ReadDocuments` does.

    Raises:
        FileNotFoundError: a pattern matches nothing and ``allow_empty`` is false.
    """
    matcher = MatchFn([exclude_pattern(p) for p in exclude], allow_empty=allow_empty)
    found: Dict[str, Any] = {}
    for pattern in dict.fromkeys(normalize_uri(p) for p in patterns):
        for meta in matcher.match(pattern):
            found.setdefault(meta.path, meta)
    return [found[path] for path in sorted(found)]


def balanced_groups(files: List[Any], parts: int) -> List[List[Any]]:
    """Split file metadata into at most ``parts`` groups of similar total size (largest first).

    Deterministic: ties are broken by path, and each group keeps its files in path order.
    """
    parts = max(1, min(parts, len(files)))
    groups: List[List[Any]] = [[] for _ in range(parts)]
    loads = [0] * parts
    for meta in sorted(files, key=lambda m: (-(m.size_in_bytes or 0), m.path)):
        k = min(range(parts), key=lambda i: (loads[i], i))
        groups[k].append(meta)
        loads[k] += (meta.size_in_bytes or 0) + 1
    return [sorted(g, key=lambda m: m.path) for g in groups if g]


def _each(group: List[Any]) -> List[Any]:
    return group


def partitions_for(files: List[Any], requested: Optional[int] = None) -> int:
    """How many partitions to cut ``files`` into: ``requested``, else one per
    :data:`PARTITION_BYTES` and at least :data:`MIN_PARTITIONS`."""
    if requested:
        return requested
    total = sum(m.size_in_bytes or 0 for m in files)
    return max(MIN_PARTITIONS, math.ceil(total / PARTITION_BYTES))


#: Most bytes asked for in one read (a read reserves what it asks).
_READ_CHUNK = 8 * 1024 * 1024


def read_upto(read: Callable[[int], bytes], first: int, most: int) -> bytes:
    """What ``read`` (a file's ``read``, or ``os.read`` on a descriptor) gives: ``first``
    bytes asked for and, when all of them came (the file grew since it was listed), more, up
    to ``most`` in all; in reads of at most :data:`_READ_CHUNK`."""
    data = _read_chunks(read, first)
    if len(data) == first and first < most:
        data += _read_chunks(read, most - first)
    return data


def _read_chunks(read: Callable[[int], bytes], n: int) -> bytes:
    parts = []
    while n > 0:
        part = read(min(n, _READ_CHUNK))
        if not part:
            break
        parts.append(part)
        n -= len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_local(path: str, first: int, most: int) -> bytes:
    """:func:`read_upto` on the local file at ``path``, through the operating system's calls:
    Beam's FileSystems look the scheme up among every filesystem class on each open, and a
    Python file object costs time per file too: reading the 2,008 files of
    bench/incremental.py took 19-20 ms through file objects, 11-13 ms this way (bench/README.md)."""
    # Non-blocking: a FIFO put in the file's place after it was checked cannot hang the
    # open (a regular file reads the same either way).
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        return read_upto(lambda n: os.read(fd, n), first, most)
    finally:
        os.close(fd)


class MatchFn(LeanDoFn):
    """A pattern -> the metadata of every file it matches now: Beam's listing, then what that
    listing leaves out without a word (for a local glob both from one walk, :func:`list_local`),
    excluded paths left out.

    Args:
        exclude: Globs as :class:`ReadDocuments` normalises them.
        allow_empty: Whether a pattern may match nothing (else :class:`FileNotFoundError`).
    """

    def __init__(self, exclude: Sequence[str] = (), allow_empty: bool = False):
        self.exclude = tuple(exclude)
        self.allow_empty = allow_empty

    def match(self, pattern: str) -> List[Any]:
        """The metadata ``pattern`` matches, listed now (see the class)."""
        if FileSystems.get_scheme(pattern) is None and is_glob(pattern):
            listed, unlisted = list_local(pattern)
        else:
            listed, unlisted = FileSystems.match([pattern])[0].metadata_list, []
        if not listed and not self.allow_empty:
            raise FileNotFoundError(f"no file matches {pattern}")
        # Size 0 for what was not listed: its read fails on the check, never on a size.
        found = listed + [FileMetadata(path, 0) for path in unlisted]
        return [meta for meta in found if not excluded(meta.path, self.exclude)]

    def process(self, pattern: str):
        yield from self.match(pattern)


class _ReadFn(StageFn):
    stage = Stage.READ

    def __init__(self, max_bytes: int, metadata: Dict[str, Any], content_types: ContentTypes = (),
                 roots: Tuple[str, ...] = ()):
        self.max_bytes = max_bytes
        self.metadata = metadata
        self.content_types = content_types
        self.roots = roots
        self.documents = beam.metrics.Metrics.counter(NAMESPACE, "documents")
        self.bytes = beam.metrics.Metrics.counter(NAMESPACE, "bytes")

    def handle(self, readable):
        yield self.document(readable.metadata.path, self.read_bytes(readable))

    def read_bytes(self, readable) -> bytes:
        """A file's bytes as stored (at most ``max_bytes``), counted.

        Raises:
            ValueError: the file is larger than ``max_bytes``.
            NotARegularFile: a FIFO, socket or device (never opened).
            SkippedInput: a symbolic link not followed, or a folder that cannot be listed.
        """
        path = readable.metadata.path
        # The tables get a valid-text URI; the id and the open use the real name.
        uri = display_uri(path)
        self.documents.inc()
        check_regular_file(path, uri, self.roots)
        size = readable.metadata.size_in_bytes
        if size is not None and size > self.max_bytes:
            raise ValueError(f"{uri}: {size} bytes exceeds max_bytes={self.max_bytes}")
        # Ask for the size the match reported (plus one byte, to see a file that grew):
        # read(max_bytes + 1) would reserve max_bytes of memory for every file read.
        want = self.max_bytes + 1 if size is None else min(size, self.max_bytes) + 1
        if FileSystems.get_scheme(path) is None:
            data = read_local(path, want, self.max_bytes + 1)
        else:
            with readable.open(compression_type=beam.io.filesystem.CompressionTypes.UNCOMPRESSED) as f:
                data = read_upto(f.read, want, self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise ValueError(f"{uri}: larger than max_bytes={self.max_bytes}")
        self.bytes.inc(len(data))
        return data

    def document(self, path: str, data: bytes) -> Document:
        """The :class:`Document` of the file at ``path`` from its bytes: inflated if gzip, its
        content type detected; its id from the real name, its URI a valid-text one."""
        uri = display_uri(path)
        name = uri
        if is_gzip(data):
            name, data = gunzip(uri, data, self.max_bytes)
        ctype = detect_content_type(name, data, self.content_types, source=uri)
        return Document(document_id(path), uri, data, ctype, dict(self.metadata))


class ReadDocuments(beam.PTransform):
    """Match ``pattern`` and read every file as a :class:`Document`.

    A document's content type comes from its magic bytes, name and first bytes (see
    :mod:`beam_chunking.parsers.detect`), unless a ``content_types`` pattern matches it.
    Gzip files (by their magic bytes) are inflated, capped at ``max_bytes``, and typed by
    the name inside (``notes.md.gz`` is Markdown); the document keeps the ``.gz`` URI.
    Files that cannot be read become failures (stage ``read``) that flow on with the
    documents; they are never dropped. Local symbolic links are followed only to regular
    files inside the input roots; every link not followed (outside the roots, dangling,
    looping, to a folder) and every folder that cannot be listed is a failure too (see
    :mod:`beam_chunking.transforms._files`).

    Args:
        patterns: One glob or several understood by Beam's filesystems (``docs/**/*.md``,
            ``gs://b/x/*``). Local patterns are made absolute, so a file has the same URI
            and document id however its path was written; a file matched twice is read once.
        max_bytes: Largest document read (and largest inflated ``.gz``), in bytes. Default 256 MiB.
        metadata: Tags copied onto every document and from there onto every chunk.
        allow_empty: Whether a pattern matching nothing is allowed. Default ``False``.
        exclude: Globs (``fnmatch`` on the full path) of matched files to leave out. Default none.
        content_types: Glob -> content type, forcing the type of the files whose full path
            (or, for a ``.gz``, the name inside) the glob matches, as ``exclude`` matches
            (``{"*.log": "text/plain"}``); the first matching glob wins. Each type must have
            a parser. A text type is never forced on a binary file: such a file fails (stage
            ``read``). Default none.

    Raises:
        ConfigError: a content type without a parser (naming the closest one).
    """

    def __init__(self, patterns: Union[str, Sequence[str]], *, max_bytes: int = DEFAULT_MAX_BYTES,
                 metadata: Optional[Dict[str, Any]] = None, allow_empty: bool = False,
                 exclude: Sequence[str] = (),
                 content_types: Union[Mapping[str, str], Sequence[Tuple[str, str]], None] = None):
        super().__init__()
        self.patterns = tuple(dict.fromkeys(normalize_uri(p) for p in ([patterns] if isinstance(patterns, str)
                                                                            else patterns)))
        for pattern in self.patterns:
            require_filesystem(pattern)
        self.exclude = tuple(exclude_pattern(p) for p in exclude)
        self.max_bytes = max_bytes
        self.metadata = dict(metadata or {})
        self.allow_empty = allow_empty
        self.content_types = content_type_pairs(check_content_types(content_types))
        self.roots = input_roots(self.patterns)

    def files(self, pbegin, spread: bool = True):
        """The matched files' metadata, redistributed over the workers (with ``spread``,
        the default; without, the caller shuffles them, and a file matched twice comes twice)."""
        if reshuffle_is_noop(pbegin.pipeline.runner):
            return self._partitioned_at_build(pbegin)
        # One step lists each pattern and adds what Beam's listing drops (broken links,
        # unreadable folders), so that those get a row too.
        matched = (pbegin
                   | "Patterns" >> Values(self.patterns)
                   | "MatchFiles" >> beam.ParDo(self.matcher()))
        if not spread:
            return matched
        return (
            matched
            # Keyed by path, the shuffle that spreads the files also reads a file matched
            # by two patterns once. The key is the path's bytes: Beam's string coder
            # refuses a local name that is not valid UTF-8.
            | "ByPath" >> beam.Map(lambda meta: (uri_bytes(meta.path), meta))
            | "SpreadFiles" >> beam.GroupByKey()
            | "OnePerPath" >> beam.Map(lambda keyed: next(iter(keyed[1])))
        )

    def matcher(self) -> MatchFn:
        """The DoFn that lists one of :attr:`patterns` (its exclusions applied)."""
        return MatchFn(self.exclude, self.allow_empty)

    def fns(self) -> List[beam.DoFn]:
        """The DoFns from file metadata to :class:`Document` (for a fused stage)."""
        return [OpenFn(), self.reader()]

    def reader(self) -> "_ReadFn":
        """The DoFn that reads one matched file into a :class:`Document` (or a failure)."""
        return _ReadFn(self.max_bytes, self.metadata, self.content_types, self.roots)

    def expand(self, pbegin):
        files = self.files(pbegin)
        files = files | "ReadMatches" >> fileio.ReadMatches(skip_directories=True)
        return files | "ReadDocument" >> beam.ParDo(self.reader())

    def _partitioned_at_build(self, pbegin):
        files = matched_files(self.patterns, self.exclude, allow_empty=self.allow_empty)
        requested = pbegin.pipeline.options.get_all_options().get("npartitions")
        groups = balanced_groups(files, partitions_for(files, requested))
        # A Create of one element (the group's list) is exactly one partition, whatever the
        # runner's partition size (Beam's DaskRunner cuts a Create every 128 elements, and
        # each partition pays its own DoFn set-up and shard files); Flatten concatenates the
        # partitions, and the list is unpacked inside each.
        parts = [pbegin | f"Files{i:05d}" >> beam.Create([group], reshuffle=False) for i, group in enumerate(groups)]
        if not parts:
            parts = [pbegin | "NoFiles" >> beam.Create([], reshuffle=False)]
        return parts | "AllMatchedFiles" >> beam.Flatten() | "EachFile" >> beam.FlatMap(_each)

    def display_data(self):
        return {"patterns": ", ".join(self.patterns), "exclude": ", ".join(self.exclude), "max_bytes": self.max_bytes,
                "content_types": ", ".join(f"{p}={t}" for p, t in self.content_types)}
