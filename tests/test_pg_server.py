"""The PostgreSQL fixture works wherever the checkout is, a 0700 folder included."""
import os
import shutil
import socket
import tempfile

import pytest

from tests.pg_server import PgServer, copy_installation, find_binaries, reachable


def test_binaries_under_a_private_folder_still_start_a_server_as_root():
    bin_dir, why = find_binaries()
    if bin_dir is None:
        pytest.skip(why)
    if os.geteuid() != 0:
        pytest.skip("only root runs the server as another account")
    private = tempfile.mkdtemp()  # 0700, as `mktemp -d` or root's home
    try:
        hidden = copy_installation(bin_dir, private)
        server = PgServer(hidden)
        with server:
            assert not reachable(hidden, *server._user) and server.bin_dir != hidden
            socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
    finally:
        shutil.rmtree(private, ignore_errors=True)
