"""``beam-chunking inspect OUTPUT``: what to check in an output before loading it into an index.

It prints the chunk counts and size percentiles (p5/p50/p95/max, in characters and in
``token_count`` tokens) overall, per content type and per strategy; the smallest and largest
chunks with a short escaped preview; the failed documents grouped by reason, with a count
and one example file; and the parts strategies left out on purpose (the documents table's
``dropped`` and ``dropped_characters``). The tables are read through the output's manifest
(:func:`beam_chunking.pipelines.inspection.inspect_output`). With ``--html FILE`` it also
writes a self-contained HTML report (:mod:`beam_chunking.pipelines.report`).
"""
from __future__ import annotations

import os
import sys
from typing import Dict, List, Optional

from beam_chunking.pipelines.inspection import (Inspection, OneLineParser, SizeStats, UsageError, escape_text,
                                                inspect_output)


def _cell(value: Optional[int]) -> str:
    return "-" if value is None else str(value)


def _table(headers: List[str], rows: List[List[str]], indent: str = "  ") -> List[str]:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    fmt = lambda r: indent + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return [fmt(headers), *[fmt(r) for r in rows]]


def _short(name: str, width: int = 40) -> str:
    """``name`` escaped, its middle elided past ``width`` characters: content types and file
    names differ at their ends (``...wordprocessingml.document``, ``...spreadsheetml.sheet``)."""
    name = escape_text(name)
    if len(name) <= width:
        return name
    tail = (width - 1) // 2
    return f"{name[:width - 1 - tail]}\u2026{name[-tail:]}"


def _size_rows(groups: Dict[str, SizeStats]) -> List[List[str]]:
    return [[_short(name), str(s.chunks), *[_cell(s.characters[k]) for k in s.characters],
             *[_cell(s.tokens[k]) for k in s.tokens]] for name, s in groups.items()]


def render_text(ins: Inspection, *, max_chars: Optional[int] = None, max_tokens: Optional[int] = None) -> str:
    """The terminal report of :func:`inspect_output`'s result.

    Args:
        ins: The inspection.
        max_chars: A ceiling in characters; chunks above it are counted. Default none.
        max_tokens: A ceiling in tokens; chunks above it are counted. Default none.
    """
    s = ins.statuses
    lines = [f"output: {escape_text(ins.output)} (run {ins.run_id or 'unknown'})",
             f"documents: {sum(s.values())} in, {s.get('ok', 0)} ok, {s.get('empty', 0)} empty, "
             f"{s.get('failed', 0)} failed", f"chunks: {ins.overall.chunks}", "", "chunk sizes (characters | tokens):"]
    heads = ["", "chunks", "p5", "p50", "p95", "max", "| p5", "p50", "p95", "max"]
    rows = [["all", *(_size_rows({"": ins.overall})[0][1:])], ["content type:"] + [""] * 9,
            *[["  " + r[0], *r[1:]] for r in _size_rows(ins.by_content_type)], ["strategy:"] + [""] * 9,
            *[["  " + r[0], *r[1:]] for r in _size_rows(ins.by_strategy)]]
    for r in rows:
        if r[1]:
            r[6] = "| " + r[6]
    lines += _table(heads, rows)
    for limit, unit in ((max_chars, "characters"), (max_tokens, "tokens")):
        if limit is not None:
            over = sum(int((sizes[0 if unit == "characters" else 1] > limit).sum()) for sizes in ins.sizes.values())
            lines.append(f"chunks above {limit} {unit}: {over}")
    for title, examples in (("smallest", ins.smallest), ("largest", ins.largest)):
        if examples:
            lines += ["", f"{title} chunks:"]
            lines += _table(["id", "file", "chars", "tokens", "text"], [
                [escape_text(e.chunk_id), _short(e.uri.rsplit("/", 1)[-1], 30), str(e.characters), _cell(e.tokens),
                 escape_text(e.text, 60)] for e in examples])
    lines += ["", f"failures: {len(ins.failures)} documents, {len(ins.failure_groups)} reasons"]
    for g in ins.failure_groups:
        lines.append(f"  {g.count} x {g.stage} {g.error_type}: {escape_text(g.example_message, 160)}")
        lines.append(f"      e.g. {escape_text(g.example_uri)}")
    total = sum(r[2] for r in ins.dropped)
    lines += ["", f"dropped on purpose: {len(ins.dropped)} documents, {total} characters"]
    labels: Dict[str, int] = {}
    for _, names, _ in ins.dropped:
        for name in names:
            labels[name] = labels.get(name, 0) + 1
    lines += [f"  {escape_text(name)}: {n} documents" for name, n in sorted(labels.items())]
    lines += [f"  {chars} characters: {escape_text(uri)} ({', '.join(map(escape_text, names))})"
              for uri, names, chars in ins.dropped[:5]]
    return "\n".join(lines)


def argument_parser() -> OneLineParser:
    """The arguments of ``beam-chunking inspect`` (the CLI reference is generated from them)."""
    p = OneLineParser(prog="beam-chunking inspect", description=(
        "Summarise a committed output (chunk sizes, extremes, failures, dropped parts) before "
        "loading it into an index. Reads the tables through the output's manifest."))
    p.add_argument("output", help="the output folder of a run (local path or gs://)")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report to FILE "
                   "(needs the report extra: pip install 'beam-chunking[report]')")
    p.add_argument("--top", type=int, default=5, metavar="N", help="smallest and largest chunks shown (default 5)")
    p.add_argument("--max-chunk-size", type=int, metavar="N", help=(
        "a ceiling in characters to check and mark on the character histograms. The table does "
        "not record a strategy's ceiling, so without this flag only the observed maximum is marked"))
    p.add_argument("--max-chunk-tokens", type=int, metavar="N",
                   help="likewise, a ceiling in tokens (token_count) for the token histograms")
    return p


def inspect_command(argv: List[str]) -> int:
    """Run ``beam-chunking inspect``; prints the report to stdout.

    Args:
        argv: The arguments after ``inspect``.

    Returns:
        0 on success; 2, with one line on stderr, for bad usage or a missing or invalid
        output folder (or a missing report extra).
    """
    try:
        args = argument_parser().parse_args(argv)
        if args.top < 0:
            raise UsageError(f"--top must be >= 0, got {args.top}")
        if "://" not in args.output and not os.path.isdir(args.output):
            raise UsageError(f"{args.output}: no such output folder")
        if args.html:  # before any work or output: the report's extra is there
            from beam_chunking.pipelines.report import require_matplotlib

            try:
                require_matplotlib()
            except ImportError as exc:
                raise UsageError(str(exc)) from None
        try:
            ins = inspect_output(args.output, top=args.top)
        except (FileNotFoundError, ValueError, KeyError) as exc:
            raise UsageError(f"{args.output}: not a readable output ({exc})") from None
        print(render_text(ins, max_chars=args.max_chunk_size, max_tokens=args.max_chunk_tokens))
        if args.html:
            from beam_chunking.pipelines.report import write_report

            try:
                write_report(ins, args.html, max_chars=args.max_chunk_size, max_tokens=args.max_chunk_tokens)
            except ImportError as exc:
                raise UsageError(str(exc)) from None
            except OSError as exc:
                raise UsageError(f"{args.html}: cannot write the report: {exc.strerror or exc}") from None
            print(f"report: {args.html}")
    except UsageError as exc:
        print(f"beam-chunking inspect: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0
