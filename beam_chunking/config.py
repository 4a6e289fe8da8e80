"""JobConfig: the one typed description of a chunking job.

The YAML spec, the command line and ``beam_chunking.transforms.ChunkFiles`` all build or
take this object, so a pipeline-level option (input, output, limits, compression, shards,
embedding ...) is declared once, here, with its default and unit.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, List, Mapping, Optional, Tuple

from beam_chunking.errors import ConfigError
from beam_chunking.llm.config import LLMConfig
from beam_chunking.parsers import check_content_types
from beam_chunking.parsers.limits import DEFAULT_LIMITS, DEFAULT_MAX_BYTES, ParseLimits
from beam_chunking.parsers.ocr import DEFAULT_OCR, check_ocr
from beam_chunking.registry import DEFAULT_STRATEGY, JOB_WIDE_OPTION, get
from beam_chunking.strategies import Router
from beam_chunking.strategies.base import Chunker


@dataclass(frozen=True)
class JobConfig:
    """A chunking job. Build one from YAML with ``beam_chunking.pipelines.spec.parse_spec``,
    from flags with ``beam-chunking run``, or directly.

    Args:
        input: File patterns to read (local or ``gs://``).
        output: Output folder of the chunks and documents tables.
        strategy: A strategy or ``Router``. Default ``recursive`` (512/50 characters).
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
            embedding stage.
        max_failures: Failed documents a run may have and still exit 0: a count (``"3"``) or
            a percentage (``"5%"``). Default ``"0"``.
        llm: The chat model of strategies that call one (``proposition``, ``resume``) and have
            no ``llm`` of their own: an :class:`~beam_chunking.llm.LLMConfig` or a mapping of
            its options. Default ``None`` (their own setting, else ``LLMConfig()``).
    """

    input: Tuple[str, ...] = ()
    output: Optional[str] = None
    strategy: Chunker = field(default_factory=lambda: get(DEFAULT_STRATEGY))
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
    max_failures: str = "0"
    llm: Optional[LLMConfig] = None

    def __post_init__(self) -> None:
        check_ocr(self.ocr)
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
