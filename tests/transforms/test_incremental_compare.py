"""The comparing step of an incremental run: its own changes file, kept or aborted with its bundle."""
import os

import pyarrow.parquet as pq
from apache_beam.io.filesystem import FileMetadata
from apache_beam.pvalue import TaggedOutput

from beam_chunking.ids import document_id
from beam_chunking.strategies import RecursiveChunker
from beam_chunking.transforms import incremental
from beam_chunking.transforms._shards import ShardRef
from beam_chunking.transforms.read import ReadDocuments


def compare_fn(tmp_path):
    fn = incremental._CompareFn(ReadDocuments(f"{tmp_path}/in/*").reader(), RecursiveChunker(), True,
                                str(tmp_path / "changes"), "zstd")
    fn.setup()
    fn.start_bundle()
    return fn


def new_document(tmp_path, name):
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"text of {name}")
    meta = FileMetadata(str(path), path.stat().st_size)
    return document_id(str(path)), [("file", meta)]


def test_the_changes_rows_of_a_bundle_go_to_one_file_named_when_it_opens(tmp_path):
    fn = compare_fn(tmp_path)
    out = [o for name in ("a.txt", "b.txt") for o in fn.process(new_document(tmp_path, name))]
    refs = [o.value for o in out if isinstance(o, TaggedOutput) and o.tag == "refs"]
    assert len(refs) == 1 and isinstance(refs[0], ShardRef) and refs[0].table == "changes"
    fn.finish_bundle()
    fn.teardown()  # after a bundle that finished, nothing to abort
    rows = pq.read_table(refs[0].path).to_pylist()
    assert [(r["uri"].rsplit("/", 1)[-1], r["change"]) for r in rows] == [("a.txt", "new"), ("b.txt", "new")]


def test_a_bundle_that_fails_leaves_no_changes_file(tmp_path):
    fn = compare_fn(tmp_path)
    out = list(fn.process(new_document(tmp_path, "a.txt")))
    (ref,) = [o.value for o in out if isinstance(o, TaggedOutput) and o.tag == "refs"]
    assert os.path.exists(ref.path)  # opened with the bundle's first row
    fn.teardown()  # the runner discards the bundle without finishing it
    assert not os.path.exists(ref.path)
