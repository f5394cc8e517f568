"""Print the tests a run skipped, with their reasons, and fail when that set is not
the one expected for this kind of machine.

    python tests/check_skips.py JUNIT.xml tests/expected_skips/KIND.txt

JUNIT.xml is pytest's --junitxml report; KIND.txt lists one test id per line (text
after "#" is a comment: the reason, for the reader). CI (.ci/run) runs it after the
suite. A skip that appears (a broken CPU-feature check turning kernels into skips, a
hugepage pool CI failed to reserve) or disappears (hardware that changed) fails it;
when the change is meant, the list is updated in the same commit.
"""

import sys
import xml.etree.ElementTree as ET


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


def expected(list_path):
    with open(list_path) as f:
        lines = (line.split("#", 1)[0].strip() for line in f)
        return {line for line in lines if line}


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        got, want = skipped(argv[1]), expected(argv[2])
    except (OSError, ET.ParseError) as e:  # no report (pytest died), or no list
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
