"""Strict command-line flags: every flag must be one of the job's or one of Beam's.

Beam's own option parser warns about flags it does not know and carries on, so a typo such as
``--max-chunk-sise 300`` would run the job on defaults. Here the same parser (every
registered ``PipelineOptions`` class, runner options included) finds the flags it does not
know, and the job is refused with the closest known spelling.
"""
from __future__ import annotations

import contextlib
import difflib
import importlib
import io
import logging
import os
from typing import Iterable, List, Sequence

from apache_beam.options.pipeline_options import PipelineOptions

from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.options import OPTION_PREFIX, ChunkingOptions
from beam_chunking.pipelines.run import RUNNER_ALIASES

# Beam logs each flag it discards; the refusal below says it once, better.
_BEAM_OPTIONS_LOG = "apache_beam.options.pipeline_options"


def _known_flags(known_dests: Iterable[str]) -> List[str]:
    own = {action.dest: action.option_strings for action in _job_actions()}
    flags: List[str] = []
    for dest in known_dests:
        flags.extend(own.get(dest, [f"--{dest}"]))
    return flags


def _job_actions():
    import argparse

    parser = argparse.ArgumentParser(add_help=False)
    ChunkingOptions._add_argparse_args(parser)
    return parser._actions


def _runner_options_loaded(argv: Sequence[str]) -> None:
    """Import the module of a runner known by its short name when it is named, so that the
    options it registers on import (DaskRunner's ``--dask_*``) are known flags."""
    words = {w.split("=", 1)[-1] for w in argv}
    for short, path in RUNNER_ALIASES.items():
        if short in words or path in words:
            try:
                importlib.import_module(path.rsplit(".", 1)[0])
            except ImportError:
                pass


def check_flags(argv: Sequence[str]) -> None:
    """Refuse flags that neither the job nor Beam knows, and stray words.

    Raises:
        ConfigError: ``--max-chunk-sise: unknown flag; did you mean --max-chunk-size?``
    """
    _runner_options_loaded(argv)
    beam_log = logging.getLogger(_BEAM_OPTIONS_LOG)
    level = beam_log.level
    beam_log.setLevel(logging.ERROR)
    usage = io.StringIO()
    try:
        # Beam's parser prints its whole usage (about 170 lines) before the one that matters.
        with contextlib.redirect_stderr(usage):
            options = PipelineOptions(list(argv))
            known = options.get_all_options()
            given = options.get_all_options(retain_unknown_options=True)
    except SystemExit:
        last = next((line for line in reversed(usage.getvalue().splitlines()) if line.strip()), "")
        raise ConfigError(last.split(": error: ", 1)[-1] or "the command line cannot be read") from None
    finally:
        beam_log.setLevel(level)
    unknown = [name for name in given if name not in known]
    if unknown:
        # Each get_all_options() builds Beam's whole parser again: only a refusal needs the spellings.
        candidates = [f for f in _known_flags(known) if not f.startswith(f"--{OPTION_PREFIX}")]
        raw = next((a.split("=", 1)[0] for a in argv if a.startswith("--") and
                    a[2:].split("=", 1)[0].replace("-", "_") == unknown[0]), f"--{unknown[0]}")
        close = difflib.get_close_matches(raw, candidates, n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]}?" if close else "; see beam-chunking run --help"
        raise ConfigError(f"{raw}: unknown flag{hint}")
    stray = _stray_words(argv)
    if stray:
        hint = " (a pattern the shell expanded? quote it: --input 'docs/*')" if os.path.exists(stray) else ""
        raise ConfigError(f"{stray!r}: unexpected argument; flags take the form --name VALUE{hint}")


def _stray_words(argv: Sequence[str]) -> str:
    """The first word that is neither a flag nor a flag's value, or ``""``."""
    flags_without_value = {s for a in _job_actions() if a.nargs == 0 for s in a.option_strings}
    previous_takes_value = False
    for word in argv:
        if word.startswith("--"):
            previous_takes_value = "=" not in word and word not in flags_without_value
            continue
        if not previous_takes_value:
            return word
        previous_takes_value = False
    return ""
