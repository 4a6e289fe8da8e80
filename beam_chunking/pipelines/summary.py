"""The end-of-run summary, read back from the committed documents table."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from beam_chunking.schema import CHANGES, EMBED_COLUMNS, LLM_COLUMNS
from beam_chunking.transforms.manifest import TABLES, read_manifest, read_table, table_files

#: How many failure reasons the summary lists.
TOP_FAILURES = 5
#: Characters of a failure's message the summary shows, at most.
REASON_WIDTH = 120


def reason(message: str, uri: str) -> str:
    """A failure's message as the summary lists it: without the ``"{uri}: "`` every message
    starts with (the line names an example document already), on one line, cut at a word
    boundary with ``…`` past :data:`REASON_WIDTH` characters."""
    text = " ".join((message or "").split())
    if uri and text.startswith(f"{uri}: "):
        text = text[len(uri) + 2:]
    if len(text) <= REASON_WIDTH:
        return text
    # What to do comes last ("...; fix the file or run with --decode-errors replace ..."): keep
    # it whole and cut the description before it instead.
    at = max(text.rfind(" or run with "), text.rfind(" or pass "), text.rfind("; "))
    advice = text[at:].lstrip(";") if at > 0 and len(text) - at <= REASON_WIDTH - 30 else ""
    room = REASON_WIDTH - len(advice) - 1
    cut = text[:room]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "…" + advice


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def failure_cause(doc: dict) -> Tuple[str, str, str]:
    """What failures are counted by: type, stage, and the message's first clause (up to a
    parenthesis or semicolon, the document's own name removed, numbers made one), so that a
    link to a folder and a link out of the input root are two reasons though both are skipped
    at read, and parsing stopped after 31.2 s or after 45.9 s one."""
    head = reason(doc["error_message"] or "", doc["uri"] or "").split("(", 1)[0].split(";", 1)[0]
    return doc["error_type"] or "", doc["stage"] or "", _NUMBER.sub("N", head.rstrip(" …"))


@dataclass(frozen=True)
class RunSummary:
    """Counts of one finished run, read back from its documents table.

    ``by_content_type`` and ``by_strategy`` count documents per status; ``failures`` lists
    the most common causes (:func:`failure_cause`) as ``(error_type, stage, count, example
    uri, message)`` (:func:`reason`); ``llm`` totals the documents table's chat-model
    counters (empty when no strategy called a model); ``embed`` totals its hosted-embedding
    counters, plus ``failed_documents`` failed at the embed stage (empty when no hosted
    model embedded);
    ``parents`` counts the parents table's rows; ``changes`` counts the changes table's
    documents per change (``new``, ``changed``, ``unchanged``, ``deleted``; empty for an
    output written before that table existed).
    """

    output: str
    documents: int
    ok: int
    empty: int
    failed: int
    chunks: int
    bytes: int
    seconds: float
    tables: Dict[str, List[str]]
    by_content_type: Dict[str, Dict[str, int]] = field(default_factory=dict)
    by_strategy: Dict[str, Dict[str, int]] = field(default_factory=dict)
    failures: List[Tuple[str, str, int, str, str]] = field(default_factory=list)
    max_failures: str = "0"
    llm: Dict[str, int] = field(default_factory=dict)
    embed: Dict[str, int] = field(default_factory=dict)
    parents: int = 0
    changes: Dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        """A human-readable multi-line summary."""
        mb = self.bytes / 1e6
        rate = mb / self.seconds if self.seconds > 0 else 0.0
        lines = [
            f"documents: {self.documents} in, {self.ok} ok, {self.empty} empty, {self.failed} failed",
            *([("changes:   " + ", ".join(f"{self.changes.get(c, 0)} {c}" for c in CHANGES))] if self.changes else []),
            f"chunks:    {self.chunks}",
            f"bytes:     {self.bytes} ({mb:.2f} MB) in {self.seconds:.2f} s = {rate:.2f} MB/s",
        ]
        if self.llm:
            n = self.llm
            lines.append(f"llm:       {n.get('llm_calls', 0)} calls ({n.get('llm_cached_calls', 0)} from the cache, "
                         f"{n.get('llm_failed_calls', 0)} more failed), "
                         f"{n.get('llm_prompt_tokens', 0)} prompt + {n.get('llm_completion_tokens', 0)} completion "
                         f"tokens, {n.get('llm_fallbacks', 0)} fallbacks to the source text")
        if self.embed:
            n = self.embed
            lines.append(f"embed:     {n.get('embed_requests', 0)} requests for {n.get('embed_texts', 0)} texts "
                         f"({n.get('embed_cached_texts', 0)} from the cache), {n.get('embed_tokens', 0)} tokens, "
                         f"{n.get('failed_documents', 0)} documents failed at embed")
        for title, groups in (("by content type", self.by_content_type), ("by strategy", self.by_strategy)):
            if groups:
                lines.append(f"{title}:")
                lines += [f"  {name:32s} " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
                          for name, counts in sorted(groups.items())]
        if self.failures:
            lines.append("top failure reasons:")
            lines += [f"  {count} x {etype} at {stage}: {message} (e.g. {uri})"
                      for etype, stage, count, uri, message in self.failures]
        lines += [
            f"chunks table:    {self.output}/chunks/ ({len(self.tables.get('chunks', []))} files)",
            f"documents table: {self.output}/documents/ ({len(self.tables.get('documents', []))} files)",
        ]
        if self.parents:
            lines.append(f"parents table:   {self.output}/parents/ ({self.parents} parents, "
                         f"{len(self.tables.get('parents', []))} files)")
        return "\n".join(lines)


def _groups(docs: List[dict], key: str) -> Dict[str, Dict[str, int]]:
    out: Dict[str, Counter] = {}
    for d in docs:
        out.setdefault(d[key] or "(unknown)", Counter())[d["status"]] += 1
    return {k: dict(v) for k, v in out.items()}


def _embed_totals(docs: List[dict]) -> Dict[str, int]:
    """The hosted-embedding counters added up, with the documents that failed at embed;
    empty when no document has them (a local model, no embedding, or an older output)."""
    if not any(d.get("embed_texts") is not None for d in docs):
        return {}
    totals = {k: sum(d.get(k) or 0 for d in docs) for k in EMBED_COLUMNS}
    totals["failed_documents"] = sum(1 for d in docs if d["status"] == "failed" and d["stage"] == "embed")
    return totals


def summarize(output: str, seconds: float, max_failures: str = "0") -> RunSummary:
    """Read the documents table of a finished run and count what happened."""
    output = output.rstrip("/")
    manifest = read_manifest(output)
    tables = {table: table_files(output, table, manifest) for table in TABLES if table in manifest["tables"]}
    columns = ["uri", "status", "chunk_count", "size_bytes", "content_type", "strategy", "stage", "error_type",
               "error_message", *LLM_COLUMNS, *EMBED_COLUMNS]
    table = read_table(output, "documents", columns=columns)
    docs = table.to_pylist() if table is not None else []
    status = Counter(d["status"] for d in docs)
    reasons: Dict[Tuple[str, str, str], List[dict]] = {}
    for d in docs:
        if d["status"] == "failed":
            reasons.setdefault(failure_cause(d), []).append(d)
    changes: Counter = Counter()
    if "changes" in manifest["tables"]:
        found = read_table(output, "changes", columns=["change"])
        changes.update(found.column("change").to_pylist() if found is not None else [])
    top = sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:TOP_FAILURES]
    return RunSummary(
        output=output, documents=len(docs), ok=status["ok"], empty=status["empty"], failed=status["failed"],
        chunks=sum(d["chunk_count"] or 0 for d in docs), bytes=sum(d["size_bytes"] or 0 for d in docs),
        seconds=seconds, tables=tables, by_content_type=_groups(docs, "content_type"),
        by_strategy=_groups([d for d in docs if d["status"] != "failed"], "strategy"),
        failures=[(etype, stage, len(ds), ds[0]["uri"], reason(ds[0]["error_message"], ds[0]["uri"]))
                  for (etype, stage, _), ds in top],
        max_failures=max_failures,
        llm={k: sum(d[k] or 0 for d in docs) for k in LLM_COLUMNS} if any(d["llm_calls"] is not None for d in docs)
        else {},
        embed=_embed_totals(docs),
        parents=int((manifest.get("rows") or {}).get("parents", 0) or 0),
        changes={c: changes[c] for c in CHANGES} if "changes" in manifest["tables"] else {},
    )
