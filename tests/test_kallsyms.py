"""pagezero.system.kallsyms: the clear_page() era from the symbols, never the release."""

import pytest

from pagezero.system import kallsyms


def _kallsyms(tmp_path, *names, hidden=False):
    path = tmp_path / "kallsyms"
    lines = [
        f"{0 if hidden else 0xFFFFFFFF81000000 + 0x100 * i:016x} T {name}"
        for i, name in enumerate(("_stext", *names))
    ]
    path.write_text("\n".join(lines) + "\n")
    kallsyms.table.cache_clear()
    return str(path)


@pytest.mark.parametrize(
    "names, arch, era",
    [
        (("clear_page_rep", "clear_page_orig", "clear_page_erms"), "x86_64", "pre-7.0"),
        (("__clear_pages_unrolled", "folio_zero_user"), "x86_64", "7.0"),
        (("memzero_page_aligned_unrolled",), "x86_64", "7.0"),  # the posted series' name
        (("clear_contig_highpages", "clear_page"), "aarch64", "7.0"),
        (("clear_page", "folio_zero_user"), "aarch64", None),  # nothing tells on arm64
        (("folio_zero_user",), "x86_64", None),
    ],
)
def test_the_era_is_the_symbols(tmp_path, names, arch, era):
    found, why = kallsyms.clear_era(_kallsyms(tmp_path, *names), arch=arch)
    assert found == era and why


def test_hidden_or_missing_symbols_say_why(tmp_path):
    assert kallsyms.clear_era(_kallsyms(tmp_path, "clear_page_erms", hidden=True))[0] is None
    era, why = kallsyms.clear_era(str(tmp_path / "absent"))
    assert era is None and "cannot be read" in why


def test_a_symbol_spans_to_the_next(tmp_path):
    path = _kallsyms(tmp_path, "clear_page_erms", "clear_page_rep")
    start, end = kallsyms.symbol_span("clear_page_erms", path)
    assert end - start == 0x100 and kallsyms.symbol_of(start + 5, path) == "clear_page_erms"
    assert kallsyms.symbol_span("absent", path) is None
