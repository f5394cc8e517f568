"""hugetlb with a NUMA node: a hugetlb mapping reserves its pages against the
whole pool (mm/hugetlb.c hugetlb_reserve_pages()), and the mbind to the node
comes later, so a node without free hugepages would meet the first touch with
SIGBUS. pagezero checks the node's own free count first, against a fake
sysfs here, and fails with a MappingError naming the node and the file to
write (exit status 1 from the CLI)."""

import pytest

import pagezero
from pagezero import _core
from pagezero.measure.policy import FolioMemory
from pagezero.system import hugepages


def write(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{value}\n")


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    """A 2MB pool with 8 free pages in all, none of them on node 0."""
    pool = tmp_path / "kernel" / "hugepages-2048kB"
    for name, v in (
        ("nr_hugepages", 8),
        ("free_hugepages", 8),
        ("resv_hugepages", 0),
        ("surplus_hugepages", 0),
    ):
        write(pool / name, v)
    node = tmp_path / "node" / "node0" / "hugepages" / "hugepages-2048kB"
    write(node / "nr_hugepages", 0)
    write(node / "free_hugepages", 0)
    monkeypatch.setattr(hugepages, "SYSFS", str(tmp_path / "kernel"))
    monkeypatch.setattr(hugepages, "NODE_SYSFS", str(tmp_path / "node"))
    return node


@pytest.fixture
def nothing_maps(monkeypatch):
    """Fail the test if any C entry gets as far as mapping."""

    def refuse(*args, **kwargs):
        raise AssertionError("mapped hugepages before checking the node")

    for name in ("bench_mem", "Region"):
        monkeypatch.setattr(_core, name, refuse)


def test_node_free_reads_the_node_file(sysfs):
    assert hugepages.node_free("2MB", 0) == 0
    write(sysfs / "free_hugepages", 3)
    assert hugepages.node_free("2MB", 0) == 3
    assert hugepages.node_free("2MB", 7) is None  # no such node directory: no per-node count


def test_check_node_available_names_node_and_file(sysfs):
    with pytest.raises(pagezero.MappingError) as e:
        hugepages.check_node_available("2MB", 2, 0)
    msg = str(e.value)
    assert "node 0" in msg and "2 needed, 0 free there" in msg
    assert f"echo 2 > {sysfs / 'nr_hugepages'}" in msg
    write(sysfs / "free_hugepages", 2)
    assert hugepages.check_node_available("2MB", 2, 0) == 2


def test_available_pages_are_the_pools_less_the_nodes_shortfall(sysfs):
    assert hugepages.available_pages("2MB") == 8
    assert hugepages.available_pages("2MB", 0) == 0  # the pool has them, node 0 none
    write(sysfs / "free_hugepages", 3)
    assert hugepages.available_pages("2MB", 0) == 3
    assert hugepages.available_pages("2MB", 7) == 8  # no per-node count: the pool's
    assert hugepages.available_pages("1GB") == 0  # no such pool


def test_check_mappable_checks_the_pool_then_the_node(sysfs):
    hugepages.check_mappable(8 << 20, "2MB")  # 4 pages of the pool's 8
    with pytest.raises(pagezero.MappingError, match="9 needed, 8 available"):
        hugepages.check_mappable(6 << 20, "2MB", buffers=3)
    with pytest.raises(pagezero.MappingError, match="on node 0: 1 needed, 0 free there"):
        hugepages.check_mappable(1 << 20, "2MB", node=0)


def test_memset_on_a_node_without_free_hugepages_fails_before_mapping(sysfs, nothing_maps):
    with pytest.raises(pagezero.MappingError, match="on node 0"):
        pagezero.memset(size="4MB", page="2MB", node=0, loops=1)


def test_private_threads_count_every_region(sysfs, monkeypatch):
    write(sysfs / "free_hugepages", 2)
    monkeypatch.setattr(pagezero.measure.conditions.os, "sched_getaffinity", lambda pid: {0, 1})
    with pytest.raises(pagezero.MappingError, match="4 needed, 2 free there"):
        pagezero.memcpy(
            size="2MB", page="2MB", node=0, loops=1, threads=2, threads_mode="private", clock="ns"
        )


def test_folio_on_a_node_without_free_hugepages_fails_before_mapping(sysfs, nothing_maps):
    with pytest.raises(pagezero.MappingError, match="on node 0"):
        FolioMemory(2 << 20, "hugetlb", node=0)


def test_cli_exits_1_naming_the_node(sysfs, nothing_maps, capsys):
    from pagezero.cli import main

    assert main(["mem", "memset", "-s", "4MB", "-p", "2MB", "--node", "0", "-l", "1"]) == 1
    err = capsys.readouterr().err
    assert "node 0" in err and "nr_hugepages" in err
