"""The ``beam-chunking`` command line.

``beam-chunking run --input PATTERN --output DIR [--strategy NAME --max-chunk-size N
--overlap N --strategy-option K=V ...] [--config spec.yaml] [any Beam pipeline option]``
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import List, Optional

from beam_chunking.errors import ChunkingError


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point; returns the process exit status (0 ok, 2 bad usage or config)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="beam-chunking", description="Chunk documents into Parquet tables.")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", help="run the chunking pipeline", add_help=False)
    sub.add_parser("strategies", help="list the registered strategies")
    sub.add_parser("template", help="write a classic Dataflow template (job file)", add_help=False)
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "strategies":
        from beam_chunking.registry import listing

        print(listing())
        return 0
    if command == "template":
        from beam_chunking.pipelines.templates import template_command

        return template_command(rest)
    if command != "run":
        parser.print_usage(sys.stderr)
        print(f"beam-chunking: unknown command {command!r}", file=sys.stderr)
        return 2
    if "-h" in rest or "--help" in rest:
        from beam_chunking.pipelines.options import ChunkingOptions

        print(__doc__.strip())
        print(ChunkingOptions.__doc__)
        return 0
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("beam_chunking").setLevel(logging.INFO)
    # Beam's DaskRunner warns once per source partition that its default partition size changed.
    logging.getLogger("apache_beam.runners.dask.transform_evaluator").setLevel(logging.ERROR)
    from beam_chunking.pipelines.run import run

    try:
        summary = run(rest)
    except ChunkingError as exc:
        print(f"beam-chunking: {exc}", file=sys.stderr)
        return 2
    if summary is not None:
        print(summary.render())
    return 0


def console_main() -> None:  # pragma: no cover - exercised through subprocesses
    """Console-script entry: run :func:`main`, flush, and end the process at once.

    Beam's runner leaves native threads behind; letting the interpreter tear them down can
    abort the process ("terminate called without an active exception", exit -6) after a
    run that succeeded, about one run in eight here. Every file is closed and committed
    before this point, so the process ends without that teardown.
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    console_main()
