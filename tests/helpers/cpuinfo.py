"""What /proc/cpuinfo says about the CPU's features: the kernel's own detection,
read apart from pagezero's (CPUID on x86-64), so that each can check the other."""


def cpuinfo_flags(text):
    """The feature flags of the first CPU of a /proc/cpuinfo text ("flags" on
    x86-64, "Features" on arm64), as a set of names."""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def disagreements(detected, flags, universe):
    """The features of `universe` that pagezero's detection (`detected`) and the
    kernel's (`flags`) disagree on, each as (name, pagezero says, kernel says)."""
    return [
        (f, f in detected, f in flags) for f in sorted(universe) if (f in detected) != (f in flags)
    ]


def must_run(kernels, flags, arch):
    """The names of the kernels whose every feature the kernel's flags list: each
    must be available on this CPU, whatever pagezero's own detection says."""
    return [k.name for k in kernels if k.arch in ("any", arch) and set(k.features) <= set(flags)]
