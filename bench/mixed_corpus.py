"""Build the mixed-size corpus of ``bench/throughput.py`` from text already on the machine.

    python bench/mixed_corpus.py [--per-bin 16] [--small-per-bin 100]

Offline and deterministic for a given machine (same files in, same corpus out). Sources:
Python's standard library, this venv's site-packages and ``/usr/share/doc`` (``.gz`` files
decompressed), UTF-8 only, duplicates (same bytes) dropped. Writes ``bench/corpus/mixed-sizes/``:

- ``mixed/``: prose (``.txt``, ``.rst``, ``.md``, Debian changelogs and copyright files) and
  code (``.py``, ``.c``, ``.h``, ``.js`` ...) files of 1 KB to 1 MB, log-uniform: ``--per-bin``
  files in each of the ten doubling size bins 1-2 KB ... 512 KB-1 MB, half prose, half code
  (about 24 MB at 16 per bin). HTML, JSON and XML are left out: their parsed text is not the
  file's text, so a plain loop and the pipeline would chunk different strings;
- ``small/``: ``--small-per-bin`` files in each bin of 1-16 KB, half prose, half code;
- ``cjk/``: real Chinese, Japanese and Korean text: one document per gettext catalog of
  ``/usr/share/locale/{zh_CN,zh_TW,ja,ko}`` (its translated messages in which CJK characters
  dominate, one paragraph each), plus the UTF-8 samples of the stdlib's ``test/cjkencodings``;
- ``manifest.json``: every file's group, kind, size and source path (``prose`` and ``code``
  are the two halves of ``mixed``).

Which file lands in a bin is decided by the SHA-1 of its source path, not by the walk order,
so each bin samples the whole machine rather than the first folder.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import struct
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "mixed-sizes")
PROSE = {"txt", "rst", "md", ""}
CODE = {"py", "pyi", "pyx", "c", "h", "cpp", "js", "sh"}
BINS = 10  # doubling bins from 1 KiB: [1, 2), [2, 4) ... [512, 1024) KiB
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def candidates():
    """``(source path, kind, extension)`` of every file that may qualify, in a fixed order."""
    paths = sysconfig.get_paths()
    for root in dict.fromkeys([paths["stdlib"], paths["purelib"], "/usr/share/doc"]):
        for folder, dirs, files in os.walk(root):
            skip = {"__pycache__", "site-packages"} if root == paths["stdlib"] else {"__pycache__"}
            dirs[:] = sorted(d for d in dirs if d not in skip)
            for name in sorted(files):
                path = os.path.join(folder, name)
                inner = name[:-3] if name.endswith(".gz") else name
                ext = inner.rsplit(".", 1)[-1].lower() if "." in inner else ""
                ext = "" if ext == "debian" else ext  # changelog.Debian
                if ext == "" and root != "/usr/share/doc":
                    continue  # RECORD, WHEEL, LICENSE ... in site-packages: metadata, not documents
                kind = "prose" if ext in PROSE else "code" if ext in CODE else None
                if kind and not os.path.islink(path) and 500 < os.path.getsize(path) <= 1 << 20:
                    yield path, kind, ext or "txt"


def read_text(path):
    try:
        data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return None


def size_bin(nbytes: int):
    b = (nbytes >> 10).bit_length() - 1  # 1-2 KiB -> 0
    return b if 0 <= b < BINS else None


def pick(per_bin: int, max_bin: int):
    """``{(bin, kind): [(path, ext, text)]}``: ``per_bin // 2`` files of each kind per size bin."""
    ranked = sorted(candidates(), key=lambda c: hashlib.sha1(c[0].encode()).hexdigest())
    want, seen, out = per_bin // 2, set(), {}
    for path, kind, ext in ranked:
        guess = None if path.endswith(".gz") else size_bin(os.path.getsize(path))
        if guess is not None and (guess >= max_bin or len(out.get((guess, kind), ())) >= want):
            continue  # decided by the size on disk, without reading the file
        text = read_text(path)
        b = None if text is None else size_bin(len(text.encode()))
        if b is None or b >= max_bin or len(out.get((b, kind), ())) >= want:
            continue
        digest = hashlib.sha1(text.encode()).digest()
        if digest not in seen:
            seen.add(digest)
            out.setdefault((b, kind), []).append((path, ext, text))
    return out


def mo_messages(path):
    """Translated strings of a gettext ``.mo`` catalog (GNU format; header entry skipped)."""
    data = open(path, "rb").read()
    order = "<" if data[:4] == b"\xde\x12\x04\x95" else ">"
    _, count, _, table = struct.unpack(order + "4I", data[4:20])
    for k in range(1, count):
        length, offset = struct.unpack(order + "2I", data[table + 8 * k: table + 8 * k + 8])
        yield data[offset: offset + length]


def cjk_documents():
    """``(source, text)``: one document per UTF-8 CJK catalog, then the stdlib's samples."""
    for lang in ("zh_CN", "zh_TW", "ja", "ko"):
        folder = f"/usr/share/locale/{lang}/LC_MESSAGES"
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
            try:
                msgs = [m.decode("utf-8").replace("\0", "\n") for m in mo_messages(os.path.join(folder, name))]
            except (UnicodeDecodeError, struct.error):
                continue  # a catalog in EUC-JP or Big5: left out rather than guessed
            text = "\n\n".join(m for m in msgs if len(_CJK.findall(m)) > 0.2 * len(m))
            if len(text.encode()) >= 1024:
                yield f"{folder}/{name}", text
    test = os.path.join(sysconfig.get_paths()["stdlib"], "test", "cjkencodings")
    for name in sorted(os.listdir(test)) if os.path.isdir(test) else ():
        if name.endswith("-utf8.txt"):
            yield os.path.join(test, name), open(os.path.join(test, name), encoding="utf-8").read()


def write(group, name, text, manifest, **info):
    folder = os.path.join(OUT, group)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8", newline="") as f:
        f.write(text)
    manifest.append({"group": group, "file": f"{group}/{name}", "bytes": len(text.encode()), **info})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-bin", type=int, default=16, help="files per size bin in mixed/ (default 16)")
    parser.add_argument("--small-per-bin", type=int, default=100, help="files per bin <= 16 KB in small/")
    args = parser.parse_args()
    shutil.rmtree(OUT, ignore_errors=True)
    manifest = []
    for group, per_bin, max_bin in (("mixed", args.per_bin, BINS), ("small", args.small_per_bin, 4)):
        for (b, kind), files in sorted(pick(per_bin, max_bin).items()):
            if len(files) < per_bin // 2:
                print(f"note: {group} bin {1 << b}-{2 << b} KiB has only {len(files)} {kind} files")
            for k, (path, ext, text) in enumerate(files):
                write(group, f"{b:02d}-{kind}-{k:03d}.{ext}", text, manifest, kind=kind, source=path)
    for k, (source, text) in enumerate(cjk_documents()):
        write("cjk", f"{k:03d}.txt", text, manifest, kind="cjk", source=source)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    for group in ("mixed", "small", "cjk"):
        rows = [m for m in manifest if m["group"] == group]
        print(f"{group}: {len(rows)} files, {sum(m['bytes'] for m in rows) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
