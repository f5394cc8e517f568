"""The cache a run has (pagezero.analysis.cache), from tables made by hand shaped like the two
CPUs of these machines, noisy ones and flat ones: no benchmark runs, nothing here assumes
the CPU it runs on. The oracle is the shape written beside each case."""

import random

import pytest

from pagezero.analysis.cache import (
    INFO_KEY,
    MeasuredCache,
    extents_to_add,
    kernel_cache,
    measured_cache,
    run_cache,
)

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


def ladder(low, high, *extra):
    return sorted({1 << s for s in range(low.bit_length() - 1, high.bit_length())} | set(extra))


def intel_temporal(e):
    # Intel Xeon VM (sysfs L3 480 MiB): L2 to 2MB, the run's L3 share to 64MB, memory from
    # 96MB (80MB half way), GB/s as measured there.
    if e <= 2 * MB:
        return 63e9
    if e <= 64 * MB:
        return 29e9
    return 16.6e9 if e <= 80 * MB else 10.7e9


def amd_avx512(e):
    # AMD Zen 4 VM: L2 1MB, L3 32MB; the temporal AVX-512 store halves beyond it.
    return 115e9 if e <= 1 * MB else 60e9 if e <= 32 * MB else 30e9


def amd_stosb(e):
    # rep stosb on Zen stops allocating cache lines beyond the LLC: it rises, not falls.
    return 115e9 if e <= 1 * MB else 50e9 if e <= 32 * MB else 65e9


INTEL_EXTENTS = ladder(4 * KB, 4 * GB, 80 * MB, 96 * MB, 240 * MB, 360 * MB, 480 * MB)
AMD_EXTENTS = ladder(4 * KB, 256 * MB, 16 * MB, 24 * MB, 48 * MB)


def table(shape, extents, kernels=("a", "b"), noise=0.0, seed=0):
    rng = random.Random(seed)
    return {k: {e: shape(e) * (1 + rng.uniform(-noise, noise)) for e in extents} for k in kernels}


def test_intel_shaped_rates_give_the_share_the_run_has_not_sysfs():
    cache = measured_cache(table(intel_temporal, INTEL_EXTENTS), 480 * MB, "sysfs index3")
    assert (cache.cache_bytes, cache.plateau_bytes) == (64 * MB, 96 * MB)
    assert cache.differs and cache.source == "measured"
    assert cache.effective_bytes == 64 * MB
    assert cache.words() == "64MB (measured; sysfs's LLC: 480MB)"
    k = cache.kernels[0]
    assert (k.cache_bytes_per_sec, k.memory_bytes_per_sec) == (29e9, 10.7e9)


def test_amd_shaped_rates_agree_with_sysfs_and_a_rising_kernel_is_left_out():
    rates = {"avx512": {e: amd_avx512(e) for e in AMD_EXTENTS}}
    rates["stosb"] = {e: amd_stosb(e) for e in AMD_EXTENTS}
    cache = measured_cache(rates, 32 * MB)
    assert (cache.cache_bytes, cache.plateau_bytes) == (32 * MB, 48 * MB)
    assert [k.kernel for k in cache.kernels] == ["avx512"]  # stosb rises beyond the LLC
    assert not cache.differs and cache.source == "sysfs"
    assert cache.effective_bytes == 32 * MB
    assert cache.words() == "32MB (sysfs's LLC; measured: 32MB)"


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    "shape, extents, llc, expected",
    [
        (intel_temporal, ladder(4 * KB, 4 * GB), 480 * MB, (64 * MB, 128 * MB)),
        (amd_avx512, ladder(4 * KB, 256 * MB), 32 * MB, (32 * MB, 64 * MB)),
    ],
)
def test_noise_of_8_percent_moves_neither_end(seed, shape, extents, llc, expected):
    rates = table(shape, extents, kernels="abcd", noise=0.08, seed=seed)
    cache = measured_cache(rates, llc)
    assert (cache.cache_bytes, cache.plateau_bytes) == expected


def test_no_step_is_no_cache_and_sysfs_stays():
    flat = {"a": {e: 10e9 for e in ladder(4 * KB, 1 * GB)}}
    cache = measured_cache(flat, 32 * MB, "sysfs index3")
    assert (cache.cache_bytes, cache.plateau_bytes, cache.kernels) == (None, None, ())
    assert (cache.effective_bytes, cache.source) == (32 * MB, "sysfs")
    assert cache.words() == "32MB (sysfs's LLC; the rates measured show no cache)"
    assert measured_cache({}).effective_bytes is None
    assert measured_cache({}).source == "unknown"


def test_non_temporal_stores_flat_at_memory_speed_show_no_cache():
    # x86-64-avx512-nt on the Intel VM: ~26 GB/s throughout.
    assert kernel_cache("nt", {e: 26e9 for e in INTEL_EXTENTS}) is None


def test_a_plateau_of_one_extent_is_none():
    # The largest extent alone at the memory rate: not a level yet.
    rates = {e: intel_temporal(e) for e in ladder(4 * MB, 128 * MB)}
    assert kernel_cache("a", rates) is None


def test_the_l2_to_l3_fall_is_not_the_cache_when_the_ladder_stops_inside_the_l3():
    rates = table(intel_temporal, ladder(4 * KB, 32 * MB))
    assert measured_cache(rates).cache_bytes == 2 * MB  # read from the L2 down: wrong
    assert measured_cache(rates, above_bytes=2 * MB).cache_bytes is None


def test_json_round_trip_and_the_report_hook():
    cache = measured_cache(table(intel_temporal, INTEL_EXTENTS), 480 * MB, "src")
    doc = cache.to_json()
    assert MeasuredCache.from_json(doc) == cache
    assert doc["effective_bytes"] == 64 * MB and doc["source"] == "measured"
    info = {"caches": [{"level": 3, "type": "Unified", "size_bytes": 480 * MB, "source": "s"}]}
    assert run_cache(info) == MeasuredCache(None, None, 480 * MB, "s")
    assert run_cache(dict(info, **{INFO_KEY: doc})) == cache


# The extents study's extension ----------------------------------------------------------

QUICK = [e * KB for e in (4, 16, 64, 256)] + [e * MB for e in (1, 4, 16, 32, 64, 256)]


def test_a_ladder_that_stops_on_the_fall_is_extended_to_the_plateau():
    # Intel, the quick scale's extents: 256MB alone at the memory rate.
    rates = table(intel_temporal, QUICK)
    assert measured_cache(rates).cache_bytes is None
    assert extents_to_add(rates, 64 * GB, above_bytes=2 * MB) == [512 * MB, 1 * GB]
    extended = table(intel_temporal, QUICK + [512 * MB, 1 * GB])
    assert measured_cache(extended).cache_bytes == 64 * MB
    assert extents_to_add(extended, 64 * GB, above_bytes=2 * MB) == []


def test_the_extension_stays_within_a_quarter_of_the_memory_available():
    rates = table(intel_temporal, QUICK)
    assert extents_to_add(rates, 2 * GB, above_bytes=2 * MB) == [512 * MB]
    assert extents_to_add(rates, 1 * GB, above_bytes=2 * MB) == []
    assert extents_to_add(rates, None) == []


def test_the_extension_reaches_twice_the_measured_cache():
    # A cache found at 64MB with a plateau at 96MB and 100MB: the ladder must reach 128MB.
    rates = {"a": {16 * MB: 29e9, 64 * MB: 29e9, 96 * MB: 10.7e9, 100 * MB: 10.7e9}}
    assert measured_cache(rates).cache_bytes == 64 * MB
    assert extents_to_add(rates, 64 * GB) == [200 * MB]


def test_a_ladder_still_in_the_cache_or_flat_is_not_extended():
    assert extents_to_add(table(intel_temporal, ladder(4 * KB, 1 * MB)), 64 * GB) == []
    assert extents_to_add({"a": {e: 10e9 for e in QUICK}}, 64 * GB) == []


def test_one_kernel_of_several_falling_is_noise_not_a_cache():
    # A loaded machine: one of four temporal kernels seems to fall at 128MB, three are flat.
    rates = {k: {e: 20e9 for e in ladder(4 * MB, 512 * MB)} for k in "bcd"}
    rates["a"] = {e: 20e9 if e <= 64 * MB else 8e9 for e in ladder(4 * MB, 512 * MB)}
    cache = measured_cache(rates, 32 * MB)
    assert cache.cache_bytes is None and cache.effective_bytes == 32 * MB
    assert [k.kernel for k in cache.kernels] == ["a"]  # what was seen stays on record
    rates["b"] = rates["a"]  # two of four: half, a cache
    assert measured_cache(rates, 32 * MB).cache_bytes == 64 * MB


def test_falls_that_end_far_apart_are_not_one_cache():
    # Three of six kernels "fall", at 8MB, 64MB and 512MB: no two within a factor of two.
    xs = ladder(4 * MB, 2 * GB)
    rates = {k: {e: 20e9 for e in xs} for k in "def"}
    for k, end in zip("abc", (8 * MB, 64 * MB, 512 * MB)):
        rates[k] = {e: 20e9 if e <= end else 8e9 for e in xs}
    assert measured_cache(rates, 32 * MB).cache_bytes is None
    rates["d"] = rates["b"]  # 64MB twice: 2 of 6 agree, under half
    assert measured_cache(rates, 32 * MB).cache_bytes is None
    rates["e"] = rates["b"]  # three of six at 64MB: half, a cache
    assert measured_cache(rates, 32 * MB).cache_bytes == 64 * MB


@pytest.mark.parametrize(
    "cache, plateau, llc, differs",
    [
        (16 * MB, 64 * MB, 32 * MB, False),  # Zen 4 VM: the LLC inside a gradual fall
        (8 * MB, 64 * MB, 32 * MB, False),  # the same, loaded: at full speed to 8MB only
        (64 * MB, 128 * MB, 480 * MB, True),  # Intel VM: sysfs's LLC beyond the plateau
        (64 * MB, 256 * MB, 480 * MB, True),  # the quick scale's coarser ladder
        (128 * MB, 256 * MB, 32 * MB, True),  # the fall far beyond sysfs's LLC
        (64 * MB, 128 * MB, 32 * MB, False),  # within the factor of two a ladder resolves
    ],
)
def test_sysfs_agrees_where_its_llc_lies_within_the_fall(cache, plateau, llc, differs):
    measured = MeasuredCache(cache, plateau, llc)
    assert measured.differs is differs
    assert measured.effective_bytes == (cache if differs else llc)
