"""What the registry says of the Linux kernel, checked where this machine can see it.

clear_page()'s row: the C registry's one answer (the PZ_CLEAR_PAGES rows of
arch/*/kernels.def), picked as arch/x86/include/asm/page_64.h picks on x86-64 (rep stosb
with ERMS, rep stosq with REP_GOOD, else the unrolled loop: Linux's flags, as
/proc/cpuinfo lists them) and arch/arm64/lib/clear_page.S on arm64 (MOPS, else DC ZVA,
else STNP; tests/c/cross_arm64.sh checks that under emulation). And the barrier every
clear row ends with, the fault path's smp_wmb() (tests/c/check_barriers.sh on this
machine's compilers; for arm64 the cross test).
"""

import os
import shutil

import pytest
from conftest import run_python
from helpers import core_build
from helpers.cpuinfo import cpuinfo_flags

import pagezero
from pagezero import _core
from pagezero.system.kernels import clear_pages_kernel


def linux_clear_page(features):
    """clear_page()'s kernel for these features, as the kernel source decides it."""
    if _core.ARCH == "x86-64":
        if "erms" in features:
            return "x86-64-stosb"
        return "x86-64-stosq" if "rep_good" in features else "x86-64-unrolled"
    if _core.ARCH == "arm64":
        if "mops" in features:
            return "arm64-mops-nt"
        return "arm64-dc-zva" if "dczva" in features else "arm64-stnp"
    return "default"


def test_one_clear_row_is_clear_pages_and_it_is_linuxs_choice():
    rows = [r for r in _core.kernels() if r["clear_pages"]]
    assert [r["kind"] for r in rows] == ["clear"]
    assert rows[0]["available"]
    assert rows[0]["name"] == linux_clear_page(_core.cpu_features()) == clear_pages_kernel()


def test_the_rule_follows_each_feature():
    if _core.ARCH == "x86-64":
        assert linux_clear_page({"erms", "rep_good"}) == "x86-64-stosb"
        assert linux_clear_page({"rep_good"}) == "x86-64-stosq"
        assert linux_clear_page(set()) == "x86-64-unrolled"
    elif _core.ARCH == "arm64":
        assert linux_clear_page({"mops", "dczva"}) == "arm64-mops-nt"
        assert linux_clear_page({"dczva"}) == "arm64-dc-zva"
        assert linux_clear_page(set()) == "arm64-stnp"
    else:
        assert linux_clear_page(set()) == "default"


CLEAR_PAGES = """
from pagezero import _core
print(",".join(r["name"] for r in _core.kernels() if r["clear_pages"]))
"""

# Features to hide, per architecture: each makes clear_page() fall back one step.
HIDE = {
    "x86-64": ["erms", "erms,rep_good"],
    "arm64": ["mops", "dczva", "dczva,mops"],
}


@pytest.mark.parametrize("hide", HIDE.get(_core.ARCH, []))
def test_hiding_a_feature_moves_clear_pages_as_linux_would(hide):
    have = set(_core.cpu_features())
    missing = set(hide.split(",")) - have
    if missing:
        pytest.skip(f"this CPU lacks {', '.join(sorted(missing))}: nothing to hide")
    out = run_python("-c", CLEAR_PAGES, env=dict(os.environ, PAGEZERO_HIDE_FEATURES=hide))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == linux_clear_page(have - set(hide.split(",")))


def test_rep_good_is_linuxs_flag():
    # No CPUID bit says REP_GOOD: pagezero reads the kernel's flags line, as Linux set it.
    if _core.ARCH != "x86-64":
        pytest.skip("REP_GOOD is an x86 flag")
    with open("/proc/cpuinfo") as f:
        flags = cpuinfo_flags(f.read())
    have = set(_core.cpu_features())
    assert ("rep_good" in have) == ("rep_good" in flags)
    assert ("erms" in have) == ("erms" in flags)


def test_kernel_descriptions_name_the_clear_page_they_stand_for():
    # The row clear_page() runs here says so in its description, as `pagezero kernels` shows.
    k = pagezero.find_kernel(clear_pages_kernel())
    assert "clear_page" in k.description or k.name == "default"


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("opt", ["-O3", "-O2"])
def test_every_clear_row_ends_with_the_fault_paths_barrier(cc, opt):
    """setup.py's flags for each compiler, at the release build's -O3 and the C tests' -O2:
    on x86-64 no fence in a temporal body, an sfence after non-temporal stores."""
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed (.ci/run installs it)")
    proc = core_build.run_check_script("check_barriers.sh", cc, opt)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    fills = [k for k in pagezero.kernels("clear")]
    assert proc.stdout.strip().splitlines()[-1] == f"{len(fills)} passed, 0 failed", proc.stdout
