"""The report's "Chunks on their pages": each chunk's boxes drawn over page thumbnails.

:func:`placed_documents` picks, from the chunks table, a bounded sample of the documents
whose chunks carry ``boxes`` (the first :data:`MAX_DOCUMENTS` by URI, the first
:data:`MAX_PAGES` pages with boxes of each). :func:`pages_section` renders them: every page
as a PNG thumbnail :data:`THUMB_WIDTH` pixels wide, embedded as a ``data:`` URI, under an
inline SVG overlay with one rectangle per box, one colour per chunk (cycling through
:data:`PALETTE`) and the chunk's index as a label and a tooltip (with the start of its text).

PDF pages are rendered by PDFium (``pypdfium2``, the ``parsers`` extra); image documents
(PNG, JPEG, TIFF; boxes in pixels) are opened with Pillow, EXIF orientation applied as the
parser does. The source is read again from the chunk's ``uri``: a file that is gone, not
readable, changed since the run (its SHA-256 differs from the documents table's), not a PDF
or an image, or a missing extra is one line in the report, never a failed report.
"""
from __future__ import annotations

import base64
import hashlib
import html
import io
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from beam_chunking.pipelines.escape import escape_text

#: Documents drawn at most (the first ones by URI); the others are counted.
MAX_DOCUMENTS = 3
#: Pages drawn at most per document (the first pages that carry boxes).
MAX_PAGES = 4
#: Width of a thumbnail in pixels (an A4 page is then about 566 px high, 20-60 kB as PNG).
THUMB_WIDTH = 400
#: Largest source file read back to draw its pages, in bytes.
MAX_SOURCE_BYTES = 256 * 1024 * 1024
#: Chunk colours, by chunk index modulo their number (Tableau 10, colour-blind aware).
PALETTE = ("#e15759", "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#9c755f", "#ff9da7")
#: Columns of the chunks table read for the section.
COLUMNS = ["document_id", "chunk_index", "uri", "boxes"]
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/tiff")
#: Pixels between labels of chunks that share a box corner (overlapping chunks).
_LABEL_STEP = 16


@dataclass(frozen=True)
class ChunkBox:
    """One rectangle of one chunk, in the page's units (PDF points or image pixels)."""

    chunk_index: int
    x0: float
    y0: float
    x1: float
    y1: float
    preview: str


@dataclass(frozen=True)
class PlacedDocument:
    """A document chosen for the section: its source and its first pages' chunk boxes.

    ``pages`` holds ``(page, boxes)`` pairs, 1-based pages in ascending order;
    ``page_count`` counts all its pages that carry boxes (``pages`` may be fewer).
    """

    document_id: str
    uri: str
    content_type: str
    sha256: Optional[str]
    pages: Tuple[Tuple[int, Tuple[ChunkBox, ...]], ...]
    page_count: int


def placed_documents(chunks, documents: Sequence[dict], *, max_documents: int = MAX_DOCUMENTS,
                     max_pages: int = MAX_PAGES) -> Tuple[Tuple[PlacedDocument, ...], int]:
    """The documents to draw, from the chunks table, and how many documents have boxes in all.

    Args:
        chunks: A ``pyarrow.Table`` with :data:`COLUMNS`, ``content_type`` and ``text``.
        documents: Rows of the documents table (for each document's ``sha256``).
        max_documents: Documents kept, the first by URI. Default :data:`MAX_DOCUMENTS`.
        max_pages: Pages kept per document. Default :data:`MAX_PAGES`.
    """
    import pyarrow.compute as pc

    if chunks is None or "boxes" not in chunks.column_names or chunks.num_rows == 0:
        return (), 0
    has = pc.fill_null(pc.greater(pc.list_value_length(chunks["boxes"]), 0), False)
    boxed = chunks.filter(has)
    keys = sorted(set(zip(boxed["uri"].to_pylist(), boxed["document_id"].to_pylist())),
                  key=lambda k: (k[0] or "", k[1]))
    chosen = [doc_id for _, doc_id in keys[:max_documents]]
    rows = boxed.filter(pc.is_in(boxed["document_id"], value_set=_array(chosen))).select(
        COLUMNS + ["content_type", "text"]).to_pylist()
    sha = {d["document_id"]: d.get("sha256") for d in documents}
    out = []
    for doc_id in chosen:
        mine = sorted((r for r in rows if r["document_id"] == doc_id), key=lambda r: r["chunk_index"])
        pages: Dict[int, List[ChunkBox]] = {}
        for r in mine:
            preview = escape_text(r["text"], 80)
            for b in r["boxes"]:
                pages.setdefault(b["page"], []).append(ChunkBox(r["chunk_index"], b["x0"], b["y0"], b["x1"], b["y1"],
                                                                preview))
        kept = tuple((p, tuple(pages[p])) for p in sorted(pages)[:max_pages])
        out.append(PlacedDocument(doc_id, mine[0]["uri"] or "", mine[0]["content_type"] or "", sha.get(doc_id),
                                  kept, len(pages)))
    return tuple(out), len(keys)


def _array(values: List[str]):
    import pyarrow as pa

    return pa.array(values, pa.string())


class _NotDrawn(Exception):
    """Why a document's pages are not drawn, as one line for the report."""


def _read_source(doc: PlacedDocument) -> bytes:
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    try:  # the bytes as the run hashed them: a .gz source stays compressed
        with FileSystems.open(doc.uri, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            data = f.read(MAX_SOURCE_BYTES + 1)
    except Exception as exc:  # Beam wraps a missing file in its own errors: any failure is a note
        raise _NotDrawn(f"the source file is not readable any more ({type(exc).__name__})") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise _NotDrawn(f"the source file is larger than {MAX_SOURCE_BYTES // 2**20} MiB")
    if doc.sha256 and hashlib.sha256(data).hexdigest() != doc.sha256:
        raise _NotDrawn("the source file has changed since the run, so its boxes would be wrong")
    return data


def _png(image) -> str:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG", optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _thumbnails(doc: PlacedDocument, data: bytes) -> List[Tuple[str, int, int, float, float]]:
    """``(png_base64, width, height, x_scale, y_scale)`` per page of ``doc.pages``."""
    from beam_chunking.errors import require_extra as require

    out = []
    if doc.content_type == "application/pdf":
        pdfium = require("pypdfium2", "pypdfium2", "parsers")
        require("PIL", "Pillow", "report")
        pdf = pdfium.PdfDocument(data)
        try:
            for page_no, _ in doc.pages:
                page = pdf[page_no - 1]
                width, height = page.get_size()  # the parser puts y's origin at this height's top
                scale = THUMB_WIDTH / width
                image = page.render(scale=scale).to_pil()
                page.close()
                out.append((_png(image), image.width, image.height, image.width / width, image.height / height))
        finally:
            pdf.close()
        return out
    if doc.content_type in _IMAGE_TYPES:
        Image = require("PIL.Image", "Pillow", "report")
        ImageOps = require("PIL.ImageOps", "Pillow", "report")
        with Image.open(io.BytesIO(data)) as frames:
            for page_no, _ in doc.pages:
                frames.seek(page_no - 1)
                frame = ImageOps.exif_transpose(frames) if doc.content_type == "image/jpeg" else frames.copy()
                scale = min(1.0, THUMB_WIDTH / frame.width)
                small = frame.resize((max(1, round(frame.width * scale)), max(1, round(frame.height * scale))))
                out.append((_png(small), small.width, small.height, small.width / frame.width,
                            small.height / frame.height))
        return out
    raise _NotDrawn(f"{doc.content_type or 'an unknown type'} is not a PDF or an image")


def _overlay(boxes: Sequence[ChunkBox], width: int, height: int, sx: float, sy: float, label: str) -> str:
    taken: Dict[Tuple[int, int], int] = {}
    parts = []
    for b in boxes:
        colour = PALETTE[b.chunk_index % len(PALETTE)]
        x, y, w, h = b.x0 * sx, b.y0 * sy, (b.x1 - b.x0) * sx, (b.y1 - b.y0) * sy
        corner = (round(x), round(y))
        shift = taken.get(corner, 0)  # chunks that overlap share a box: their labels go side by side
        taken[corner] = shift + 1
        # The label sits in the margin left of the box, so it hides no text, unless the box
        # starts too close to the page's edge.
        label_x = x - 3 - shift * _LABEL_STEP
        anchor = "end" if label_x >= _LABEL_STEP else "start"
        if anchor == "start":
            label_x = x + 2 + shift * _LABEL_STEP
        tip = html.escape(f"chunk {b.chunk_index}: {b.preview}")
        parts.append(f'<g class="chunk" data-chunk="{b.chunk_index}"><title>{tip}</title>'
                     f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" stroke="{colour}" '
                     f'fill="{colour}" fill-opacity="0.12" stroke-width="1.5"/>'
                     f'<text x="{label_x:.1f}" y="{y + min(h, 20) / 2 + 4:.1f}" text-anchor="{anchor}" '
                     f'fill="{colour}">{b.chunk_index}</text></g>')
    return (f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(label)}">'
            + "".join(parts) + "</svg>")


def pages_section(placed: Sequence[PlacedDocument], total: int) -> str:
    """The section's HTML; empty when no document has boxes.

    Args:
        placed: :func:`placed_documents`'s documents.
        total: How many documents have boxes in all.
    """
    if not placed:
        return ""
    more = f" ({total - len(placed)} more documents with boxes are not shown)" if total > len(placed) else ""
    parts = ["<h2>Chunks on their pages</h2>",
             f'<p class="muted">Each chunk\'s boxes over its pages, one colour per chunk, labelled with the '
             f"chunk's index (hover a box for the start of its text): the first {MAX_DOCUMENTS} documents with "
             f"boxes by URI, the first {MAX_PAGES} pages of each{more}.</p>"]
    for doc in placed:
        name = html.escape(doc.uri)
        try:
            thumbs = _thumbnails(doc, _read_source(doc))
        except _NotDrawn as exc:
            parts.append(f'<p class="note"><code>{name}</code>: not drawn: {html.escape(str(exc))}.</p>')
            continue
        except ImportError as exc:  # MissingExtra: the line names the extra to install
            parts.append(f'<p class="note"><code>{name}</code>: not drawn: {html.escape(str(exc))}</p>')
            continue
        except Exception as exc:  # a damaged or foreign file must not cost the whole report
            reason = escape_text(f"{type(exc).__name__}: {exc}", 160)
            parts.append(f'<p class="note"><code>{name}</code>: not drawn: cannot render it '
                         f"({html.escape(reason)}).</p>")
            continue
        shown = f"pages {', '.join(str(p) for p, _ in doc.pages)} of {doc.page_count} with boxes"
        parts.append(f"<h3><code>{name}</code> <span class=\"muted\">({shown})</span></h3><div class=\"pages\">")
        for (page_no, boxes), (png, w, h, sx, sy) in zip(doc.pages, thumbs):
            label = f"page {page_no} of {doc.uri}"
            parts.append(f'<figure class="page"><div class="sheet" style="width:{w}px;height:{h}px">'
                         f'<img src="data:image/png;base64,{png}" width="{w}" height="{h}" alt="{html.escape(label)}">'
                         f"{_overlay(boxes, w, h, sx, sy, 'chunk boxes on ' + label)}</div>"
                         f"<figcaption>page {page_no}: chunks "
                         f"{', '.join(str(i) for i in sorted({b.chunk_index for b in boxes}))}</figcaption></figure>")
        parts.append("</div>")
    return "\n".join(parts)


#: CSS of the section, appended to the report's.
CSS = """
.pages{display:flex;flex-wrap:wrap;gap:.8rem}figure.page{width:auto;margin:.4rem 0}
.sheet{position:relative;border:1px solid #d8dce4}.sheet img{display:block}
figure.page svg{position:absolute;left:0;top:0;width:100%;height:100%}
figure.page text{font:bold 11px system-ui,sans-serif;paint-order:stroke;stroke:#fff;stroke-width:3px}
.note{color:#8a4b08}
"""
