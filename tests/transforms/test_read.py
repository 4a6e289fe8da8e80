"""How ReadDocuments cuts files into partitions where the runner cannot redistribute them,
and how it reads a local file."""
import os
import threading

import pytest
from apache_beam.io.filesystem import FileMetadata

from beam_chunking.transforms import read as read_module
from beam_chunking.transforms.read import (MIN_PARTITIONS, PARTITION_BYTES, balanced_groups, exclude_pattern, excluded,
                                          partitions_for, read_local, read_upto)


def files(sizes):
    return [FileMetadata(f"/in/f{i:03d}.txt", size) for i, size in enumerate(sizes)]


def test_groups_are_balanced_by_bytes_and_deterministic():
    metas = files([1000, 10, 10, 10, 500, 490, 20, 5, 5, 950])
    groups = balanced_groups(metas, 3)
    loads = sorted(sum(m.size_in_bytes for m in g) for g in groups)
    assert loads[-1] - loads[0] <= 30  # 3000 bytes into thirds, largest first
    assert sorted(m.path for g in groups for m in g) == sorted(m.path for m in metas)  # each file once
    assert [[m.path for m in g] for g in balanced_groups(list(reversed(metas)), 3)] == \
        [[m.path for m in g] for g in groups]
    assert all([m.path for m in g] == sorted(m.path for m in g) for g in groups)


def test_partition_count_follows_the_bytes_with_a_floor():
    assert partitions_for(files([100] * 40)) == MIN_PARTITIONS
    assert partitions_for(files([PARTITION_BYTES] * 40)) == 40
    assert partitions_for(files([10] * 40), requested=3) == 3
    assert len(balanced_groups(files([10] * 5), MIN_PARTITIONS)) == 5  # never an empty partition


def test_exclude_matches_full_paths():
    assert excluded("/in/drafts/a.md", ["*/drafts/*"]) and not excluded("/in/a.md", ["*/drafts/*"])


def test_relative_exclude_paths_are_made_absolute_and_wildcards_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert exclude_pattern("*.pdf") == "*.pdf" and exclude_pattern("gs://b/x/*") == "gs://b/x/*"
    assert exclude_pattern("docs/drafts/*") == f"{tmp_path}/docs/drafts/*"


def test_a_local_file_is_read_in_parts_up_to_the_limit(tmp_path, monkeypatch):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(range(10)))
    monkeypatch.setattr(read_module, "_READ_CHUNK", 3)  # every read below takes several calls
    assert read_local(str(path), 11, 20) == bytes(range(10))  # the listed size plus one: all of it
    assert read_local(str(path), 4, 20) == bytes(range(10))  # it grew since it was listed: the rest too
    assert read_local(str(path), 4, 7) == bytes(range(7))  # never more than the limit
    assert read_local(str(path), 7, 7) == bytes(range(7))
    (tmp_path / "empty").write_bytes(b"")
    assert read_local(str(tmp_path / "empty"), 1, 20) == b""
    with open(path, "rb") as f:  # any file's read (the object-store path) gives the same
        asked = []
        assert read_upto(lambda n: asked.append(n) or f.read(n), 4, 7) == bytes(range(7))
    assert asked and max(asked) <= 3  # no read asks for more than one part (a read reserves what it asks)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_files_place_reads_as_nothing_instead_of_hanging(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)  # no writer: a blocking open would wait for one forever
    got = []
    reader = threading.Thread(target=lambda: got.append(read_local(str(fifo), 10, 20)), daemon=True)
    reader.start()
    reader.join(5)
    hung = reader.is_alive()
    if hung:  # open the other end, so that the reader's thread ends and the test fails
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
    assert not hung and got == [b""]


def test_on_dask_each_balanced_group_of_files_is_one_partition(tmp_path):
    """Beam's DaskRunner cuts a Create every 128 elements; each partition pays its DoFns' set-up
    and writes its own shard files, so a group of files must stay one partition."""
    pytest.importorskip("distributed")
    import apache_beam as beam
    from apache_beam.runners.dask.dask_runner import DaskRunner
    from apache_beam.runners.dask.overrides import dask_overrides

    from beam_chunking.transforms import ReadDocuments

    for i in range(2100):  # more than 128 files in each of the 16 groups
        (tmp_path / f"d{i:04d}.txt").write_text("x" * (100 + i % 50))
    pipeline = beam.Pipeline(runner=DaskRunner())
    _ = pipeline | ReadDocuments(f"{tmp_path}/*")
    pipeline.replace_all(dask_overrides())
    visitor = DaskRunner.to_dask_bag_visitor()
    pipeline.visit(visitor)
    bags = {node.full_label.rsplit("/", 1)[-1]: bag for node, bag in visitor.bags.items()}
    assert bags["EachFile"].npartitions == MIN_PARTITIONS  # 260 kB: the fewest groups
    creates = [bag for label, bag in bags.items() if label.startswith("Files")]
    assert len(creates) == MIN_PARTITIONS and all(bag.npartitions == 1 for bag in creates)
