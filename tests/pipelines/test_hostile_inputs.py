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
