"""Kernel facts read from the running kernel, each with its source, on fake roots: the
preemption model (debugfs, preempt=, /proc/config.gz, /boot/config, uname -v), init_on_alloc
and init_on_free, 7.0's batch per architecture, the cache eviction buffers exceed; and what
predict's running policy makes of them.
"""

import gzip

import pytest
from helpers.fake_sysfs import FakeBoot

from pagezero import _core
from pagezero.measure import conditions
from pagezero.measure.policy import folios
from pagezero.studies.predict import replays
from pagezero.studies.predict.replays import replay_for, running_kernel
from pagezero.system import machine as sysinfo

REL = FakeBoot.RELEASE
DYNAMIC = "#1 SMP PREEMPT_DYNAMIC Fri Oct 10 10:10:10 UTC 2025"
PLAIN = "#1 SMP Tue Jan 1 00:00:00 UTC 2030"


def preemption(tmp_path, uname=DYNAMIC):
    return sysinfo.preemption(root=str(tmp_path), uname_version=uname, release=REL)


# Preemption ---------------------------------------------------------------


def test_debugfs_is_the_live_model_before_everything(tmp_path):
    boot = FakeBoot(tmp_path).debugfs_preempt("none voluntary (full) lazy")
    boot.cmdline("ro preempt=none").config("PREEMPT_NONE", "PREEMPT_DYNAMIC")
    assert preemption(tmp_path) == {"model": "full", "source": "/sys/kernel/debug/sched/preempt"}


def test_boot_parameter_before_the_config(tmp_path):
    FakeBoot(tmp_path).cmdline("BOOT_IMAGE=/vmlinuz ro preempt=full quiet").config(
        "PREEMPT_NONE", "PREEMPT_DYNAMIC"
    )
    assert preemption(tmp_path) == {"model": "full", "source": "/proc/cmdline preempt="}


def test_boot_parameter_of_a_kernel_that_is_not_dynamic_is_ignored(tmp_path):
    # setup_preempt_mode() is a PREEMPT_DYNAMIC kernel's: another ignores preempt=.
    FakeBoot(tmp_path).cmdline("ro preempt=full").config("PREEMPT_VOLUNTARY", "!PREEMPT_DYNAMIC")
    got = preemption(tmp_path, uname=PLAIN)
    assert got == {"model": "voluntary", "source": "/proc/config.gz CONFIG_PREEMPT_VOLUNTARY=y"}


def test_a_boot_parameter_the_kernel_does_not_know_leaves_the_config(tmp_path):
    FakeBoot(tmp_path).cmdline("ro preempt=fastest").config("PREEMPT_LAZY", "PREEMPT_DYNAMIC")
    assert preemption(tmp_path)["model"] == "lazy"


def test_init_arguments_after_the_separator_are_not_the_kernels(tmp_path):
    FakeBoot(tmp_path).cmdline("ro -- preempt=full").config("PREEMPT_NONE", "PREEMPT_DYNAMIC")
    assert preemption(tmp_path)["model"] == "none"


def test_a_dynamic_kernel_boots_with_its_config_choice(tmp_path):
    # The machines here: PREEMPT_DYNAMIC in uname -v, CONFIG_PREEMPT_NONE=y in /proc/config.gz.
    FakeBoot(tmp_path).config("PREEMPT_NONE", "!PREEMPT_VOLUNTARY", "!PREEMPT", "PREEMPT_DYNAMIC")
    got = preemption(tmp_path)
    assert got["model"] == "none"
    assert got["source"].startswith("/proc/config.gz CONFIG_PREEMPT_NONE=y")
    assert "preempt_dynamic_init()" in got["source"]


@pytest.mark.parametrize(
    "options, model",
    [
        (("PREEMPT_VOLUNTARY", "!PREEMPT"), "voluntary"),
        (("!PREEMPT_NONE", "PREEMPT"), "full"),
        (("PREEMPT_LAZY", "!PREEMPT"), "lazy"),
        (("PREEMPT_RT", "PREEMPT"), "rt"),
        (("PREEMPT_NONE", "PREEMPT_COUNT", "PREEMPTION"), "none"),
    ],
    ids=["voluntary", "full", "lazy", "rt", "none-beside-preempt-count"],
)
@pytest.mark.parametrize("gz", [True, False], ids=["config.gz", "boot-config"])
def test_config_choice(tmp_path, options, model, gz):
    FakeBoot(tmp_path).config(*options, gz=gz)
    got = preemption(tmp_path, uname=PLAIN)
    where = "/proc/config.gz" if gz else f"/boot/config-{REL}"
    assert got["model"] == model and got["source"].startswith(where + " CONFIG_")


def test_config_gz_before_boot_config(tmp_path):
    FakeBoot(tmp_path).config("PREEMPT", gz=False).config("PREEMPT_NONE")
    assert preemption(tmp_path, uname=PLAIN)["source"] == "/proc/config.gz CONFIG_PREEMPT_NONE=y"


def test_a_broken_config_gz_falls_back_to_boot_config(tmp_path):
    boot = FakeBoot(tmp_path).config("PREEMPT_VOLUNTARY", gz=False)
    (tmp_path / "proc").mkdir(exist_ok=True)
    (tmp_path / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_PREEMPT=y\n")[:-9])
    assert boot and preemption(tmp_path, uname=PLAIN)["model"] == "voluntary"


@pytest.mark.parametrize(
    "uname, model",
    [(DYNAMIC, "dynamic"), ("#1 SMP PREEMPT_RT", "rt"), ("#1 SMP PREEMPT Fri", "full")],
)
def test_uname_last(tmp_path, uname, model):
    FakeBoot(tmp_path).debugfs_preempt("garbage")
    got = preemption(tmp_path, uname=uname)
    assert got["model"] == model and got["source"].startswith("uname -v")


def test_nothing_known(tmp_path):
    assert preemption(tmp_path, uname=PLAIN) == {"model": "unknown", "source": None}


# init_on_alloc, init_on_free ----------------------------------------------

POISON = "/proc/cmdline page_poison= (takes precedence)"
CMD, CFG = "/proc/cmdline init_on_alloc=", "/proc/config.gz CONFIG_INIT_ON_ALLOC_DEFAULT_ON"


@pytest.mark.parametrize(
    "cmdline, options, value, source",
    [
        ("ro init_on_alloc=1", ("!INIT_ON_ALLOC_DEFAULT_ON",), True, CMD),
        ("ro init_on_alloc=off", ("INIT_ON_ALLOC_DEFAULT_ON",), False, CMD),
        ("ro init_on_alloc=on", (), True, CMD),
        ("ro", ("INIT_ON_ALLOC_DEFAULT_ON",), True, CFG + "=y"),
        ("ro", ("!INIT_ON_ALLOC_DEFAULT_ON",), False, CFG + " not set"),
        ("ro init_on_alloc=1 page_poison=1", ("PAGE_POISONING",), False, POISON),
        ("ro init_on_alloc=1 page_poison=1", ("!PAGE_POISONING",), True, CMD),
        ("ro init_on_alloc=maybe", None, None, None),
    ],
    ids=["cmdline-on", "cmdline-over-config", "cmdline-word", "config-on", "config-off",
         "page-poison", "no-page-poisoning", "nothing"],
)  # fmt: skip
def test_init_on_alloc(tmp_path, cmdline, options, value, source):
    boot = FakeBoot(tmp_path).cmdline(cmdline)
    if options is not None:
        boot.config(*options)
    got = sysinfo.init_on("alloc", root=str(tmp_path), release=REL)
    assert got == {"value": value, "source": source}


@pytest.mark.parametrize(
    "word, value",
    [("1", True), ("y", True), ("Yes", True), ("t", True), ("true", True), ("T", True),
     ("on", True), ("ON", True), ("0", False), ("n", False), ("f", False), ("false", False),
     ("F", False), ("off", False), ("of", False), ("o", None), ("ok", None), ("", None),
     ("2", None), ("maybe", None), ("-1", None)],
)  # fmt: skip
def test_boot_words_read_as_kstrtobool(tmp_path, word, value):
    # lib/kstrtox.c kstrtobool(): a word it refuses leaves CONFIG_INIT_ON_ALLOC_DEFAULT_ON.
    FakeBoot(tmp_path).cmdline(f"ro init_on_alloc={word}").config("INIT_ON_ALLOC_DEFAULT_ON")
    got = sysinfo.init_on("alloc", root=str(tmp_path), release=REL)
    if value is None:
        assert got["value"] is True and got["source"].startswith(CFG + "=y")
        assert f"init_on_alloc={word} refused by kstrtobool()" in got["source"]
    else:
        assert got == {"value": value, "source": CMD}


def test_init_on_free_is_its_own_fact(tmp_path):
    FakeBoot(tmp_path).cmdline("ro init_on_alloc=1").config("INIT_ON_FREE_DEFAULT_ON", gz=False)
    free = sysinfo.init_on("free", root=str(tmp_path), release=REL)
    assert free == {"value": True, "source": f"/boot/config-{REL} CONFIG_INIT_ON_FREE_DEFAULT_ON=y"}


def test_machine_and_info_show_each_fact_with_its_source(tmp_path):
    FakeBoot(tmp_path).cmdline("ro init_on_alloc=1").config("PREEMPT_VOLUNTARY")
    info = sysinfo.machine(root=str(tmp_path))
    assert info["init_on_alloc"] == {"value": True, "source": "/proc/cmdline init_on_alloc="}
    assert (
        info["init_on_free"]["source"] == "/proc/config.gz CONFIG_INIT_ON_FREE_DEFAULT_ON not set"
    )
    assert info["preemption"]["model"] == "voluntary"
    assert info["non_preempt_batch"] == sysinfo.non_preempt_batch()
    text = "\n".join(sysinfo.summary(info))
    assert "init_on_alloc: on (from /proc/cmdline init_on_alloc=)" in text
    assert "the page allocator zeroes THP folios front to back" in text
    assert "init_on_free: off (from /proc/config.gz" in text
    assert "PROCESS_PAGES_NON_PREEMPT_BATCH" in text
    info["init_on_free"]["value"] = True
    text = "\n".join(sysinfo.summary(info))
    assert "pages are zeroed when freed; THP faults do not clear" in text
    assert "the page allocator zeroes" not in text


@pytest.mark.parametrize(
    "release, free, words",
    [
        ("6.13.0", False, "THP faults do not clear (user_alloc_needs_zeroing(), 6.13"),
        ("7.0.1", True, "pages are zeroed when freed; THP faults do not clear"),
        ("6.12.9", False, "(post_alloc_hook()); THP faults clear them again: twice"),
        ("6.1.0", True, "pages are zeroed when freed; THP faults clear them again (folio_zero"),
        ("", False, "THP faults clear them again: twice"),
    ],
)
def test_thp_faults_skip_the_clear_only_from_6_13(release, free, words):
    info = {"kernel_release": release, "init_on_free": {"value": free}}
    assert words in sysinfo.thp_fault_clearing(info)


# The linear map's pages ------------------------------------------------------

MEMINFO = "MemTotal: 100 kB\nDirectMap4k: {}  kB\nDirectMap2M: {} kB\nDirectMap1G: 0 kB\n"


@pytest.mark.parametrize(
    "arch, meminfo, cmdline, config, pages, source",
    [
        ("x86_64", MEMINFO.format(26624, 2070528), "ro", (), "huge", "/proc/meminfo DirectMap"),
        ("x86_64", MEMINFO.format(2070528, 4096), "ro", (), "4KB", "/proc/meminfo DirectMap4k 20"),
        ("aarch64", "", "ro", ("RODATA_FULL_DEFAULT_ENABLED",), "4KB", "rodata=full, arm64's"),
        ("aarch64", "", "ro", ("!RODATA_FULL_DEFAULT_ENABLED",), "huge", "/proc/config.gz CONFIG_"),
        ("aarch64", "", "ro rodata=off", (), "huge", "/proc/cmdline rodata=off"),
        ("aarch64", "", "ro rodata=noalias", ("RODATA_FULL_DEFAULT_ENABLED",), "huge", "/proc/"),
        ("aarch64", "", "debug_pagealloc=on rodata=off", (), "4KB", "/proc/cmdline debug_page"),
        ("aarch64", "", "rodata=off", ("KFENCE",), "4KB", "/proc/config.gz CONFIG_KFENCE=y"),
        ("aarch64", "", "rodata=off kfence.sample_interval=0", ("KFENCE",), "huge", "/proc/cmd"),
        ("riscv64", "", "ro", (), None, "not read on riscv64"),
    ],
    ids=["x86-2M", "x86-4k", "arm64-rodata-full", "arm64-config-off", "arm64-rodata-off",
         "arm64-noalias", "debug-pagealloc", "kfence", "kfence-off", "other-arch"],
)  # fmt: skip
def test_the_linear_map_pages_with_their_source(
    tmp_path, arch, meminfo, cmdline, config, pages, source
):
    boot = FakeBoot(tmp_path).cmdline(cmdline).config(*config)
    boot._write("proc/meminfo", meminfo)
    got = sysinfo.linear_map(str(tmp_path), arch)
    assert got["pages"] == pages and got["source"].startswith(source)
    if pages == "4KB" and "rodata" in got["source"]:
        assert "assumed: the CPU lacks BBML2" in got["source"]


def test_the_live_linear_map_is_in_machine_and_info():
    info = sysinfo.machine()
    assert info["linear_map"]["pages"] in ("4KB", "huge", None) and info["linear_map"]["source"]


def test_live_machine_has_them():
    info = sysinfo.machine()
    for name in ("init_on_alloc", "init_on_free"):
        assert info[name]["value"] in (True, False, None)
        assert (info[name]["source"] is None) == (info[name]["value"] is None)
    assert info["non_preempt_batch"]["source"]


# 7.0's batch per architecture ------------------------------------------------


@pytest.mark.parametrize(
    "arch, preset", [("x86-64", "32MB"), ("arm64", "page"), ("default", "page")]
)
def test_the_batch_is_32mb_only_with_an_arch_clear_pages(arch, preset):
    got = sysinfo.non_preempt_batch(arch)
    assert got["preset"] == preset
    # 7.0's include/linux/mm.h: `#ifdef clear_pages`, not __HAVE_ARCH_CLEAR_PAGES.
    assert ("#ifdef clear_pages" in got["source"]) == (preset == "32MB")
    assert "__HAVE_ARCH_CLEAR_PAGES" not in got["source"]
    assert sysinfo.non_preempt_batch() == sysinfo.non_preempt_batch(_core.ARCH)


@pytest.mark.parametrize("arch, batch", [("x86-64", "32MB"), ("arm64", "page")])
def test_the_7_0_replay_takes_the_arch_batch(monkeypatch, arch, batch):
    monkeypatch.setattr(replays, "non_preempt_batch", lambda: sysinfo.non_preempt_batch(arch))
    for mode in ("none", "voluntary"):
        assert replays.from_7_0(1 << 30, mode).batch == batch
    assert replays.from_7_0(1 << 30, "full").batch == "extent"


# The cache eviction buffers exceed -----------------------------------------


def test_eviction_cache_is_the_measured_one_where_the_run_has_one(monkeypatch):
    monkeypatch.delenv(sysinfo.MEASURED_CACHE_ENV, raising=False)
    info = {"caches": [{"level": 3, "type": "Unified", "size_bytes": 480 << 20, "source": "s"}]}
    assert sysinfo.eviction_cache(info) == {"bytes": 480 << 20, "source": "sysfs's LLC (s)"}
    with sysinfo.measured_cache_scope():
        sysinfo.set_measured_cache(64 << 20)
        got = sysinfo.eviction_cache(info)
        assert got["bytes"] == 64 << 20 and got["source"].startswith("measured")
        # measure's buffers: twice the cache, read before every cold clear.
        assert conditions.evict_bytes() == 128 << 20
        assert folios._scrub_bytes() == 128 << 20
        assert sysinfo.machine()["eviction_cache"]["bytes"] == 64 << 20
    assert sysinfo.MEASURED_CACHE_ENV not in __import__("os").environ
    assert sysinfo.eviction_cache({"caches": []}) == {"bytes": None, "source": None}


# predict's running policy ---------------------------------------------------


def kernel(release="6.18.44", alloc=None, free=None, preempt="none"):
    info = {
        "kernel_release": release,
        "preemption": {"model": preempt, "source": "/proc/config.gz CONFIG_PREEMPT_NONE=y"},
        "init_on_alloc": {"value": alloc, "source": "x"},
        "init_on_free": {"value": free, "source": "x"},
    }
    return running_kernel(info, era=(None, "kallsyms hidden"))  # the release decides


@pytest.mark.parametrize(
    "release, free, message",
    [
        ("6.18.44", False, "6.13 and later\\) never calls folio_zero_user\\(\\)"),
        ("7.0.1", False, "no folio policy applies and none is projected"),
        ("6.13.0", True, "init_on_free=1 a THP fault clears nothing"),
        ("6.12.5", False, "before 6.13 \\(kernel 6.12.5\\) clears its folio twice"),
        ("", False, "clears its folio twice, the page allocator's kernel_init_pages"),
    ],
)
def test_init_on_alloc_thp_faults_are_refused_naming_hugetlb(release, free, message):
    with pytest.raises(_core.PagezeroError, match=message) as e:
        replay_for(kernel(release, alloc=True, free=free), 2 << 20, thp=True)
    assert "pagezero predict --reserve" in str(e.value) and "\n" not in str(e.value)


def test_before_6_13_init_on_free_leaves_the_fault_one_clear():
    # post_alloc_hook(): init_on_free zeroed the pages, so the allocator does not; the fault does.
    r = replay_for(kernel("6.12.5", alloc=True, free=True), 2 << 20, thp=True)
    assert r.strategy == "page-at-a-time"


def test_hugetlb_and_init_on_alloc_off_keep_folio_zero_user():
    assert replay_for(kernel(alloc=True), 2 << 20).strategy == "page-at-a-time"
    assert replay_for(kernel(alloc=False), 2 << 20, thp=True).strategy == "page-at-a-time"
    assert replay_for(kernel("7.0.1", alloc=True), 2 << 20).strategy == "neighbourhood-last"


def test_a_dynamic_kernels_config_choice_is_not_assumed():
    k = kernel(preempt="voluntary")
    assert k.preempt == "voluntary" and k.preempt_note is None
