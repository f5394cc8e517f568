"""Print the tests a run skipped, with their reasons, and fail when that set is not
the one expected for this kind of machine.

    python tests/check_skips.py JUNIT.xml tests/expected_skips/KIND.txt

JUNIT.xml is pytest's --junitxml report; KIND.txt lists one test id per line (text
after "#" is a comment: the reason, for the reader). CI (.ci/run) runs it after the
suite. A line may name, after the id, the machine facts under which the test is
expected to skip (FACTS: "@no-avx512f", "@no-clzero", "@no-pmu", "@1gb-free", ...;
all of them when several): machines of one kind differ in what their virtual CPU
shows and in what hugepages CI could reserve, and each fact is read here from the
kernel (/proc/cpuinfo, sysfs), not from pagezero, whose detection is what the skips
check. A skip that appears (a broken CPU-feature check turning kernels into skips)
or disappears (hardware that changed) fails it; when the change is meant, the list
is updated in the same commit.
"""

import os
import platform
import sys
import xml.etree.ElementTree as ET


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _free_hugepages(pool):
    try:
        with open(f"/sys/kernel/mm/hugepages/{pool}/free_hugepages") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


# The facts a line may name, each read without pagezero. A hardware PMU is registered
# with perf as the event source "cpu" (x86) or "armv8_pmuv3*" (arm64).
FACTS = {
    "no-avx512f": lambda: "avx512f" not in _cpu_flags(),
    # AMD's clzero: Zen machines of this kind show it, Intel Xeons do not.
    "no-clzero": lambda: "clzero" not in _cpu_flags(),
    "no-pmu": lambda: (
        not any(
            d == "cpu" or d.startswith("armv8_pmu")
            for d in (
                os.listdir("/sys/bus/event_source/devices")
                if os.path.isdir("/sys/bus/event_source/devices")
                else []
            )
        )
    ),
    "not-arm64": lambda: platform.machine() not in ("aarch64", "arm64"),
    # .ci/run reserves one 1GB page where the kernel can find the memory for it.
    "1gb-free": lambda: _free_hugepages("hugepages-1048576kB") > 0,
    "no-1gb-free": lambda: _free_hugepages("hugepages-1048576kB") == 0,
}


def skipped(junit_path):
    """{test id: reason} of every skipped test in a pytest JUnit XML report."""
    out = {}
    for case in ET.parse(junit_path).getroot().iter("testcase"):
        skip = case.find("skipped")
        if skip is None:
            continue
        path = case.get("classname", "").replace(".", "/")
        out[f"{path}.py::{case.get('name')}"] = skip.get("message", "").strip()
    return out


def expected(list_path, facts=FACTS):
    """The test ids expected to skip on this machine: every line's, but for those
    whose facts ("@name" after the id) do not all hold here."""
    out = set()
    with open(list_path) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            names = [w[1:] for w in fields[1:] if w.startswith("@")]
            unknown = [n for n in names if n not in facts]
            if unknown:
                raise ValueError(
                    f"{list_path}: unknown fact @{unknown[0]} (known: {', '.join(facts)})"
                )
            if all(facts[n]() for n in names):
                out.add(fields[0])
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        got, want = skipped(argv[1]), expected(argv[2])
    except (OSError, ET.ParseError, ValueError) as e:  # no report (pytest died), no list
        print(f"check_skips: {e}", file=sys.stderr)
        return 2
    print(f"check_skips: {len(got)} tests skipped:")
    for test, reason in sorted(got.items()):
        print(f"  {test}  # {reason}")
    new, gone = sorted(set(got) - want), sorted(want - set(got))
    for test in new:
        print(f"check_skips: skipped, not expected ({argv[2]}): {test}  # {got[test]}")
    for test in gone:
        print(f"check_skips: expected to skip, ran (or is gone): {test}")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
