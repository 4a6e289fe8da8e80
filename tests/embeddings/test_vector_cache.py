"""The vector cache: one SQLite file per folder, one object per vector on gs:// (gcp-storage-emulator)."""
import sqlite3

import numpy as np

from beam_chunking.embeddings import HostedEmbedder
from beam_chunking.embeddings.cache import VectorCache, vector_key
from tests.pipelines.gcs_emulator import gcs_emulator


def test_a_folder_holds_one_database_and_bad_rows_are_misses(tmp_path):
    cache = VectorCache(str(tmp_path))
    cache.put_many([("a", np.arange(3, dtype=np.float32)), ("b", np.ones(2, np.float32))])
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("vectors.sqlite-")] == ["vectors.sqlite"]
    with sqlite3.connect(tmp_path / "vectors.sqlite") as db:  # another process wrote an empty vector
        db.execute("INSERT OR REPLACE INTO vectors VALUES ('b', x'')")
    found = VectorCache(str(tmp_path)).get_many(["a", "b", "c"])
    assert list(found) == ["a"] and found["a"].tolist() == [0.0, 1.0, 2.0]
    assert vector_key("m", None, "t") != vector_key("m", 8, "t") != vector_key("n", 8, "t") != vector_key("m", 8, "u")
    assert vector_key("m", None, "t") == vector_key("m", None, "t")


def test_vectors_cached_in_gcs_are_reused_by_a_new_client(tmp_path, embedding_server):
    with gcs_emulator(tmp_path, "embed-cache") as root:
        options = dict(model="m", base_url=embedding_server.base_url, dimensions=8, cache=f"{root}/vectors")
        first = HostedEmbedder(**options).embed(["one", "two"])
        again = HostedEmbedder(max_retries=0, **options).embed(["two", "one"])  # another client
        assert np.array_equal(again, first[::-1]) and embedding_server.calls == 1
        assert len(VectorCache(f"{root}/vectors").get_many([vector_key("m", 8, "one")])) == 1
