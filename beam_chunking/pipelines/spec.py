r"""The declarative pipeline spec (YAML), validated fully before any pipeline is built.

Example::

    input: docs/**
    content_types: {"*.log": text/plain, "*/mail/*": message/rfc822}   # force a type by pattern
    output: out/
    overwrite: true
    incremental: true              # process only new and changed files; see the changes table
    strategy: {name: recursive, max_chunk_size: 800, overlap: 80}
    routes:
      text/markdown: {name: sentence, max_chunk_size: 256, overlap: 32}
    token_counter: cl100k_base
    decode_errors: strict
    compression: zstd
    metadata: {team: search}
    max_bytes: 268435456          # largest file read (and largest inflated .gz), bytes
    limits: {max_pages: 5000, max_rows: 1000000, max_parse_seconds: 300, watchdog: true}
    keep: [page_furniture]         # keep what parsers drop by default (page_furniture, contents)
    ocr: auto                      # OCR of images and scanned PDF pages: auto, always or never
    refine: {max_chunk_size: 1500, embedder: minilm}   # sub-split oversized chunks
    sanitise: {redact: [email, phone, secret], functions: ["mypkg.clean:strip_footer"]}
    llm: {model: gpt-4o-mini, base_url: "http://127.0.0.1:8000/v1", cache: default}
    embed: minilm                  # or {model_path: m.onnx, tokenizer_path: tokenizer.json}; add
                                   # context: "{title}\n{section_path}\n\n{text}" to embed each chunk in context
    # embed: {provider: openai, model: text-embedding-3-small, dimensions: 512}   # a hosted model

Every error names the key path and the bad value, e.g.
``routes.text/markdown.max_chunk_size: ...``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Sequence, Tuple

import yaml

from beam_chunking.config import JobConfig, allowed, check_limit
from beam_chunking.embeddings.context import check_context
from beam_chunking.embeddings.resolve import resolve_embedder
from beam_chunking.errors import ConfigError
from beam_chunking.llm.config import LLMConfig
from beam_chunking.default_strategy import DEFAULT_ROUTES
from beam_chunking.parsers import PARSERS, check_content_types, closest_content_type
from beam_chunking.parsers.decode import ERROR_POLICIES
from beam_chunking.parsers.drops import check_keep
from beam_chunking.parsers.limits import ParseLimits
from beam_chunking.parsers.ocr import check_ocr
from beam_chunking.refiners import Refined, SemanticRefiner
from beam_chunking.refiners.sanitise import PLACEHOLDERS, Sanitiser
from beam_chunking.registry import DEFAULT_STRATEGY, get, options as strategy_options, registry
from beam_chunking.schema import COMPRESSIONS, RESERVED_TYPES, encode_metadata_value
from beam_chunking.sizing import get_sizer
from beam_chunking.strategies import Router
from beam_chunking.strategies.base import Chunker

KEYS = ("input", "exclude", "content_types", "output", "overwrite", "incremental", "strategy", "routes",
        "token_counter", "decode_errors", "compression", "metadata", "num_shards", "max_bytes", "limits", "keep",
        "ocr", "refine", "sanitise", "embed", "llm", "max_failures",
        "max_deletions")


def _patterns(key: str, value: Any) -> Tuple[str, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, (list, tuple)) or not values or not all(isinstance(v, str) and v for v in values):
        raise ConfigError(f"{key}: expected a file pattern or a list of them, got {value!r}")
    return tuple(dict.fromkeys(values))


def check_max_failures(value: Any) -> str:
    """Validate ``max_failures``: a count (``3``) or a percentage of the documents (``"5%"``).

    Raises:
        ConfigError: anything else.
    """
    return check_limit(value, "max_failures")


def failures_allowed(max_failures: str, documents: int) -> int:
    """How many failed documents ``max_failures`` allows out of ``documents``."""
    return allowed(max_failures, documents)


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def option_value(text: str) -> Any:
    """A command-line option value read as YAML (``300`` -> 300, ``[a, b]`` -> ``("a", "b")``).

    Raises:
        ConfigError: the text is not YAML.
    """
    try:
        return _tuples(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise ConfigError(f"the value {text!r} is not YAML ({' '.join(str(exc).split())})") from None


def option_items(items: Sequence[str], flag: str) -> Dict[str, Any]:
    """``KEY=VALUE`` words of a repeatable flag as a mapping (dashes in keys become ``_``).

    Raises:
        ConfigError: an item without ``=`` or with a value that is not YAML, naming ``flag``.
    """
    options: Dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE")
        try:
            options[key.strip().replace("-", "_")] = option_value(raw)
        except ConfigError as exc:
            raise ConfigError(f"{flag} {item!r}: {exc}") from None
    return options


def content_type_items(items: Sequence[str], flag: str = "--content-type") -> Dict[str, str]:
    """``PATTERN=TYPE`` words of a repeatable flag as a pattern -> content type mapping, in order.

    The type is what follows the last ``=`` (content types hold none; a pattern may).

    Raises:
        ConfigError: an item without ``=``, or with an empty pattern or type, naming ``flag``.
    """
    out: Dict[str, str] = {}
    for item in items:
        pattern, sep, ctype = item.rpartition("=")
        if not sep or not pattern.strip() or not ctype.strip():
            raise ConfigError(f"{flag} {item!r}: expected PATTERN=TYPE, e.g. '*.log=text/plain'")
        out[pattern.strip()] = ctype.strip()
    return out


def check_route_key(ctype: str) -> None:
    """Refuse a route key that no document can have: a content type without a parser, or a
    ``major/*`` wildcard that covers none.

    Raises:
        ConfigError: naming the key, with the closest known content type.
    """
    if ctype in PARSERS or (ctype.endswith("/*") and any(k.startswith(ctype[:-1]) for k in PARSERS)):
        return
    raise ConfigError(f"routes.{ctype}: no document has this content type{closest_content_type(ctype)}")


def _spelled(strategy: Chunker) -> Dict[str, Any]:
    """``strategy`` as a spec spells it: its name and the options that differ from the defaults."""
    changed = {f.name: getattr(strategy, f.name) for f in dataclasses.fields(strategy)
               if f.init and f.default is not dataclasses.MISSING and getattr(strategy, f.name) != f.default}
    return {"name": strategy.name, **changed}


def build_strategy(value: Any, path: str) -> Chunker:
    """Build a strategy from ``{name: ..., **options}`` (or a bare name) at key ``path``."""
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: expected a mapping with 'name', got {value!r}")
    options = dict(value)
    if "name" not in options:
        raise ConfigError(f"{path}.name: required with options ({', '.join(map(str, options)) or 'none'}); "
                          f"without a strategy, each document gets the one chosen for its content type "
                          f"({DEFAULT_STRATEGY} for prose; `beam-chunking strategies` lists them)")
    name = options.pop("name")
    known_strategies = registry()
    if name not in known_strategies:
        raise ConfigError(f"{path}.name: {name!r} is not a strategy; choose one of {', '.join(sorted(known_strategies))}")
    cls = known_strategies[name]
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    for key in options:
        if key not in known:
            raise ConfigError(f"{path}.{key}: unknown option of strategy {name!r} (options: {', '.join(sorted(known))})")
    # A strategy inside a strategy (parent_child's parent and child) is spelled like the
    # strategy itself: a name or {name: ..., **options}.
    # Options without a name change the side's default strategy.
    nested = {o.name: o.default for o in strategy_options(cls) if isinstance(o.default, Chunker)}
    # YAML has lists only; strategy fields hold tuples (hashable, picklable, comparable).
    options = {k: build_strategy(v if not isinstance(v, dict) or "name" in v else {**_spelled(nested[k]), **v},
                                 f"{path}.{k}")
               if k in nested and isinstance(v, (str, dict)) else _tuples(v) for k, v in options.items()}
    try:
        return cls(**options)
    except ConfigError as exc:
        where = f"{path}.{exc.field}" if exc.field else path
        hint = ""
        if exc.field == "overlap" and "overlap" not in options and "max_chunk_size" in options:
            hint = " (the default overlap; set a smaller one: --overlap N, or overlap: N in the spec)"
        raise ConfigError(f"{where}: {exc}{hint}", field=exc.field) from None


def sanitiser(value: Any) -> Sanitiser:
    """``sanitise:`` -> a :class:`~beam_chunking.refiners.sanitise.Sanitiser`.

    Accepts ``redact`` (the built-in redactor), ``"package.module:function"``, a list of
    those, or a mapping of ``Sanitiser`` options (``redact``, ``functions``).
    """
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, str) for v in value):
            raise ConfigError(f"sanitise: expected 'redact' or 'package.module:function' names, got {value!r}")
        value = {"redact": tuple(PLACEHOLDERS) if "redact" in value else (),
                 "functions": tuple(v for v in value if v != "redact")}
    if not isinstance(value, dict):
        raise ConfigError(f"sanitise: expected a name, a list of names or a mapping, got {value!r}")
    return _built("sanitise", Sanitiser, {k: _tuples(v) for k, v in value.items()})


def _built(key: str, cls: type, options: Dict[str, Any]) -> Any:
    """``cls(**options)`` for spec key ``key``; unknown and invalid options name ``key.option``."""
    known = {f.name for f in dataclasses.fields(cls)}
    for name in options:
        if name not in known:
            raise ConfigError(f"{key}.{name}: unknown option (options: {', '.join(sorted(known))})")
    try:
        return cls(**options)
    except ConfigError as exc:
        raise ConfigError(f"{key}.{exc.field}: {exc}", field=exc.field) from None


def _refiner(value: Any) -> SemanticRefiner:
    """``refine: {max_chunk_size: 800, embedder: minilm}`` -> a :class:`SemanticRefiner`."""
    if not isinstance(value, dict):
        raise ConfigError(f"refine: expected a mapping of SemanticRefiner options, got {value!r}")
    return _built("refine", SemanticRefiner, value)


def parse_spec(data: Any, source: str = "spec") -> JobConfig:
    """Validate a spec mapping and return a :class:`JobConfig`.

    Raises:
        ConfigError: naming the key path and the bad value.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the spec must be a mapping, got {type(data).__name__}")
    for key in data:
        if key not in KEYS:
            raise ConfigError(f"{source}: unknown key {key!r} (known: {', '.join(KEYS)})")
    out: Dict[str, Any] = {}
    for key in ("input", "exclude"):
        if data.get(key) not in (None, [], ()):
            out[key] = _patterns(key, data[key])
    if data.get("content_types") not in (None, {}):
        if not isinstance(data["content_types"], dict):
            raise ConfigError(f"content_types: expected a mapping of file pattern to content type "
                              f"(\"*.log\": text/plain), got {data['content_types']!r}")
        out["content_types"] = check_content_types(data["content_types"])
    if "output" in data:
        if not isinstance(data["output"], str) or not data["output"]:
            raise ConfigError(f"output: expected a non-empty string, got {data['output']!r}")
        out["output"] = data["output"]
    if "max_failures" in data:
        out["max_failures"] = check_max_failures(data["max_failures"])
    if "max_deletions" in data:
        out["max_deletions"] = check_limit(data["max_deletions"], "max_deletions")
    if "overwrite" in data:
        if not isinstance(data["overwrite"], bool):
            raise ConfigError(f"overwrite: expected true or false, got {data['overwrite']!r}")
        out["overwrite"] = data["overwrite"]
    if "incremental" in data:
        if not isinstance(data["incremental"], bool):
            raise ConfigError(f"incremental: expected true or false, got {data['incremental']!r}")
        out["incremental"] = data["incremental"]
    routes = data.get("routes") or {}
    if not isinstance(routes, dict):
        raise ConfigError(f"routes: expected a mapping of content type to strategy, got {routes!r}")
    built = {}
    if "strategy" in data and data["strategy"] is None:
        # No fallback: a document whose type no route names fails, naming its type.
        if not routes:
            raise ConfigError("strategy: null (no strategy for unrouted documents) needs routes: a content "
                              "type -> strategy mapping")
        default = None
    elif "strategy" in data:
        default = build_strategy(data["strategy"], "strategy")
    else:  # the routes chosen per content type, less those the spec's own routes cover
        default = get(DEFAULT_STRATEGY)
        built = {ctype: get(name) for ctype, name in DEFAULT_ROUTES.items()
                 if ctype not in routes and ctype.split("/", 1)[0] + "/*" not in routes}
    for ctype, value in routes.items():
        if not isinstance(ctype, str) or "/" not in ctype:
            raise ConfigError(f"routes.{ctype}: keys must be content types like 'text/markdown'")
        check_route_key(ctype)
        built[ctype] = build_strategy(value, f"routes.{ctype}")
    out["strategy"] = Router(built, default=default) if built else default
    if data.get("refine") is not None:
        out["strategy"] = Refined(out["strategy"], _refiner(data["refine"]))
    if data.get("sanitise") not in (None, [], ()):
        out["strategy"] = Refined(out["strategy"], sanitiser(data["sanitise"]))
    if data.get("llm") is not None:
        try:
            out["llm"] = LLMConfig.of(data["llm"])
        except ConfigError as exc:
            where = f"llm.{exc.field}" if exc.field else "llm"
            raise ConfigError(f"{where}: {exc}", field=exc.field) from None
    if data.get("embed") is not None:
        embed = data["embed"]
        if isinstance(embed, dict) and "context" in embed:
            embed = dict(embed)
            out["embed_context"] = check_context(embed.pop("context"), "embed.context")
            embed = embed or "minilm"  # only a context: the packaged model
        try:
            out["embed"] = resolve_embedder(_tuples(embed), "embed")
        except ConfigError as exc:
            raise ConfigError(f"embed: {exc}", field=exc.field) from None
        except TypeError as exc:
            raise ConfigError(f"embed: {exc}") from None
    if "token_counter" in data:
        tc = data["token_counter"]
        if tc is not None:
            if not isinstance(tc, str):
                raise ConfigError(f"token_counter: expected a sizer name or null, got {tc!r}")
            try:
                get_sizer(tc)
            except Exception as exc:
                raise ConfigError(f"token_counter: {exc}") from None
        out["token_counter"] = tc
    if "decode_errors" in data:
        if data["decode_errors"] not in ERROR_POLICIES:
            raise ConfigError(f"decode_errors: {data['decode_errors']!r} must be one of {ERROR_POLICIES}")
        out["decode_errors"] = data["decode_errors"]
    if "compression" in data:
        if data["compression"] not in COMPRESSIONS:
            raise ConfigError(f"compression: {data['compression']!r} must be one of {COMPRESSIONS}")
        out["compression"] = data["compression"]
    if "num_shards" in data:
        n = data["num_shards"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ConfigError(f"num_shards: expected an integer >= 0, got {n!r}")
        out["num_shards"] = n
    if "max_bytes" in data:
        n = data["max_bytes"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"max_bytes: expected a positive integer (bytes), got {n!r}")
        out["max_bytes"] = n
    if "limits" in data:
        if not isinstance(data["limits"], dict):
            raise ConfigError(f"limits: expected a mapping of limit name to value, got {data['limits']!r}")
        try:
            out["limits"] = ParseLimits.from_mapping(data["limits"])
        except ConfigError as exc:
            raise ConfigError(f"limits.{exc.field}: {exc}", field=exc.field) from None
    if data.get("keep") not in (None, [], ()):
        keep = data["keep"]
        names = [keep] if isinstance(keep, str) else keep
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"keep: expected a part name or a list of them, got {keep!r}")
        out["keep"] = tuple(sorted(check_keep(names)))
    if "ocr" in data:
        out["ocr"] = check_ocr(data["ocr"])
    if "metadata" in data:
        meta = data["metadata"]
        if not isinstance(meta, dict):
            raise ConfigError(f"metadata: expected a mapping, got {meta!r}")
        for k, v in meta.items():
            if k in RESERVED_TYPES:
                raise ConfigError(f"metadata.{k}: reserved key; it is set by parsers and strategies")
            try:
                encode_metadata_value(str(k), v)
            except Exception as exc:
                raise ConfigError(f"metadata.{k}: {exc}") from None
        out["metadata"] = dict(meta)
    return JobConfig(**out)


def read_spec_file(path: str) -> Dict[str, Any]:
    """Read a YAML spec file (a local path or ``gs://``) into a mapping (not yet validated)."""
    from apache_beam.io.filesystems import FileSystems  # only here: previews build strategies without Beam

    try:
        if FileSystems.get_scheme(path) is None:
            with open(path, encoding="utf-8") as f:
                data = yaml.safe_load(f)
        else:  # gs:// and any other Beam filesystem
            from beam_chunking.transforms.read import require_filesystem

            require_filesystem(path)
            with FileSystems.open(path) as f:
                data = yaml.safe_load(f.read().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the spec: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: the spec must be a mapping, got {type(data).__name__}")
    return data or {}


def load_spec(path: str) -> JobConfig:
    """Read and validate a YAML spec file."""
    return parse_spec(read_spec_file(path), source=path)
