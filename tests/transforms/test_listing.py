"""What Beam's local listing drops, found on a real tree: broken links, links to folders,
folders that cannot be listed."""
import json
import os
import shutil
import stat
import tempfile

import pytest
from apache_beam.io.filesystem import BeamIOError
from apache_beam.io.filesystems import FileSystems

from beam_chunking.errors import SkippedInput
from beam_chunking.transforms._files import check_regular_file, input_roots
from beam_chunking.transforms._listing import list_local
from beam_chunking.transforms.read import MatchFn

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX links and permissions")


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "good.txt").write_text("x")
    (src / "sub" / "a.txt").write_text("x")
    os.symlink("missing.txt", src / "dangling.txt")
    os.symlink("loop.txt", src / "loop.txt")
    os.symlink("sub", src / "alias")
    return src


def unlisted(pattern):
    return list_local(pattern)[1]


def test_unlisted_entries_follow_what_the_pattern_would_read(tree):
    listed = [m.path for m in FileSystems.match([f"{tree}/**"])[0].metadata_list]
    assert sorted(listed) == [f"{tree}/good.txt", f"{tree}/sub/a.txt"]  # Beam drops the three links
    # alias -> sub: what it holds is read as sub/..., so only a pattern that reads alias/ and
    # not sub/ loses files through it
    assert unlisted(f"{tree}/**") == [f"{tree}/dangling.txt", f"{tree}/loop.txt"]
    assert unlisted(f"{tree}/*") == [f"{tree}/dangling.txt", f"{tree}/loop.txt"]  # '*' reads no folder
    assert unlisted(f"{tree}/*/*.txt") == []
    assert unlisted(f"{tree}/al*/*.txt") == [f"{tree}/alias"]
    assert unlisted(f"{tree}/g*") == []
    assert unlisted(f"{tree}/**/*.md") == []  # the linked folder holds no file the pattern takes


def test_a_link_to_a_folder_is_reported_only_when_it_hides_files(tree, tmp_path):
    (tree / "sub" / "b.md").write_text("x")
    # alias -> sub: through the link, b.md would be read as alias/b.md, but the walk reads
    # sub/b.md itself: nothing is hidden. A pattern that reads alias/ but not sub/ is hidden.
    assert unlisted(f"{tree}/**/*.md") == []
    assert unlisted(f"{tree}/a*/*.md") == [f"{tree}/alias"]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "c.md").write_text("x")
    os.symlink(outside, tree / "out")
    assert unlisted(f"{tree}/**/*.md") == [f"{tree}/out"]  # its files are nowhere else under the root
    assert unlisted(f"{tree}/**/*.pdf") == []  # it holds no file the pattern takes


def test_links_past_the_scan_budget_are_reported_as_if_they_hid_files(tree, monkeypatch):
    from beam_chunking.transforms import _listing

    (tree / "sub" / "b.md").write_text("x")
    for k in range(3):
        os.symlink("sub", tree / f"alias{k}")  # with the fixture's alias, four links to sub
    assert unlisted(f"{tree}/**/*.md") == []  # each reads as sub/b.md: nothing hidden
    # sub holds 2 entries: the budget lasts for the first link looked into (in the walk's
    # order), not for the other three.
    monkeypatch.setattr(_listing, "LINKED_FOLDER_SCAN", 3)
    reported = unlisted(f"{tree}/**/*.md")
    assert len(reported) == 3 and set(reported) < {f"{tree}/{n}" for n in ("alias", "alias0", "alias1", "alias2")}
    assert [m.path for m in MatchFn().match(f"{tree}/good.txt")] == [f"{tree}/good.txt"]  # no wildcard: Beam's match


@pytest.mark.parametrize("pattern", ["*", "**", "*.txt", "*/*.txt", "**/*.txt", "sub/*", "s*/a.?xt", "[gs]*",
                                     "deep/**/x*", "*/*/*", "g*", "nothing-*", "*/", "**/", "s*/",
                                     "deep?er/*", "deep[!x]er/*", "d*[/]*", "good.txt/*", "missing/*"])
def test_the_one_walk_lists_what_beams_match_lists(tree, pattern):
    (tree / "deep" / "er" / "est").mkdir(parents=True)
    for name in ("deep/x1", "deep/er/x2.txt", "deep/er/est/x3", "sub/b.md"):
        (tree / name).write_text(name)
    os.symlink("good.txt", tree / "link-to-good.txt")
    beams = FileSystems.match([f"{tree}/{pattern}"])[0].metadata_list
    ours, _ = list_local(f"{tree}/{pattern}")
    assert [(m.path, m.size_in_bytes, m.last_updated_in_seconds) for m in ours] == [
        (m.path, m.size_in_bytes, m.last_updated_in_seconds) for m in beams]


def test_a_pattern_that_is_not_a_valid_glob_fails_as_beams_match_does(tree):
    with pytest.raises(BeamIOError, match="Match operation failed"):
        list_local(f"{tree}/[z-a]*")


def test_the_match_step_adds_what_the_listing_drops_and_leaves_out_exclusions(tree):
    found = sorted(m.path for m in MatchFn(exclude=["*/sub/*"]).match(f"{tree}/**"))
    assert found == [f"{tree}/{n}" for n in ("dangling.txt", "good.txt", "loop.txt")]
    found = sorted(m.path for m in MatchFn(allow_empty=True).match(f"{tree}/al*/*"))
    assert found == [f"{tree}/alias"]
    with pytest.raises(FileNotFoundError, match="no file matches .*/nothing-"):
        MatchFn().match(f"{tree}/nothing-*")
    assert MatchFn(allow_empty=True).match(f"{tree}/nothing-*") == []


def test_roots_are_real_paths_and_a_named_link_is_its_own_root(tree, tmp_path):
    os.symlink(tree, tmp_path / "via")
    assert input_roots([f"{tmp_path}/via/*.txt", f"{tree}/alias", "gs://b/x/*"]) == (
        str(tree.resolve()), str((tree / "sub").resolve()))
    os.symlink(tree / "good.txt", tmp_path / "elsewhere.txt")
    os.symlink(tmp_path / "elsewhere.txt", tree / "hop.txt")  # a chain that ends back inside the root
    check_regular_file(f"{tree}/hop.txt", roots=input_roots([f"{tmp_path}/via/*"]))
    with pytest.raises(SkippedInput, match="outside the input root"):
        check_regular_file(f"{tree}/hop.txt", roots=input_roots([f"{tree}/sub/*"]))


def _as_unprivileged(fn):
    """``fn()`` with a permission check that applies: as ``nobody`` in a forked child when
    this process is root (root reads every folder), else right here. Returns its JSON result."""
    if os.geteuid() != 0:
        return fn()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps(fn()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    os.waitpid(child, 0)
    return json.loads(data)


def test_a_folder_that_cannot_be_listed_is_unlisted_and_refused():
    base = tempfile.mkdtemp(dir="/tmp")  # reachable by 'nobody', unlike pytest's folders
    try:
        os.chmod(base, 0o755)
        os.makedirs(f"{base}/in/closed")
        open(f"{base}/in/closed/hidden.txt", "w").close()
        open(f"{base}/in/open.txt", "w").close()
        os.chmod(f"{base}/in/closed", 0)

        def look():
            try:
                check_regular_file(f"{base}/in/closed")
                refused = None
            except SkippedInput as exc:
                refused = str(exc)
            listed = [m.path for m in FileSystems.match([f"{base}/in/**"])[0].metadata_list]
            return {"unlisted": unlisted(f"{base}/in/**"), "refused": refused, "listed": listed,
                    "base closed": unlisted(f"{base}/in/closed/*"),
                    "above base closed": unlisted(f"{base}/in/closed/deeper/*.txt")}

        seen = _as_unprivileged(look)
        assert seen["listed"] == [f"{base}/in/open.txt"]  # Beam says nothing of the closed folder
        assert seen["unlisted"] == [f"{base}/in/closed"]
        # The pattern's own folder, or one on the way to it, that cannot be listed.
        assert seen["base closed"] == [f"{base}/in/closed"]
        assert seen["above base closed"] == [f"{base}/in/closed/deeper"]
        assert seen["refused"] == (f"{base}/in/closed: folder cannot be listed (permission denied); "
                                   "the files in it were not read")
    finally:
        os.chmod(f"{base}/in/closed", stat.S_IRWXU)
        shutil.rmtree(base)


def test_a_link_to_a_folder_that_cannot_be_listed_is_reported():
    base = tempfile.mkdtemp(dir="/tmp")  # reachable by 'nobody', unlike pytest's folders
    try:
        os.chmod(base, 0o755)
        os.makedirs(f"{base}/in")
        os.makedirs(f"{base}/closed")
        open(f"{base}/closed/hidden.txt", "w").close()
        open(f"{base}/in/open.txt", "w").close()
        os.symlink(f"{base}/closed", f"{base}/in/link")
        os.chmod(f"{base}/closed", 0)
        # What the link hides cannot be known: it is reported, not assumed empty.
        assert _as_unprivileged(lambda: unlisted(f"{base}/in/**/*.txt")) == [f"{base}/in/link"]
    finally:
        os.chmod(f"{base}/closed", stat.S_IRWXU)
        shutil.rmtree(base)
