"""The running kernel's instruction bytes, read from /proc/kcore (an ELF core file of its memory).

From 7.0 x86-64 inlines its page clear (rep stos) into the functions that call it: only the
instruction at a sampled address says whether that sample was clearing. /proc/kcore needs root
(CAP_SYS_RAWIO) and CONFIG_PROC_KCORE; each PT_LOAD segment maps kernel addresses (p_vaddr) to
offsets in the file (p_offset).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable

KCORE = "/proc/kcore"
_PT_LOAD = 1
# ELF64 little endian: e_phoff at 32, e_phentsize and e_phnum at 54; a program header's
# p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz.
_HEADER, _PHDR = struct.Struct("<32xQ14xHH"), struct.Struct("<IIQQQQ")


def _segments(fd: int, path: str) -> list[tuple[int, int, int]]:
    """(p_vaddr, p_filesz, p_offset) of each PT_LOAD segment of the ELF core file open at fd."""
    head = os.pread(fd, 64, 0)
    if len(head) < 64 or head[:6] != b"\x7fELF\x02\x01":
        raise OSError(f"{path} is not a little-endian ELF64 core file")
    phoff, phentsize, phnum = _HEADER.unpack_from(head)
    table = os.pread(fd, phentsize * phnum, phoff)
    rows = (_PHDR.unpack_from(table, i * phentsize) for i in range(phnum))
    return [(vaddr, size, offset) for kind, _, offset, vaddr, _, size in rows if kind == _PT_LOAD]


def instruction_bytes(
    addresses: Iterable[int], length: int = 15, path: str = KCORE
) -> dict[int, bytes]:
    """{address: the `length` bytes there} for each kernel address some PT_LOAD segment holds.

    15 bytes hold any one x86 instruction. Raises OSError where `path` cannot be read (not
    root, no CONFIG_PROC_KCORE, or not an ELF core file).
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        segments = _segments(fd, path)
        out = {}
        for address in set(addresses):
            for vaddr, size, offset in segments:
                if vaddr <= address < vaddr + size:
                    out[address] = os.pread(
                        fd, min(length, vaddr + size - address), offset + address - vaddr
                    )
                    break
        return out
    finally:
        os.close(fd)
