"""A details["profile"] as faults(..., profile=True) records it (measure.profile.summarize),
made up: `share` of the samples in clear_page_erms, the rest over `groups`; and the raw
samples, kernel and /proc/kcore it is made from."""

import platform
import struct

from pagezero.measure.profile import wilson

ERMS = {
    "symbol": "clear_page_erms",
    "instruction": "rep stosb",
    "source": "arch/x86/lib/clear_page_64.S",
}


def sampled(share, samples=2000, groups=("page allocation", "memcg accounting", "other")):
    """The profile of one run whose `samples` put `share` in clear_page_erms."""
    rest = (1 - share) / len(groups)
    k = round(share * samples)
    return {
        "clearing_share": share,
        "clearing_interval": list(wilson(k, samples)) if samples else [0.0, 0.0],
        "clearing_routines": [dict(ERMS, share=share)],
        "samples": samples,
        "groups": {"clearing": share} | dict.fromkeys(groups, rest),
        "symbols": [{"symbol": "clear_page_erms", "share": share, "group": "clearing"}],
        "event": "cpu-clock",
        "lost": 0,
    }


def fake_kernel(monkeypatch, symbols, arch="x86_64", assumed="x86-64-stosb"):
    """/proc/kallsyms made of `symbols` ((address, name), ...) on `arch`, whose registry
    assumes the clear kernel `assumed`; the release says 7.0, to show it is not read."""
    from pagezero.measure import profile

    addresses, names = zip(*symbols)
    monkeypatch.setattr(profile.kallsyms, "table", lambda *_: (addresses, names))
    monkeypatch.setattr(platform, "machine", lambda: arch)
    monkeypatch.setattr(platform, "release", lambda: "7.0.0")
    monkeypatch.setattr(profile, "clear_pages_kernel", lambda: assumed)


def made_up(ips, user=0, other=0, **periods):
    """bench_fault's raw "profile" (spec A's keys) of samples at kernel addresses `ips`; the
    periods ("kernel_periods", "user_period", "other_period") where given."""
    raw = {"event": "cpu-clock", "kernel_ips": tuple(ips), "user": user, "other": other}
    return dict(raw, lost=3, **periods)


def kcore_file(path, segments):
    """An ELF64 core file like /proc/kcore at `path`: a PT_NOTE, then a PT_LOAD segment for
    each {kernel address: bytes}."""
    phoff, phentsize, n = 64, 56, len(segments) + 1
    header = b"\x7fELF\x02\x01\x01" + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, phentsize, n, 0, 0, 0)
    table = struct.pack("<IIQQQQQQ", 4, 0, 0, 0, 0, 0, 0, 0)  # PT_NOTE: not read
    data, offset = b"", phoff + phentsize * n
    for vaddr, code in segments.items():
        size = len(code)
        table += struct.pack("<IIQQQQQQ", 1, 5, offset + len(data), vaddr, 0, size, size, 0)
        data += code
    path.write_bytes(header + table + data)
    return str(path)
