"""Build the benchmark corpus from text every Python install has: the stdlib sources.

Writes ``bench/corpus/docs/`` (about 2,000 documents, about 20 MB: stdlib ``.py`` files, in a
fixed order, as ``.txt``) and ``bench/corpus/prose-50k.txt`` (50 KB of prose-like text made of
the stdlib's docstrings). Deterministic for a given Python version.
"""
from __future__ import annotations

import ast
import os
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def stdlib_files():
    root = sysconfig.get_paths()["stdlib"]
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("site-packages", "__pycache__", "test", "tests", "idlelib"))
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(d, f)


def main(target_docs: int = 2000, target_bytes: int = 20_000_000) -> None:
    docs = os.path.join(OUT, "docs")
    os.makedirs(docs, exist_ok=True)
    total, n, prose = 0, 0, []
    for path in stdlib_files():
        data = open(path, "rb").read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
                    doc = ast.get_docstring(node)
                    if doc and len(doc) > 200:
                        prose.append(doc)
        except SyntaxError:
            pass
        with open(os.path.join(docs, f"{n:05d}.txt"), "wb") as f:
            f.write(data)
        total += len(data)
        n += 1
        if n >= target_docs and total >= target_bytes:
            break
    # Repeat the corpus when the stdlib is smaller than the target.
    k = 0
    while total < target_bytes:
        src = os.path.join(docs, f"{k:05d}.txt")
        data = open(src, "rb").read()
        with open(os.path.join(docs, f"{n:05d}.txt"), "wb") as f:
            f.write(data)
        total, n, k = total + len(data), n + 1, k + 1
    text = "\n\n".join(prose)
    with open(os.path.join(OUT, "prose-50k.txt"), "w", encoding="utf-8") as f:
        f.write(text[:50_000])
    print(f"{n} documents, {total / 1e6:.1f} MB in {docs}; prose-50k.txt from {len(prose)} docstrings")


if __name__ == "__main__":
    main()
