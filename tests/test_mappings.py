"""pagezero.system.backing: the choice of pages standing for the kernel's direct map
(hugetlb, else THP, else 4KB) from fixture sysfs files and pools, smaps
read from fixture text, and the THP share of real regions where THP is on."""

import errno

import pytest

import pagezero
from pagezero import _core
from pagezero.system import backing as mappings
from pagezero.system import hugepages
from pagezero.system.backing import Backing
from pagezero.system.hugepages import Pool

MB = 1 << 20


def fake_pool(monkeypatch, available, page_count=64):
    """The 2MB pool as sysfs would describe it with `available` pages (None: no pool)."""

    def pool(page):
        if available is None:
            raise pagezero.MappingError(errno.ENOENT, "this kernel has no 2MB hugepage pool")
        return Pool("2MB", 2 * MB, page_count, available, 0, 0, "/fixture/nr_hugepages")

    monkeypatch.setattr(hugepages, "pool", pool)


@pytest.fixture
def thp_files(tmp_path):
    """Write the global and the 2MB THP switches (None: the file is absent)."""

    def write(enabled, own=None):
        top, size = tmp_path / "enabled", tmp_path / "hugepages-2048kB-enabled"
        for path, text in ((top, enabled), (size, own)):
            if text is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(text + "\n")
        return {"thp_path": str(top), "size_path": str(size)}

    return write


# kernel_backing's choice -------------------------------------------------------


def test_hugetlb_when_the_pool_has_enough_pages(monkeypatch, thp_files):
    fake_pool(monkeypatch, available=16)
    b = mappings.kernel_backing(32 * MB, **thp_files("always madvise [never]"))
    assert b == Backing("hugetlb")
    assert b.region_args() == {"page": "2MB", "thp": None} and b.label == "2MB hugetlb"


def test_thp_when_the_pool_is_short_and_thp_can_be_asked(monkeypatch, thp_files):
    fake_pool(monkeypatch, available=15)
    for mode in ("always [madvise] never", "[always] madvise never"):
        b = mappings.kernel_backing(32 * MB, **thp_files(mode))
        assert b.how == "thp" and b.region_args() == {"page": "4KB", "thp": True}
        assert b.note.startswith("16 2MB hugepages needed, 15 available")
        assert "MADV_HUGEPAGE" in b.note and b.label == "2MB THP"


def test_every_buffer_needs_its_pages(monkeypatch, thp_files):
    fake_pool(monkeypatch, available=16)
    files = thp_files("always madvise [never]")
    assert mappings.kernel_backing(32 * MB, buffers=1, **files).how == "hugetlb"
    b = mappings.kernel_backing(32 * MB, buffers=2, **files)
    assert b.how == "4KB" and b.note.startswith("32 2MB hugepages needed, 16 available")


def test_4kb_with_a_line_without_pool_or_thp(monkeypatch, thp_files):
    fake_pool(monkeypatch, available=None)
    files = thp_files("always madvise [never]")
    b = mappings.kernel_backing(4 * MB, **files)
    assert b.how == "4KB" and b.region_args() == {"page": "4KB", "thp": False}
    assert "2 2MB hugepages needed, 0 available" in b.note
    assert "transparent huge pages are never" in b.note and files["thp_path"] in b.note
    assert "TLB" in b.note
    missing = thp_files(None)
    assert (
        "transparent huge pages are not available"
        in mappings.kernel_backing(4 * MB, **missing).note
    )


def test_the_2mb_switch_wins_unless_it_inherits(monkeypatch, thp_files):
    # Multi-size THP kernels: hugepages-2048kB/enabled "never" means no 2MB THP,
    # whatever the global switch says; "inherit" defers to it.
    fake_pool(monkeypatch, available=0)
    assert (
        mappings.kernel_backing(
            4 * MB, **thp_files("[always] madvise never", "always inherit madvise [never]")
        ).how
        == "4KB"
    )
    assert (
        mappings.kernel_backing(
            4 * MB, **thp_files("always [madvise] never", "always [inherit] madvise never")
        ).how
        == "thp"
    )
    assert (
        mappings.kernel_backing(
            4 * MB, **thp_files("always madvise [never]", "always inherit [madvise] never")
        ).how
        == "thp"
    )


def test_a_node_short_of_pages_is_short(monkeypatch, thp_files):
    # The pool's reservation does not look at nodes: the node's free pages decide.
    fake_pool(monkeypatch, available=64)
    monkeypatch.setattr(hugepages, "node_free", lambda page, node, root=None: 3)
    b = mappings.kernel_backing(8 * MB, node=1, **thp_files("always [madvise] never"))
    assert b.how == "thp" and "4 2MB hugepages needed, 3 available on node 1" in b.note
    assert mappings.kernel_backing(6 * MB, node=1, **thp_files("never")).how == "hugetlb"


def test_refused_hugetlb_chooses_between_thp_and_4kb(monkeypatch, thp_files):
    fake_pool(monkeypatch, available=64)
    b = mappings.kernel_backing(
        4 * MB, refused="the hugetlb mapping failed", **thp_files("always [madvise] never")
    )
    assert b.how == "thp" and b.note.startswith("the hugetlb mapping failed:")


# Backings asked by name --------------------------------------------------------


def test_chosen_backing_by_name(monkeypatch):
    fake_pool(monkeypatch, available=1)
    with pytest.raises(pagezero.MappingError, match="not enough 2MB hugepages: 2 needed, 1"):
        mappings.chosen_backing("hugetlb", 4 * MB)
    assert mappings.chosen_backing("hugetlb", 2 * MB) == Backing("hugetlb")
    assert mappings.chosen_backing("4KB", 4 * MB) == Backing("4KB")
    monkeypatch.setattr(mappings, "thp_mode", lambda *paths: "never")
    with pytest.raises(pagezero.UnavailableError, match="transparent huge pages are never"):
        mappings.chosen_backing("thp", 4 * MB)
    monkeypatch.setattr(mappings, "thp_mode", lambda *paths: "madvise")
    assert mappings.chosen_backing("thp", 4 * MB) == Backing("thp")
    with pytest.raises(ValueError, match="unknown backing 'huge'"):
        mappings.chosen_backing("huge", 4 * MB)


# smaps ---------------------------------------------------------------------------

SMAPS = """\
7f0000000000-7f0000800000 rw-p 00000000 00:00 0
Size:               8192 kB
Rss:                8192 kB
AnonHugePages:      6144 kB
KernelPageSize:        4 kB
VmFlags: rd wr mr mw me ac hg
7f0000800000-7f0000a00000 rw-p 00000000 00:00 0
Size:               2048 kB
Rss:                2048 kB
AnonHugePages:      2048 kB
KernelPageSize:        4 kB
7f4000000000-7f4000400000 rw-p 00000000 00:0f 1234                       /anon_hugepage (deleted)
Size:               4096 kB
Rss:                   0 kB
AnonHugePages:         0 kB
Private_Hugetlb:    4096 kB
KernelPageSize:     2048 kB
"""
BASE, OTHER, HUGETLB = 0x7F0000000000, 0x7F0000800000, 0x7F4000000000


@pytest.fixture
def smaps(tmp_path):
    path = tmp_path / "smaps"
    path.write_text(SMAPS)
    return str(path)


def test_huge_bytes_from_smaps_text(smaps):
    assert mappings.huge_bytes(BASE, 8 * MB, smaps) == 6 * MB
    # An entry counts whole, at most the length asked about.
    assert mappings.huge_bytes(BASE + MB, MB, smaps) == MB
    assert mappings.huge_bytes(HUGETLB, 4 * MB, smaps) == 4 * MB
    assert mappings.huge_bytes(0x1000, 4096, smaps) == 0


def test_huge_share_counts_each_entry_once(smaps):
    # Two spans in one entry: its 6MB once, over the spans' 2MB (at most 100%).
    assert mappings.huge_share((BASE, MB), (BASE + 4 * MB, MB), smaps=smaps) == 1.0
    # Spans over two entries: 6MB + 2MB of 10MB.
    assert mappings.huge_share((BASE, 8 * MB), (OTHER, 2 * MB), smaps=smaps) == 0.8
    assert mappings.huge_share(smaps=smaps) == 0.0


def test_observed_backing_from_smaps_text(smaps):
    assert mappings.observed_backing([(HUGETLB, MB)], smaps) == Backing("hugetlb")
    assert mappings.observed_backing([(OTHER, MB)], smaps) == Backing("thp")
    assert mappings.observed_backing([(0x1000, 4096)], smaps) == Backing("4KB")


def test_backing_details(smaps):
    note = Backing("thp", "16 2MB hugepages needed, 0 available")
    assert mappings.backing_details(note, [(BASE, 8 * MB)], smaps) == {
        "backing_note": note.note,
        "huge_bytes": 6 * MB,
        "buffer_bytes": 8 * MB,
        "huge_share": 0.75,
    }
    assert mappings.backing_details(Backing("4KB"), [(BASE, 8 * MB)], smaps) == {}
    assert mappings.huge_details(None) == {} and mappings.huge_details((0, 0)) == {}


def test_unreadable_smaps_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        mappings.huge_bytes(BASE, MB, str(tmp_path / "missing"))
    with pytest.raises(TypeError, match="a span is"):
        _core.smaps_pages([(1,)])


# The warning ----------------------------------------------------------------------


def test_thp_warning_below_95_percent():
    assert mappings.thp_warning(0.95, 64 * MB) is None
    assert mappings.thp_warning(1.0, 64 * MB) is None
    line = mappings.thp_warning(0.949, 64 * MB)
    # Rounded down: a share under the threshold never reads as 95%.
    assert line.startswith("only 94% of the 64MB buffer is on huge pages")
    assert "4KB" in line
    # Under 2MB no buffer can have a huge page: nothing to warn about.
    assert mappings.thp_warning(0.0, 1 * MB) is None


# Real regions ----------------------------------------------------------------------

THP_ON = mappings.thp_mode() in ("always", "madvise")
needs_thp = pytest.mark.skipif(
    not THP_ON,
    reason="transparent huge pages are "
    f"{mappings.thp_mode() or 'not available'} on this kernel "
    f"({mappings.THP_SYSFS})",
)


@needs_thp
def test_a_thp_region_is_aligned_and_on_huge_pages():
    with pagezero.region(6 * MB + 4096, thp=True) as r:
        # csrc/region.c: a region asking for THP starts on a 2MB boundary.
        assert r.address % (2 * MB) == 0
        share = mappings.huge_share(r)
        assert 0 < share <= 1
        assert share == mappings.huge_bytes(r.address, r.size) / r.size
        assert mappings.observed_backing([r]) == Backing("thp")


@needs_thp
def test_a_guarded_thp_region_is_aligned_too():
    with pagezero.region(4 * MB, thp=True, guard=True) as r:
        assert r.address % (2 * MB) == 0
        with memoryview(r) as v:
            v[0] = v[r.size - 1] = 1
        # The guard pages are still on both sides, after the trimming.
        assert _perms(r.address - 1) == _perms(r.address + r.size) == "---p"
        assert _perms(r.address) == "rw-p"


def _perms(address):
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if start <= address < end:
                return perms
    return None


def test_a_region_refusing_thp_has_no_huge_pages():
    with pagezero.region(8 * MB, thp=False) as r:
        assert mappings.huge_share(r) == 0.0
        assert mappings.observed_backing([memoryview(r)]) == Backing("4KB")
