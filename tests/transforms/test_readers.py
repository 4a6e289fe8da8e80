"""Readers other than pyarrow read a committed output through its manifest, as the README shows."""
import os

import pytest

from beam_chunking import read_table, table_files
from beam_chunking.pipelines.run import run

duckdb = pytest.importorskip("duckdb")
pd = pytest.importorskip("pandas")
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


def test_duckdb_and_pandas_read_the_committed_files(tmp_path):
    out = str(tmp_path / "out")
    run(["--input", f"{EXAMPLES}/*", "--output", out, "--num-shards", "2"])
    expected = read_table(out, "chunks")
    files = table_files(out, "chunks")
    got = duckdb.sql(f"SELECT chunk_id, token_count, section_path FROM read_parquet({files!r}) ORDER BY chunk_id")
    rows = got.fetchall()
    assert len(rows) == expected.num_rows > 0
    assert sorted(expected.column("chunk_id").to_pylist()) == [r[0] for r in rows]
    assert any(r[2] for r in rows)  # list<string> columns stay lists
    [(by_glob,)] = duckdb.sql(f"SELECT count(*) FROM read_parquet('{out}/chunks/*/*.parquet')").fetchall()
    assert by_glob == expected.num_rows  # after the commit nothing but the committed run remains
    frame = pd.concat(pd.read_parquet(f) for f in files)
    assert len(frame) == expected.num_rows and frame["start"].dtype == "int64"
