"""ParseDocuments: :class:`Document` -> :class:`ParsedDocument`."""
from __future__ import annotations

import apache_beam as beam

from beam_chunking.parsers import parse
from beam_chunking.parsers.decode import ERROR_POLICIES
from beam_chunking.parsers.drops import KEEP_NOTHING, check_keep
from beam_chunking.parsers.limits import DEFAULT_LIMITS, ParseLimits
from beam_chunking.parsers.ocr import DEFAULT_OCR, check_ocr
from beam_chunking.errors import ConfigError
from beam_chunking.transforms._common import StageFn
from beam_chunking.transforms.records import Stage


class _ParseFn(StageFn):
    stage = Stage.PARSE

    def __init__(self, decode_errors: str, limits: ParseLimits, keep, ocr: str = DEFAULT_OCR):
        self.decode_errors = decode_errors
        self.limits = limits
        self.keep = keep
        self.ocr = ocr

    def handle(self, document):
        yield parse(document, decode_errors=self.decode_errors, limits=self.limits, keep=self.keep, ocr=self.ocr)


class ParseDocuments(beam.PTransform):
    """Parse each document with the parser registered for its content type.

    Unsupported content types and undecodable bytes become failures (stage ``parse``).

    Args:
        decode_errors: ``"strict"`` (default: invalid bytes fail the document, naming the byte
            offset) or ``"replace"`` (U+FFFD, counted in the documents table).
        limits: Safety caps per document (pages, rows, zip sizes and ratios); default
            :class:`~beam_chunking.parsers.limits.ParseLimits` ().
        keep: Parts that parsers drop by default to keep instead: names of
            :data:`~beam_chunking.parsers.drops.DROPS` (``"page_furniture"``,
            ``"contents"``). Default none.
        ocr: ``"auto"`` (default: OCR images and PDF pages without a text layer when the
            ``ocr`` extra is installed), ``"always"`` (every PDF page too) or ``"never"``.
    """

    def __init__(self, decode_errors: str = "strict", limits: ParseLimits = DEFAULT_LIMITS, keep=KEEP_NOTHING,
                 ocr: str = DEFAULT_OCR):
        super().__init__()
        self.limits = limits
        self.keep = check_keep(keep)
        self.ocr = check_ocr(ocr, "ParseDocuments.ocr")
        if decode_errors not in ERROR_POLICIES:
            raise ConfigError(f"ParseDocuments.decode_errors={decode_errors!r} must be one of {ERROR_POLICIES}")
        self.decode_errors = decode_errors

    def fns(self):
        """The DoFns of this stage (for a fused stage)."""
        return [_ParseFn(self.decode_errors, self.limits, self.keep, self.ocr)]

    def expand(self, pcoll):
        return pcoll | "ParseDocument" >> beam.ParDo(_ParseFn(self.decode_errors, self.limits, self.keep, self.ocr))

    def display_data(self):
        return {"decode_errors": self.decode_errors, "limits": repr(self.limits), "keep": ",".join(sorted(self.keep)),
                "ocr": self.ocr}
