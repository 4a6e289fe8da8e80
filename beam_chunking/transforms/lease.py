"""The output lease: one run at a time writes an output folder.

A run takes the lease when its pipeline is built, before it checks that the folder is empty,
by creating ``OUTPUT/_lease.json`` with exclusive-create semantics::

    {"run_id": "run-20261201T081500123Z-1a2b3c4d", "host": "worker-7", "pid": 4242,
     "started": "2026-12-01T08:15:00Z", "ttl_s": 300}

A second run that finds the lease held by another process is refused at once
(:class:`OutputLeasedError`, one line naming the holder), whatever its ``overwrite``. While
the launching process lives, a thread refreshes the lease (the file's modification time)
every ``ttl_s / 5`` seconds. A lease is stale, and the next run takes it over with a
warning naming the run it replaces, when its process is gone (same host, pid no longer
running), it was not refreshed for ``ttl_s`` seconds (a crashed launcher on another machine),
or it was taken by this same process (an earlier pipeline that failed or was never run). The
commit checks that the lease still names its run right before it switches the manifest, so a
run whose lease was taken over publishes nothing; after the switch and the clean-up, the
commit releases the lease (and the launcher releases it when a run fails).

A job launched without waiting (``run(wait=False)``) is refreshed only while its launcher
lives: once that exits, its lease lasts ``ttl_s`` more, after which another run may take it
over, and the first then fails at its commit instead of publishing.

Local disks get true exclusive creation (a hard link, which fails if the name exists, of a
fully written temporary file: readers never see a half-written lease). On ``gs://`` the lease
is uploaded with ``ifGenerationMatch=0``, which GCS refuses when the object exists. (The
storage emulator the tests use ignores preconditions, so there only the check before the
upload is tested; the race itself needs a real bucket.) Other file systems get a
check-then-create through Beam's ``FileSystems``, which two runs started in the same instant
can both pass. Taking over a stale lease and refreshing one are atomic locally and
check-then-write remotely (a refresh racing the commit's release can leave the lease
behind until it expires); the commit's own check covers what slips through.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Dict, Optional

from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import GoogleCloudOptions

from beam_chunking.errors import OutputLeasedError

_LOG = logging.getLogger(__name__)

#: The lease's file name inside the output folder.
LEASE = "_lease.json"
#: Seconds a lease lasts without a refresh before another run may take it over (5 minutes).
LEASE_TTL_S = 300.0


@dataclass(frozen=True)
class LeaseInfo:
    """What a lease file says, plus when it was last refreshed (its modification time).

    Attributes:
        run_id: The run holding the lease.
        host: ``socket.gethostname()`` of the launching process.
        pid: Its process id.
        started: When the lease was taken, ISO 8601 UTC.
        ttl_s: Seconds without refresh after which it is stale.
        refreshed: Last refresh, seconds since the epoch.
        generation: On ``gs://``, the lease object's generation (every refresh makes a new
            one); ``None`` elsewhere.
    """

    run_id: str
    host: str
    pid: int
    started: str
    ttl_s: float
    refreshed: float
    generation: Optional[int] = None

    def stale_because(self, now: Optional[float] = None) -> Optional[str]:
        """Why the lease may be taken over (its process is gone, or it expired), or ``None``."""
        now = time.time() if now is None else now
        if self.host == socket.gethostname() and self.pid == os.getpid():
            # An earlier pipeline of this very process that failed or was never run (a
            # notebook cell run again); one still running would fail at its commit's check.
            return "it was taken by an earlier pipeline of this same process"
        if self.host == socket.gethostname() and not _alive(self.pid):
            return f"its process {self.pid} on {self.host} is gone"
        if now - self.refreshed > self.ttl_s:
            return f"it was not refreshed for {now - self.refreshed:.0f} s (ttl {self.ttl_s:.0f} s)"
        return None

    def describe(self) -> str:
        """One phrase naming the holder: ``run R (host H, pid P, started S)``."""
        return f"run {self.run_id} (host {self.host}, pid {self.pid}, started {self.started})"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


def lease_path(output: str) -> str:
    """Where ``output``'s lease lives."""
    return f"{output.rstrip('/')}/{LEASE}"


def _local(output: str) -> bool:
    return FileSystems.get_scheme(output) is None


def _parse(raw: bytes, refreshed: float, generation: Optional[int] = None) -> LeaseInfo:
    try:
        data = json.loads(raw.decode("utf-8"))
        ttl = float(data["ttl_s"])
        if not 0 < ttl < 1e9:  # "nan", "inf", 0 or less: a lease that could never expire, or is void
            raise ValueError(f"ttl_s={data['ttl_s']!r}")
        return LeaseInfo(str(data["run_id"]), str(data["host"]), int(data["pid"]), str(data["started"]),
                         ttl, refreshed, generation)
    except (ValueError, KeyError, TypeError):
        # Written by hand, or truncated by a full disk: held by an unknown run until it is
        # ttl old, so a damaged file never lets two runs in.
        return LeaseInfo("(unreadable lease)", "?", -1, "?", LEASE_TTL_S, refreshed, generation)


def read_lease(output: str) -> Optional[LeaseInfo]:
    """The lease on ``output``, or ``None`` when there is none."""
    return _read(lease_path(output))


def _read(path: str) -> Optional[LeaseInfo]:
    if FileSystems.get_scheme(path) is None:
        try:
            with open(path, "rb") as f:
                return _parse(f.read(), os.fstat(f.fileno()).st_mtime)
        except FileNotFoundError:
            return None
    if FileSystems.get_scheme(path) == "gs":
        return _read_gcs(path)
    if not FileSystems.exists(path):
        return None
    try:
        with FileSystems.open(path) as f:
            raw = f.read()
        return _parse(raw, FileSystems.last_updated(path))
    except Exception:  # removed between the two calls
        if not FileSystems.exists(path):
            return None
        raise


def _payload(run_id: str, ttl_s: float) -> bytes:
    return json.dumps({"run_id": run_id, "host": socket.gethostname(), "pid": os.getpid(),
                       "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "ttl_s": ttl_s},
                      sort_keys=True).encode("utf-8")


def _create(output: str, run_id: str, ttl_s: float) -> bool:
    """Create the lease unless one exists; whether this call created it."""
    path = lease_path(output)
    data = _payload(run_id, ttl_s)
    if not _local(output):
        if FileSystems.exists(path):
            return False
        if FileSystems.get_scheme(path) == "gs":
            return _create_gcs(path, data)
        with FileSystems.create(path) as f:
            f.write(data)
        return True
    os.makedirs(output, exist_ok=True)
    temporary = f"{path}.{run_id}.tmp"
    with open(temporary, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(temporary, path)  # atomic, and fails if the name exists: O_EXCL for a whole file
        return True
    except FileExistsError:
        return False
    except OSError:  # no hard links here (some network and FUSE file systems)
        return _create_exclusive(path, data)
    finally:
        os.unlink(temporary)


def _create_exclusive(path: str, data: bytes) -> bool:
    # Until the bytes land, a reader finds an unreadable lease, which counts as held.
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return True


def _create_gcs(path: str, data: bytes) -> bool:
    """Upload the lease only if no object has the name (``ifGenerationMatch=0``): GCS's
    exclusive create, the same client and credentials as Beam's ``GCSFileSystem``."""
    from google.api_core.exceptions import PreconditionFailed

    blob = _gcs_blob(path)
    try:
        blob.upload_from_string(data, content_type="application/json", if_generation_match=0)
    except PreconditionFailed:
        return False
    return True


def _gcs_blob(path: str):
    """``path``'s blob, through the same client and credentials as Beam's ``GCSFileSystem``."""
    from apache_beam.io.gcp import gcsio

    options = getattr(FileSystems.get_filesystem(path), "_pipeline_options", None)
    bucket, name = gcsio.parse_gcs_path(path)
    return gcsio.GcsIO(pipeline_options=options).client.bucket(bucket).blob(name)


def _read_gcs(path: str) -> Optional[LeaseInfo]:
    """The lease object's content with its generation, read as one version of it."""
    from google.api_core.exceptions import NotFound, PreconditionFailed

    blob = _gcs_blob(path)
    for _ in range(3):
        try:
            blob.reload()
            raw = blob.download_as_bytes(if_generation_match=blob.generation)
        except NotFound:
            return None
        except PreconditionFailed:
            continue  # refreshed between the two requests: read the new version
        return _parse(raw, blob.updated.timestamp(), blob.generation)
    raise OutputLeasedError(f"the lease {path} keeps changing while it is read")


def _delete_gcs(path: str, generation: Optional[int]) -> bool:
    """Delete the lease object only if it is still version ``generation`` (``ifGenerationMatch``);
    whether it did. Of two runs taking over a stale lease, the second finds the first one's
    fresh lease, a new generation, and backs off."""
    from google.api_core.exceptions import NotFound, PreconditionFailed

    try:
        _gcs_blob(path).delete(if_generation_match=generation)
    except (NotFound, PreconditionFailed):
        return False
    return True


def _rewrite_gcs(path: str, data: bytes, generation: int) -> None:
    """Refresh the lease object only over version ``generation``: a lease taken over since it
    was read is left to its new holder (the refresher then finds it gone and stops)."""
    from google.api_core.exceptions import NotFound, PreconditionFailed

    try:
        _gcs_blob(path).upload_from_string(data, content_type="application/json", if_generation_match=generation)
    except (NotFound, PreconditionFailed):
        pass


def _take_over(output: str, stale: LeaseInfo, run_id: str) -> bool:
    """Remove a stale lease, unless it changed since it was judged stale; whether it was removed."""
    path = lease_path(output)
    if not _local(output):
        if FileSystems.get_scheme(path) == "gs":
            return _delete_gcs(path, stale.generation)
        FileSystems.delete([path])
        return True
    moved = f"{path}.stale-{run_id}"
    try:
        os.rename(path, moved)  # of two runs taking over, only one moves the file
    except FileNotFoundError:
        return False
    now = _read(moved)
    if now is None or now.run_id != stale.run_id or now.refreshed != stale.refreshed:
        # Another run took it over first and this moved its fresh lease: put it back.
        try:
            os.link(moved, path)
        except FileExistsError:
            pass
        os.unlink(moved)
        return False
    os.unlink(moved)
    return True


class Lease:
    """A lease this process holds on an output folder, refreshed by a daemon thread.

    Use :func:`acquire` to take one.
    """

    def __init__(self, output: str, run_id: str, ttl_s: float):
        self.output, self.run_id, self.ttl_s = output, run_id, ttl_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._refresh_until_stopped, name=f"lease-{run_id}", daemon=True)

    def _refresh_until_stopped(self) -> None:
        while not self._stop.wait(self.ttl_s / 5):
            try:
                info = read_lease(self.output)
                if info is None or info.run_id != self.run_id:
                    return  # released by the commit, or taken over: nothing left to refresh
                if _local(self.output):
                    os.utime(lease_path(self.output))  # never recreates a lease deleted meanwhile
                elif info.generation is not None:  # gs://: only over the version just read
                    _rewrite_gcs(lease_path(self.output), _payload(self.run_id, self.ttl_s), info.generation)
                else:
                    with FileSystems.create(lease_path(self.output)) as f:
                        f.write(_payload(self.run_id, self.ttl_s))
            except Exception as exc:  # a missed refresh only shortens the lease
                _LOG.warning("could not refresh the lease on %s: %s", self.output, exc)

    def release(self) -> None:
        """Stop refreshing and remove the lease if it still names this run."""
        self._stop.set()
        release(self.output, self.run_id)


#: Leases taken by this process, by output folder, so a launcher can release what it holds.
_HELD: Dict[str, Lease] = {}


def acquire(output: str, run_id: str, ttl_s: float = LEASE_TTL_S) -> Lease:
    """Take ``output``'s lease for ``run_id`` and keep it refreshed while this process lives.

    Args:
        output: The output folder (local path or ``gs://``); created when missing.
        run_id: The run taking the lease.
        ttl_s: Seconds without refresh after which another run may take it over. Default
            :data:`LEASE_TTL_S` (300 s).

    Raises:
        OutputLeasedError: another run holds a lease that is not stale, naming it.
    """
    output = output.rstrip("/") or "/"
    for _ in range(5):  # each turn either creates the lease, refuses, or removes a stale one
        if _create(output, run_id, ttl_s):
            lease = Lease(output, run_id, ttl_s)
            lease._thread.start()
            _HELD[output] = lease
            return lease
        held = read_lease(output)
        if held is None:
            continue  # released in between
        reason = held.stale_because()
        if reason is None:
            age = time.time() - held.refreshed
            when = (f"refreshed {age:.0f} s ago" if age > -1 else
                    f"last refreshed {-age:.0f} s in the future by this machine's clock (clocks apart?)")
            raise OutputLeasedError(
                f"output {output} is being written by {held.describe()}; wait for it to finish (if it "
                f"crashed, its lease {lease_path(output)}, {when}, expires {held.ttl_s:.0f} s after its "
                "last refresh)")
        if _take_over(output, held, run_id):
            _LOG.warning("output %s: took over the lease of %s, because %s", output, held.describe(), reason)
    raise OutputLeasedError(f"output {output}: could not take the lease {lease_path(output)}; "
                            "other runs keep taking it")


def verify(output: str, run_id: str) -> None:
    """Check that ``run_id`` still holds ``output``'s lease (the commit calls this last).

    Raises:
        OutputLeasedError: the lease is gone or names another run; nothing must be published.
    """
    held = read_lease(output)
    if held is None or held.run_id != run_id:
        other = "it was removed" if held is None else f"{held.describe()} holds it now"
        raise OutputLeasedError(f"run {run_id} lost the lease on {output} before its commit ({other}); "
                                "nothing was published by this run")


def release(output: str, run_id: str) -> bool:
    """Remove ``output``'s lease if it names ``run_id``; whether it did."""
    output = output.rstrip("/") or "/"
    held = read_lease(output)
    lease = _HELD.get(output)
    if lease is not None and lease.run_id == run_id:
        lease._stop.set()
        del _HELD[output]
    if held is None or held.run_id != run_id:
        return False
    try:
        if held.generation is not None:  # gs://: only the version that names this run
            return _delete_gcs(lease_path(output), held.generation)
        FileSystems.delete([lease_path(output)])
    except Exception as exc:  # it expires on its own
        _LOG.warning("could not release the lease on %s: %s", output, exc)
        return False
    return True


def held_run(output: str) -> Optional[str]:
    """The run whose lease on ``output`` this process took and has not released, or ``None``."""
    lease = _HELD.get(output.rstrip("/") or "/")
    return lease.run_id if lease is not None else None


def release_held(output: str) -> bool:
    """Release the lease this process took on ``output``, if any (after a run ends or fails)."""
    lease = _HELD.get(output.rstrip("/") or "/")
    if lease is None:
        return False
    return release(lease.output, lease.run_id)


def takes_lease(pipeline) -> bool:
    """Whether a run of ``pipeline`` takes the lease when it is built: every run except the
    build of a classic template (``--template_location``), which runs nothing then and whose
    later runs have no launcher of their own to hold a lease."""
    if not pipeline.options:
        return True
    # Its own view: parsing every Beam option again costs several times more.
    return not pipeline.options.view_as(GoogleCloudOptions).template_location
