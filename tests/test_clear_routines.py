"""Which kernel routine clears the faulted page (pagezero.measure.routines): the clear_page()
era from the kernel's symbols, never its release; from 7.0 the clear inlined into its callers,
told by the instruction at each sampled address read from /proc/kcore (pagezero.system.kcore),
here an ELF core file made up."""

import pytest
from helpers.profiles import fake_kernel, kcore_file, made_up

from pagezero.measure import profile as inside
from pagezero.measure.routines import CLEARING, clearing_routines, rep_stos
from pagezero.system import kcore

# A 7.0 kernel: the unrolled loop out of line, rep stos inlined into the functions below.
KERNEL_7 = (
    (0x1000, "__clear_pages_unrolled"),
    (0x2000, "exc_page_fault"),
    (0x4000, "folio_zero_user"),
    (0x5000, "clear_contig_highpages"),
    (0x6000, "post_alloc_hook"),
)
MOV, STOSQ, STOSB = b"\x48\x89\xc7", b"\xf3\x48\xab", b"\xf3\xaa"
# Each function's first bytes: its own work (mov), then the inlined clear at +0x10.
CODE = {
    0x4000: MOV + bytes(13) + STOSQ,
    0x5000: MOV + bytes(13) + STOSQ,
    0x6000: MOV + bytes(29) + STOSB,
}


@pytest.mark.parametrize(
    "code, instruction",
    [
        (b"\xf3\xaa", "rep stosb"),
        (b"\xf3\x48\xab\x90", "rep stosq"),
        (b"\x3e\xf3\x48\xab", "rep stosq"),  # a segment prefix before rep
        (b"\xf3\xab", "rep stosl"),
        (b"\x66\xf3\xab", "rep stosw"),
        (b"\xaa", None),  # stosb, no rep: one byte, not a clear
        (b"\x48\xab", None),
        (b"\xf3\xa4", None),  # rep movsb
        (b"\xf3\x48", None),  # cut short
        (b"", None),
        (MOV, None),
    ],
)
def test_rep_stos_is_told_from_its_bytes(code, instruction):
    assert rep_stos(code) == instruction


def test_kcore_maps_kernel_addresses_through_its_load_segments(tmp_path):
    path = kcore_file(tmp_path / "kcore", {0x4000: b"abcdef", 0x9000: b"xyz"})
    code = kcore.instruction_bytes([0x4002, 0x9001, 0x4006, 0x100], length=3, path=path)
    assert code == {0x4002: b"cde", 0x9001: b"yz"}  # cut at the segment's end; none outside
    (tmp_path / "text").write_bytes(b"not an ELF file" * 8)
    with pytest.raises(OSError, match="not a little-endian ELF64 core file"):
        kcore.instruction_bytes([0x4000], path=str(tmp_path / "text"))


def test_the_era_comes_from_the_symbols_not_the_release(monkeypatch):
    # The release says 7.0 (fake_kernel), the symbols say before: clear_page_rep clears, the
    # function that calls it does not.
    fake_kernel(monkeypatch, ((0x1000, "clear_page_rep"), (0x4000, "folio_zero_user")))
    p = inside.summarize(made_up([0x1000] * 3 + [0x4000]))
    assert p["clearing_share"] == pytest.approx(0.75)
    assert [r["symbol"] for r in p["clearing_routines"]] == ["clear_page_rep"]
    assert "pre-7.0" in p["clearing_found"] and "clear_page_erms" not in clearing_routines(
        "x86_64", "7.0"
    )
    # A distribution's 6.12 with the 7.0 series backported: its unrolled loop is found.
    monkeypatch.setattr(inside.kallsyms.platform, "release", lambda: "6.12.0")
    fake_kernel(monkeypatch, KERNEL_7, assumed="x86-64-unrolled")
    p = inside.summarize(made_up([0x1000] * 3 + [0x2000]))
    assert p["clearing_routines"][0]["instruction"] == "unrolled movq"
    assert p["clearing_share"] == pytest.approx(0.75) and "a 7.0 kernel's" in p["clearing_found"]
    assert inside.routine_check(p)[0] is True


def test_the_inlined_clear_is_found_by_its_instruction(monkeypatch, tmp_path):
    fake_kernel(monkeypatch, KERNEL_7, assumed="x86-64-stosq")
    ips = [0x4010] * 4 + [0x4000] * 2 + [0x5010] + [0x6020] + [0x6000] + [0x2000]
    p = inside.summarize(made_up(ips), kcore_path=kcore_file(tmp_path / "kcore", CODE))
    assert p["clearing_share"] == pytest.approx(0.6)
    routines = {r["symbol"]: (r["share"], r["instruction"]) for r in p["clearing_routines"]}
    assert routines == {
        "folio_zero_user": (pytest.approx(0.4), "rep stosq"),
        "clear_contig_highpages": (pytest.approx(0.1), "rep stosq"),
        "post_alloc_hook": (pytest.approx(0.1), "rep stosb"),
    }
    # The callers' own work stays theirs: folio_zero_user's mov, the allocator's hook.
    rest = {(s["symbol"], s["group"]): s["share"] for s in p["symbols"]}
    assert rest[("folio_zero_user", "other")] == pytest.approx(0.2)
    assert rest[("post_alloc_hook", "page allocation")] == pytest.approx(0.1)
    assert "3 of 5 sampled addresses" in p["clearing_found"] and "kcore" in p["clearing_found"]
    agrees, sentence = inside.routine_check(p)
    assert agrees is True and "folio_zero_user (rep stosq)" in sentence


def test_an_inlined_clear_without_kcore_refuses_the_share(monkeypatch, tmp_path):
    fake_kernel(monkeypatch, KERNEL_7)
    none = str(tmp_path / "none")
    why = inside.summarize(made_up([0x4010, 0x2000]), kcore_path=none)
    assert set(why) == {"refused"} and "\n" not in why["refused"]
    assert none in why["refused"] and "run as root" in why["refused"]
    assert "CONFIG_PROC_KCORE" in why["refused"]
    # Nothing sampled in a caller (a CPU without ERMS or REP_GOOD): no instruction to read.
    p = inside.summarize(made_up([0x1000, 0x2000]), kcore_path=none)
    assert p["clearing_share"] == pytest.approx(0.5)


def test_an_unknown_era_is_said_and_every_eras_routines_count(monkeypatch):
    fake_kernel(monkeypatch, ((0x1000, "clear_page_orig_v2"), (0x2000, "exc_page_fault")))
    p = inside.summarize(made_up([0x1000, 0x2000]))
    assert "era is unknown" in p["clearing_found"] and p["clearing_share"] == 0
    assert {"clear_page_erms", "__clear_pages_unrolled"} <= set(clearing_routines("x86_64"))


def test_the_gfp_zero_clear_is_every_4kb_fault_not_init_on_alloc_only(monkeypatch):
    rows = [r for r in CLEARING if r.symbol in ("kernel_init_pages", "post_alloc_hook")]
    assert rows and all("__GFP_ZERO" in r.source and r.inlined for r in rows)
    # Before 7.0 it calls clear_page_erms out of line: its own samples are the allocator's.
    fake_kernel(monkeypatch, ((0x1000, "clear_page_erms"), (0x3000, "kernel_init_pages")))
    p = inside.summarize(made_up([0x1000, 0x3000]))
    assert p["clearing_share"] == pytest.approx(0.5)
    assert p["groups"]["page allocation"] == pytest.approx(0.5)
