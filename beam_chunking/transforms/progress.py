"""Documents finished by this process, for a progress display in the same process.

The writer counts every document it receives (ok, empty or failed) here. Only a runner that
executes the pipeline inside the launching process (the in-process FnApiRunner) moves these
numbers where the command line can see them; other runners show progress in their own UI
(Dask's dashboard, the Dataflow console).
"""
from __future__ import annotations

import threading
from typing import Optional, Tuple


class Progress:
    """Thread-safe counts of finished documents and their bytes in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._documents = 0
        self._bytes = 0

    def add(self, size_bytes: Optional[int]) -> None:
        """Count one finished document of ``size_bytes`` bytes (``None``: unknown)."""
        with self._lock:
            self._documents += 1
            self._bytes += size_bytes or 0

    def snapshot(self) -> Tuple[int, int]:
        """``(documents, bytes)`` finished so far."""
        with self._lock:
            return self._documents, self._bytes

    def reset(self) -> None:
        """Start counting from zero (one run at a time per process)."""
        with self._lock:
            self._documents = self._bytes = 0


#: The process's counter; the writer adds to it, the command line reads it.
PROGRESS = Progress()
