"""Domain templates: strategies that chunk by what a document is (a contract, a book ...).

Each template stamps ``template`` metadata on every chunk, plus its own keys, so a filter can
narrow to one template's output. ``resume`` calls a chat model (one call per document).
"""
from beam_chunking.domains.academic import AcademicChunker
from beam_chunking.domains.book import BookChunker
from beam_chunking.domains.email import EmailChunker
from beam_chunking.domains.legal import LegalChunker
from beam_chunking.domains.qa_pairs import QAPairsChunker
from beam_chunking.domains.resume import ResumeChunker

__all__ = ["AcademicChunker", "BookChunker", "EmailChunker", "LegalChunker", "QAPairsChunker", "ResumeChunker"]
