"""Dataflow templates: the Flex Template launcher and classic template (job file) builds.

A **Flex Template** runs :func:`flex_main` (``templates/main.py`` in the image) on a launcher
VM at every launch. Dataflow passes the template parameters as ``--name=value`` strings
(declared once, in :data:`PARAMETERS`, and in ``templates/metadata.json``) together with its
own options (such as ``--runner``, ``--project``, ``--region``, ``--temp_location``,
``--staging_location``, ``--template_location``, ``--sdk_container_image``). The launcher
maps the parameters onto the flags of ``beam-chunking run``, passes every other argument to
Beam unchanged, submits the job and returns without waiting on it.

A **classic template** is a job file written once by ``beam-chunking template
--template-location PATH`` (:func:`template_command`) through ``DataflowRunner
--template_location``. Its job parameters (input, output, strategy ...) are fixed when it is
built; runtime ``ValueProvider`` parameters are not supported. Building one needs no Dataflow
API call and downloads nothing: the runner stops after writing the job file, the Beam SDK is
not staged (``--sdk_location=default``: workers use the SDK inside their container), and the
only remote calls go to Cloud Storage (the staged files and the job file).

Example::

    from beam_chunking.pipelines.templates import launch

    result = launch(["--input=docs/*", "--output=out", "--overwrite=true", "--strategy=sentence"])
    result.wait_until_finish()  # the local runner has already finished; Dataflow would not wait
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import re
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.runners.runner import PipelineResult

from beam_chunking.errors import ChunkingError, ConfigError
from beam_chunking.pipelines.run import build, is_dataflow, new_pipeline, pipeline_options
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.config import JobConfig

#: Parameter kinds: how a template string value becomes a ``beam-chunking run`` flag.
KINDS = ("text", "bool", "int")


@dataclass(frozen=True)
class TemplateParameter:
    """One Flex Template parameter and the ``beam-chunking run`` option it becomes.

    Args:
        name: The parameter name, as declared in ``templates/metadata.json``.
        flag: The run flag it maps to; ``None`` when the launcher applies it itself
            (``embed`` has no run flag and sets the spec key ``embed``).
        kind: ``"text"`` (passed as ``FLAG=VALUE``), ``"bool"`` (``"true"``/``"false"``; true
            adds the switch ``FLAG``) or ``"int"`` (a whole number >= 0, ``FLAG=N``).
        required: Whether every launch must give it (``isOptional`` is its negation).
    """

    name: str
    flag: Optional[str]
    kind: str = "text"
    required: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: {self.kind!r} must be one of {KINDS}")


#: The Flex Template's parameters: the one declaration ``templates/metadata.json`` must match.
PARAMETERS: Tuple[TemplateParameter, ...] = (
    TemplateParameter("input", "--input", required=True),
    TemplateParameter("output", "--output", required=True),
    TemplateParameter("strategy", "--strategy"),
    TemplateParameter("spec", "--config"),
    TemplateParameter("overwrite", "--overwrite", kind="bool"),
    TemplateParameter("incremental", "--incremental", kind="bool"),
    TemplateParameter("compression", "--compression"),
    TemplateParameter("num_shards", "--num-shards", kind="int"),
    TemplateParameter("embed", None),
)

#: A whole number, as Dataflow passes ``num_shards``.
_WHOLE_NUMBER = re.compile(r"^[0-9]+$")


def _parameter_parser() -> argparse.ArgumentParser:
    # allow_abbrev=False: a Dataflow option such as --out... must never be taken for --output.
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for p in PARAMETERS:
        parser.add_argument(f"--{p.name}", dest=p.name, default=None)
    return parser


def split_parameters(argv: Sequence[str]) -> Tuple[Dict[str, str], List[str]]:
    """Separate the template parameters in ``argv`` from the arguments meant for Beam.

    Args:
        argv: Launcher arguments, e.g. ``["--input=gs://b/docs/*", "--overwrite=true",
            "--project=p"]``.

    Returns:
        The parameters given with a non-empty value (name to string value), and every other
        argument, unchanged and in order.
    """
    namespace, rest = _parameter_parser().parse_known_args(list(argv))
    values = {p.name: getattr(namespace, p.name) for p in PARAMETERS if getattr(namespace, p.name)}
    return values, rest


def parameter_flags(values: Dict[str, str]) -> List[str]:
    """The ``beam-chunking run`` flags for template parameter values (``embed`` excepted).

    Raises:
        ConfigError: a required parameter is missing, or a ``bool``/``int`` value is not
            ``true``/``false`` or a whole number.
    """
    flags: List[str] = []
    for p in PARAMETERS:
        value = values.get(p.name)
        if value is None:
            if p.required:
                raise ConfigError(f"{p.name}: required template parameter (--{p.name}=...)", field=p.name)
            continue
        if p.flag is None:
            continue
        if p.kind == "bool":
            if value.strip().lower() not in ("true", "false"):
                raise ConfigError(f"{p.name}: expected true or false, got {value!r}", field=p.name)
            if value.strip().lower() == "true":
                flags.append(p.flag)
        elif p.kind == "int":
            if not _WHOLE_NUMBER.match(value.strip()):
                raise ConfigError(f"{p.name}: expected a whole number >= 0, got {value!r}", field=p.name)
            flags.append(f"{p.flag}={int(value)}")
        else:
            flags.append(f"{p.flag}={value}")
    return flags


def _embedder(value: str):
    """``"none"`` clears a spec's ``embed``; anything else is validated as the spec key."""
    if value.strip().lower() == "none":
        return None
    return parse_spec({"embed": value}, source="embed").embed


def template_options(argv: Optional[Sequence[str]] = None) -> Tuple[PipelineOptions, JobConfig]:
    """Beam options and the validated job spec for a Flex Template launch.

    Template parameters become run flags (:data:`PARAMETERS`): ``spec`` is read as
    ``--config`` (local or ``gs://``), ``overwrite=true`` becomes
    ``--overwrite``, ``embed`` sets the spec key ``embed`` (``none`` clears it). Everything
    else goes to :func:`~beam_chunking.pipelines.run.pipeline_options` unchanged.

    Args:
        argv: Launcher arguments; template values are strings, as Dataflow passes them.

    Returns:
        ``(options, spec)``, the runner resolved (the local runner when none is given).

    Raises:
        ConfigError: a parameter or spec value is invalid, or a Dataflow option is missing;
            the message names it.
    """
    values, rest = split_parameters(argv or [])
    options, spec = pipeline_options(parameter_flags(values) + rest)
    if "embed" in values:
        spec = dataclasses.replace(spec, embed=_embedder(values["embed"]))
    return options, spec


def launch(argv: Optional[Sequence[str]] = None) -> PipelineResult:
    """Build the job from template-style ``argv`` and start it, without waiting on it.

    On Dataflow (a Flex Template launch) the runner submits the job, or writes it to
    ``--template_location``, and returns at once. With no ``--runner`` the local runner
    (FnApiRunner) runs the whole job within this call.

    Args:
        argv: Template parameters (``--input=...``, ``--overwrite=true`` ...) and any Beam
            or Dataflow options.

    Returns:
        The runner's result; do not wait on it in a Flex Template launcher.

    Raises:
        ConfigError: see :func:`template_options`.
    """
    options, spec = template_options(argv)
    pipeline = new_pipeline(options)
    build(pipeline, spec)
    return pipeline.run()


def flex_main(argv: Optional[Sequence[str]] = None) -> int:
    """Flex Template entry point; returns the exit status (0 launched, 2 bad parameters)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        launch(sys.argv[1:] if argv is None else argv)
    except ChunkingError as exc:
        print(f"beam-chunking: {exc}", file=sys.stderr)
        return 2
    return 0


def flex_console_main() -> None:  # pragma: no cover - exercised through a subprocess
    """Run :func:`flex_main` and end the process at once (see ``cli.console_main`` for why)."""
    code = flex_main()
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


TEMPLATE_USAGE = """\
beam-chunking template --template-location PATH [beam-chunking run flags] [Dataflow options]

Writes a classic Dataflow template (the job file) to PATH through DataflowRunner
--template_location; no job is started. Needs --project, --region and --temp_location
(gs://). Workers get beam-chunking from --sdk_container_image IMAGE (templates/Dockerfile,
with the parsers) or a staged setup.py (--setup_file; a checkout's own by default). The
job's flags (--input, --output, --strategy, --config ...) are fixed in the template when it
is built; use the Flex Template to choose them at launch.
Run it with: gcloud dataflow jobs run NAME --gcs-location PATH --region REGION"""


def argument_parser() -> argparse.ArgumentParser:
    """The arguments of ``beam-chunking template`` besides the run flags and Dataflow's options."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--template-location", "--template_location", dest="template_location", default=None,
                        metavar="PATH", help="where to write the job file (gs://...); required")
    return parser


def _template_location(argv: Sequence[str]) -> Tuple[Optional[str], List[str]]:
    namespace, rest = argument_parser().parse_known_args(list(argv))
    return namespace.template_location, rest


def build_template(argv: Sequence[str]) -> str:
    """Write a classic Dataflow template (job file) for the job that ``argv`` describes.

    Args:
        argv: ``--template-location PATH``, the flags of ``beam-chunking run`` and Dataflow
            options. ``--runner`` defaults to ``DataflowRunner``, the only runner allowed.

    Returns:
        The template location written.

    Raises:
        ConfigError: no template location, another runner, a missing Dataflow option
            (:func:`~beam_chunking.pipelines.run.resolve_runner`, which also stages this
            checkout's setup.py when no worker packaging is given, and refuses a temp or
            staging location off Cloud Storage).
    """
    location, rest = _template_location(argv)
    if not location:
        raise ConfigError("--template-location PATH: required (where to write the job file, e.g. gs://b/t/chunk)")
    options, spec = pipeline_options(["--runner=DataflowRunner", *rest, f"--template_location={location}"])
    if not is_dataflow(options):
        raise ConfigError(f"--runner {options.view_as(StandardOptions).runner}: templates need DataflowRunner")
    pipeline = new_pipeline(options)
    build(pipeline, spec)
    pipeline.run()  # DataflowRunner stops after writing the job file; nothing is submitted
    return location


def template_command(argv: Sequence[str]) -> int:
    """``beam-chunking template``; returns the exit status (0 written, 2 bad usage or config)."""
    if "-h" in argv or "--help" in argv:
        print(TEMPLATE_USAGE)
        return 0
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        location = build_template(argv)
    except ChunkingError as exc:
        print(f"beam-chunking: {exc}", file=sys.stderr)
        return 2
    print(f"template written: {location}")
    return 0
