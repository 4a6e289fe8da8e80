"""Legal template: clauses and sub-clauses, clause metadata, depth 3."""
from __future__ import annotations

from beam_chunking.domains import LegalChunker
from beam_chunking.parsers import parse
from beam_chunking.registry import get
from tests.helpers import check_chunks, check_pickle
from tests.parsers.fixtures import docx_bytes, document

CONTRACT = """SERVICES AGREEMENT

This Agreement is made between the Supplier and the Customer.

Article 1 Definitions

1.1 "Services" means the services described in Schedule 1, including any support, maintenance and hosting that the Supplier provides under this Agreement from the Effective Date.

1.2 "Fees" means the amounts payable under Article 2.

Article 2 Payment

2.1 The Customer shall pay the Fees within 30 days of invoice.

(a) Late payments bear interest at 4% per year.

(b) Disputed amounts are paid when resolved.

§ 3 Governing law

This Agreement is governed by the laws of England.
"""


def test_clauses_subclauses_and_clause_metadata():
    chunks = LegalChunker().chunk(CONTRACT)
    check_chunks(CONTRACT, chunks)
    got = [(c.metadata.get("clause"), c.metadata.get("section_path", [])[-1:] and c.text.split("\n")[0][:22]) for c in chunks]
    assert [c.metadata.get("clause") for c in chunks] == [None, "Article 1", "1.1", "1.2", "Article 2", "2.1", "(a)", "(b)", "§ 3"], got
    assert all(c.metadata["template"] == "legal" for c in chunks)
    a = next(c for c in chunks if c.metadata.get("clause") == "(a)")
    assert a.metadata["section_path"][:2] == ["Payment", "The Customer shall pay the Fees within 30 days of invoice."]
    long = next(c for c in chunks if c.metadata.get("clause") == "1.1")
    assert long.metadata["heading"].endswith("…") and len(long.metadata["heading"]) <= 81


def test_depth_is_three_by_default_and_configurable():
    deep = "1. Top\n\nx\n\n1.1 Mid\n\ny\n\n1.1.1 Low\n\nz\n\n1.1.1.1 Lowest\n\nw\n"
    assert [c.metadata["clause"] for c in LegalChunker().chunk(deep)] == ["1", "1.1", "1.1.1"]
    assert [c.metadata["clause"] for c in LegalChunker(max_depth=4).chunk(deep)] == ["1", "1.1", "1.1.1", "1.1.1.1"]
    assert [c.metadata["clause"] for c in get("legal", max_depth=1).chunk(deep)] == ["1"]


def test_clauses_inside_a_word_document():
    data = docx_bytes([("heading", 1, "Master Agreement"), ("p", "1. Scope"), ("p", "The scope is broad."),
                       ("p", "2. Term"), ("p", "Two years.")])
    doc = parse(document("contract.docx", data))
    chunks = LegalChunker().chunk_document(doc)
    assert [c.metadata.get("clause") for c in chunks] == [None, "1", "2"]
    assert chunks[1].metadata["section_path"] == ["Master Agreement", "Scope"]
    check_pickle(LegalChunker(), CONTRACT)
