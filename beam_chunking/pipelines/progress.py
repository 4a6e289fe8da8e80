"""Progress while a run is under way: a live bar on a terminal, periodic lines otherwise.

The bar (tqdm: well kept, no dependencies, degrades cleanly off a terminal) counts finished
documents and megabytes against what the input patterns matched. Finished documents are
visible only when the pipeline runs in this process (the default in-process runner); with
other runners the lines say how long the job has run, and the runner's own UI (Dask's
dashboard, the Dataflow console) shows the rest.
"""
from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Optional, Sequence, Tuple

from beam_chunking.transforms.progress import PROGRESS
from beam_chunking.transforms.read import matched_files

_LOG = logging.getLogger("beam_chunking.progress")
#: Seconds between progress lines when stderr is not a terminal.
LOG_EVERY_SECONDS = 15.0


def matched_totals(patterns: Sequence[str], exclude: Sequence[str]) -> Tuple[int, int]:
    """``(files, bytes)`` that the patterns match, each file once, exclusions left out."""
    files = matched_files(patterns, exclude)
    return len(files), sum(meta.size_in_bytes or 0 for meta in files)


def watch(job: threading.Thread, totals: Optional[Tuple[int, int]], runner: str) -> None:
    """Show progress until ``job`` (the thread running the pipeline) ends.

    ``totals`` (files, bytes) is given when the pipeline runs in this process, where finished
    documents can be counted; ``None`` otherwise, and only the elapsed time is logged.
    """
    in_process = totals is not None
    files, size = totals or (0, 0)
    started = time.monotonic()
    if in_process and sys.stderr.isatty():
        from tqdm import tqdm

        with tqdm(total=files, unit="doc", desc="chunking", file=sys.stderr, dynamic_ncols=True) as bar:
            while job.is_alive():
                job.join(0.2)
                done, nbytes = PROGRESS.snapshot()
                bar.n = done
                bar.set_postfix_str(f"{nbytes / 1e6:.1f}/{size / 1e6:.1f} MB", refresh=True)
        return
    last = started
    while job.is_alive():
        job.join(0.5)
        now = time.monotonic()
        if now - last >= LOG_EVERY_SECONDS and job.is_alive():
            last = now
            if in_process:
                done, nbytes = PROGRESS.snapshot()
                _LOG.info("progress: %d/%d documents, %.1f/%.1f MB, %.0f s", done, files, nbytes / 1e6,
                          size / 1e6, now - started)
            else:
                _LOG.info("running on %s for %.0f s; the runner's own UI shows its progress", runner,
                          now - started)
