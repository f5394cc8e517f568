"""The batch and folio benchmarks through the Python API.

Small sizes, few loops: these check what is recorded and returned, never
how fast anything is (that is benchmarks/policies.py's job).
"""

import json
import os
import sys

import pytest
from conftest import TESTS_DIR, kernel_names, mem_available, require_hugepages, require_kernel
from helpers.children import run

import pagezero
from pagezero.measure import policy
from pagezero.measure.policy import PAGE_SIZE, STRATEGIES, BatchResult, FolioResult, Step

MB = 1 << 20


# Batches --------------------------------------------------------------------


@pytest.mark.parametrize(
    "batch, batch_bytes, batches",
    [
        ("page", PAGE_SIZE, 256),
        ("8MB", 8 * MB, None),
        ("32MB", 32 * MB, None),
        ("extent", MB, 1),
        ("64KB", 64 << 10, 16),
        (12288, 12288, 86),  # 3 pages: the last batch holds the one page left
    ],
)
def test_batch_boundaries_cover_the_region_exactly(batch, batch_bytes, batches):
    size = {"8MB": 16 * MB, "32MB": 64 * MB}.get(batch, MB)
    p = policy.plan_batch(size=size, batch=batch, loops=2)
    steps: list = []
    r = policy.run_batch(p, steps=steps)
    nr = size // PAGE_SIZE
    per_pass = r.batches_per_loop
    assert per_pass == -(-size // batch_bytes)
    if batches:
        assert per_pass == batches
    assert len(steps) == 2 * per_pass
    for pass_steps in (steps[:per_pass], steps[per_pass:]):
        # Contiguous from page 0 to the last page, each batch full but the last.
        assert pass_steps[0].first == 0
        for a, b in zip(pass_steps, pass_steps[1:]):
            assert b.first == a.first + a.count
            assert a.count == batch_bytes // PAGE_SIZE
        assert pass_steps[-1].first + pass_steps[-1].count == nr
        assert not any(s.nontemporal for s in pass_steps)
    assert r.batch_bytes == batch_bytes
    assert r.params["batch"] == batch


def test_batch_result_fields():
    r = pagezero.batch(size="2MB", batch="64KB", loops=3)[0]
    assert isinstance(r, BatchResult)
    assert r.benchmark == "batch"
    assert r.function == policy.default_kernel()
    assert r.loops == 3 and len(r.pass_worst_ns) == 3
    assert r.batches_per_loop == 32
    assert set(r.batch_ns) == {"max", "p99", "median", "mean", "typical_worst"}
    ns = r.batch_ns
    assert 0 < ns["median"] <= ns["p99"] <= ns["max"]
    assert ns["typical_worst"] <= ns["max"]
    assert max(r.pass_worst_ns) == ns["max"]
    # No batch lasts longer than its pass.
    assert all(w <= s for w, s in zip(r.pass_worst_ns, r.samples))
    assert r.bytes_per_sec > 0 and r.worst_ms > 0 and r.p99_ms > 0
    assert dict(r.params) == {
        "size": 2 * MB,
        "batch": "64KB",
        "batch_bytes": 64 << 10,
        "kernel": r.function,
        "loops": 3,
        "yield": False,
        "backing": r.params["backing"],
    }
    assert r.params["backing"] in ("hugetlb", "thp", "4KB")


@pytest.mark.parametrize("kernel", kernel_names("clear"))
def test_batch_every_kernel_with_yield(kernel):
    require_kernel(kernel)
    r = pagezero.batch(size="256KB", batch="64KB", kernel=kernel, loops=2, yield_between=True)[0]
    assert r.function == kernel and r.params["yield"] is True
    assert r.batches_per_loop == 4


def test_batch_leaves_the_buffer_zero():
    buf = bytearray(b"\xff") * (64 * PAGE_SIZE)
    p = policy.plan_batch(size=len(buf), batch="16KB", loops=1)
    policy.run_batch(p, buf)
    assert buf == bytes(len(buf))


def test_batch_result_round_trips_through_json(tmp_path):
    r = pagezero.batch(size="1MB", batch="page", loops=2)[0]
    assert BatchResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    path = str(tmp_path / "b.json")
    pagezero.save_results(path, [r])
    # The file names the class: loading gives back a BatchResult, figures included.
    [loaded] = pagezero.load_results(path)
    assert isinstance(loaded, BatchResult) and loaded == r


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"batch": 0}, "at least 1 byte"),
        ({"batch": "2MB"}, "larger than the region"),
        ({"batch": "6KB"}, "whole number of 4KB pages"),
        ({"batch": "sometimes"}, "preset"),
        ({"size": "1000KB"}, None),  # fine: 250 pages
        ({"size": 5000}, "whole number of 4KB pages"),
        ({"size": 0}, "at least 1 byte"),
        ({"loops": 0}, "loops"),
        ({"loops": 1.5}, "loops"),
        ({"kernel": "nope"}, "unknown clear kernel 'nope'"),
        ({"kernel": 7}, "must be a name"),
        ({"yield_between": "yes"}, "yield_between"),
        ({"size": "1TB", "batch": "page", "loops": 1000}, "batches to record"),
    ],
)
def test_batch_bad_input(kwargs, message):
    args = {"size": "1MB", "batch": "64KB", "loops": 2, **kwargs}
    if message is None:
        policy.plan_batch(**args)
        return
    with pytest.raises(ValueError, match=message):
        policy.plan_batch(**args)


def test_unavailable_kernel_is_an_unavailable_error():
    code = (
        "import pagezero\n"
        "try:\n"
        "    pagezero.batch(size='1MB', batch='64KB', kernel='x86-64-stosb', loops=1)\n"
        "except pagezero.UnavailableError as e:\n"
        "    print('unavailable:', e)\n"
    )
    env = dict(os.environ, PAGEZERO_HIDE_FEATURES="erms")
    if "x86-64-stosb" not in [k.name for k in pagezero.kernels()]:
        pytest.skip("no x86-64-stosb kernel on this architecture")
    out = run([sys.executable, "-c", code], 60, env=env, cwd=TESTS_DIR)
    assert "unavailable:" in out.stdout and "erms" in out.stdout, out.stderr


# Folios ---------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_folio_result_fields(strategy):
    r = pagezero.folio(size="64KB", strategy=strategy, fault_index=7, loops=3, backing="4KB")[0]
    assert isinstance(r, FolioResult)
    assert r.benchmark == "folio" and r.bytes_per_loop == 64 << 10
    assert r.backing == "4KB"
    assert r.neighbourhood == (5, 5)
    assert r.touch_lines == 5 * PAGE_SIZE // 64
    assert len(r.samples) == len(r.touch_ns) == len(r.cold_ns) == 3
    assert r.touch_ns_per_line > 0 and r.cold_ns_per_line > 0
    assert r.clear_bytes_per_sec > 0
    assert r.params["strategy"] == strategy and r.params["fault_index"] == 7
    assert r.cold_method == pagezero._core.cold_methods()[0]
    assert (r.params["nt_kernel"] is None) == (strategy != "nocache-except-target")


@pytest.mark.parametrize(
    "fault, neighbourhood", [(0, (0, 3)), (1, (0, 4)), (511, (509, 3)), (256, (254, 5))]
)
def test_folio_2mb_neighbourhood_is_clamped(fault, neighbourhood):
    r = pagezero.folio(
        size="2MB", strategy="neighbourhood-last", fault_index=fault, loops=1, backing="4KB"
    )[0]
    assert r.neighbourhood == neighbourhood
    assert r.touch_lines == neighbourhood[1] * 64


def test_folio_cold_by_eviction_works_everywhere():
    r = pagezero.folio(size="64KB", strategy="sequential", loops=2, backing="4KB", cold="evict")[0]
    assert r.cold_method == "evict" and r.cold_ns_per_line > 0


def test_folio_of_one_page():
    r = pagezero.folio(size="4KB", strategy="page-at-a-time", loops=1, backing="4KB")[0]
    assert r.neighbourhood == (0, 1)


def test_folio_result_round_trips_through_json():
    r = pagezero.folio(size="64KB", strategy="nocache-except-target", loops=2, backing="4KB")[0]
    assert FolioResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_folio_on_a_2mb_hugetlb_page():
    require_hugepages("2MB")
    r = pagezero.folio(size="2MB", strategy="sequential", loops=2, backing="hugetlb")[0]
    assert r.backing == "hugetlb" and r.params["backing"] == "hugetlb"


def refused_hugetlb(monkeypatch):
    """Make every hugetlb mapping fail as a pool without free pages does (a real
    pool is shared with whoever else reserves pages on this machine)."""
    real = policy.folios.region

    def region(size, page="4KB", **kw):
        if page != "4KB":
            raise pagezero.MappingError(
                12, "memory allocation failed - maybe size has insufficient hugepages"
            )
        return real(size, page=page, **kw)

    monkeypatch.setattr(policy.folios, "region", region)
    monkeypatch.setattr(policy.orders, "region", region)  # backed_region()'s
    monkeypatch.setattr(policy.folios.hugepages, "available_pages", lambda page, node=None: 1)


def test_folio_hugetlb_refused_fails_clearly(monkeypatch):
    refused_hugetlb(monkeypatch)
    with pytest.raises(pagezero.MappingError, match="hugepages"):
        pagezero.folio(size="2MB", strategy="sequential", loops=1, backing="hugetlb")


def test_folio_auto_falls_back_to_4kb_pages_and_says_so(monkeypatch):
    refused_hugetlb(monkeypatch)
    monkeypatch.setattr(pagezero.system.backing, "thp_mode", lambda *paths: "never")
    r = pagezero.folio(size="2MB", strategy="sequential", loops=1, backing="auto")[0]
    assert r.backing == "4KB" and r.params["backing"] == "4KB"
    assert "transparent huge pages are never" in r.details["backing_note"]


def test_folio_auto_without_free_hugepages_takes_4kb_pages_without_thp(monkeypatch):
    monkeypatch.setattr(policy.folios.hugepages, "available_pages", lambda page, node=None: 0)
    monkeypatch.setattr(pagezero.system.backing, "thp_mode", lambda *paths: "never")
    r = pagezero.folio(size="2MB", strategy="sequential", loops=1)[0]
    assert r.backing == "4KB"


@pytest.mark.skipif(mem_available() < 4 << 30, reason="a 1GB folio needs 4GB of MemAvailable")
def test_folio_1gb_of_4kb_pages():
    r = pagezero.folio(
        size="1GB", strategy="neighbourhood-last", fault_index=1000, loops=1, backing="4KB"
    )[0]
    assert r.bytes_per_loop == 1 << 30 and r.neighbourhood == (998, 5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"fault_index": 16}, "fault index 16 is outside the folio"),
        ({"fault_index": -1}, "outside the folio"),
        ({"strategy": "random"}, "unknown strategy 'random'"),
        ({"size": "48KB"}, "power-of-two"),
        ({"size": "6KB"}, "whole number of 4KB pages"),
        ({"size": "0"}, "at least 1 byte"),
        ({"backing": "huge"}, "unknown backing"),
        ({"backing": "hugetlb"}, "needs a 2MB or 1GB folio"),
        ({"cold": "freeze"}, "cold method"),
        ({"kernel": "nope"}, "unknown clear kernel"),
        ({"strategy": "nocache-except-target", "nt_kernel": "generic"}, "temporal stores"),
        ({"batch": 0}, "at least 1 byte"),
        ({"loops": 0}, "loops"),
    ],
)
def test_folio_bad_input(kwargs, message):
    args = {"size": "64KB", "strategy": "sequential", "loops": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        policy.plan_folio(**args)


def test_steps_are_values():
    assert pagezero.clear_order("sequential", 2, 0, "4KB") == (Step(0, 1, False), Step(1, 1, False))
