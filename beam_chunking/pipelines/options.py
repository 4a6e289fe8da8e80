"""Pipeline options: the chunking job's own flags beside every Beam option."""
from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

from beam_chunking.parsers.decode import ERROR_POLICIES
from beam_chunking.schema import COMPRESSIONS


class ChunkingOptions(PipelineOptions):
    """Flags of ``beam-chunking run`` (hyphen and underscore spellings both work).

    ``--input``, ``--output``, ``--config`` (a YAML spec), ``--strategy`` (default
    ``recursive``), ``--max-chunk-size`` / ``--overlap`` (the strategy's unit),
    ``--strategy-option KEY=VALUE`` (repeatable, any other option of the strategy),
    ``--overwrite``, ``--token-counter`` (default ``cl100k_base``; ``none`` to skip),
    ``--decode-errors`` (``strict`` or ``replace``), ``--compression`` (default ``zstd``),
    ``--num-shards`` (default 0: the runner decides).
    """

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--input", dest="input", default=None, help="File pattern to read (local or gs://).")
        parser.add_argument("--output", dest="output", default=None, help="Output folder for the Parquet tables.")
        parser.add_argument("--config", dest="config", default=None, help="YAML pipeline spec.")
        parser.add_argument("--strategy", dest="strategy", default=None, help="Strategy registry name.")
        parser.add_argument("--max-chunk-size", "--max_chunk_size", dest="max_chunk_size", type=int, default=None,
                            help="Strategy size ceiling, in the strategy's unit.")
        parser.add_argument("--overlap", dest="overlap", type=int, default=None, help="Strategy overlap.")
        parser.add_argument("--strategy-option", "--strategy_option", dest="strategy_option", action="append",
                            default=None, help="KEY=VALUE option of the strategy (repeatable).")
        parser.add_argument("--overwrite", dest="overwrite", action="store_true", default=False,
                            help="Replace an existing output folder.")
        parser.add_argument("--token-counter", "--token_counter", dest="token_counter", default=None,
                            help="Sizer filling token_count for character strategies (default cl100k_base).")
        parser.add_argument("--decode-errors", "--decode_errors", dest="decode_errors", default=None,
                            choices=list(ERROR_POLICIES), help="Invalid text bytes: fail or replace.")
        parser.add_argument("--compression", dest="compression", default=None,
                            choices=list(COMPRESSIONS), help="Parquet codec.")
        parser.add_argument("--num-shards", "--num_shards", dest="num_shards", type=int, default=None,
                            help="Shards per table (0: runner decides).")
