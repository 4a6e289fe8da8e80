"""Q&A pairs template: one chunk per question/answer row of a CSV, TSV or spreadsheet."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from beam_chunking.errors import ChunkingError, ConfigError
from beam_chunking.strategies.base import Chunker, Drops, make_chunk
from beam_chunking.types import Chunk, ParsedDocument, Section

Column = Union[str, int]


def row_values(text: str, columns: Sequence[str]) -> Dict[str, str]:
    """Read a row section's ``column: value`` lines back into a mapping (empty cells absent)."""
    values: Dict[str, str] = {}
    k = 0
    for line in text.split("\n"):
        while k < len(columns) and not line.startswith(columns[k] + ": "):
            k += 1
        if k == len(columns):
            break
        values[columns[k]] = line[len(columns[k]) + 2:]
        k += 1
    return values


@dataclass(frozen=True)
class QAPairsChunker(Chunker):
    """One chunk per question/answer row, from the tabular parser's row sections.

    Each chunk is the row's section (``question: ...`` / ``answer: ...`` lines, with any
    other columns) and carries ``template="qa_pairs"``, ``question`` and ``answer``
    metadata, ``row`` and ``sheet``. Rows without a question or an answer are left out and
    reported in the documents table.

    Args:
        question_column: Header name (case-insensitive) or 1-based position. Default
            ``"question"``.
        answer_column: Header name or 1-based position. Default ``"answer"``.
        skip_header: The first row holds column names (default ``True``). With ``False`` the
            first row is a pair too (address columns by position then).
    """

    name = "qa_pairs"
    unit_template = "unbounded"
    question_column: Column = "question"
    answer_column: Column = "answer"
    skip_header: bool = True

    def __post_init__(self) -> None:
        for field in ("question_column", "answer_column"):
            value = getattr(self, field)
            ok = (isinstance(value, str) and value) or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)
            if not ok:
                raise ConfigError(f"QAPairsChunker.{field} must be a column name or a 1-based position, got {value!r}",
                                  field=field)
        if not isinstance(self.skip_header, bool):
            raise ConfigError(f"QAPairsChunker.skip_header must be true or false, got {self.skip_header!r}",
                              field="skip_header")

    def _column(self, doc: ParsedDocument, columns: Sequence[str], which: Column, field: str) -> str:
        if isinstance(which, int):
            if which > len(columns):
                raise ChunkingError(f"qa_pairs: {field}={which} but the sheet has {len(columns)} columns",
                                    document_id=doc.id, uri=doc.uri)
            return columns[which - 1]
        for name in columns:
            if name.casefold() == which.casefold():
                return name
        raise ChunkingError(f"qa_pairs: no column named {which!r} (columns: {', '.join(columns)})",
                            document_id=doc.id, uri=doc.uri)

    def chunk_with_drops(self, doc: ParsedDocument) -> Tuple[List[Chunk], Drops]:
        """Return one chunk per pair and the rows left out."""
        chunks: List[Chunk] = []
        missing = 0
        missing_chars = 0
        rows = [s for s in doc.sections if s.kind in ("row", "header")]
        if not rows:
            raise ChunkingError(f"qa_pairs: no table rows (content type {doc.content_type}); route only CSV, TSV "
                                "or spreadsheets to this template", document_id=doc.id, uri=doc.uri)
        for section in rows:
            columns = tuple(section.metadata.get("columns") or ())
            q = self._column(doc, columns, self.question_column, "question_column")
            a = self._column(doc, columns, self.answer_column, "answer_column")
            text = doc.text[section.start:section.end]
            if section.kind == "header":
                if self.skip_header:
                    continue
                values = {name: name for name in columns}  # the "header" is the first data row
            else:
                values = row_values(text, columns)
            pair = self._pair(doc, section, values.get(q, ""), values.get(a, ""), len(chunks))
            if pair is None:
                missing += 1
                missing_chars += len(text.strip())
            else:
                chunks.append(pair)
        drops = ((f"{missing} rows without a question or an answer", missing_chars),) if missing else ()
        return chunks, drops

    @staticmethod
    def _pair(doc: ParsedDocument, section: Section, question: str, answer: str, index: int) -> Optional[Chunk]:
        if not question.strip() or not answer.strip():
            return None
        meta: Dict[str, Any] = dict(doc.metadata)
        meta.update({k: v for k, v in section.metadata.items() if k in ("row", "sheet")})
        meta.update({"template": "qa_pairs", "question": question, "answer": answer, "chunk_kind": "qa"})
        return make_chunk(doc, index=index, start=section.start, end=section.end, token_count=None, metadata=meta)

    def chunk_document(self, doc: ParsedDocument) -> List[Chunk]:
        """Return one chunk per question/answer pair."""
        return self.chunk_with_drops(doc)[0]
