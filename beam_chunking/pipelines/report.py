"""The self-contained HTML report of ``beam-chunking inspect --html``.

One file with nothing to fetch: inline CSS, no script, and the histograms as inline SVG
drawn by matplotlib (stripped of the XML prologue, the DOCTYPE, the metadata and the
namespace declarations, which an HTML parser does not need), and the chunks' boxes drawn over
page thumbnails embedded as ``data:`` PNGs (:mod:`beam_chunking.pipelines.report_pages`).
Every string that comes from the data (URIs, chunk text, error messages, content types) is
escaped with :func:`html.escape`. Needs the ``report`` extra (matplotlib); the thumbnails
also need ``pypdfium2`` (the ``parsers`` extra), and say so in the report when it is missing.
"""
from __future__ import annotations

import html
import io
import re
from typing import Dict, Iterable, List, Optional

import numpy as np

from beam_chunking.errors import MissingExtra
from beam_chunking.pipelines.inspection import Inspection, SizeStats, escape_text
from beam_chunking.pipelines.report_pages import CSS as PAGES_CSS
from beam_chunking.pipelines.report_pages import pages_section

#: Failed documents listed one by one in the report (all of them are counted and grouped).
MAX_FAILURE_ROWS = 1000

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;
color:#1d2330;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d8dce4}
.muted{color:#5b6475}.cards{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.card{border:1px solid #d8dce4;border-radius:6px;padding:.6rem 1rem;min-width:7rem}
.card b{display:block;font-size:1.4rem}.bad b{color:#b42318}
table{border-collapse:collapse;margin:.5rem 0;font-size:13px}
th,td{border:1px solid #d8dce4;padding:.25rem .55rem;text-align:left;vertical-align:top}
th{background:#f2f4f7}td.n{text-align:right;font-variant-numeric:tabular-nums}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;word-break:break-all}
figure{margin:.8rem 0;display:inline-block;width:49%;vertical-align:top}
figure svg{width:100%;height:auto}figcaption{font-size:12px;color:#5b6475}
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Optional[int]) -> str:
    return "&ndash;" if value is None else str(value)


def _table(headers: List[str], rows: Iterable[List[str]], numeric: Iterable[int] = ()) -> str:
    """An HTML table; cells are HTML already (escape data with :func:`_e` first)."""
    numeric = set(numeric)
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _clean_svg(svg: str) -> str:
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    return re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", svg)


def require_matplotlib() -> None:
    """Check that the report can be drawn.

    Raises:
        MissingExtra: matplotlib is not installed (names the ``report`` extra).
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingExtra("the HTML report needs matplotlib: pip install 'beam-chunking[report]'") from None


def histogram_svg(sizes: np.ndarray, *, title: str, unit: str, ceiling: Optional[int] = None,
                  salt: str = "h") -> str:
    """One size histogram as inline SVG markup.

    The observed maximum is marked with a dashed line and ``ceiling``, when given, with a
    solid red one (chunks above it are counted in the legend).

    Args:
        sizes: Chunk sizes (at least one).
        title: The plot's title (drawn as paths, so any text is safe).
        unit: The x axis unit, ``"characters"`` or ``"tokens"``.
        ceiling: A ceiling to mark, in ``unit``. Default none.
        salt: Makes the SVG's element ids unique within one page (and the output repeatable).

    Raises:
        MissingExtra: matplotlib is not installed.
    """
    require_matplotlib()
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path", "font.size": 9}):
        fig = Figure(figsize=(5.4, 2.7))
        ax = fig.add_subplot()
        top = int(sizes.max())
        ax.hist(sizes, bins=min(40, max(1, len(np.unique(sizes)))), color="#4e79a7", edgecolor="white")
        ax.axvline(top, color="#444", linestyle="--", linewidth=1, label=f"observed max {top}")
        if ceiling is not None:
            over = int((sizes > ceiling).sum())
            ax.axvline(ceiling, color="#d62728", linewidth=1.6, label=f"ceiling {ceiling} ({over} above)")
        ax.set_title(title)
        ax.set_xlabel(unit)
        ax.set_ylabel("chunks")
        ax.legend(loc="best", fontsize=8, frameon=False)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return _clean_svg(buf.getvalue())


def _size_table(groups: Dict[str, SizeStats], label: str, documents: Optional[Dict[str, Dict[str, int]]] = None) -> str:
    heads = [label, "chunks"] + [f"chars {k}" for k in ("p5", "p50", "p95", "max")] + \
            [f"tokens {k}" for k in ("p5", "p50", "p95", "max")]
    if documents is not None:
        heads[1:1] = ["documents ok", "empty", "failed"]
        names = sorted(set(groups) | set(documents))
    else:
        names = list(groups)
    rows = []
    empty = SizeStats(0, dict.fromkeys(("p5", "p50", "p95", "max")), dict.fromkeys(("p5", "p50", "p95", "max")))
    for name in names:
        s = groups.get(name, empty)
        row = [f"<code>{_e(name)}</code>", str(s.chunks), *[_num(v) for v in s.characters.values()],
               *[_num(v) for v in s.tokens.values()]]
        if documents is not None:
            d = documents.get(name, {})
            row[1:1] = [str(d.get("ok", 0)), str(d.get("empty", 0)), str(d.get("failed", 0))]
        rows.append(row)
    return _table(heads, rows, numeric=range(1, len(heads)))


def render_report(ins: Inspection, *, max_chars: Optional[int] = None, max_tokens: Optional[int] = None) -> str:
    """The report as one HTML string (see the module docstring).

    Args:
        ins: The result of :func:`beam_chunking.pipelines.inspect.inspect_output`.
        max_chars: A character ceiling to mark on the character histograms. Default none.
        max_tokens: A token ceiling to mark on the token histograms. Default none.

    Raises:
        MissingExtra: matplotlib is not installed.
    """
    s = ins.statuses
    cards = [("documents", sum(s.values()), ""), ("ok", s.get("ok", 0), ""), ("empty", s.get("empty", 0), ""),
             ("failed", s.get("failed", 0), " bad" if s.get("failed") else ""), ("chunks", ins.overall.chunks, "")]
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>beam-chunking report: {_e(ins.output)}</title><style>{_CSS}{PAGES_CSS}</style></head><body>",
        f"<h1>Chunk report</h1><p class=\"muted\">Output <code>{_e(ins.output)}</code>, run "
        f"<code>{_e(ins.run_id or 'unknown')}</code></p>",
        '<div class="cards">' + "".join(f'<div class="card{c}"><b>{n}</b>{t}</div>' for t, n, c in cards) + "</div>",
        "<h2>Chunk sizes</h2>",
        _size_table({"all": ins.overall, **{f"strategy {k}": v for k, v in ins.by_strategy.items()}}, "group"),
        "<p class=\"muted\">Dashed line: the largest chunk observed. A strategy's ceiling is not stored in the "
        "table; a red line marks the ceiling given to <code>inspect --max-chunk-size</code> / "
        "<code>--max-chunk-tokens</code>.</p>",
    ]
    for i, (strategy, (chars, tokens)) in enumerate(ins.sizes.items()):
        for unit, sizes, ceiling in (("characters", chars, max_chars), ("tokens", tokens, max_tokens)):
            label = f"{strategy}: {unit}"
            if sizes.size == 0:
                parts.append(f"<figure><figcaption>{_e(label)}: no values (no token counts)</figcaption></figure>")
                continue
            title = escape_text(label, 60).replace("$", r"\$")  # a "$" would start matplotlib's mathtext
            svg = histogram_svg(sizes, title=title, unit=unit, ceiling=ceiling, salt=f"bc{i}{unit}")
            parts.append(f'<figure role="img" aria-label="{_e(label)} histogram">{svg}'
                         f"<figcaption>{_e(label)}, {sizes.size} chunks</figcaption></figure>")
    parts += ["<h2>By content type</h2>", _size_table(ins.by_content_type, "content type", ins.documents_by_type)]
    for title, examples in (("Smallest chunks", ins.smallest), ("Largest chunks", ins.largest)):
        parts += [f"<h2>{title}</h2>", _table(["id", "file", "characters", "tokens", "text"], (
            [f"<code>{_e(x.chunk_id)}</code>", f"<code>{_e(x.uri)}</code>", str(x.characters), _num(x.tokens),
             f'<span class="mono">{_e(escape_text(x.text, 120))}</span>'] for x in examples), numeric=(2, 3))]
    parts.append(pages_section(ins.placed, ins.placed_total))
    parts.append(f"<h2>Failures ({len(ins.failures)} documents, {len(ins.failure_groups)} reasons)</h2>")
    if ins.failures:
        parts.append(_table(["documents", "stage", "error type", "example file", "example message"], (
            [str(g.count), _e(g.stage), _e(g.error_type), f"<code>{_e(g.example_uri)}</code>", _e(g.example_message)]
            for g in ins.failure_groups), numeric=(0,)))
        shown = ins.failures[:MAX_FAILURE_ROWS]
        more = f" (first {len(shown)} of {len(ins.failures)})" if len(shown) < len(ins.failures) else ""
        parts += [f"<h3>Every failed document{more}</h3>", _table(["uri", "stage", "error type", "message"], (
            [f"<code>{_e(u)}</code>", _e(st), _e(et), _e(m)] for u, st, et, m in shown))]
    else:
        parts.append("<p>No document failed.</p>")
    total = sum(r[2] for r in ins.dropped)
    parts.append(f"<h2>Dropped on purpose ({len(ins.dropped)} documents, {total} characters)</h2>")
    if ins.dropped:
        parts.append(_table(["uri", "parts", "characters"], (
            [f"<code>{_e(u)}</code>", _e(", ".join(names)), str(n)] for u, names, n in ins.dropped), numeric=(2,)))
    else:
        parts.append("<p>No strategy left anything out.</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(ins: Inspection, path: str, *, max_chars: Optional[int] = None,
                 max_tokens: Optional[int] = None) -> None:
    """Write :func:`render_report`'s HTML to the local file ``path`` (UTF-8).

    Raises:
        MissingExtra: matplotlib is not installed.
        OSError: ``path`` cannot be written.
    """
    page = render_report(ins, max_chars=max_chars, max_tokens=max_tokens)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
