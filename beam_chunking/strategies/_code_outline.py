"""Where source code may be cut: scored line starts and named definitions, from a real parser.

Three ways to outline a file, best first:

- Python: the standard library's ``ast`` (always available).
- Other languages: tree-sitter with the language's grammar wheel (``pip install
  "beam-chunking[code]"``); grammars are packaged, nothing downloads.
- Otherwise (no grammar, unknown language, or a file the parser rejects): per-language
  regular expressions for definition lines plus indentation, as a heuristic
  splitter does (a ``\\ndef`` inside a string can fool this path, never the others).

A statement that starts at nesting depth ``d`` scores ``1 + d`` (top-level definitions are
the strongest boundaries, then methods, then statements inside functions); comment lines
directly above a statement (and decorators) start with it. Blank-line boundaries and plain
line starts come last. Offsets are ``str`` code points: syntax trees are only asked for line
numbers, never byte offsets.
"""
from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from beam_chunking.text.spans import line_starts, trim_span

#: Statement depths score 1 + depth (unbounded); these two are the generic line boundaries.
BLANK_SCORE, LINE_SCORE = 10_000, 10_001
#: Heuristic outlines score a non-indented paragraph start like a top-level statement.
_TOP_SCORE = 1
_LF = re.compile(r"\r?\n")

#: language -> (module, factory attribute) of its tree-sitter grammar wheel.
GRAMMARS: Dict[str, Tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_tsx"),
    "java": ("tree_sitter_java", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "c": ("tree_sitter_cpp", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "swift": ("tree_sitter_swift", "language"),
}

_MODIFIERS = r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|override|virtual|async|partial|open|fileprivate|export|default|pub(?:\([^)]*\))?)\s+)*"
#: language -> regex of a definition line (group ``name``), for the heuristic path.
DEFINITION_LINES: Dict[str, "re.Pattern[str]"] = {
    lang: re.compile(p) for lang, p in {
        "python": r"^\s*(?:async\s+def|def|class)\s+(?P<name>\w+)",
        "javascript": rf"^\s*{_MODIFIERS}(?:function\*?|class)\s+(?P<name>[\w$]+)|^\s*{_MODIFIERS}(?:const|let|var)\s+(?P<arrow>[\w$]+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*=>",
        "typescript": rf"^\s*{_MODIFIERS}(?:function\*?|class|interface|enum|type)\s+(?P<name>[\w$]+)|^\s*{_MODIFIERS}(?:const|let|var)\s+(?P<arrow>[\w$]+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*=>",
        "java": rf"^\s*{_MODIFIERS}(?:class|interface|enum|record)\s+(?P<name>\w+)|^\s*{_MODIFIERS}[\w<>\[\],.? ]+\s+(?P<method>\w+)\s*\([^;]*$",
        "csharp": rf"^\s*{_MODIFIERS}(?:class|interface|enum|record|struct|namespace)\s+(?P<name>[\w.]+)|^\s*{_MODIFIERS}[\w<>\[\],.? ]+\s+(?P<method>\w+)\s*\([^;]*$",
        "go": r"^func\s+(?:\([^)]*\)\s*)?(?P<name>\w+)|^type\s+(?P<type>\w+)",
        "rust": rf"^\s*{_MODIFIERS}(?:async\s+)?(?:fn|struct|enum|trait|mod|impl(?:<[^>]*>)?)\s+(?P<name>\w+)",
        "ruby": r"^\s*(?:def|class|module)\s+(?P<name>[\w.:?!]+)",
        "cpp": r"^\s*(?:class|struct|namespace)\s+(?P<name>\w+)|^[\w:<>*&\s]+?\s+[*&]?(?P<func>[\w:~]+)\s*\([^;]*$",
        "c": r"^\s*(?:struct)\s+(?P<name>\w+)|^[\w*\s]+?\s+[*]?(?P<func>\w+)\s*\([^;]*$",
        "php": rf"^\s*{_MODIFIERS}(?:function|class|interface|trait)\s+(?P<name>\w+)",
        "swift": rf"^\s*{_MODIFIERS}(?:func|class|struct|enum|protocol|extension)\s+(?P<name>\w+)",
    }.items()
}
_DEFINITION_WORDS = ("function", "method", "class", "struct", "interface", "impl", "trait", "module",
                     "namespace", "enum", "protocol", "constructor", "extension")


@dataclass(frozen=True)
class Outline:
    """Line starts (ending with the span's end), their scores, and definitions.

    ``definitions`` holds ``(start, end, qualified_name)`` in code points; ``parser`` says
    which path produced it (``ast``, ``tree-sitter`` or ``heuristic``).
    """

    lines: List[int]
    scores: List[int]
    definitions: List[Tuple[int, int, str]]
    parser: str


def _blank(text: str, lines: Sequence[int], k: int) -> bool:
    return not text[lines[k]:lines[k + 1]].strip()


def _base_scores(text: str, lines: Sequence[int]) -> List[int]:
    n = len(lines) - 1
    scores = [LINE_SCORE] * n
    for k in range(1, n):
        if _blank(text, lines, k - 1) and not _blank(text, lines, k):
            scores[k] = BLANK_SCORE
    return scores


def _mark(text: str, lines: Sequence[int], scores: List[int], row: int, depth: int, comment: str) -> int:
    """Score the statement starting on ``row`` (0-based), moved up over comments above it."""
    n = len(lines) - 1
    if not 0 <= row < n:
        return row
    while row > 0:
        above = text[lines[row - 1]:lines[row]].strip()
        if not above or not above.startswith(comment):
            break
        row -= 1
    scores[row] = min(scores[row], 1 + depth)
    return row


def _mark_after(text: str, lines: Sequence[int], scores: List[int], last_row: int, depth: int) -> None:
    """Score the first non-blank line after a definition like its start.

    Comments after a definition (separated from the next one by a blank line) then form a
    piece of their own instead of making the definition's piece too large to keep whole.
    """
    n = len(lines) - 1
    row = last_row + 1
    while row < n and _blank(text, lines, row):
        row += 1
    if row < n:
        scores[row] = min(scores[row], 1 + depth)


def _python(text: str, start: int, end: int) -> Optional[Outline]:
    lines = line_starts(text, start, end)
    try:
        tree = ast.parse(text[start:end])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    scores = _base_scores(text, lines)
    defs: List[Tuple[int, int, str]] = []
    n = len(lines) - 1

    def walk(body, depth: int, prefix: str) -> None:
        for node in body:
            if not isinstance(node, ast.stmt):
                continue
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
            row = _mark(text, lines, scores, first, depth, "#")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + node.name
                last = min(n, node.end_lineno or node.lineno)
                defs.append((*trim_span(text, lines[row], lines[last]), name))
                _mark_after(text, lines, scores, last - 1, depth)
                walk(node.body, depth + 1, name + ".")
                continue
            for field in ("body", "orelse", "finalbody"):
                walk(getattr(node, field, []) or [], depth + 1, prefix)
            for handler in getattr(node, "handlers", []) or []:
                walk(handler.body, depth + 1, prefix)
            for case in getattr(node, "cases", []) or []:
                walk(case.body, depth + 1, prefix)

    walk(tree.body, 0, "")
    return Outline(lines, scores, defs, "ast")


_PARSERS: Dict[str, object] = {}


def _ts_parser(language: str):
    if language in _PARSERS:
        return _PARSERS[language]
    parser = None
    grammar = GRAMMARS.get(language)
    if grammar is not None:
        try:
            tree_sitter = importlib.import_module("tree_sitter")
            module = importlib.import_module(grammar[0])
            parser = tree_sitter.Parser(tree_sitter.Language(getattr(module, grammar[1])()))
        except (ImportError, AttributeError, ValueError, TypeError):
            parser = None
    _PARSERS[language] = parser
    return parser


def _ts_name(node, source: bytes) -> str:
    for field in ("name", "declarator", "type"):
        child = node.child_by_field_name(field)
        while child is not None and field == "declarator" and child.child_by_field_name("declarator") is not None:
            child = child.child_by_field_name("declarator")
        if child is not None:
            raw = source[child.start_byte:child.end_byte].decode("utf-8", "replace")
            return raw.split("(", 1)[0].strip()
    return ""


def _tree_sitter(language: str, text: str, start: int, end: int) -> Optional[Outline]:
    parser = _ts_parser(language)
    if parser is None:
        return None
    source = text[start:end].encode("utf-8")
    tree = parser.parse(source)
    if tree.root_node.has_error and tree.root_node.child_count == 0:
        return None
    lines = line_starts(text, start, end, _LF)  # tree-sitter rows count "\n" only
    scores = _base_scores(text, lines)
    defs: List[Tuple[int, int, str]] = []
    n = len(lines) - 1
    comment = "#" if language in ("python", "ruby") else "/"

    def walk(nodes, depth: int, prefix: str) -> None:
        for node in nodes:
            row = _mark(text, lines, scores, node.start_point.row, depth, comment)
            target = node
            for wrapper in ("definition", "declaration"):  # decorated_definition, export_statement
                inner = target.child_by_field_name(wrapper)
                if inner is not None:
                    target = inner
            if not any(word in target.type for word in _DEFINITION_WORDS):
                continue
            name = _ts_name(target, source)
            qual = prefix + name if name else prefix.rstrip(".")
            last = min(n, node.end_point.row + 1)
            if name:
                defs.append((*trim_span(text, lines[row], lines[last]), qual))
            _mark_after(text, lines, scores, last - 1, depth)
            body = target.child_by_field_name("body")
            if body is not None:
                walk(body.named_children, depth + 1, (qual + ".") if name else prefix)

    walk(tree.root_node.named_children, 0, "")
    return Outline(lines, scores, defs, "tree-sitter")


def _heuristic(language: str, text: str, start: int, end: int) -> Outline:
    lines = line_starts(text, start, end)
    scores = _base_scores(text, lines)
    pattern = DEFINITION_LINES.get(language)
    defs: List[Tuple[int, int, str]] = []
    n = len(lines) - 1
    opened: List[Tuple[int, int, str]] = []  # (indent, row, qualified name) of open definitions
    for k in range(n):
        line = text[lines[k]:lines[k + 1]]
        if not line.strip():
            continue
        expanded = line.expandtabs(4)
        indent = len(expanded) - len(expanded.lstrip())
        while opened and indent <= opened[-1][0] and not line.lstrip().startswith(("}", "end", ")")):
            i, row, qual = opened.pop()
            defs.append((*trim_span(text, lines[row], lines[k]), qual))
        if indent == 0 and k and scores[k] == BLANK_SCORE:
            scores[k] = _TOP_SCORE
        m = pattern.match(line) if pattern is not None else None
        if m is None:
            continue
        name = next((g for g in m.groups() if g), "")
        row = _mark(text, lines, scores, k, indent // 4, "#" if language in ("python", "ruby") else "/")
        qual = ".".join([q.rsplit(".", 1)[-1] for _, _, q in opened] + [name]) if name else ""
        if qual:
            opened.append((indent, row, qual))
    for _, row, qual in opened:
        defs.append((*trim_span(text, lines[row], lines[n]), qual))
    defs.sort()
    return Outline(lines, scores, defs, "heuristic")


def outline(language: str, text: str, start: int, end: int, parser: str = "auto") -> Outline:
    """Outline ``text[start:end]`` written in ``language``.

    Args:
        parser: ``"auto"`` (ast for Python, tree-sitter where a grammar is installed, else
            heuristic), ``"tree-sitter"`` (tree-sitter, else heuristic) or ``"heuristic"``.
    """
    found: Optional[Outline] = None
    if parser == "auto" and language == "python":
        found = _python(text, start, end)
    if found is None and parser in ("auto", "tree-sitter"):
        found = _tree_sitter(language, text, start, end)
    return found if found is not None else _heuristic(language, text, start, end)
