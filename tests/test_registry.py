"""The kernel table: one registry in C, read as is by Python."""

import os

import pytest
from conftest import run_python

import pagezero

X86_CLEAR = {
    "default",
    "generic",
    "x86-64-unrolled",
    "x86-64-stosq",
    "x86-64-stosb",
    "x86-64-movnti",
    "x86-64-sse2-nt",
    "x86-64-avx-nt",
    "x86-64-avx512-nt",
    "x86-64-avx512",
    "x86-64-clzero",
}
X86_COPY = {
    "default",
    "generic",
    "x86-64-unrolled",
    "x86-64-movsq",
    "x86-64-movsb",
    "x86-64-avx-nt",
}
ARM64_CLEAR = {
    "default",
    "generic",
    "arm64-dc-zva",
    "arm64-stp",
    "arm64-stnp",
    "arm64-mops",
    "arm64-mops-nt",
}
ARM64_COPY = {"default", "generic"}


@pytest.mark.parametrize("kind", ["clear", "copy"])
def test_names_are_unique_and_every_row_is_described(kind):
    table = pagezero.kernels(kind)
    names = [k.name for k in table]
    assert len(names) == len(set(names))
    for k in table:
        assert k.kind == kind
        assert k.description.strip() and k.arch
        # kernels.c masks instead of dividing: both must be powers of two.
        assert k.unit >= 1 and k.unit & (k.unit - 1) == 0
        assert k.align >= 1 and k.align & (k.align - 1) == 0
        assert k.available == (k.reason is None)


def test_portable_kernels_exist_everywhere():
    for kind in ("clear", "copy"):
        table = {k.name: k for k in pagezero.kernels(kind)}
        assert table["default"].available and table["generic"].available


@pytest.mark.skipif(pagezero._core.ARCH != "x86-64", reason="x86-64 kernels need an x86-64 build")
def test_x86_tables_have_exactly_the_named_kernels():
    assert {k.name for k in pagezero.kernels("clear")} == X86_CLEAR
    assert {k.name for k in pagezero.kernels("copy")} == X86_COPY
    nontemporal = {k.name for k in pagezero.kernels("clear") if not k.temporal}
    assert {"x86-64-movnti", "x86-64-sse2-nt", "x86-64-avx-nt", "x86-64-avx512-nt"} <= nontemporal
    assert "x86-64-avx512" not in nontemporal


@pytest.mark.skipif(pagezero._core.ARCH != "arm64", reason="arm64 kernels need an arm64 build")
def test_arm64_tables_have_exactly_the_named_kernels():
    clear = {k.name: k for k in pagezero.kernels("clear")}
    assert set(clear) == ARM64_CLEAR
    assert {k.name for k in pagezero.kernels("copy")} == ARM64_COPY
    assert {n for n, k in clear.items() if not k.temporal} == {"arm64-stnp", "arm64-mops-nt"}
    assert {n for n, k in clear.items() if k.zero_only} == {"arm64-dc-zva"}
    assert clear["arm64-dc-zva"].features == ("dczva",)
    assert clear["arm64-mops"].features == clear["arm64-mops-nt"].features == ("mops",)
    # The DC ZVA row's unit is the CPU's block, 4 << DCZID_EL0.BS bytes.
    assert clear["arm64-dc-zva"].unit == clear["arm64-dc-zva"].align >= 4


def test_availability_follows_the_detected_features():
    have = set(pagezero._core.cpu_features())
    for kind in ("clear", "copy"):
        for k in pagezero.kernels(kind):
            assert k.available == (set(k.features) <= have)


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind"):
        pagezero.kernels("zero")


HIDDEN = """
import pagezero
k = pagezero.find_kernel("x86-64-avx512-nt")
assert not k.available and "avx512f" in k.reason, k
try:
    pagezero.clear(bytearray(4096), "x86-64-avx512-nt")
except pagezero.UnavailableError as e:
    print("refused:", e)
"""


def test_a_kernel_the_cpu_lacks_is_listed_and_refused_never_run():
    if "avx512f" not in pagezero._core.cpu_features():
        pytest.skip("this CPU has no avx512f to hide")
    env = dict(os.environ, PAGEZERO_HIDE_FEATURES="avx512f")
    out = run_python("-c", HIDDEN, env=env)
    assert out.returncode == 0, out.stderr
    assert (
        "refused: kernel 'x86-64-avx512-nt' is not available: this CPU lacks avx512f" in out.stdout
    )


ARM64_HIDDEN = """
import pagezero
for name in ("arm64-dc-zva", "arm64-mops", "arm64-mops-nt"):
    k = pagezero.find_kernel(name)
    assert not k.available, k
    print(name, k.reason)
"""


@pytest.mark.skipif(pagezero._core.ARCH != "arm64", reason="arm64 kernels need an arm64 build")
def test_arm64_features_can_be_hidden():
    env = dict(os.environ, PAGEZERO_HIDE_FEATURES="dczva,mops")
    out = run_python("-c", ARM64_HIDDEN, env=env)
    assert out.returncode == 0, out.stderr
    assert "arm64-dc-zva this CPU lacks dczva" in out.stdout
    assert "arm64-mops this CPU lacks mops" in out.stdout
