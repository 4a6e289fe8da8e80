"""The ``beam-chunking`` command line.

Exit codes: 0 every document ok or empty (or failures within ``--max-failures``); 1 the job
itself failed (a crash, not a bad document); 2 usage or configuration error; 3 more documents
failed than ``--max-failures`` allows (the tables are still written in full); 130
interrupted (Ctrl-C). Mistakes print one line; ``--debug`` adds the traceback.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import traceback
from typing import List, Optional

from beam_chunking.errors import ChunkingError
from beam_chunking.version import __version__

EXIT_OK, EXIT_JOB_FAILED, EXIT_USAGE, EXIT_TOO_MANY_FAILURES, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

RUN_HELP = """\
usage: beam-chunking run --input PATTERN [--input PATTERN ...] --output DIR [options] [Beam options]

Read the files, parse, chunk and write OUTPUT/chunks, OUTPUT/documents and OUTPUT/parents (Parquet).

job options:
  --input PATTERN           files to read, local or gs:// (* within a folder, ** across); repeatable
  --exclude PATTERN         leave out matched files (fnmatch on the full path); repeatable
  --content-type PAT=TYPE   force the content type of matching files (fnmatch on the full path, as
                            --exclude), e.g. '*.log=text/plain'; repeatable, the first match wins
  --output DIR              output folder; refused when not empty, unless --overwrite
  --overwrite               replace the previous output (it stays intact until the new one is complete)
  --incremental             process only files that are new or changed since the output's previous run
                            (unchanged ones keep their rows, embeddings included); implies replacing it
  --config SPEC.yaml        a YAML spec; flags override its keys
  --strategy NAME           used for every document; default: chosen per document by its content type
                            (structural for prose, code, transcript); 'beam-chunking strategies' lists them
  --max-chunk-size N        the strategy's ceiling, in its unit (characters or tokens), overlap included
  --overlap N               shared with the previous chunk, in the same unit
  --OPTION VALUE            any other strategy option (--tokenizer embedder, --breakpoint-percentile 0.3 ...)
  --token-counter NAME      fills token_count for character strategies: cl100k_base (default) or none
  --decode-errors MODE      text that is neither UTF-8 nor a legacy encoding charset-normalizer
                            recognises: strict (default: the document fails) or replace (U+FFFD)
  --keep PART               keep what parsers drop by default: page_furniture (running headers,
                            footers, page numbers) or contents (tables of contents); repeatable
  --sanitise NAME           rewrite chunk text after chunking: redact (e-mail addresses, phone
                            numbers, secrets) or package.module:function; repeatable
  --llm-OPTION VALUE        the chat model of proposition and resume: --llm-model NAME,
                            --llm-base-url URL (OpenAI-compatible; key from $OPENAI_API_KEY),
                            --llm-cache DIR|gs://...|none, --llm-max-concurrency N ...
  --embed MODEL             fill the embedding column: minilm (local) or openai:MODEL (any server
                            speaking the OpenAI-compatible /v1/embeddings protocol)
  --embed-OPTION VALUE      the hosted embedding model: --embed-base-url URL, --embed-dimensions N,
                            --embed-cache DIR|gs://...|none, --embed-max-concurrency N ...
  --compression CODEC       zstd (default), snappy, gzip or none
  --num-shards N            exactly N files per table (a shuffle); 0 (default): one per bundle
  --max-failures N|P%       failed documents allowed before exit code 3 (default 0)
  --max-deletions N|P%      documents of the previous output an --overwrite or --incremental run may
                            delete (default 50%); a run over it is refused before any work
  --debug                   print tracebacks

Beam options pass through: --runner DaskRunner --dask_client_address tcp://HOST:8786,
--direct_running_mode multi_processing --direct_num_workers 4, --runner DataflowRunner ...

examples:
  beam-chunking run --input 'docs/**' --output out --strategy sentence --max-chunk-size 256
  beam-chunking run --input 'a/*.md' --input 'b/*.pdf' --exclude '*/drafts/*' --output out --overwrite
  beam-chunking run --config spec.yaml --max-failures 1%
  beam-chunking run --input 'docs/*' --output out --strategy proposition --llm-base-url http://127.0.0.1:8000/v1
  beam-chunking run --input 'docs/**' --output out --incremental
  beam-chunking run --input 'docs/**' --output out --embed openai:text-embedding-3-small --embed-dimensions 512

exit codes: 0 ok; 1 the job failed; 2 usage or configuration error; 3 more failed documents
than --max-failures (tables still written); 130 interrupted
"""


def _version() -> str:
    return f"beam-chunking {__version__}"


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"beam-chunking: {message}", file=sys.stderr)
    return code


def _run(rest: List[str], debug: bool) -> int:
    if "-h" in rest or "--help" in rest:
        print(RUN_HELP, end="")
        return EXIT_OK
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("beam_chunking").setLevel(logging.INFO)
    # Beam's DaskRunner warns once per source partition that its default partition size changed.
    logging.getLogger("apache_beam.runners.dask.transform_evaluator").setLevel(logging.ERROR)
    from beam_chunking.pipelines.flags import check_flags
    from beam_chunking.pipelines.run import run

    interrupted = []

    def on_interrupt(signum, frame):
        # Beam wraps the KeyboardInterrupt of a running stage in a RuntimeError and logs it;
        # remember the signal and silence the log, so the user sees one line.
        interrupted.append(signum)
        logging.disable(logging.CRITICAL)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        check_flags(rest)
        summary = run(rest, show_progress=True)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if interrupted:
            raise KeyboardInterrupt from None
        return _job_failed(exc, debug)
    finally:
        signal.signal(signal.SIGINT, previous)
    return _report(summary)


def _job_failed(exc: Exception, debug: bool) -> int:
    if debug:
        traceback.print_exception(exc)
    if isinstance(exc, ChunkingError):
        return _fail(str(exc))
    # The job crashed; its output, if any, was not committed.
    detail = " ".join(str(exc).split())[:500]
    return _fail(f"the job failed: {type(exc).__name__}: {detail} (the previous output, if any, is intact; "
                 "--debug shows the traceback)", EXIT_JOB_FAILED)


def _report(summary) -> int:
    from beam_chunking.pipelines.spec import failures_allowed

    if summary is None:
        return EXIT_OK
    print(summary.render())
    allowed = failures_allowed(summary.max_failures, summary.documents)
    if summary.failed > allowed:
        return _fail(f"{summary.failed} of {summary.documents} documents failed (--max-failures allows {allowed}); "
                     f"see {summary.output}/documents or 'beam-chunking inspect {summary.output}'",
                     EXIT_TOO_MANY_FAILURES)
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point; returns the process exit status (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = argparse.ArgumentParser(prog="beam-chunking", description="Chunk documents into Parquet tables.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", help="run the chunking pipeline", add_help=False)
    sub.add_parser("strategies", help="list the strategies (or those named) with their units and options")
    sub.add_parser("template", help="write a classic Dataflow template (job file)", add_help=False)
    sub.add_parser("inspect", help="sizes, failures and drops of an output, as text or an HTML report",
                   add_help=False)
    sub.add_parser("preview", help="one file's chunk boundaries in the terminal, without Beam", add_help=False)
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return EXIT_OK if argv else EXIT_USAGE
    if argv[0] == "--version":
        print(_version())
        return EXIT_OK
    command, rest = argv[0], argv[1:]
    try:
        if command == "strategies":
            from beam_chunking.registry import listing

            try:
                print(listing([a for a in rest if not a.startswith("-")] or None))
            except ChunkingError as exc:
                return _fail(str(exc))
            return EXIT_OK
        if command == "template":
            from beam_chunking.pipelines.templates import template_command

            return template_command(rest)
        if command == "inspect":
            from beam_chunking.pipelines.inspect import inspect_command

            return inspect_command(rest)
        if command == "preview":
            from beam_chunking.pipelines.preview import preview_command

            return preview_command(rest)
        if command == "run":
            return _run(rest, debug)
    except KeyboardInterrupt:
        return _fail("interrupted; nothing was committed, the previous output is intact", EXIT_INTERRUPTED)
    except BrokenPipeError:  # `beam-chunking strategies | head`: the reader left, which is fine
        _quiet_stdout()
        return EXIT_OK
    parser.print_usage(sys.stderr)
    return _fail(f"unknown command {command!r} (run, strategies, inspect, preview, template)")


def _quiet_stdout() -> None:
    # Python would report the broken pipe again when it flushes stdout at exit.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def console_main() -> None:  # pragma: no cover - exercised through subprocesses
    """Console-script entry: run :func:`main`, flush, and end the process at once.

    Beam's runner leaves native threads behind; letting the interpreter tear them down can
    abort the process ("terminate called without an active exception", exit -6) after a
    run that succeeded, about one run in eight here. Every file is closed and committed
    before this point, so the process ends without that teardown.
    """
    try:
        code = main()
    except KeyboardInterrupt:
        code = _fail("interrupted; nothing was committed, the previous output is intact", EXIT_INTERRUPTED)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    console_main()
