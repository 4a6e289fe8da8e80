"""Build and run the chunk-documents pipeline from options or a spec, and summarise it."""
from __future__ import annotations

import importlib.util
import glob
import os
import re
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import (DirectOptions, GoogleCloudOptions, PipelineOptions, SetupOptions,
                                                  StandardOptions, WorkerOptions)

from beam_chunking.errors import ConfigError, MissingExtra
from beam_chunking.embeddings.hosted import with_options
from beam_chunking.pipelines.options import ChunkingOptions, embed_flag_values, llm_flag_values, strategy_flag_values
from beam_chunking.pipelines.spec import content_type_items, option_items, option_value, parse_spec, read_spec_file
from beam_chunking.config import JobConfig, llm_configs
from beam_chunking.transforms import ChunkFiles
from beam_chunking.transforms.lease import release_held
from beam_chunking.transforms.read import require_filesystem
from beam_chunking.transforms.runners import round_trip_is_redundant
from beam_chunking.transforms.write import abandon
from beam_chunking.pipelines.summary import RunSummary, summarize

#: The runner used when none is given: in-process, no download (the DirectRunner's first
#: choice, Prism, would fetch a binary).
LOCAL_RUNNER = "FnApiRunner"

#: Runners Beam knows only by their full class path, accepted by their short name too.
RUNNER_ALIASES = {"DaskRunner": "apache_beam.runners.dask.dask_runner.DaskRunner"}

_GCS_FOLDER = re.compile(r"^gs://[a-z0-9][-_.a-z0-9]*[a-z0-9](/|$)")

#: What a Dataflow job cannot start without: (option attribute, flag, what it is).
DATAFLOW_REQUIRED = (
    ("project", "--project", "the Google Cloud project to run in"),
    ("region", "--region", "the Dataflow region, e.g. us-central1"),
    ("temp_location", "--temp_location", "a gs:// folder for temporary and staged files"),
)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def resolve_runner(options: PipelineOptions) -> str:
    """Set and return the runner: :data:`LOCAL_RUNNER` when none is given, aliases expanded.

    Raises:
        MissingExtra: ``DaskRunner`` without ``dask.distributed`` installed, or
            ``DataflowRunner`` without Beam's Google Cloud clients (the ``gcp`` extra).
        ConfigError: ``DataflowRunner`` without one of :data:`DATAFLOW_REQUIRED`; the one
            line names every missing option, before any work starts.
    """
    standard = options.view_as(StandardOptions)
    runner = standard.runner or LOCAL_RUNNER
    if isinstance(runner, str):
        runner = RUNNER_ALIASES.get(runner, runner)
    standard.runner = runner
    name = runner if isinstance(runner, str) else type(runner).__name__
    if name.endswith("DaskRunner") and not _installed("distributed"):
        raise MissingExtra('--runner DaskRunner needs dask.distributed: pip install "beam-chunking[dask]"')
    if name.endswith("DataflowRunner"):
        if not _installed("google.cloud.storage"):  # what the gcp extra adds (apitools is in the core)
            raise MissingExtra(f"--runner {name} needs Beam's Google Cloud clients: pip install \"beam-chunking[gcp]\"")
        cloud = options.view_as(GoogleCloudOptions)
        missing = [f"{flag} ({what})" for attr, flag, what in DATAFLOW_REQUIRED if not getattr(cloud, attr)]
        if missing:
            raise ConfigError(f"--runner {name} needs " + ", ".join(missing))
        # Without a usable gs:// location Beam tries to create a default bucket instead, a
        # call that retries for minutes.
        for flag, value in (("--temp_location", cloud.temp_location), ("--staging_location", cloud.staging_location)):
            if value is not None and not _GCS_FOLDER.match(value):
                raise ConfigError(f"{flag} {value!r}: Dataflow needs a gs://BUCKET/FOLDER path")
        _package_for_workers(options)
    return name


def is_dataflow(options: PipelineOptions) -> bool:
    """Whether ``options`` name a Dataflow runner (``DataflowRunner``, ``TestDataflowRunner``)."""
    runner = options.view_as(StandardOptions).runner
    return (runner if isinstance(runner, str) else type(runner).__name__).endswith("DataflowRunner")


def new_pipeline(options: PipelineOptions) -> beam.Pipeline:
    """A pipeline for ``options``; Beam's own option errors (a malformed ``--project``) become
    one-line errors (:class:`ConfigError`)."""
    FileSystems.set_options(options)
    try:
        return beam.Pipeline(options=options)
    except ValueError as exc:
        raise ConfigError(" ".join(str(exc).split())) from None


def _package_for_workers(options: PipelineOptions) -> None:
    """Make sure remote workers can import beam-chunking: stage this checkout's setup.py when
    the user named no way of installing it (a setup file, packages, or a container image)."""
    setup = options.view_as(SetupOptions)
    worker = options.view_as(WorkerOptions)
    if setup.setup_file or setup.extra_packages or setup.requirements_file or worker.sdk_container_image:
        return
    checkout = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "setup.py")
    if not os.path.isfile(checkout):
        raise ConfigError("remote workers need beam-chunking installed: pass --sdk_container_image IMAGE "
                          "(see templates/Dockerfile) or --extra_package beam_chunking-VERSION.tar.gz (an sdist: "
                          "the workers build it for their own platform)")
    setup.setup_file = checkout


def pipeline_options(argv: Optional[List[str]] = None) -> Tuple[PipelineOptions, JobConfig]:
    """Parse command-line style ``argv`` into Beam options (runner resolved) and the job spec.

    Beam's own options pass through to the runner unchanged; the job's flags
    (:class:`~beam_chunking.pipelines.options.ChunkingOptions`) become the validated spec.
    """
    options = PipelineOptions(list(argv or []))
    spec = spec_from_options(options.view_as(ChunkingOptions))
    resolve_runner(options)
    return options, spec


def spec_from_options(opts: ChunkingOptions) -> JobConfig:
    """Overlay command-line flags on ``--config`` (flags win) and validate the result once.

    Strategy flags change the spec's strategy in place: ``--overlap 20`` with a spec naming
    ``token`` keeps ``token``; ``--strategy`` switches it. ``--content-type`` patterns come
    before the spec's ``content_types`` (so they win where both match) and replace a spec
    entry of the same pattern.
    """
    data: Dict[str, Any] = read_spec_file(opts.config) if opts.config else {}
    source = opts.config or "command line"
    for key in ("input", "exclude", "output", "decode_errors", "keep", "ocr", "compression", "num_shards",
                "max_failures", "max_deletions"):
        if getattr(opts, key) is not None:
            data[key] = getattr(opts, key)
    flag_types = content_type_items(opts.content_types or [])
    spec_types = data.get("content_types") or {}
    if flag_types and isinstance(spec_types, dict):  # else parse_spec refuses the spec's value
        # Flags first: the first matching pattern wins.
        data["content_types"] = {**flag_types, **{k: v for k, v in spec_types.items() if k not in flag_types}}
    if isinstance(data.get("num_shards"), str):  # from the command line: a number or a clear error
        data["num_shards"] = option_value(data["num_shards"])
    if opts.overwrite:
        data["overwrite"] = True
    if opts.incremental:
        data["incremental"] = True
    if opts.token_counter is not None:
        data["token_counter"] = None if opts.token_counter.lower() == "none" else opts.token_counter
    if opts.sanitise:
        data["sanitise"] = list(opts.sanitise)
    llm = {k: option_value(v) for k, v in llm_flag_values(opts).items()}
    if llm:
        base = data.get("llm") or {}
        data["llm"] = {**(base if isinstance(base, dict) else {}), **llm}
    if opts.embed is not None:
        data["embed"] = None if opts.embed.strip().lower() == "none" else opts.embed
    embed = {k: option_value(v) for k, v in embed_flag_values(opts).items()}
    if embed:
        data["embed"] = with_options(data.get("embed"), embed)
    if opts.embed_context is not None:
        # A shell passes "\n" as two characters; only those escapes are read, so that any other
        # character (an em dash, a non-Latin title) stays as typed.
        template = opts.embed_context.replace("\\n", "\n").replace("\\t", "\t")
        data["embed"] = with_context(data.get("embed"), template)
    flags: Dict[str, Any] = {k: option_value(v) for k, v in strategy_flag_values(opts).items()}
    flags.update(option_items(opts.strategy_option or [], "--strategy-option"))
    if opts.strategy is not None and opts.strategy.strip().lower() == "none" and not flags:
        data["strategy"] = None  # only the routes: no strategy for the other documents
    elif opts.strategy or flags:
        base = data.get("strategy") or {}
        base = {"name": base} if isinstance(base, str) else dict(base)
        if opts.strategy and opts.strategy != base.get("name"):
            base = {"name": opts.strategy}  # a different strategy takes none of the old options
        if "name" not in base:
            named = ", ".join(f"--{k.replace('_', '-')}" for k in flags)
            raise ConfigError(f"{named}: a strategy option needs --strategy NAME; without one, each document "
                              f"gets the strategy chosen for its content type, with its defaults")
        data["strategy"] = {**base, **flags}
    spec = parse_spec(data, source=source)
    if not spec.input:
        raise ConfigError("input: required (--input PATTERN or 'input:' in the spec)")
    if not spec.output:
        raise ConfigError("output: required (--output DIR or 'output:' in the spec)")
    return spec


def with_context(embed: Any, template: str) -> Dict[str, Any]:
    """The spec's ``embed`` value with a ``context`` template: a model name becomes its mapping
    (``minilm`` an empty one, ``openai:MODEL`` ``{provider: openai, model: MODEL}``)."""
    if embed is None or embed == "minilm":
        embed = {}
    elif isinstance(embed, str) and embed.startswith("openai:"):
        embed = {"provider": "openai", "model": embed[len("openai:"):]}
    elif not isinstance(embed, dict):
        raise ConfigError(f"--embed-context: cannot add a context to embed={embed!r}; give embed as a mapping")
    return {**embed, "context": template}


def build(pipeline: beam.Pipeline, spec: JobConfig):
    """Add the whole job to ``pipeline``."""
    return pipeline | "ChunkFiles" >> ChunkFiles(config=spec)


def release(result: Any) -> None:
    """Close what a finished run holds open: the Dask client that Beam's DaskRunner opens
    for every run and never closes."""
    client = getattr(result, "client", None)
    if client is not None and hasattr(client, "close"):
        client.close()


def run(argv: Optional[List[str]] = None, *, wait: bool = True, show_progress: bool = False) -> Optional[RunSummary]:
    """Run the job described by command-line style ``argv`` and return its summary.

    With no ``--runner`` the job runs in-process (:data:`LOCAL_RUNNER`), never touching the
    network. Any Beam pipeline option may be passed through. ``show_progress`` runs the
    pipeline in a thread and shows progress on stderr meanwhile (see
    :mod:`beam_chunking.pipelines.progress`).
    """
    options, spec = pipeline_options(argv)
    pipeline = new_pipeline(options)
    check_paths(spec)
    started = time.perf_counter()
    launched = False
    try:
        build(pipeline, spec)  # takes the output's lease
        if not show_progress:
            result = pipeline.run(test_runner_api=not round_trip_is_redundant(pipeline))
            if not wait:
                launched = True  # the job runs on; its commit releases the lease
                return None
            try:
                result.wait_until_finish()
            finally:
                release(result)
        else:
            _run_watched(pipeline, options, spec)
    except Exception:
        # Its files would take space (a full disk fails the next run too) and are never
        # published: remove them, unless the commit had switched the manifest to them.
        abandon(spec.output)
        raise
    finally:
        if not launched:  # the commit released it; after a failure, free the output at once
            release_held(spec.output)
    return summarize(spec.output, time.perf_counter() - started, max_failures=spec.max_failures)


def _run_watched(pipeline: beam.Pipeline, options: PipelineOptions, spec: JobConfig) -> None:
    from beam_chunking.pipelines.progress import matched_totals, watch
    from beam_chunking.transforms.progress import PROGRESS

    failure: List[BaseException] = []

    def job() -> None:
        try:
            result = pipeline.run(test_runner_api=not round_trip_is_redundant(pipeline))
            try:
                result.wait_until_finish()
            finally:
                release(result)
        except BaseException as exc:  # handed to the caller's thread below
            failure.append(exc)

    runner = options.view_as(StandardOptions).runner  # views: parsing every option again costs more
    in_process = runner == LOCAL_RUNNER and options.view_as(DirectOptions).direct_running_mode != "multi_processing"
    # Totals need a full listing; only the in-process runner can show progress against them,
    # and a launch for a remote runner should not list a whole bucket.
    totals = matched_totals(spec.input, spec.exclude) if in_process else None
    PROGRESS.reset()
    thread = threading.Thread(target=job, name="beam-chunking-job", daemon=True)
    thread.start()
    watch(thread, totals, str(runner).rsplit(".", 1)[-1])
    thread.join()
    if failure:
        raise failure[0]


def _pattern_hint(pattern: str) -> str:
    """What a local pattern that matches no file probably meant, as ``"; ..."`` (or ``""``)."""
    if pattern.startswith("~"):
        return (f"; a shell does not expand ~ inside quotes: write {os.path.expanduser(pattern)}, or put the ~ "
                "outside the quotes")
    found = glob.glob(pattern) if "**" not in pattern else []
    if found and all(os.path.isdir(p) for p in found):
        folder = pattern.rsplit("/", 1)[0] if "/" in pattern else "."
        return f": it matches only folders; did you mean '{folder}/**' (files in subfolders too)?"
    return ""


def check_paths(spec: JobConfig) -> None:
    """Fail before any work on inputs that match nothing and on an output that is a file.

    Raises:
        ConfigError: naming the pattern or the path, with what to do instead.
        MissingExtra: a ``gs://`` input, output, answer cache or vector cache without the
            ``gcp`` extra.
    """
    caches = [llm.cache for llm in llm_configs(spec.strategy) if isinstance(llm.cache, str)]
    caches += [c for c in [getattr(spec.embed, "cache_location", None)] if isinstance(c, str)]  # a hosted model's
    for path in (*spec.input, spec.output, *caches):
        require_filesystem(path)
    for pattern in spec.input:
        local = FileSystems.get_scheme(pattern) is None
        if local and os.path.isdir(pattern):
            raise ConfigError(f"--input {pattern}: is a folder; to read the files in it use "
                              f"'{pattern.rstrip('/')}/*' (or '/**' to include subfolders)")
        try:
            found = FileSystems.match([pattern], limits=[1])[0].metadata_list
        except Exception as exc:  # Beam raises BeamIOError for an unreadable prefix
            raise ConfigError(f"--input {pattern}: cannot be listed: {exc}") from None
        if not found:
            raise ConfigError(f"--input {pattern}: matches no file{_pattern_hint(pattern) if local else ''}")
    output = spec.output
    if FileSystems.get_scheme(output) is None and os.path.exists(output) and not os.path.isdir(output):
        raise ConfigError(f"--output {output}: is a file, not a folder")
