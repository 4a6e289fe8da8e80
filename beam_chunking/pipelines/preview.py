"""``beam-chunking preview FILE``: one file's chunk boundaries in the terminal, without Beam.

The file is read, gunzipped and typed as the pipeline does it (:mod:`beam_chunking.transforms.read`),
parsed, and chunked by one strategy built from the same options as a spec
(:func:`beam_chunking.pipelines.spec.build_strategy`). The parsed text is printed once, in
document order, cut into segments: each chunk's segment is the part of its span that no
earlier chunk showed (so overlap appears once, in the earlier chunk, and is underlined there
when colour is on), and text that no chunk covers gets a segment of its own. Each segment is
preceded by a marker line::

    --- chunk 3/15 | 187 characters | id c4adad2738662058:0000000360 | span 360..547 | overlap 42 characters ---

and followed by one newline that preview adds, so the segments, each stripped of that one
newline, concatenate to the parsed text exactly. Colour (alternating per chunk) is on when
stdout is a terminal, off with ``--no-color`` or ``NO_COLOR`` set. Control characters other
than newline and tab (and the ``\\r`` of ``\\r\\n``) are shown escaped, so a file cannot drive the terminal.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple, Union


from beam_chunking.errors import ChunkingError
from beam_chunking.parsers.drops import DROPS
from beam_chunking.pipelines.inspection import OneLineParser, UsageError, percentiles
from beam_chunking.strategies.base import chunk_recording_drops
from beam_chunking.types import Chunk, ParsedDocument

_RESET, _DIM, _UNDERLINE = "\x1b[0m", "\x1b[2m", "\x1b[4m"
#: The two colours chunks alternate between (cyan, yellow), and uncovered text (dim).
_COLOURS = ("\x1b[36m", "\x1b[33m")
_CONTROL = re.compile(r"\r(?!\n)|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                        text)


def load_document(path: str, *, decode_errors: str = "strict", keep: Sequence[str] = (),
                  content_types: Union[Mapping[str, str], Sequence[Tuple[str, str]], None] = None) -> ParsedDocument:
    """Read a local file and parse it as the pipeline would.

    The URI is the absolute, normalised path, as in a pipeline run, so chunk ids match the
    run's however either named the file.

    Args:
        path: A local file (``.gz`` files are inflated and typed by the name inside).
        decode_errors: ``"strict"`` (default) or ``"replace"``.
        keep: Parts that parsers drop by default to keep instead (``"page_furniture"``,
            ``"contents"``). Default none.
        content_types: Pattern -> content type forcing the file's type, as the job option
            ``content_types`` (``{"*.log": "text/plain"}``). Default none: detected.

    Raises:
        OSError: The file cannot be read.
        ChunkingError: The file is larger than the pipeline's default ``max_bytes`` (256 MiB),
            or it cannot be parsed (the message says why).
    """
    from beam_chunking.ids import document_id, normalize_uri
    from beam_chunking.parsers import check_content_types, parse
    from beam_chunking.parsers.compressed import gunzip, is_gzip
    from beam_chunking.parsers.detect import content_type_pairs, detect_content_type
    from beam_chunking.parsers.limits import DEFAULT_MAX_BYTES
    from beam_chunking.types import Document

    forced = content_type_pairs(check_content_types(content_types))
    uri = normalize_uri(path)
    with open(path, "rb") as f:
        data = f.read(DEFAULT_MAX_BYTES + 1)
    if len(data) > DEFAULT_MAX_BYTES:
        raise ChunkingError(f"larger than max_bytes={DEFAULT_MAX_BYTES}", uri=path)
    name = uri
    if is_gzip(data):
        name, data = gunzip(path, data, DEFAULT_MAX_BYTES)
        name = normalize_uri(name)
    ctype = detect_content_type(name, data, forced, source=uri)
    return parse(Document(document_id(uri), uri, data, ctype), decode_errors=decode_errors, keep=frozenset(keep))


def chunk_size(chunk: Chunk, unit: str) -> Tuple[int, str]:
    """A chunk's size in its strategy's unit: ``(token_count, unit)`` for token strategies
    that report counts, else ``(characters, "characters")``."""
    if unit not in ("characters", "unbounded") and chunk.token_count is not None:
        return chunk.token_count, unit
    return len(chunk.text), "characters"


def segments(text: str, chunks: List[Chunk]) -> List[Tuple[Optional[int], int, int]]:
    """Cut ``text`` into ``(chunk_index or None, start, end)`` segments in document order.

    A chunk's segment starts where the text shown so far ends (its overlap with earlier
    chunks is not repeated); ``None`` marks text that no chunk covers. The segments
    partition ``text``; a chunk wholly inside earlier ones gets an empty segment.
    """
    out: List[Tuple[Optional[int], int, int]] = []
    shown = 0
    for i, c in enumerate(chunks):
        if c.start > shown:
            out.append((None, shown, c.start))
            shown = c.start
        end = max(shown, c.end)
        out.append((i, shown, end))
        shown = end
    if shown < len(text):
        out.append((None, shown, len(text)))
    return out


def _styled(text: str, style: str) -> str:
    # Styled line by line: pagers (less -R) and some terminals reset attributes at a newline.
    return "\n".join(f"{style}{line}{_RESET}" if line else line for line in text.split("\n"))


def render_preview(doc: ParsedDocument, chunks: List[Chunk], *, strategy: str, unit: str,
                   color: bool = False, dropped: Sequence[Tuple[str, int]] = ()) -> str:
    """The preview text: a header, one marker line and segment per chunk (see the module
    docstring), and a footer with the count and size percentiles in ``unit``.

    Args:
        doc: The parsed document.
        chunks: Its chunks, in document order.
        strategy: How the strategy is named in the header.
        unit: The strategy's unit (``Chunker.unit``).
        color: Whether to colour the segments with ANSI escapes. Default ``False``.
        dropped: What the strategy left out on purpose, ``(label, characters)`` pairs.
    """
    sizes = [chunk_size(c, unit) for c in chunks]
    shown_unit = sizes[0][1] if sizes else ("characters" if unit == "unbounded" else unit)
    mark = (lambda s: _styled(s, _DIM)) if color else (lambda s: s)
    lines = [f"{_visible(doc.uri)} | {doc.content_type} | strategy {strategy} | unit {unit} | {len(chunks)} chunks"]
    for index, start, end in segments(doc.text, chunks):
        piece = _visible(doc.text[start:end])
        if index is None:
            lines += [mark(f"--- not in any chunk | {end - start} characters ---"), mark(piece) if color else piece]
            continue
        c = chunks[index]
        overlap = max(0, (chunks[index - 1].end if index else 0) - c.start)
        lines.append(mark(f"--- chunk {index + 1}/{len(chunks)} | {sizes[index][0]} {sizes[index][1]} | id {c.id} "
                          f"| span {c.start}..{c.end} | overlap {overlap} characters ---"))
        if color:
            nxt = chunks[index + 1].start if index + 1 < len(chunks) else end
            cut = len(_visible(doc.text[start:max(start, min(nxt, end))]))
            style = _COLOURS[index % 2]
            piece = _styled(piece[:cut], style) + _styled(piece[cut:], style + _UNDERLINE)
        lines.append(piece)
    stats = percentiles([n for n, _ in sizes])
    footer = f"{len(chunks)} chunks | {shown_unit} " + " ".join(f"{k} {v}" for k, v in stats.items())
    if dropped:
        footer += " | dropped " + ", ".join(f"{_visible(label)} ({n} characters)" for label, n in dropped)
    lines.append(mark(f"=== {footer} ==="))
    return "\n".join(lines) + "\n"


def argument_parser() -> OneLineParser:
    """The arguments of ``beam-chunking preview`` (the CLI reference is generated from them)."""
    p = OneLineParser(prog="beam-chunking preview", description=(
        "Show one local file's chunk boundaries: each chunk's size in the strategy's unit and "
        "its id, in alternating colours. Runs the parser and the strategy directly, without Beam."))
    p.add_argument("file", help="a local file (.gz is inflated)")
    p.add_argument("--strategy", default=None, metavar="NAME",
                   help="strategy name (default: the one a run chooses for the file's content type)")
    p.add_argument("--max-chunk-size", type=int, metavar="N", help="the strategy's max_chunk_size, in its unit")
    p.add_argument("--overlap", type=int, metavar="N", help="the strategy's overlap, in its unit")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other strategy option; VALUE is YAML (200, true, [a, b]); repeatable")
    p.add_argument("--decode-errors", choices=("strict", "replace"), default="strict",
                   help="text bytes that are neither UTF-8 nor in a recognised legacy encoding: strict "
                        "(default: fail) or replace (U+FFFD)")
    p.add_argument("--content-type", dest="content_types", action="append", default=[], metavar="PATTERN=TYPE",
                   help="force the file's content type when PATTERN matches its full path (as the run flag), "
                        "e.g. '*.log=text/plain'; repeatable")
    p.add_argument("--keep", action="append", default=[], metavar="PART", choices=sorted(DROPS),
                   help="keep a part that parsers drop by default (page_furniture, contents); repeatable")
    p.add_argument("--no-color", action="store_true", help="never colour (default: colour when stdout is a terminal)")
    return p


def strategy_options(args: Any) -> Dict[str, Any]:
    """The ``{name: ..., **options}`` mapping of the parsed ``preview`` arguments.

    Raises:
        UsageError: an ``--option`` without ``=`` or with a value that is not YAML.
    """
    from beam_chunking.pipelines.spec import option_items

    try:
        options: Dict[str, Any] = option_items(args.option, "--option")
    except ChunkingError as exc:
        raise UsageError(str(exc)) from None
    for key in ("max_chunk_size", "overlap"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    if args.strategy is None and options:
        raise UsageError(f"strategy options ({', '.join(options)}) need --strategy NAME; without one, the "
                         f"file gets the strategy chosen for its content type, with its defaults")
    return {"name": args.strategy, **options} if args.strategy is not None else {}


def _write(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:  # a terminal or pipe that cannot show every character
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))


def preview_command(argv: List[str], stdout: Optional[TextIO] = None) -> int:
    """Run ``beam-chunking preview``.

    Args:
        argv: The arguments after ``preview``.
        stdout: Where the preview goes; default ``sys.stdout``.

    Returns:
        0 on success; 1, with one line on stderr, when the file cannot be parsed or chunked;
        2, with one line on stderr, for bad usage, an unknown strategy or option, or a file
        that cannot be read.
    """
    from beam_chunking.default_strategy import default_strategy
    from beam_chunking.pipelines.spec import build_strategy, content_type_items

    stdout = stdout or sys.stdout
    try:
        args = argument_parser().parse_args(argv)
        options = strategy_options(args)
        doc = load_document(args.file, decode_errors=args.decode_errors, keep=args.keep,
                            content_types=content_type_items(args.content_types))
        strategy = build_strategy(options, "strategy") if options else default_strategy().select(doc)
    except (UsageError, OSError, ChunkingError) as exc:
        parse_failed = isinstance(exc, ChunkingError) and not isinstance(exc, ValueError)
        message = f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"beam-chunking preview: {' '.join(str(message).split())}", file=sys.stderr)
        return 1 if parse_failed else 2
    try:
        strategy.setup()
        chunks, dropped = chunk_recording_drops(strategy, doc)
    except Exception as exc:  # a strategy failing on this document, as the pipeline would record it
        print(f"beam-chunking preview: {args.file}: {type(exc).__name__}: {' '.join(str(exc).split())}",
              file=sys.stderr)
        return 1
    named = ", ".join(f"{k}={v!r}" for k, v in options.items() if k != "name")
    label = f"{strategy.name}({named})" if named else strategy.name
    if not options:
        label += f" (chosen for {doc.content_type})"
    color = not args.no_color and "NO_COLOR" not in os.environ and stdout.isatty()
    _write(stdout, render_preview(doc, chunks, strategy=label, unit=strategy.unit,
                                  color=color, dropped=dropped))
    return 0
