"""JobConfig: the one typed description of a chunking job.

The YAML spec, the command line and ``beam_chunking.transforms.ChunkFiles`` all build or
take this object, so a pipeline-level option (input, output, limits, compression, shards,
embedding ...) is declared once, here, with its default and unit.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from beam_chunking.embeddings.context import check_context
from beam_chunking.errors import ConfigError
from beam_chunking.llm.config import LLMConfig
from beam_chunking.parsers import check_content_types
from beam_chunking.parsers.limits import DEFAULT_LIMITS, DEFAULT_MAX_BYTES, ParseLimits
from beam_chunking.parsers.ocr import DEFAULT_OCR, check_ocr
from beam_chunking.default_strategy import default_strategy
from beam_chunking.registry import JOB_WIDE_OPTION
from beam_chunking.strategies import Router
from beam_chunking.sizing import EMBEDDER_TOKENIZER, package_path
from beam_chunking.strategies.base import Chunker

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobConfig:
    """A chunking job. Build one from YAML with ``beam_chunking.pipelines.spec.parse_spec``,
    from flags with ``beam-chunking run``, or directly.

    Args:
        input: File patterns to read (local or ``gs://``).
        output: Output folder of the chunks and documents tables.
        strategy: A strategy or ``Router``, used for every document. Default: chosen per
            document by its content type (:func:`~beam_chunking.default_strategy.default_strategy`:
            ``code`` for source and data files, ``transcript`` for subtitles, ``structural``
            for everything else, each with its defaults).
        exclude: Patterns of matched files to leave out (``fnmatch`` on the full path).
        content_types: ``(pattern, content type)`` pairs forcing the type of matching files
            (``fnmatch`` on the full path, as ``exclude``; the first match wins), e.g.
            ``(("*.log", "text/plain"),)``; :meth:`of` also takes a mapping. Default none:
            every type is detected from the bytes and the name.
        overwrite: Replace an existing output. Default ``False``.
        incremental: Compare with the output's previous run and process only new and changed
            files; unchanged documents keep their rows (embeddings included), copied without
            parsing, chunking or embedding; the changes table lists new, changed, unchanged
            and deleted documents. Implies replacing the output (no ``overwrite`` needed); an
            empty or missing output gets a full run. Needs ``num_shards`` 0. Default ``False``.
        token_counter: Sizer filling ``token_count`` for character strategies. Default
            ``"cl100k_base"``; ``None`` leaves it empty.
        decode_errors: What to do with text bytes that are neither UTF-8 nor in a legacy
            encoding that charset-normalizer recognises: ``"strict"`` (default) fails the
            document; ``"replace"`` decodes them as UTF-8 with U+FFFD, counted.
        compression: Parquet codec: ``"zstd"`` (default), ``"snappy"``, ``"gzip"`` or ``"none"``.
        metadata: Tags copied onto every chunk.
        num_shards: Files per table; 0 (default) writes one per bundle, ``N`` exactly ``N``.
        max_bytes: Largest document read (and largest inflated ``.gz``), in bytes. Default 256 MiB.
        limits: Parser safety caps (pages, rows, zip sizes). Default ``ParseLimits()``.
        keep: Parts that parsers drop by default to keep instead: ``"page_furniture"``
            (running headers, footers, page numbers), ``"contents"`` (tables of contents).
            Default none: both are dropped and recorded in the documents table.
        ocr: Optical character recognition of images and scanned PDF pages: ``"auto"``
            (default: images and PDF pages without a text layer, when the ``ocr`` extra is
            installed; without it an image fails naming the extra and a PDF's textless pages
            are counted), ``"always"`` (every PDF page, text layer or not) or ``"never"``.
        embed: Embedding model for the ``embedding`` column (``"minilm"``,
            ``"openai:MODEL"`` or an embedder such as a
            :class:`~beam_chunking.embeddings.HostedEmbedder`); default ``None``, no
            embedding stage. Strategies with ``tokenizer="embedder"`` count in its tokenizer
            (:func:`with_embedder_tokenizer`).
        embed_context: A template of what is embedded for each chunk, such as
            ``"{title}\n{section_path}\n\n{text}"`` (fields: see
            :mod:`beam_chunking.embeddings.context`); the ``text`` column stays exact. In the
            spec, ``embed: {context: ...}``. Default ``None``: the chunk's text alone.
        max_failures: Failed documents a run may have and still exit 0: a count (``"3"``) or
            a percentage (``"5%"``). Default ``"0"``.
        max_deletions: Documents of the previous output that an ``overwrite`` or
            ``incremental`` run may delete (leave out of the new output), as a count or a
            percentage of them; a run over it is refused before any work. Default ``"50%"``:
            a mistyped input pattern drops most documents at once, a change in a corpus
            rarely does; ``"100%"`` allows any.
        llm: The chat model of strategies that call one (``proposition``, ``resume``) and have
            no ``llm`` of their own: an :class:`~beam_chunking.llm.LLMConfig` or a mapping of
            its options. Default ``None`` (their own setting, else ``LLMConfig()``).
    """

    input: Tuple[str, ...] = ()
    output: Optional[str] = None
    strategy: Chunker = field(default_factory=default_strategy)
    exclude: Tuple[str, ...] = ()
    content_types: Tuple[Tuple[str, str], ...] = ()
    overwrite: bool = False
    incremental: bool = False
    token_counter: Optional[str] = "cl100k_base"
    decode_errors: str = "strict"
    compression: str = "zstd"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    num_shards: int = 0
    max_bytes: int = DEFAULT_MAX_BYTES
    limits: ParseLimits = DEFAULT_LIMITS
    keep: Tuple[str, ...] = ()
    ocr: str = DEFAULT_OCR
    embed: Optional[Any] = None
    embed_context: Optional[str] = None
    max_failures: str = "0"
    max_deletions: str = "50%"
    llm: Optional[LLMConfig] = None

    def __post_init__(self) -> None:
        check_ocr(self.ocr)
        check_context(self.embed_context, "embed_context")
        for name in ("max_failures", "max_deletions"):  # a typo here fails now, not after the run
            object.__setattr__(self, name, check_limit(getattr(self, name), name))
        if self.embed_context is not None and self.embed is None:
            raise ConfigError("embed_context: a context template needs an embedding model (embed)", field="embed_context")
        if uses_embedder_tokenizer(self.strategy):
            object.__setattr__(self, "strategy", with_embedder_tokenizer(self.strategy, self.embed))
        if self.llm is not None:
            llm = LLMConfig.of(self.llm)
            object.__setattr__(self, "llm", llm)
            object.__setattr__(self, "strategy", with_llm(self.strategy, llm))

    @classmethod
    def of(cls, **options: Any) -> "JobConfig":
        """Build a config from keyword options; a pattern may be a string or a list, and
        ``content_types`` a mapping of pattern to content type.

        Raises:
            ConfigError: an option that is not a field, naming the fields; a content type
                without a parser.
        """
        known = [f.name for f in dataclasses.fields(cls)]
        for name in options:
            if name not in known:
                raise ConfigError(f"{name!r} is not a job option (options: {', '.join(known)})", field=name)
        for name in ("input", "exclude", "keep"):
            if isinstance(options.get(name), str):
                options[name] = (options[name],)
            elif options.get(name) is not None:
                options[name] = tuple(options[name])
        if "content_types" in options:
            options["content_types"] = check_content_types(options["content_types"])
        if options.get("strategy") is None:
            options.pop("strategy", None)
        return cls(**options)


def check_limit(value: Any, name: str) -> str:
    """Validate a limit given as a count (``3``) or a percentage (``"5%"``); its text.

    Raises:
        ConfigError: anything else, naming ``name``.
    """
    text = str(value).strip()
    number = text[:-1] if text.endswith("%") else text
    try:
        ok = float(number) >= 0 and (text.endswith("%") or float(number).is_integer())
    except ValueError:
        ok = False
    if isinstance(value, bool) or not ok or (text.endswith("%") and float(number) > 100):
        raise ConfigError(f"{name}: expected a count such as 3 or a percentage such as 5%, got {value!r}", field=name)
    return text


def allowed(limit: str, total: int) -> int:
    """How many of ``total`` a limit checked by :func:`check_limit` allows."""
    if limit.endswith("%"):
        return int(total * float(limit[:-1]) / 100)
    return int(float(limit))


def with_llm(strategy: Any, llm: LLMConfig) -> Any:
    """``strategy`` with ``llm`` wherever a strategy inside it calls a model and names none.

    Walks routes, refinements and parent/child sides; a strategy's own ``llm`` is kept.
    """
    if isinstance(strategy, Router):
        routes = {k: with_llm(v, llm) for k, v in strategy.routes.items()}
        default = None if strategy.default is None else with_llm(strategy.default, llm)
        return Router(routes, default=default)
    if not dataclasses.is_dataclass(strategy):
        return strategy
    changes = {}
    for f in dataclasses.fields(strategy):
        if not f.init:
            continue
        value = getattr(strategy, f.name)
        if f.name == JOB_WIDE_OPTION and value is None:
            changes[f.name] = llm
        elif isinstance(value, Chunker):
            new = with_llm(value, llm)
            if new is not value:
                changes[f.name] = new
    return dataclasses.replace(strategy, **changes) if changes else strategy


def llm_configs(strategy: Any) -> List[LLMConfig]:
    """Every :class:`~beam_chunking.llm.LLMConfig` that ``strategy`` and the strategies
    inside it (routes, refinements, parent and child sides, as :func:`with_llm` walks them)
    call a model with."""
    if isinstance(strategy, Router):
        inner = [*strategy.routes.values(), *([strategy.default] if strategy.default is not None else [])]
        return [llm for s in inner for llm in llm_configs(s)]
    if not dataclasses.is_dataclass(strategy):
        return []
    found: List[LLMConfig] = []
    for f in dataclasses.fields(strategy):
        if not f.init:  # derived state, as with_llm skips it
            continue
        value = getattr(strategy, f.name)
        if isinstance(value, LLMConfig):
            found.append(value)
        elif isinstance(value, Chunker):
            found += llm_configs(value)
    return found


def _inner_strategies(strategy: Any) -> List[Any]:
    """The strategies inside ``strategy``: routes, refinements, parent and child sides."""
    if isinstance(strategy, Router):
        return [*strategy.routes.values(), *([strategy.default] if strategy.default is not None else [])]
    if not dataclasses.is_dataclass(strategy):
        return []
    return [getattr(strategy, f.name) for f in dataclasses.fields(strategy)
            if f.init and isinstance(getattr(strategy, f.name), Chunker)]


def uses_embedder_tokenizer(strategy: Any) -> bool:
    """Whether ``strategy`` or a strategy inside it has ``tokenizer="embedder"``."""
    return (getattr(strategy, "tokenizer", None) == EMBEDDER_TOKENIZER
            or any(uses_embedder_tokenizer(s) for s in _inner_strategies(strategy)))


def embedder_tokenizer(embed: Any) -> Tuple[str, Optional[int]]:
    """The ``tokenizer`` value (``"hf:PATH"``, ``"hf:pkg:PACKAGE/FILE"`` for a model shipped in
    a pip package) of the job's embedding model, and its
    ``max_tokens`` (``None`` when it has none).

    Raises:
        ConfigError: the job has no embedding model, or one without a local tokenizer (a
            hosted model); one line each, saying what to set instead.
    """
    if embed is None:
        raise ConfigError("tokenizer: embedder counts in the job's embedding model's tokens, and the job has no "
                          "embedding model: set embed (spec embed: minilm, CLI --embed minilm) or give tokenizer: "
                          "hf:PATH/tokenizer.json", field="tokenizer")
    from beam_chunking.embeddings.resolve import resolve_embedder

    model = resolve_embedder(embed, "embed")
    name = getattr(model, "name", type(model).__name__)
    path = getattr(model, "tokenizer_path", None)
    vocab = getattr(model, "vocab_path", None)
    if vocab and not path and not getattr(model, "lowercase", True):
        raise ConfigError(f"tokenizer: embedder cannot yet count with the cased vocab.txt of embedding model "
                          f"{name!r}: give tokenizer: hf:PATH/tokenizer.json", field="tokenizer")
    path = path or vocab
    if not isinstance(path, str) or not path:
        raise ConfigError(f"tokenizer: embedder needs a local tokenizer and the embedding model {name!r} has none "
                          "(a hosted model counts on its server): give tokenizer: hf:PATH/tokenizer.json or a "
                          "tiktoken encoding such as cl100k_base", field="tokenizer")
    limit = getattr(model, "max_tokens", None)
    # A model shipped in a pip package is named relative to it: the same on every worker.
    return "hf:" + package_path(path), limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def with_embedder_tokenizer(strategy: Any, embed: Any) -> Any:
    """``strategy`` with ``tokenizer="embedder"`` replaced, wherever it appears (routes,
    refinements, parent and child sides), by the ``hf:PATH`` of the job's embedding model.

    A ceiling above the model's ``max_tokens`` is kept but logged: such chunks are windowed
    when embedded.

    Raises:
        ConfigError: as :func:`embedder_tokenizer`.
    """
    resolved: List[Tuple[str, Optional[int]]] = []

    def walk(s: Any) -> Any:
        if isinstance(s, Router):
            routes = {k: walk(v) for k, v in s.routes.items()}
            return Router(routes, default=None if s.default is None else walk(s.default))
        if not dataclasses.is_dataclass(s):
            return s
        changes: Dict[str, Any] = {}
        for f in dataclasses.fields(s):
            if not f.init:
                continue
            value = getattr(s, f.name)
            if f.name == "tokenizer" and value == EMBEDDER_TOKENIZER:
                if not resolved:
                    resolved.append(embedder_tokenizer(embed))
                changes[f.name] = resolved[0][0]
            elif isinstance(value, Chunker):
                new = walk(value)
                if new is not value:
                    changes[f.name] = new
        if not changes:
            return s
        out = dataclasses.replace(s, **changes)
        ceiling, limit = getattr(out, "max_chunk_size", None), resolved[0][1] if resolved else None
        if "tokenizer" in changes and isinstance(ceiling, int) and limit is not None and ceiling > limit:
            _LOG.warning("%s: max_chunk_size=%d is above the embedding model's max_tokens=%d: longer chunks will "
                         "be windowed when embedded", type(out).__name__, ceiling, limit)
        return out

    return walk(strategy)


def token_count_units(config: JobConfig) -> Dict[str, str]:
    """What each strategy's ``token_count`` counts, by strategy name (the manifest's
    ``token_count`` field): a token strategy's own unit, else the job's ``token_counter``."""
    out: Dict[str, str] = {}

    def walk(s: Any) -> None:
        inner = _inner_strategies(s)
        if not isinstance(s, Router) and getattr(s, "name", ""):
            unit = s.unit
            if unit in ("characters", "unbounded") or not hasattr(s, "tokenizer"):
                unit = f"{config.token_counter} tokens" if config.token_counter else "not counted"
            out.setdefault(s.name, unit)
        for sub in inner:
            walk(sub)

    walk(config.strategy)
    return out
