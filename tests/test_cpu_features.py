"""CPU-feature detection against the kernel's: pagezero reads CPUID (x86-64), Linux
lists what it found in /proc/cpuinfo. A broken check would make kernels unavailable
and every test of them a skip, and the suite would pass: here the kernels the
cpuinfo flags allow must all run. The cross-check itself is tested on fake
/proc/cpuinfo texts first, so that a check that finds nothing is not taken for one
that agrees."""

import pytest
from helpers.cpuinfo import cpuinfo_flags, disagreements, must_run

import pagezero
from pagezero import _core

X86_CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu tsc sse2 avx avx2 erms clzero constant_tsc
bugs\t\t: sysret_ss_attrs

processor\t: 1
flags\t\t: fpu tsc sse2 avx avx2 erms clzero constant_tsc avx512f
"""
ARM64_CPUINFO = "processor\t: 0\nFeatures\t: fp asimd dcpop\nCPU part\t: 0xd0c\n"


def all_kernels():
    return pagezero.kernels("clear") + pagezero.kernels("copy")


def universe():
    """Every feature some kernel of this build needs."""
    return {f for k in all_kernels() for f in k.features}


def test_flags_are_read_from_the_first_cpu():
    assert cpuinfo_flags(X86_CPUINFO) == {
        *"fpu tsc sse2 avx avx2 erms clzero constant_tsc".split(),
    }
    assert cpuinfo_flags(ARM64_CPUINFO) == {"fp", "asimd", "dcpop"}
    assert cpuinfo_flags("processor\t: 0\n") == set()


def test_a_disagreement_is_found_either_way():
    flags = cpuinfo_flags(X86_CPUINFO)
    assert disagreements({"avx2", "erms"}, flags, {"avx2", "erms"}) == []
    assert disagreements({"erms"}, flags, {"avx2", "erms"}) == [("avx2", False, True)]
    assert disagreements({"avx512f"}, flags, {"avx512f"}) == [("avx512f", True, False)]


def test_must_run_follows_the_flags_not_the_detection():
    flags = cpuinfo_flags(X86_CPUINFO)
    names = must_run(pagezero.kernels("clear"), flags, "x86-64")
    assert "default" in names and "generic" in names
    if _core.ARCH == "x86-64":
        assert "x86-64-stosb" in names and "x86-64-clzero" in names
        assert "x86-64-avx512" not in names  # avx512f is in CPU 1's flags only


@pytest.fixture
def proc_cpuinfo():
    with open("/proc/cpuinfo") as f:
        return cpuinfo_flags(f.read())


def test_detection_agrees_with_proc_cpuinfo(proc_cpuinfo):
    if _core.ARCH != "x86-64":
        pytest.skip("only x86-64's flags name pagezero's features one for one")
    assert disagreements(set(_core.cpu_features()), proc_cpuinfo, universe()) == []


def test_every_kernel_proc_cpuinfo_allows_is_available(proc_cpuinfo):
    if _core.ARCH != "x86-64":
        pytest.skip("the arm64 must-run list is tests/c/cross_arm64.sh's")
    names = must_run(all_kernels(), proc_cpuinfo, "x86-64")
    assert {"default", "generic", "x86-64-stosq", "x86-64-stosb"} <= set(names)
    unavailable = [(k.name, k.reason) for k in all_kernels() if k.name in names and not k.available]
    assert unavailable == []
