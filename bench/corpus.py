"""Build the benchmark corpus from text every Python install has: the stdlib sources.

Writes ``bench/corpus/docs/`` (20 MB: the stdlib's UTF-8 text files of at most 64 KB, tests
and their data included, in a fixed order, as ``.txt``; on Python 3.11 that is about 1,900
distinct files, and the first ones are repeated to reach 20 MB, about 2,000 documents) and ``bench/corpus/prose-50k.txt`` (50 KB of prose-like text made of
the stdlib's docstrings). Deterministic for a given Python version.
"""
from __future__ import annotations

import ast
import os
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


TEXT_EXTENSIONS = {"py", "txt", "rst", "html", "xml", "cfg", "ini", "toml", "json", "csv", "md"}
MAX_DOC_BYTES = 64_000


def stdlib_files():
    """Text files of the stdlib (sources, tests, their data), at most 64 KB each, sorted."""
    root = sysconfig.get_paths()["stdlib"]
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("site-packages", "__pycache__"))
        for f in sorted(files):
            path = os.path.join(d, f)
            if f.rsplit(".", 1)[-1] in TEXT_EXTENSIONS and os.path.getsize(path) <= MAX_DOC_BYTES:
                yield path


def main(target_bytes: int = 20_000_000) -> None:
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
            for node in ast.walk(ast.parse(text)) if path.endswith(".py") else ():
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
        if total >= target_bytes:
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
    print(f"{n} documents ({n - k} distinct), {total / 1e6:.1f} MB in {docs}; "
          f"prose-50k.txt from {len(prose)} docstrings")


if __name__ == "__main__":
    main()
