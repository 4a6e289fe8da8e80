"""The strategy registry: every strategy name the Python API, the CLI and the spec accept.

It sits above everything it names (strategies, domain templates). Built-in strategies are
listed here explicitly; third-party ones register through the entry-point group
``beam_chunking.strategies`` (``name = "package.module:StrategyClass"``) and get the same CLI
and spec support as the built-ins, with no change here.

A strategy's options are its dataclass fields: the type and default come from the field, the
one line of help from the ``Args:`` entry of the class docstring, the unit from the class's
``unit_template``. :func:`options` reads them; the CLI flags, the spec validation, the
``strategies`` listing and the documentation's strategy tables are all derived from it.
"""
from __future__ import annotations

import dataclasses
import difflib
import re
import threading
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Dict, List, Optional, Type

from beam_chunking.domains import AcademicChunker, BookChunker, EmailChunker, LegalChunker, QAPairsChunker, ResumeChunker
from beam_chunking.errors import ConfigError
from beam_chunking.strategies import (ClusterSemanticChunker, CodeChunker, FixedSizeChunker, HierarchicalChunker,
                                      LateChunker, ParentChildChunker, PropositionChunker, RecursiveChunker,
                                      SemanticChunker, SentenceChunker, StructuralChunker, TokenChunker,
                                      TranscriptChunker)
from beam_chunking.strategies.base import Chunker
from beam_chunking.strategies.regions import check_page_boundaries

#: The entry-point group third-party strategies register under.
ENTRY_POINT_GROUP = "beam_chunking.strategies"
#: The strategy for documents of most types when the job names none (prose, Markdown, HTML,
#: PDF, Office ...; :mod:`beam_chunking.default_strategy` routes code and transcripts).
DEFAULT_STRATEGY = "structural"
#: The strategy option that the job sets for every strategy naming none (``JobConfig.llm``,
#: the ``--llm-*`` flags): it has no strategy flag of its own.
JOB_WIDE_OPTION = "llm"

BUILTIN: Dict[str, Type[Chunker]] = {
    "fixed": FixedSizeChunker,
    "recursive": RecursiveChunker,
    "token": TokenChunker,
    "sentence": SentenceChunker,
    "hierarchical": HierarchicalChunker,
    "structural": StructuralChunker,
    "code": CodeChunker,
    "semantic": SemanticChunker,
    "cluster_semantic": ClusterSemanticChunker,
    "late": LateChunker,
    "proposition": PropositionChunker,
    "parent_child": ParentChildChunker,
    "transcript": TranscriptChunker,
    "legal": LegalChunker,
    "book": BookChunker,
    "academic": AcademicChunker,
    "qa_pairs": QAPairsChunker,
    "email": EmailChunker,
    "resume": ResumeChunker,
}

_LOCK = threading.Lock()
_LOADED: Dict[str, Type[Chunker]] = {}


def _plugins() -> Dict[str, Type[Chunker]]:
    found: Dict[str, Type[Chunker]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in BUILTIN:
            raise ConfigError(f"plugin strategy {point.name!r} ({point.value}) would replace a built-in strategy")
        try:
            cls = point.load()
        except Exception as exc:
            raise ConfigError(f"plugin strategy {point.name!r} ({point.value}) cannot be loaded: {exc}") from exc
        if not (isinstance(cls, type) and issubclass(cls, Chunker) and dataclasses.is_dataclass(cls)):
            raise ConfigError(f"plugin strategy {point.name!r} ({point.value}) is not a Chunker dataclass")
        found[point.name] = cls
    return found


def registry() -> Dict[str, Type[Chunker]]:
    """Every registered strategy by name: the built-ins, then the plugins (loaded once)."""
    with _LOCK:
        if not _LOADED:
            _LOADED.update(BUILTIN)
            _LOADED.update(_plugins())
        return dict(_LOADED)


def get(name: str, **options: Any) -> Chunker:
    """Build the strategy registered as ``name`` with ``options``.

    Raises:
        ConfigError: unknown name, unknown option, or an invalid option value.
    """
    known = registry()
    cls = known.get(name)
    if cls is None:
        raise ConfigError(f"strategy {name!r} is not registered; choose one of {', '.join(sorted(known))}")
    try:
        strategy = cls(**options)
    except TypeError as exc:
        raise ConfigError(f"strategy {name!r}: {exc}") from None
    check_page_boundaries(strategy.page_boundaries, name)
    return strategy


@dataclass(frozen=True)
class Option:
    """One option of a strategy, as declared by its dataclass field and docstring."""

    name: str
    type: str
    default: Any
    help: str


_ARG = re.compile(r"^(\s+)(\w+)(?: \([^)]*\))?: (.*)$")


def docstring_args(cls: type) -> Dict[str, str]:
    """The ``Args:`` entries of ``cls``'s docstring (and its bases'), joined onto one line."""
    found: Dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        lines = (klass.__dict__.get("__doc__") or "").splitlines()
        inside, indent, current = False, None, None
        for line in lines:
            if line.strip() == "Args:":
                inside, indent, current = True, None, None
                continue
            if not inside:
                continue
            if not line.strip() or (line.strip().endswith(":") and _ARG.match(line) is None):
                inside = False
                continue
            m = _ARG.match(line)
            if m and (indent is None or len(m.group(1)) == indent):
                indent, current = len(m.group(1)), m.group(2)
                found[current] = m.group(3).strip()
            elif current:
                found[current] += " " + line.strip()
    return found


def _type_name(annotation: Any) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))
    return text.replace("typing.", "")


def options(cls: Type[Chunker]) -> List[Option]:
    """The options of strategy class ``cls``: its init fields, with their docstring help."""
    helps = docstring_args(cls)
    out = []
    # The options every strategy shares (keyword-only fields of the base) come last.
    for f in sorted(dataclasses.fields(cls), key=lambda f: f.kw_only is True):
        if not f.init or f.name.startswith("_"):
            continue
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
        out.append(Option(f.name, _type_name(f.type), default, helps.get(f.name, "")))
    return out


def unit_of(cls: Type[Chunker]) -> str:
    """The unit of ``cls``'s sizes with its default options (``"cl100k_base tokens"`` ...)."""
    return cls.unit_template.format(**{o.name: o.default for o in options(cls)})


def summary(cls: Type[Chunker]) -> str:
    """The first sentence of ``cls``'s docstring: what the strategy does (Markdown quoting)."""
    doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
    first = doc.split(". ")[0].rstrip(".") + "." if doc else ""
    return first.replace("``", "`")


def default_text(value: Any) -> str:
    """An option's default as the listing and the docs show it: long tuples and strings summarised,
    a nested strategy as its name and the options it changes."""
    if isinstance(value, tuple) and len(repr(value)) > 40:
        return f"{len(value)} built-in"
    if isinstance(value, Chunker):  # a nested strategy: its name and the options it changes
        changed = [f"{f.name}={getattr(value, f.name)!r}" for f in dataclasses.fields(value)
                   if f.init and f.default is not dataclasses.MISSING and getattr(value, f.name) != f.default]
        return f"{value.name}({', '.join(changed)})"
    if isinstance(value, str) and len(value) > 40:
        return "built-in"
    return repr(value)


def markdown_table(names: Optional[List[str]] = None) -> str:
    """The strategy table of the docs: name, class, unit, options with defaults, what it does."""
    known = registry()
    rows = ["| name | class | unit | options (defaults) | what it does |", "|---|---|---|---|---|"]
    for name in names or list(BUILTIN):
        cls = known[name]
        opts = ", ".join(f"`{o.name}={default_text(o.default)}`" for o in options(cls))
        rows.append(f"| `{name}` | `{cls.__name__}` | {unit_of(cls)} | {opts} | {summary(cls)} |")
    return "\n".join(rows)


def listing(names: Optional[List[str]] = None) -> str:
    """The ``beam-chunking strategies [NAME ...]`` text: each strategy (those named, else all),
    its unit and every option with its default and help.

    Raises:
        ConfigError: a name that is no strategy, with the closest one.
    """
    known = registry()
    for name in names or ():
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; choose one of {', '.join(sorted(known))}"
            raise ConfigError(f"strategy {name!r} is not registered{hint}")
    blocks = []
    for name, cls in sorted((n, known[n]) for n in (names or known)):
        unit = unit_of(cls)
        size = "no size limit" if unit == "unbounded" else f"sizes in {unit}"
        lines = [f"{name}  ({cls.__name__}; {size})", f"    {summary(cls)}"]
        for o in options(cls):
            if o.name == JOB_WIDE_OPTION:
                lines.append("    --llm-OPTION VALUE: the chat model (--llm-model, --llm-base-url ...; "
                             "'beam-chunking run --help' lists them)")
                continue
            lines.append(f"    --{o.name.replace('_', '-')} {default_text(o.default)}: {o.help}".rstrip(": "))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def __getattr__(name: str):
    if name == "REGISTRY":
        return registry()
    raise AttributeError(f"module 'beam_chunking.registry' has no attribute {name!r}")


if __name__ == "__main__":  # python -m beam_chunking.registry: the strategy table (python -m beam_chunking.docs writes it)
    print(markdown_table())
