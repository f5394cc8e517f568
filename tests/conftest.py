import os

import pytest

import pagezero


def free_hugepages(page):
    """Free hugepages of `page` ("2MB" or "1GB") in the system pool, 0 if none."""
    kb = {"2MB": 2048, "1GB": 1048576}[page]
    try:
        with open(f"/sys/kernel/mm/hugepages/hugepages-{kb}kB/free_hugepages") as f:
            return int(f.read())
    except OSError:
        return 0


def needs_hugepages(page, count=1):
    return pytest.mark.skipif(
        free_hugepages(page) < count,
        reason=f"needs {count} free {page} hugepage(s); none reserved "
               f"(as root: echo N > /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages)",
    )


def available_kernels(kind):
    return [k.name for k in pagezero.kernels(kind) if k.available]


def mapping_count():
    with open(f"/proc/{os.getpid()}/maps") as f:
        return sum(1 for _ in f)
