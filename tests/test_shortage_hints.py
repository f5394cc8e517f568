"""A hugepage shortage names --reserve only to the commands that have it.

`mem mmap` (the fault runs) and `report` can reserve hugepages for one run;
`mem memset|memcpy`, `batch` and `folio` cannot, and a hint at an option they
lack sends the user looking for it. The pool is conftest's fake sysfs, empty.
"""

import pytest

from pagezero.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["mem", "memset", "-s", "4MB", "-p", "2MB", "-l", "1"],
        ["mem", "memcpy", "-s", "4MB", "-p", "2MB", "-l", "1"],
        ["batch", "-s", "4MB", "-b", "2MB", "--backing", "hugetlb", "-l", "1"],
    ],
)
def test_commands_without_reserve_name_only_the_sysfs_file(fake, capsys, argv):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "not enough 2MB hugepages" in err and "hugepages-2048kB/nr_hugepages" in err
    assert "--reserve" not in err


def test_the_fault_run_names_its_reserve_option(fake, capsys):
    assert main(["mem", "mmap", "-s", "4MB", "-p", "2MB", "-l", "1"]) == 1
    err = capsys.readouterr().err
    assert "hugepages-2048kB/nr_hugepages" in err and "--reserve" in err
