"""What each column of the output tables holds, for the generated column tables of the docs.

The columns and their types come from the schemas (:mod:`beam_chunking.schema`); this module
only says what they mean. A test requires an entry for every column of every schema, so a new
column cannot reach the docs without one.
"""
from __future__ import annotations

from typing import Dict

_TOKEN_COUNT = (
    "tokens of the chunk's own text, in the strategy's tokenizer (or `--token-counter` for character "
    "strategies). Where the machine leaves a core idle (by its load average) and the runner takes what "
    "a bundle emits when it ends (not Dask), each document is encoded once on another thread while the "
    "next ones are chunked, and each chunk's count comes from that encoding plus short encodes of its "
    "head and tail, exact by construction (tiktoken releases the GIL while it encodes). Otherwise each "
    "chunk is encoded on its own, a large document's chunks over up to 4 threads")

CHUNKS: Dict[str, str] = {
    "chunk_id": '`"{document_id}:{start:010d}"`, plus `#k` when several chunks of a document share a start '
                "(propositions)",
    "document_id": "16 hex digits of SHA-256 over the URI (for a local file name that is not valid UTF-8, over "
                   "its raw bytes; its `uri` then shows those bytes as `%XX`)",
    "chunk_index": "position of the chunk in its document, from 0",
    "chunk_count": "chunks in the document",
    "text": "exactly `document_text[start:end]`, except rewrites (`rewrite=true` in `metadata`: propositions, "
            "résumé fields, sanitised chunks) and table pieces that repeat their header "
            "(`table_header_repeated=true`), whose `start`/`end` name their source span",
    "start": "code-point offset of the chunk's first character in the decoded document text",
    "end": "code-point offset just past the chunk's last character",
    "token_count": _TOKEN_COUNT,
    "strategy": "registry name of the strategy that cut the chunk",
    "strategy_fingerprint": "hash of that strategy's configuration",
    "content_type": "the document's content type (`text/markdown`, `application/pdf` ...)",
    "uri": "the document's path or URL (local paths are absolute)",
    "heading": "the nearest heading",
    "section_path": "the headings above the chunk, outermost first",
    "page": "the chunk's first page (1-based); written together with `page_end`, null when unknown "
            "(HTML, DOCX)",
    "page_end": "the chunk's last page (1-based); greater than `page` when the chunk runs over a page turn",
    "boxes": "where the chunk lies on its pages (PDF, scans): one rectangle per block of lines and page, in "
             "PDF points from the page's top-left corner (pixels for images); null for formats without "
             "geometry",
    "slide": "the slide (1-based) of a presentation",
    "sheet": "the sheet of a spreadsheet, or the CSV's file name",
    "row": "the row (1-based, the header row is 1) of a CSV, TSV or spreadsheet",
    "element_path": "the HTML elements around the chunk (`main > article > section > p`; at most 32)",
    "language": "the programming or data language of code (`python`, `json` ...)",
    "chunk_kind": "what the chunk is when it is not prose: `table`, `code`, `row`, `slide`, `notes`, "
                  "`proposition`, `passage`, `field` ...",
    "template": "the domain template that cut the chunk (`legal`, `book` ...)",
    "parent_id": "the parent's `chunk_id` in the parents table (`parent_child`), else null",
    "metadata": "every other metadata key, typed (`beam_chunking.schema.decode_metadata` reads it back into a "
                "dict)",
    "embedding": "the chunk's vector; null until an embedding stage fills it",
}

_LLM = "chat-model calls: {what}; null when the document's strategy calls no model"
_EMBED = "hosted embedding model: {what}; null without a hosted model"

DOCUMENTS: Dict[str, str] = {
    "document_id": "as in the chunks table",
    "uri": "the document's path or URL",
    "content_type": "the detected or forced content type",
    "size_bytes": "size of the file as read (a `.gz` once inflated)",
    "sha256": "SHA-256 of the bytes; an incremental run compares it",
    "status": "`ok`, `empty` (no chunk) or `failed`; documents in = ok + empty + failed",
    "stage": "where a failed document failed: `read`, `parse`, `chunk`, `embed` or `validate`",
    "error_type": "the exception class of a failure (`ParseError`, `LimitExceeded`, `DecodeError` ...)",
    "error_message": "one line saying what went wrong, where, and what to do",
    "section_count": "sections the parser found",
    "chunk_count": "chunks written for the document",
    "strategy": "registry name of the strategy that chunked it",
    "strategy_fingerprint": "fingerprint of the strategy that chunked it; null when it failed",
    "encoding": "the Python codec the text was decoded with (`utf-8`, `gb18030`, `cp1252` ...; "
                "`bytes.decode(encoding)` gives the text); null for formats not decoded as a whole (PDF, Office, "
                "e-mail)",
    "encoding_confidence": "how sure the encoding's detection was, in [0, 1]; 1.0 for UTF-8 and byte-order marks",
    "decode_replacements": "bytes replaced by U+FFFD under `--decode-errors replace`",
    "dropped": "what a parser or a strategy left out by design (`running header`, `table of contents`, "
               "a book's `index` ...)",
    "dropped_characters": "non-whitespace characters of what was dropped",
    "llm_calls": _LLM.format(what="calls answered"),
    "llm_cached_calls": _LLM.format(what="of those, answered from the cache"),
    "llm_failed_calls": _LLM.format(what="requests that failed after their retries"),
    "llm_prompt_tokens": _LLM.format(what="prompt tokens the server reported"),
    "llm_completion_tokens": _LLM.format(what="completion tokens the server reported"),
    "llm_fallbacks": _LLM.format(what="units emitted as their source text because the answer was unusable or "
                                      "the call failed"),
    "embed_texts": _EMBED.format(what="chunk texts embedded"),
    "embed_cached_texts": _EMBED.format(what="of those, answered from the vector cache"),
    "embed_requests": _EMBED.format(what="requests sent (a request shared by documents counts for the first)"),
    "embed_tokens": _EMBED.format(what="input tokens the server reported (a shared request's split by the "
                                       "texts' sizes)"),
}

CHANGES: Dict[str, str] = {
    "document_id": "a document of this run or of the previous one",
    "uri": "its path or URL",
    "change": "`new`, `changed`, `unchanged` or `deleted` (in the previous run, matched no more)",
    "delete_chunk_ids": "the previous run's chunk ids of a `changed` or `deleted` document, which a store fed "
                        "from the previous run must delete; empty otherwise",
}

#: Column help per table name; the parents table has the chunks table's columns.
COLUMNS: Dict[str, Dict[str, str]] = {"chunks": CHUNKS, "parents": CHUNKS, "documents": DOCUMENTS,
                                      "changes": CHANGES}
