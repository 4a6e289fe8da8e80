"""Pipeline options: the chunking job's own flags beside every Beam option."""
from __future__ import annotations

import dataclasses
import functools
from typing import Dict, List, Tuple

from apache_beam.options.pipeline_options import PipelineOptions

from beam_chunking.embeddings.hosted import HostedEmbedder
from beam_chunking.llm.config import LLMConfig
from beam_chunking.parsers.decode import ERROR_POLICIES
from beam_chunking.parsers.drops import DROPS
from beam_chunking.parsers.ocr import OCR_HELP
from beam_chunking.schema import COMPRESSIONS


#: Prefix of the parsed-argument names that hold strategy options.
OPTION_PREFIX = "strategy_option__"


@functools.lru_cache(maxsize=1)  # Beam re-parses its flags for every options object and view
def strategy_flags() -> Dict[str, Tuple[str, List[str]]]:
    """One flag per strategy option name across the registry: ``name -> (help, strategies)``.

    Derived from the strategies' dataclass fields and docstrings, plugins included, so a new
    option or strategy gets its flag with no change here.
    """
    from beam_chunking.registry import JOB_WIDE_OPTION, options, registry

    flags: Dict[str, Tuple[str, List[str]]] = {}
    for strategy, cls in sorted(registry().items()):
        for option in options(cls):
            if option.name == JOB_WIDE_OPTION:  # the --llm-* flags set it (a dedicated one: the spec)
                continue
            help_text, owners = flags.get(option.name, (option.help, []))
            flags[option.name] = (help_text or option.help, owners + [strategy])
    return flags


#: Prefix of the parsed-argument names that hold chat-model options (``--llm-model`` ...).
LLM_PREFIX = "llm__"


def llm_flags() -> List[Tuple[str, str]]:
    """``(option, help)`` of every :class:`~beam_chunking.llm.LLMConfig` field: ``--llm-<option>``."""
    from beam_chunking.registry import docstring_args

    helps = docstring_args(LLMConfig)
    return [(f.name, helps.get(f.name, "")) for f in dataclasses.fields(LLMConfig)]


def llm_flag_values(opts: "ChunkingOptions") -> Dict[str, str]:
    """The chat-model options given as flags, ``option -> raw text`` (YAML-parsed later).

    Args:
        opts: The options as :class:`ChunkingOptions` (``view_as``), whose attributes are
            read by name: a fraction of the cost of parsing every Beam option again.
    """
    given = ((name, getattr(opts, f"{LLM_PREFIX}{name}")) for name, _ in llm_flags())
    return {name: value for name, value in given if value is not None}


#: Prefix of the parsed-argument names that hold hosted-embedding options (``--embed-base-url`` ...).
EMBED_PREFIX = "embed__"


def embed_flags() -> List[Tuple[str, str]]:
    """``(option, help)`` of every :class:`~beam_chunking.embeddings.HostedEmbedder` field
    but ``provider`` (``--embed openai:MODEL`` names it): ``--embed-<option>``."""
    from beam_chunking.registry import docstring_args

    helps = docstring_args(HostedEmbedder)
    return [(f.name, helps.get(f.name, "")) for f in dataclasses.fields(HostedEmbedder) if f.name != "provider"]


def embed_flag_values(opts: "ChunkingOptions") -> Dict[str, str]:
    """The hosted-embedding options given as flags, ``option -> raw text`` (YAML-parsed later)."""
    given = ((name, getattr(opts, f"{EMBED_PREFIX}{name}")) for name, _ in embed_flags())
    return {name: value for name, value in given if value is not None}


def strategy_flag_values(opts: "ChunkingOptions") -> Dict[str, str]:
    """The strategy options given as flags, ``name -> raw text`` (YAML-parsed later).

    Args:
        opts: The options as :class:`ChunkingOptions` (see :func:`llm_flag_values`).
    """
    given = ((name, getattr(opts, f"{OPTION_PREFIX}{name}")) for name in strategy_flags())
    return {name: value for name, value in given if value is not None}


class ChunkingOptions(PipelineOptions):
    """Flags of ``beam-chunking run`` (hyphen and underscore spellings both work).

    ``--input`` (repeatable), ``--exclude`` (repeatable), ``--content-type PATTERN=TYPE``
    (repeatable: force the content type of the matching files), ``--output``, ``--max-failures``
    (a count or a percentage; default 0), ``--config`` (a YAML spec), ``--strategy`` (default
    ``recursive``), one flag per strategy option (``--max-chunk-size``, ``--overlap``,
    ``--tokenizer`` ..., in the strategy's unit; ``beam-chunking strategies`` lists them),
    ``--strategy-option KEY=VALUE`` (repeatable, the same options by name),
    ``--overwrite``, ``--incremental``, ``--token-counter`` (default ``cl100k_base``; ``none`` to skip),
    ``--decode-errors`` (``strict`` or ``replace``), ``--keep`` (repeatable: ``page_furniture``,
    ``contents``), ``--ocr`` (``auto``, ``always`` or ``never``), ``--sanitise`` (repeatable:
    ``redact`` or ``package.module:function``), one ``--llm-<option>`` flag per chat-model
    option (``--llm-model``, ``--llm-base-url`` ...), ``--embed`` (``minilm``, ``openai:MODEL``
    or ``none``: the embedding stage), one ``--embed-<option>`` flag per hosted-embedding
    option (``--embed-base-url``, ``--embed-dimensions`` ...),
    ``--compression`` (default ``zstd``),
    ``--num-shards`` (default 0: the runner decides).
    """

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--input", dest="input", action="append", default=None,
                            help="File pattern to read (local or gs://); repeatable.")
        parser.add_argument("--exclude", dest="exclude", action="append", default=None,
                            help="Pattern of matched files to leave out (fnmatch on the full path); repeatable.")
        parser.add_argument("--content-type", "--content_type", dest="content_types", action="append", default=None,
                            metavar="PATTERN=TYPE",
                            help="Force the content type of the files matching PATTERN (fnmatch on the full path, "
                                 "as --exclude), e.g. '*.log=text/plain'; repeatable, the first match wins.")
        parser.add_argument("--max-failures", "--max_failures", dest="max_failures", default=None,
                            help="Failed documents allowed before the exit code says so: a count or N%% (default 0).")
        parser.add_argument("--max-deletions", "--max_deletions", dest="max_deletions", default=None,
                            help="Documents of the previous output an --overwrite or --incremental run may delete: "
                                 "a count or N%% of them (default 50%%); a run over it is refused before any work.")
        parser.add_argument("--output", dest="output", default=None, help="Output folder for the Parquet tables.")
        parser.add_argument("--config", dest="config", default=None, help="YAML pipeline spec.")
        parser.add_argument("--strategy", dest="strategy", default=None, help="Strategy registry name, used for every document the spec's routes do not name. "
                                 "Default: chosen by content type (structural for prose, code, transcript); "
                                 "none: no strategy, so a document no route names fails.")
        for name, (help_text, owners) in sorted(strategy_flags().items()):
            parser.add_argument(f"--{name.replace('_', '-')}", *([f"--{name}"] if "_" in name else []),
                                dest=f"{OPTION_PREFIX}{name}", default=None, metavar="VALUE",
                                help=f"{help_text} (strategies: {', '.join(owners)})")
        parser.add_argument("--strategy-option", "--strategy_option", dest="strategy_option", action="append",
                            default=None, help="KEY=VALUE option of the strategy (repeatable).")
        parser.add_argument("--overwrite", dest="overwrite", action="store_true", default=False,
                            help="Replace an existing output folder.")
        parser.add_argument("--incremental", dest="incremental", action="store_true", default=False,
                            help="Process only the files that changed since the output's previous run; "
                                 "replaces that output (no --overwrite needed).")
        parser.add_argument("--token-counter", "--token_counter", dest="token_counter", default=None,
                            help="Sizer filling token_count for character strategies (default cl100k_base).")
        # Values are checked by the spec, which names the key and the allowed values in one line.
        parser.add_argument("--decode-errors", "--decode_errors", dest="decode_errors", default=None,
                            help="Text bytes that are neither UTF-8 nor in a recognised legacy encoding: "
                                 f"{' or '.join(ERROR_POLICIES)}.")
        parser.add_argument("--keep", dest="keep", action="append", default=None,
                            help=f"Keep a part that parsers drop by default: {', '.join(sorted(DROPS))}; repeatable.")
        parser.add_argument("--ocr", dest="ocr", default=None, help=f"{OCR_HELP}.")
        parser.add_argument("--sanitise", dest="sanitise", action="append", default=None, metavar="NAME",
                            help="Rewrite chunk text after chunking: 'redact' (e-mail addresses, phone numbers, "
                                 "secrets) or package.module:function; repeatable.")
        for name, help_text in llm_flags():
            parser.add_argument(f"--llm-{name.replace('_', '-')}", f"--llm_{name}", dest=f"{LLM_PREFIX}{name}",
                                default=None, metavar="VALUE", help=f"Chat model: {help_text}")
        parser.add_argument("--embed", dest="embed", default=None, metavar="MODEL",
                            help="Fill the embedding column: minilm (local), openai:MODEL (a server speaking the "
                                 "OpenAI-compatible /v1/embeddings protocol) or none.")
        parser.add_argument("--embed-context", "--embed_context", dest="embed_context", default=None,
                            metavar="TEMPLATE", help="What is embedded for each chunk, e.g. "
                            "'{title}\\n{section_path}\\n\\n{text}' (the text column stays exact).")
        for name, help_text in embed_flags():
            parser.add_argument(f"--embed-{name.replace('_', '-')}", f"--embed_{name}", dest=f"{EMBED_PREFIX}{name}",
                                default=None, metavar="VALUE", help=f"Hosted embedding model: {help_text}")
        parser.add_argument("--compression", dest="compression", default=None,
                            help=f"Parquet codec: {', '.join(COMPRESSIONS)}.")
        parser.add_argument("--num-shards", "--num_shards", dest="num_shards", default=None,
                            help="Files per table; 0 (default): one per bundle.")
