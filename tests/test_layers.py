"""The package's import layers, read from the source: every import, lazy ones included.

Each module of ``beam_chunking`` is parsed with :mod:`ast`; every ``import`` and
``from ... import`` anywhere in it (inside functions too) is resolved, relative imports
included. A module may import its own layer unit and any lower layer, never a higher one;
units must not import each other in a cycle; modules must not import each other in a cycle;
no unit imports another unit's private (``_name``) module; Beam is imported only by the Beam
layer. The top-level ``beam_chunking/__init__.py`` is the facade: it may import anything,
but the Beam layer and the registry only inside functions (lazily); nothing in the package
imports it, not even for a constant (the version lives in ``beam_chunking/version.py``).
"""
from __future__ import annotations

import ast
import inspect
import os
from dataclasses import fields
from typing import Dict, List, Set, Tuple

import beam_chunking
from beam_chunking.strategies.base import make_chunk
from beam_chunking.types import Chunk

ROOT = os.path.dirname(beam_chunking.__file__)
TOP = "beam_chunking"

#: Lowest first. A unit is a top-level module or subpackage of beam_chunking.
LAYERS: Tuple[Tuple[str, ...], ...] = (
    ("errors", "types", "ids", "version"),  # values, errors and the version: import nothing of ours
    ("text",),  # the text toolkit: spans, sentences, headings, packing, tokens
    ("sizing",),  # sizers; counts spans with text.tokens
    ("schema", "rowcheck"),  # the Parquet schemas; checking rows against them
    ("parsers", "embeddings", "llm"),  # llm: the chat-model client and its cache
    ("strategies",),
    ("refiners", "domains"),
    ("registry",),  # names every strategy and template
    ("default_strategy",),  # the strategy per content type when a job names none
    ("config",),  # JobConfig: the typed job that the spec, the CLI and ChunkFiles share
    ("transforms",),  # Beam
    ("pipelines",),  # Beam: options, spec, runs, CLI
    ("docs",),  # the documentation's generated blocks, rendered from every layer below
)
LEVEL: Dict[str, int] = {unit: k for k, layer in enumerate(LAYERS) for unit in layer}
BEAM_UNITS = {"transforms", "pipelines"}


def _modules() -> Dict[str, str]:
    """Dotted module name -> file path, for every module of the package."""
    out = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(folder, name), os.path.dirname(ROOT))[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join(rel)] = os.path.join(folder, name)
    return out


MODULES = _modules()


def _imports(module: str, path: str) -> List[Tuple[str, bool]]:
    """``(imported module, at module level)`` for every import statement in the file."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    found: List[Tuple[str, bool]] = []
    for node in ast.walk(tree):
        eager = id(node) in top_level
        if isinstance(node, ast.Import):
            found.extend((alias.name, eager) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in MODULES else target, eager))
    return found


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else TOP


IMPORTS = {m: _imports(m, p) for m, p in MODULES.items()}


def _internal(module: str) -> List[Tuple[str, bool]]:
    return [(t, eager) for t, eager in IMPORTS[module] if t == TOP or t.startswith(TOP + ".")]


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_walk_sees_lazy_and_relative_imports():
    lazy = [t for t, eager in IMPORTS[TOP] if not eager]
    assert "beam_chunking.transforms" in lazy  # inside __getattr__
    assert MODULES["beam_chunking.text.spans"].endswith(os.path.join("text", "spans.py"))
    assert all(("beam_chunking.text.spans", True) in IMPORTS[m] for m in ("beam_chunking.text.sentences",))


def test_an_import_of_the_package_root_counts_as_one(tmp_path):
    """``from beam_chunking import __version__`` runs the facade, which imports most layers."""
    path = tmp_path / "lower.py"
    path.write_text("def f():\n    from beam_chunking import __version__\n    import beam_chunking\n")
    assert _imports("beam_chunking.text.lower", str(path)) == [(TOP, False), (TOP, False)]


def test_every_unit_has_a_layer():
    units = {_unit(m) for m in MODULES} - {TOP}
    assert units - set(LEVEL) == set(), "add the new module or package to LAYERS"


def test_no_import_from_a_lower_layer_to_a_higher_one():
    bad = []
    for module in MODULES:
        unit = _unit(module)
        for target, eager in _internal(module):
            dest = _unit(target)
            if unit == TOP:
                if eager and dest in ("registry", "config", *BEAM_UNITS):
                    bad.append(f"{module} imports {target} at import time (import it lazily)")
                continue
            if dest == TOP or LEVEL[dest] > LEVEL[unit]:
                bad.append(f"{module} ({unit}, layer {LEVEL[unit]}) imports {target} "
                           f"({dest}, layer {LEVEL.get(dest, 'top')})")
    assert bad == []


def test_no_cycle_between_units_or_modules():
    units: Dict[str, Set[str]] = {}
    modules: Dict[str, Set[str]] = {}
    for module in MODULES:
        for target, _ in _internal(module):
            if _unit(module) != _unit(target):
                units.setdefault(_unit(module), set()).add(_unit(target))
            if target != module:
                modules.setdefault(module, set()).add(target)
    assert _cycles(units) == []
    assert _cycles(modules) == []


def test_no_unit_imports_another_units_private_module():
    bad = []
    for module in MODULES:
        for target, _ in _internal(module):
            private = any(part.startswith("_") for part in target.split(".")[1:])
            if private and _unit(target) != _unit(module):
                bad.append(f"{module} imports {target}")
    assert bad == []


def test_beam_is_imported_only_by_the_beam_layer():
    bad = [f"{m} imports {t}" for m in MODULES for t, _ in IMPORTS[m]
           if (t == "apache_beam" or t.startswith("apache_beam.")) and _unit(m) not in BEAM_UNITS]
    assert bad == []


def test_chunks_are_built_in_one_place():
    """Only :func:`make_chunk` and :func:`make_chunks` call ``Chunk(...)`` or ``Chunk.of_span`` (and the rebuilding of
    stored chunks); the rest call them."""

    class Calls(ast.NodeVisitor):
        def __init__(self, module: str):
            self.where = [module]
            self.found: Set[str] = set()

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            self.where.append(node.name)
            self.generic_visit(node)
            self.where.pop()

        def visit_Call(self, node: ast.Call) -> None:
            func = node.func
            if (isinstance(func, ast.Name) and func.id == "Chunk" or isinstance(func, ast.Attribute)
                    and func.attr == "of_span" and isinstance(func.value, ast.Name) and func.value.id == "Chunk"):
                self.found.add(".".join(self.where))
            self.generic_visit(node)

    found: Set[str] = set()
    for module, path in MODULES.items():
        visitor = Calls(module)
        visitor.visit(ast.parse(open(path, encoding="utf-8").read(), path))
        found |= visitor.found
    # A chunk read back from a vector store has no document text to cut: rebuilt in one place.
    assert found == {"beam_chunking.strategies.base.make_chunk", "beam_chunking.strategies.base.make_chunks",
                     "beam_chunking.transforms.rag._stored_chunk"}
    # Both pass Chunk's fields positionally: make_chunk's parameters follow their order.
    params = list(inspect.signature(make_chunk).parameters)
    assert [f.name for f in fields(Chunk)] == ["document_id", *params[1:4], "text", *params[4:8]]
