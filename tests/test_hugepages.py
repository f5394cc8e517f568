"""Hugepage pools: the report, the shortage error, and reserve()'s promise to
give back what it added, whatever happens.

Most cases run against a fake sysfs whose "kernel" honours writes to
nr_hugepages; the rest resize the real 2MB pool and need root.
"""

import errno
import os
import signal

import pytest
from conftest import run_python, start_python
from helpers.children import finish, read_line

import pagezero
from pagezero.system import hugepages

# The fake sysfs (conftest's FakeKernel, the `fake` fixture) ------------------------


def test_pools_report_total_free_reserved_and_the_file(fake):
    fake.set(total=10, free=6, reserved=2)
    p = hugepages.pools()["2MB"]
    assert (p.total, p.free, p.reserved, p.available) == (10, 6, 2, 4)
    assert p.page_bytes == 2 << 20 and p.path.endswith("hugepages-2048kB/nr_hugepages")


def test_shortage_names_the_file_and_what_to_write(fake):
    fake.set(total=3, free=3, reserved=1)
    with pytest.raises(
        pagezero.MappingError,
        match=r"5 needed, 2 available .*echo 6 > .*"
        r"hugepages-2048kB/nr_hugepages",
    ):
        hugepages.check_available("2MB", 5)


def test_reserve_adds_what_is_missing_and_gives_it_back(fake):
    fake.set(total=4, free=3, reserved=0)
    with hugepages.reserve("2MB", 5) as grown:
        assert grown.total == 6 and grown.available == 5
    assert fake.get("total") == 4
    assert fake.writes == [6, 4]


def test_reserve_writes_nothing_when_enough_are_free(fake):
    fake.set(total=8, free=8)
    with hugepages.reserve("2MB", 5):
        pass
    assert fake.writes == []


def test_reserve_gives_back_on_an_error(fake):
    with pytest.raises(RuntimeError):
        with hugepages.reserve("2MB", 3):
            assert fake.get("total") == 3
            raise RuntimeError("the run failed")
    assert fake.get("total") == 0


def test_reserve_gives_back_on_ctrl_c(fake):
    with pytest.raises(KeyboardInterrupt):
        with hugepages.reserve("2MB", 3):
            raise KeyboardInterrupt
    assert fake.get("total") == 0


def test_reserve_keeps_what_someone_else_added_meanwhile(fake):
    fake.set(total=2, free=2)
    with hugepages.reserve("2MB", 5):
        fake.set(total=fake.get("total") + 10)  # another user grows the pool
    assert fake.get("total") == 12  # 2 + their 10: ours given back


def test_reserve_when_the_kernel_finds_too_few_pages(fake):
    fake.limit = 3
    with pytest.raises(pagezero.MappingError, match="found only 3"):
        with hugepages.reserve("2MB", 5):
            pytest.fail("the block must not run")
    assert fake.get("total") == 0


def others_map_pages(monkeypatch, kernel, takes):
    """After each sysfs write, another process maps `takes(added)` of the pages the
    write added (their number, not more than are free)."""

    def write(path, value):
        total = kernel.get("total")
        kernel.write(path, value)
        if kernel.get("total") > total:  # not after a give-back
            taken = min(takes(kernel.get("total") - total), kernel.get("free"))
            kernel.set(free=kernel.get("free") - taken)

    monkeypatch.setattr(hugepages, "_write", write)


def test_reserve_grows_again_when_others_map_the_new_pages(fake, monkeypatch):
    takes = iter([2])  # the first write's new pages: 2 of them go elsewhere
    others_map_pages(monkeypatch, fake, lambda added: next(takes, 0))
    with hugepages.reserve("2MB", 5) as grown:
        assert grown.available == 5 and grown.total == 7
    assert fake.writes == [5, 7, 0]  # all 7 added given back


def test_reserve_gives_up_when_others_map_every_new_page(fake, monkeypatch):
    others_map_pages(monkeypatch, fake, lambda added: added)
    with pytest.raises(pagezero.MappingError, match="other processes mapped them") as e:
        with hugepages.reserve("2MB", 5):
            pytest.fail("the block must not run")
    assert "by 15 pages in 3 tries" in str(e.value) and "5 needed, 0 available" in str(e.value)
    assert fake.writes == [5, 10, 15, 0]


def test_reserve_needs_root(fake, monkeypatch):
    monkeypatch.setattr(hugepages.os, "geteuid", lambda: 1000)
    with pytest.raises(pagezero.PagezeroError, match="needs root.*echo 2 > .*nr_hugepages"):
        with hugepages.reserve("2MB", 2):
            pass
    assert fake.writes == []


def test_no_pool_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(hugepages, "SYSFS", str(tmp_path))
    assert hugepages.pools() == {}
    with pytest.raises(pagezero.MappingError, match="no 1GB hugepage pool"):
        hugepages.pool("1GB")


def test_machine_reports_the_pools():
    pools = pagezero.hugepage_pools()
    info = pagezero.machine()["hugepages"]
    assert sorted(info) == sorted(f"{p.page_bytes // 1024}kB" for p in pools.values())
    for p in pools.values():
        assert set(info[f"{p.page_bytes // 1024}kB"]) >= {"total", "free", "reserved"}


# The real pool (root) ---------------------------------------------------------------

ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists(hugepages.SYSFS + "/hugepages-2048kB"),
    reason="resizing a hugepage pool needs root and a 2MB pool",
)


def real_total():
    return hugepages.pool("2MB").total


@ROOT_ONLY
@pytest.mark.owns_hugepage_pools
def test_reserve_restores_the_real_pool():
    before = hugepages.pool("2MB")
    needed = before.available + 2
    with hugepages.reserve("2MB", needed) as grown:
        assert grown.available >= needed
        pagezero.faults("4MB", page="2MB", loops=1)
    assert real_total() == before.total


@ROOT_ONLY
@pytest.mark.owns_hugepage_pools
def test_cli_reserve_restores_the_real_pool():
    before = real_total()
    size = (hugepages.pool("2MB").available + 2) * 2
    proc = run_python(
        "-m",
        "pagezero",
        "mem",
        "mmap",
        "-s",
        f"{size}MB",
        "-p",
        "2MB",
        "-f",
        "demand",
        "-l",
        "1",
        "--reserve",
    )
    assert proc.returncode == 0, proc.stderr
    assert "asked 2MB hugetlb, got 2MB hugetlb" in proc.stdout
    assert real_total() == before


HOLD = """
import sys, time
from pagezero.system import hugepages
with hugepages.reserve("2MB", int(sys.argv[1])):
    print("reserved", flush=True)
    # Until the test's signal ends it, however late. Not signal.pause(): a signal landing
    # after the last check and before pause() would leave it waiting for another; a
    # short sleep ends, and the handler runs. Gives up after 5 minutes.
    for _ in range(3000):
        time.sleep(0.1)
    print("never signalled", flush=True)
"""


@ROOT_ONLY
@pytest.mark.owns_hugepage_pools
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_reservation_restores_the_pool(sig):
    before = real_total()
    # More than the whole pool, so the reservation must grow it whoever holds pages
    # meanwhile: "available + 2" was met without growing when a test on the other
    # worker let go of the 2MB pages it held in between (CI, once).
    needed = before + 2
    with start_python("-c", HOLD, str(needed)) as proc:
        if read_line(proc).strip() != "reserved":
            proc.kill()
            pytest.fail(f"the reservation of {needed} pages failed: {finish(proc)[1]}")
        assert real_total() > before
        proc.send_signal(sig)
        _, err = finish(proc)
    # The process still dies of the signal (Python re-raises an uncaught
    # KeyboardInterrupt as SIGINT), but only after the pool is restored.
    assert proc.returncode == -sig, err
    # It has exited, so its give-back is done: the sysfs write shrinks the pool before
    # it returns, and HOLD mapped none of the pages. One read, as the tests above.
    assert real_total() == before


def fail_write(monkeypatch, kernel, nth):
    """Make the `nth` sysfs write fail as a busy kernel's does (EBUSY)."""
    calls = []

    def write(path, value):
        calls.append(value)
        if len(calls) == nth:
            raise OSError(errno.EBUSY, "Device or resource busy", path)
        kernel.write(path, value)

    monkeypatch.setattr(hugepages, "_write", write)


def test_a_failed_grow_is_the_error_and_changes_nothing(fake, monkeypatch):
    fail_write(monkeypatch, fake, 1)
    with pytest.raises(OSError, match="nr_hugepages") as e, hugepages.reserve("2MB", 2):
        raise AssertionError("the block ran without its pages")
    assert e.value.errno == errno.EBUSY
    assert fake.writes == [] and fake.get("total") == 0


def test_a_failed_give_back_is_not_swallowed(fake, monkeypatch):
    # The pool stays grown (the kernel refused to shrink it): the caller must hear of it.
    fail_write(monkeypatch, fake, 2)
    with pytest.raises(OSError, match="nr_hugepages") as e, hugepages.reserve("2MB", 2):
        assert fake.get("total") == 2
    assert e.value.errno == errno.EBUSY and fake.writes == [2]
