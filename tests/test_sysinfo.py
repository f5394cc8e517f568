"""Machine metadata: parsed from fixture trees of sysfs/procfs files under
tmp_path (every reader takes root=, caches() also sysconf=), then the live
machine once, and that every Result carries it.
"""

import pytest

import pagezero
from pagezero.system import machine as sysinfo

KB, MB = 1 << 10, 1 << 20

CACHE_DIR = "sys/devices/system/cpu/cpu0/cache"

# This machine's caches as sysfs lists them: (index, level, type, size, shared_cpu_list).
EPYC_CACHES = [
    (0, 1, "Data", "48K", "0"),
    (1, 1, "Instruction", "32K", "0"),
    (2, 2, "Unified", "1024K", "0"),
    (3, 3, "Unified", "32768K", "0-1"),
]


# Helpers ----------------------------------------------------------------


def write(root, rel, text):
    """Write `text` to root/rel, making its directories."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    return path


def cache_tree(root, entries=EPYC_CACHES):
    """sysfs cache index directories; a field given as None is left out."""
    for index, level, kind, size, shared in entries:
        d = f"{CACHE_DIR}/index{index}"
        for name, value in (
            ("level", level),
            ("type", kind),
            ("size", size),
            ("shared_cpu_list", shared),
        ):
            if value is not None:
                write(root, f"{d}/{name}", str(value))
    return root


def by_level(caches):
    return {(c["level"], c["type"]): c for c in caches}


# Caches -------------------------------------------------------------------


def test_caches_from_sysfs(tmp_path):
    caches = sysinfo.caches(root=str(cache_tree(tmp_path)), sysconf={})
    assert [(c["level"], c["type"], c["size_bytes"], c["shared_cpu_list"]) for c in caches] == [
        (1, "Data", 48 * KB, "0"),
        (1, "Instruction", 32 * KB, "0"),
        (2, "Unified", 1 * MB, "0"),
        (3, "Unified", 32 * MB, "0-1"),
    ]
    for c in caches:
        # The source names the live path, not the fixture's.
        assert c["source"].startswith("/sys/devices/system/cpu/cpu0/cache/index")
        assert c["source"].endswith("/size")
        assert "disagreement" not in c and "sysconf_bytes" not in c


@pytest.mark.parametrize("size", ["0", "0K", None, "", "lots"], ids=repr)
def test_cache_without_a_usable_size_is_ignored(tmp_path, size):
    entries = EPYC_CACHES[:3] + [(3, 3, "Unified", size, "0-1")]
    caches = sysinfo.caches(root=str(cache_tree(tmp_path, entries)), sysconf={})
    assert [(c["level"], c["type"]) for c in caches] == [
        (1, "Data"),
        (1, "Instruction"),
        (2, "Unified"),
    ]


@pytest.mark.parametrize(
    "size, expected",
    [("48K", 48 * KB), ("1024K", 1 * MB), ("32768K", 32 * MB), ("2M", 2 * MB), ("512", 512)],
)
def test_cache_size_spellings(tmp_path, size, expected):
    tree = cache_tree(tmp_path, [(0, 2, "Unified", size, "0")])
    [cache] = sysinfo.caches(root=str(tree), sysconf={})
    assert cache["size_bytes"] == expected


def test_sysconf_disagreement_is_reported(tmp_path):
    sysconf = {
        "LEVEL1_DCACHE_SIZE": 48 * KB,
        "LEVEL2_CACHE_SIZE": 1 * MB,
        "LEVEL3_CACHE_SIZE": 320 * MB,
    }
    caches = by_level(sysinfo.caches(root=str(cache_tree(tmp_path)), sysconf=sysconf))
    l3 = caches[(3, "Unified")]
    assert l3["size_bytes"] == 32 * MB  # sysfs wins
    assert l3["sysconf_bytes"] == 320 * MB
    assert str(320 * MB) in l3["disagreement"] and str(32 * MB) in l3["disagreement"]
    # Where the two agree, sysconf's opinion is kept but nothing is reported.
    for key in ((1, "Data"), (2, "Unified")):
        assert caches[key]["sysconf_bytes"] == caches[key]["size_bytes"]
        assert "disagreement" not in caches[key]


def test_sysconf_zero_is_never_trusted(tmp_path):
    sysconf = {"LEVEL3_CACHE_SIZE": 0, "LEVEL2_CACHE_SIZE": 0}
    caches = by_level(sysinfo.caches(root=str(cache_tree(tmp_path)), sysconf=sysconf))
    for key in ((2, "Unified"), (3, "Unified")):
        assert "sysconf_bytes" not in caches[key]
        assert "disagreement" not in caches[key]


def test_fallback_to_sysconf_without_sysfs(tmp_path):
    sysconf = {
        "LEVEL1_DCACHE_SIZE": 32 * KB,
        "LEVEL1_ICACHE_SIZE": 0,
        "LEVEL2_CACHE_SIZE": 512 * KB,
        "LEVEL3_CACHE_SIZE": 16 * MB,
    }
    caches = sysinfo.caches(root=str(tmp_path), sysconf=sysconf)
    assert {(c["level"], c["type"]): c["size_bytes"] for c in caches} == {
        (1, "Data"): 32 * KB,
        (2, "Unified"): 512 * KB,
        (3, "Unified"): 16 * MB,
    }
    for c in caches:
        assert c["source"].startswith("sysconf ")
    assert by_level(caches)[(3, "Unified")]["source"] == "sysconf LEVEL3_CACHE_SIZE"


def test_no_caches_anywhere(tmp_path):
    assert sysinfo.caches(root=str(tmp_path), sysconf={}) == []
    assert sysinfo.caches(root=str(tmp_path), sysconf={"LEVEL3_CACHE_SIZE": 0}) == []
    assert sysinfo.llc_bytes({"caches": []}) is None


def test_llc_and_cache_bytes(tmp_path):
    info = {"caches": sysinfo.caches(root=str(cache_tree(tmp_path)), sysconf={})}
    assert sysinfo.llc_bytes(info) == 32 * MB
    assert sysinfo.cache_bytes(info, 1, "Data") == 48 * KB
    assert sysinfo.cache_bytes(info, 1, "Instruction") == 32 * KB
    assert sysinfo.cache_bytes(info, 2) == 1 * MB
    assert sysinfo.cache_bytes(info, 3) == 32 * MB
    assert sysinfo.cache_bytes(info, 4) is None


def test_llc_ignores_instruction_caches():
    info = {
        "caches": [
            {"level": 1, "type": "Data", "size_bytes": 32 * KB},
            {"level": 2, "type": "Instruction", "size_bytes": 64 * KB},
        ]
    }
    assert sysinfo.llc_bytes(info) == 32 * KB


# Preemption, init_on_alloc and the other boot facts: tests/test_boot_facts.py.


# The rest of machine(): hugepages, THP, NUMA, memory ----------------------


def fixture_machine(root):
    """A whole fixture tree of the files machine() reads."""
    cache_tree(root)
    write(
        root,
        "proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
        "model name\t: AMD EPYC 9R14 96-Core Processor\n",
    )
    for kb, total, free in ((2048, 16, 10), (1048576, 2, 0)):
        d = f"sys/kernel/mm/hugepages/hugepages-{kb}kB"
        write(root, f"{d}/nr_hugepages", str(total))
        write(root, f"{d}/free_hugepages", str(free))
    write(root, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
    write(
        root,
        "sys/kernel/mm/transparent_hugepage/defrag",
        "always defer defer+madvise [madvise] never",
    )
    write(root, "sys/devices/system/node/node0/cpulist", "0-3")
    write(root, "sys/devices/system/node/node1/cpulist", "4-7")
    write(root, "sys/devices/system/node/possible", "0-1")
    write(
        root,
        "proc/meminfo",
        "MemTotal:       16384000 kB\nMemFree:         1000 kB\nMemAvailable:    8192000 kB\n",
    )
    write(root, "sys/kernel/debug/sched/preempt", "none (voluntary) full lazy")
    return root


# machine() caches its static facts per root: every test has its own tmp root.


def test_machine_from_fixture(tmp_path):
    info = sysinfo.machine(root=str(fixture_machine(tmp_path)))
    assert info["cpu_model"] == "AMD EPYC 9R14 96-Core Processor"
    assert [c["size_bytes"] for c in info["caches"]] == [48 * KB, 32 * KB, 1 * MB, 32 * MB]
    assert info["hugepages"] == {
        "2048kB": {
            "total": 16,
            "free": 10,
            "reserved": 0,
            "surplus": 0,
            "available": 10,
            "page_bytes": 2 * MB,
            "source": "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
        },
        "1048576kB": {
            "total": 2,
            "free": 0,
            "reserved": 0,
            "surplus": 0,
            "available": 0,
            "page_bytes": 1 << 30,
            "source": "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
        },
    }
    assert info["thp"]["enabled"] == "madvise"
    assert info["thp"]["defrag"] == "madvise"
    assert info["numa_nodes"] == [{"node": 0, "cpus": "0-3"}, {"node": 1, "cpus": "4-7"}]
    assert info["memory"] == {"total_bytes": 16384000 * KB, "available_bytes": 8192000 * KB}
    assert info["preemption"] == {"model": "voluntary", "source": "/sys/kernel/debug/sched/preempt"}
    assert sysinfo.llc_bytes(info) == 32 * MB


@pytest.mark.parametrize(
    "enabled, defrag",
    [
        ("[always] madvise never", "always"),
        ("always madvise [never]", "never"),
        ("always [madvise] never", "defer+madvise"),
    ],
)
def test_thp_bracket(tmp_path, enabled, defrag):
    choices = ["always", "defer", "defer+madvise", "madvise", "never"]
    write(tmp_path, "sys/kernel/mm/transparent_hugepage/enabled", enabled)
    write(
        tmp_path,
        "sys/kernel/mm/transparent_hugepage/defrag",
        " ".join(f"[{c}]" if c == defrag else c for c in choices),
    )
    info = sysinfo.machine(root=str(tmp_path))
    assert info["thp"]["enabled"] == enabled.split("[")[1].split("]")[0]
    assert info["thp"]["defrag"] == defrag


def test_empty_tree(tmp_path):
    """Nothing readable: every fact says it is unknown, nothing raises."""
    info = sysinfo.machine(root=str(tmp_path))
    assert info["caches"] == []
    assert info["hugepages"] == {}
    assert info["thp"]["enabled"] is None and info["thp"]["defrag"] is None
    assert info["numa_nodes"] == []
    assert info["memory"] == {}
    assert sysinfo.llc_bytes(info) is None
    assert any("numa nodes:  unknown" in line for line in sysinfo.summary(info))


def test_hugepage_pools_change_between_calls(tmp_path):
    """Pools are read afresh on each call, unlike the static facts."""
    d = "sys/kernel/mm/hugepages/hugepages-2048kB"
    write(tmp_path, f"{d}/nr_hugepages", "4")
    write(tmp_path, f"{d}/free_hugepages", "4")
    assert sysinfo.machine(root=str(tmp_path))["hugepages"]["2048kB"]["free"] == 4
    write(tmp_path, f"{d}/free_hugepages", "1")
    assert sysinfo.machine(root=str(tmp_path))["hugepages"]["2048kB"]["free"] == 1


def test_summary_mentions_the_disagreement(tmp_path):
    root = str(fixture_machine(tmp_path))
    info = sysinfo.machine(root=root)
    info["caches"] = sysinfo.caches(root=root, sysconf={"LEVEL3_CACHE_SIZE": 320 * MB})
    text = "\n".join(sysinfo.summary(info))
    assert "AMD EPYC 9R14" in text
    assert "L3" in text and "32 MiB" in text
    assert str(320 * MB) in text  # the disagreement, with sysconf's number
    assert "node1: cpus 4-7" in text
    assert "hugepages 2048kB: 10 free of 16" in text
    assert "thp:         enabled=madvise defrag=madvise" in text


def test_summary_without_disagreement(tmp_path):
    root = str(fixture_machine(tmp_path))
    info = sysinfo.machine(root=root)
    info["caches"] = sysinfo.caches(root=root, sysconf={"LEVEL3_CACHE_SIZE": 32 * MB})
    assert "note:" not in "\n".join(sysinfo.summary(info))


# The live machine -----------------------------------------------------------


def test_live_machine():
    info = pagezero.machine()
    assert info["cpu_model"]
    assert info["preemption"]["model"]
    assert info["kernel_release"]
    assert "enabled" in info["thp"] and "defrag" in info["thp"]


def test_live_caches():
    info = pagezero.machine()
    if not info["caches"]:
        pytest.skip("this machine lists no caches in sysfs or sysconf (some VMs)")
    for c in info["caches"]:
        assert c["size_bytes"] > 0
        assert c["source"]
    assert sysinfo.llc_bytes(info) > 0


def test_machine_returns_a_copy():
    info = pagezero.machine()
    caches = list(info["caches"])
    info["caches"].append({"level": 9})
    info["cpu_model"] = "changed"
    assert pagezero.machine()["caches"] == caches
    assert pagezero.machine()["cpu_model"] != "changed"


def test_every_result_carries_the_machine():
    r = pagezero.memset(size="1MB", loops=1)[0]
    assert r.machine["cpu_model"] == pagezero.machine()["cpu_model"]
    assert list(r.machine["caches"]) == list(pagezero.machine()["caches"])
    assert all("source" in c for c in r.machine["caches"])
