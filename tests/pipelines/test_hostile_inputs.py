"""Hostile file names and non-regular files: each one is a document with a row, none takes the job down."""
import hashlib
import os
import socket
import threading
import unicodedata

import pytest

from beam_chunking.ids import display_uri, document_id
from beam_chunking.pipelines.cli import EXIT_TOO_MANY_FAILURES, main
from beam_chunking.transforms.manifest import read_manifest, read_table

posix_only = pytest.mark.skipif(os.name != "posix", reason="needs POSIX file names and FIFOs")


def test_ids_and_uris_of_names_that_are_not_utf8():
    raw = os.fsdecode(b"/in/bad\xff.txt")  # how Python hands over the name: '\udcff' for 0xff
    assert display_uri(raw) == "/in/bad%FF.txt"
    assert display_uri("/in/ok é.txt") == "/in/ok é.txt"  # valid names are untouched
    # The id is over the real bytes: stable, and distinct from a file really named 'bad%FF.txt'.
    assert document_id(raw) == document_id(os.fsdecode(b"/in/bad\xff.txt"))
    assert document_id(raw) != document_id("/in/bad%FF.txt")
    assert document_id("/x/a.md") == hashlib.sha256(b"/x/a.md").hexdigest()[:16]  # valid names: ids unchanged
    assert display_uri("a\ud800b") == "a%ED%A0%80b"  # a surrogate no file name decodes to


@posix_only
def test_hostile_names_a_fifo_and_a_socket_each_get_a_row_and_the_job_goes_on(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    names = [b"bad\xff.txt", b"new\nline.txt", unicodedata.normalize("NFC", "caf\u00e9.txt").encode(),
             unicodedata.normalize("NFD", "caf\u00e9.txt").encode(), b"x" * 250 + b".txt", b"good.txt"]
    for i, name in enumerate(names):
        with open(os.path.join(os.fsencode(src), name), "wb") as f:
            f.write(f"document number {i} has some words".encode())
    os.mkfifo(src / "pipe.txt")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(src / "sock.txt"))
    out = str(tmp_path / "out")
    # Were the FIFO opened, the run would wait for a writer forever: fail the test instead.
    timer = threading.Timer(60, lambda: os.close(os.open(src / "pipe.txt", os.O_WRONLY | os.O_NONBLOCK)))
    timer.start()
    try:
        code = main(["run", "--input", f"{src}/*", "--output", out])
    finally:
        timer.cancel()
        listening.close()
    assert code == EXIT_TOO_MANY_FAILURES  # the FIFO and the socket, and only they, failed
    docs = {row["uri"]: row for row in read_table(out, "documents").to_pylist()}
    assert len(docs) == len(names) + 2 == read_manifest(out)["rows"]["documents"]  # in = ok + empty + failed
    assert [row["status"] for row in docs.values()].count("ok") == len(names)
    assert docs[f"{src}/bad%FF.txt"]["status"] == "ok"
    assert docs[f"{src}/new\nline.txt"]["status"] == "ok"
    assert len({docs[u]["document_id"] for u in docs if "caf" in u}) == 2  # NFC and NFD are two files
    fifo = docs[f"{src}/pipe.txt"]
    assert (fifo["status"], fifo["stage"], fifo["error_type"]) == ("failed", "read", "NotARegularFile")
    assert fifo["error_message"] == f"{src}/pipe.txt: not a regular file (a FIFO); it was not opened"
    assert docs[f"{src}/sock.txt"]["error_message"] == \
        f"{src}/sock.txt: not a regular file (a socket); it was not opened"
    assert docs[f"{src}/bad%FF.txt"]["document_id"] == document_id(os.fsdecode(os.fsencode(src) + b"/bad\xff.txt"))
    chunk_uris = set(read_table(out, "chunks").column("uri").to_pylist())
    assert f"{src}/bad%FF.txt" in chunk_uris and len(chunk_uris) == len(names)
    assert "pipe.txt" in capsys.readouterr().out  # the summary names the failed file


@posix_only
def test_symlinks_outside_the_root_dangling_or_looping_each_get_a_failed_row(tmp_path):
    src, outside = tmp_path / "in", tmp_path / "outside"
    (src / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("a secret that lives outside the input folder")
    (src / "good.txt").write_text("a good document with some words")
    (src / "sub" / "deeper.txt").write_text("a document one folder down")
    links = {"inside.txt": "good.txt", "outside.txt": str(outside / "secret.txt"), "dangling.txt": "missing.txt",
             "loop.txt": "loop.txt", "alias": "sub", "escape": str(outside)}
    for name, target in links.items():
        os.symlink(target, src / name)
    out = str(tmp_path / "out")
    main(["run", "--input", f"{src}/**", "--output", out])
    docs = {row["uri"][len(str(src)) + 1:]: row for row in read_table(out, "documents").to_pylist()}
    # in = ok + empty + failed; alias -> sub hides nothing (sub/deeper.txt is read as itself)
    assert read_manifest(out)["rows"]["documents"] == len(docs) == 7
    assert {n: docs[n]["status"] for n in ("good.txt", "sub/deeper.txt", "inside.txt")} == dict.fromkeys(
        ("good.txt", "sub/deeper.txt", "inside.txt"), "ok")  # a link inside the root is followed
    failed = {n: (r["stage"], r["error_type"], r["error_message"]) for n, r in docs.items() if r["status"] == "failed"}
    real = os.path.realpath(outside)
    assert failed == {
        "outside.txt": ("read", "SkippedInput", f"{src}/outside.txt: symbolic link points outside the input root "
                                                f"(to {real}/secret.txt); not followed: give a pattern whose "
                                                "folder holds the target too, or the file itself"),
        "dangling.txt": ("read", "SkippedInput", f"{src}/dangling.txt: dangling symbolic link (to missing.txt, "
                                                 "which does not exist); not followed"),
        "loop.txt": ("read", "SkippedInput", f"{src}/loop.txt: symbolic link loop (to loop.txt); not followed"),
        "escape": ("read", "SkippedInput", f"{src}/escape: symbolic link points outside the input root (to {real}); "
                                           "not followed: give a pattern whose folder holds the target too, or the file itself"),
    }
    assert not any("secret" in c for c in read_table(out, "chunks").column("text").to_pylist())
    # A link to a folder whose files the pattern reads only through the link does hide them.
    (src / "pages").mkdir()
    (src / "pages" / "a.txt").write_text("a page of text")
    os.symlink("sub", src / "pub")
    main(["run", "--input", f"{src}/p*/*", "--output", out, "--overwrite", "--max-deletions", "100%"])
    docs = {row["uri"][len(str(src)) + 1:]: (row["status"], row["error_message"])
            for row in read_table(out, "documents").to_pylist()}
    assert docs == {"pages/a.txt": ("ok", None),
                    "pub": ("failed", f"{src}/pub: symbolic link to a folder (to {os.path.realpath(src)}/sub); "
                                      "folders are not followed through links")}
