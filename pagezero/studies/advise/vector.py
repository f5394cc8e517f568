"""What the Linux kernel must do around a kernel row that stores from vector registers."""

from __future__ import annotations

from collections.abc import Iterable

from pagezero.system.kernels import Kernel, kernels

# Per architecture: the instruction sets whose registers are the FPU context (as /proc/cpuinfo
# names them), the pair that wraps their use and what it costs, the rows that need neither.
_VECTOR = {
    "x86-64": (
        frozenset({"sse", "sse2", "sse4_1", "avx", "avx2", "avx512f"}),
        "kernel_fpu_begin()/kernel_fpu_end() (arch/x86/include/asm/fpu/api.h), which turn "
        "preemption off (each batch is then non-preemptible for as long as its worst batch "
        "above) and save the task's user FPU state once per kernel entry (XSAVE, not in "
        "these figures)",
        "rep stos, movnti and clzero",
    ),
    "arm64": (
        frozenset({"asimd", "sve", "sve2"}),
        "kernel_neon_begin()/kernel_neon_end() (arch/arm64/include/asm/neon.h), which save "
        "the task's FP/SIMD registers first (not in these figures)",
        "stp, stnp, DC ZVA and MOPS",
    ),
}


def uses_vector_registers(kernel: Kernel) -> bool:
    """Whether `kernel` stores from vector registers (the FPU context the kernel must save)."""
    # A SIMD set and 16-byte stores: movnti needs SSE2 but stores from a general register,
    # clzero needs 64-byte alignment but no SIMD set.
    simd = _VECTOR[kernel.arch][0] if kernel.arch in _VECTOR else frozenset()
    return bool(simd & set(kernel.features)) and kernel.align >= 16


def vector_context_line(advised: Iterable[str]) -> str | None:
    """One line on what a kernel needs to use the advised vector kernels, or None if none is."""
    wanted = set(advised)
    vector = [k for k in kernels("clear") if k.name in wanted and uses_vector_registers(k)]
    if not vector:
        return None
    _, wrapper, plain = _VECTOR[vector[0].arch]
    names = ", ".join(k.name for k in vector)
    store = "stores" if len(vector) == 1 else "store"
    return (
        f"{names} {store} from vector registers: a kernel patch must wrap each batch in "
        f"{wrapper}; {plain} need none of it."
    )
