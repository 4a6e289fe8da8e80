"""Late and semantic chunking plus the embedding stage with the real MiniLM model, end to end."""
from __future__ import annotations

import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from beam_chunking.pipelines.cli import main
from beam_chunking.schema import decode_metadata

pytestmark = pytest.mark.integration

SPEC = """input: '{src}/*'
output: '{out}'
strategy: {{name: late, max_chunk_size: 64, overlap: 8}}
routes:
  text/markdown: {{name: semantic, max_chunk_size: 400}}
  text/html: hierarchical
refine: {{max_chunk_size: 600}}
embed: minilm
"""


def test_late_semantic_and_embed_stage(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "notes.txt").write_text("Cats sleep most of the day. " * 30 + "Bond yields rose as inflation data surprised. " * 20)
    (src / "guide.md").write_text("# Guide\n\n" + "Tea is brewed with hot water. " * 10 + "\n\n## Markets\n\n" + "Stocks fell sharply today. " * 10)
    (src / "page.html").write_text("<h1>Title</h1><p>" + "A long paragraph about gardens. " * 40 + "</p>")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(src=src, out=out))
    assert main(["run", "--config", str(spec)]) == 0
    docs = pq.read_table(out / "documents").to_pylist()
    assert sorted((d["status"], d["strategy"]) for d in docs) == [("ok", "hierarchical"), ("ok", "late"), ("ok", "semantic")]
    rows = pq.read_table(out / "chunks").to_pylist()
    by = {}
    for r in rows:
        r["metadata"] = decode_metadata(r["metadata"])
        by.setdefault(os.path.basename(r["uri"]), []).append(r)
    for r in rows:
        vec = np.asarray(r["embedding"], dtype=np.float32)
        assert vec.shape == (384,) and abs(np.linalg.norm(vec) - 1) < 1e-3
        assert r["metadata"]["embedding_model"] == "minilm" and r["metadata"]["embedding_dim"] == 384
    late = by["notes.txt"]
    assert all(r["metadata"]["late_chunking"] for r in late) and len(late) > 3
    cats, bonds = np.asarray(late[0]["embedding"]), np.asarray(late[-1]["embedding"])
    assert cats @ bonds < 0.6
    assert all(len(r["text"]) <= 600 for r in by["page.html"])
    assert len(by["page.html"]) > 1 and all(r["metadata"].get("refined_from") for r in by["page.html"])
    assert all(len(r["text"]) <= 400 for r in by["guide.md"])
