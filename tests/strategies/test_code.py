"""CodeChunker: syntax boundaries from ast / tree-sitter / heuristics, within a character ceiling."""
from __future__ import annotations

import argparse
import ast

import pytest
from hypothesis import given, strategies as st

from beam_chunking.errors import ConfigError
from beam_chunking.parsers import parse
from beam_chunking.registry import get
from beam_chunking.strategies import CodeChunker
from beam_chunking.strategies.code import available_grammars
from beam_chunking.types import ParsedDocument, Section
from tests.helpers import adversarial_text, check_chunks, check_pickle, check_properties
from tests.parsers.fixtures import document

REAL = open(argparse.__file__, encoding="utf-8").read()  # a real ~100 KB Python module


def code_doc(src: str, language: str = "python") -> ParsedDocument:
    return ParsedDocument("d", f"x.{language}", f"text/x-{language}", src,
                          (Section(0, len(src), kind="code", metadata={"language": language}),))


def function_spans(src: str):
    tree = ast.parse(src)
    starts = [0]
    for line in src.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            line = src[starts[first - 1]:starts[first]]
            s = starts[first - 1] + len(line) - len(line.lstrip())
            yield node.name, s, len(src[:starts[node.end_lineno]].rstrip())


def test_defaults_follow_the_seed():
    c = CodeChunker()
    assert (c.max_chunk_size, c.overlap, c.language, c.parser) == (1500, 0, None, "auto")


@pytest.mark.parametrize("parser", ["auto", "tree-sitter"])
def test_real_module_no_function_that_fits_is_split(parser):
    budget = 1500
    chunks = CodeChunker(max_chunk_size=budget, parser=parser).chunk_document(code_doc(REAL))
    check_chunks(REAL, chunks, limit=budget)
    fitting = [(n, s, e) for n, s, e in function_spans(REAL) if e - s <= budget]
    assert len(fitting) > 100
    split = [n for n, s, e in fitting if not any(c.start <= s and e <= c.end for c in chunks)]
    assert split == []
    assert {c.metadata["parser"] for c in chunks} == {"ast" if parser == "auto" else "tree-sitter"}
    scopes = {c.metadata.get("scope") for c in chunks}
    assert "ArgumentParser" in scopes and any(s and s.startswith("ArgumentParser.") for s in scopes)


def test_a_def_inside_a_string_does_not_fool_the_parsers():
    src = 'def real():\n    s = """\ndef fake():\n    pass\n"""\n    return s\n\n\ndef other():\n    return 2\n'
    for parser in ("auto", "tree-sitter"):
        chunks = CodeChunker(max_chunk_size=60, parser=parser).chunk_document(code_doc(src))
        assert [c.text for c in chunks][0].startswith("def real():\n    s = \"\"\"\ndef fake()")
        assert all(c.metadata.get("scope") != "fake" for c in chunks)
    # the seed's heuristic matching is fooled: that is why the parsers exist
    heuristic = CodeChunker(max_chunk_size=60, parser="heuristic").chunk_document(code_doc(src))
    assert any(c.text.startswith("def fake") for c in heuristic)


def test_methods_scope_symbols_and_non_ascii_offsets():
    src = ('# Ünïcode façade — 日本語\nclass Café:\n    """Dœs things."""\n\n    def größe(self):\n        return "🍰" * 3\n\n'
           '    def 名前(self):\n        return "名"\n')
    for parser in ("auto", "tree-sitter", "heuristic"):
        chunks = CodeChunker(max_chunk_size=60, parser=parser).chunk_document(code_doc(src))
        check_chunks(src, chunks, limit=60)
        scopes = [c.metadata.get("scope") for c in chunks]
        assert "Café.größe" in scopes and "Café.名前" in scopes, (parser, scopes)


SAMPLES = {
    "javascript": ("class Greeter {\n  greet(name) {\n    return `hi ${name}`;\n  }\n}\n\nfunction main() {\n  return new Greeter().greet('x');\n}\n", "Greeter.greet"),
    "typescript": ("interface Named { name: string }\n\nclass Box<T> {\n  get(v: T): T {\n    return v;\n  }\n}\n", "Box.get"),
    "java": ("public class App {\n    public int add(int a, int b) {\n        return a + b;\n    }\n}\n", "App.add"),
    "go": ("package main\n\nfunc Add(a int, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n\tAdd(1, 2)\n}\n", "Add"),
    "rust": ("struct P;\n\nimpl P {\n    fn area(&self) -> u32 {\n        1\n    }\n}\n", "P.area"),
    "ruby": ("class Dog\n  def bark\n    puts 'woof'\n  end\nend\n", "Dog.bark"),
    "csharp": ("namespace N {\n  public class C {\n    public int M() {\n      return 1;\n    }\n  }\n}\n", "N.C.M"),
    "cpp": ("int add(int a, int b) {\n  return a + b;\n}\n\nclass K {\n public:\n  int v() { return 1; }\n};\n", "add"),
    "php": ("<?php\nclass U {\n  public function name() {\n    return 'u';\n  }\n}\n", "U.name"),
    "swift": ("class V {\n  func f() -> Int {\n    return 1\n  }\n}\n", "V.f"),
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_tree_sitter_grammars(language):
    src, scope = SAMPLES[language]
    assert language in available_grammars()
    chunks = CodeChunker(max_chunk_size=45).chunk_document(code_doc(src, language))
    check_chunks(src, chunks, limit=45)
    assert {c.metadata["parser"] for c in chunks} == {"tree-sitter"}
    named = {c.metadata.get("scope") for c in chunks} | {n for c in chunks for n in c.metadata.get("symbols", [])}
    assert scope in named, [(c.metadata.get("scope"), c.metadata.get("symbols")) for c in chunks]
    assert all(c.metadata["language"] == language for c in chunks)


def test_language_detection_from_the_parser_and_unknown_languages():
    doc = parse(document("src/tool.go", b"package main\n\nfunc A() {}\n\nfunc B() {}\n"))
    assert {c.metadata["language"] for c in CodeChunker(max_chunk_size=20).chunk_document(doc)} == {"go"}
    plain = CodeChunker(max_chunk_size=12).chunk("a = 1\nb = 2\n\nc = 3\n")
    assert all("language" not in c.metadata for c in plain) and [c.text for c in plain] == ["a = 1\nb = 2", "c = 3"]
    assert CodeChunker(language="python", max_chunk_size=30).chunk("def a():\n    return 1\n")[0].metadata["scope"] == "a"


def test_a_line_over_the_budget_is_cut_at_whitespace():
    line = "x = [" + ", ".join(f"'item{k}'" for k in range(400)) + "]\n"
    chunks = CodeChunker(max_chunk_size=100).chunk(line)
    check_chunks(line, chunks, limit=100)
    assert len(chunks) > 30 and all(line[c.end] == " " for c in chunks[:-1])


def test_overlap_is_whole_lines_inside_the_ceiling():
    chunks = CodeChunker(max_chunk_size=120, overlap=40).chunk_document(code_doc(REAL[:20000]))
    check_chunks(REAL[:20000], chunks, limit=120)
    overlapping = [b for a, b in zip(chunks, chunks[1:]) if b.start < a.end]
    assert overlapping and all(REAL[b.start - 1] in "\n " for b in overlapping)


def test_validation_registry_and_pickle():
    with pytest.raises(ConfigError, match="overlap"):
        CodeChunker(max_chunk_size=10, overlap=10)
    with pytest.raises(ConfigError, match="language='cobol'"):
        CodeChunker(language="cobol")
    with pytest.raises(ConfigError, match="parser"):
        CodeChunker(parser="regex")
    assert get("code", max_chunk_size=900) == CodeChunker(max_chunk_size=900)
    check_pickle(CodeChunker(language="python"), REAL[:3000])


@given(adversarial_text, st.sampled_from([16, 64, 400]), st.sampled_from([None, "python", "javascript"]))
def test_bounded_exact_and_lossless(text, budget, language):
    check_properties(CodeChunker(max_chunk_size=budget, language=language), text, budget)
