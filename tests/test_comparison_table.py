"""format_table() on rows written by hand: the whole table as text, its column widths,
cells, study groups, legend and notes counted out here, not taken from a run."""

from pagezero.analysis.compare import format_table, runs_per_side

NOTE_NO_TEST = "a run's median is not a positive finite number: no test"


def change(pct, marker, runs, note=None):
    return {"change_pct": pct, "marker": marker, "runs": runs, "note": note}


def base(center, spread, of="runs", runs=3):
    return {"center": center, "spread_pct": spread, "spread_of": of, "runs": runs}


ROWS = [
    {
        "label": "memset a",
        "unit": "bytes/sec",
        "study": "s1",
        "base": base(10e9, 1.3),
        "changes": [change(-10.0, "(R)", [3, 3]), None],
    },
    {
        "label": "memset bb",
        "unit": "cycles/byte",
        "study": "s2",
        "base": base(0.123456, 0.5, of="loops", runs=1),
        "changes": [
            change(5.0, "?", [1, 3], note="1 vs 3 runs: unknown"),
            change(25.0, "~", [3, 4], note=NOTE_NO_TEST),
        ],
    },
    {
        "label": "memset c",
        "unit": "bytes/sec",
        "study": "s1",
        "base": base(2.5e9, 0.0),
        "changes": [change(0.04, "", [3, 3]), change(12.0, "(I)", [3, 3])],
    },
]

# Columns 9, 12, 33, 10 and 10 wide: "benchmark", "result class", the cycles/byte
# base cell "0.1235 cycles/byte +-0.5% (loops)", "-10.0% (R)" and "+12.0% (I)".
TABLE = """\
benchmark | result class | base                              | new        | old.json
----------+--------------+-----------------------------------+------------+-----------
[s1]
memset a  | bytes/sec    | 10.00 GB/s +-1.3%                 | -10.0% (R) | -
memset c  | bytes/sec    | 2.50 GB/s +-0.0%                  | +0.0%      | +12.0% (I)
[s2]
memset bb | cycles/byte  | 0.1235 cycles/byte +-0.5% (loops) | +5.0% ?    | +25.0% ~
(R) regression and (I) improvement: beyond the threshold and significant
~ beyond the threshold but not significant
? beyond the threshold, but fewer than 3 runs on a side: the variation between runs is unknown
note: fewer than 3 runs on a side for some points: the variation between runs is unknown \
there, so no change is called significant; measure with --runs 3 or more (or sweep \
--processes 3) on each side
note: a run's median is not a positive finite number: no test"""


def test_the_whole_table():
    assert format_table(ROWS, ["base", "new", "old.json"]) == TABLE


def test_one_study_has_no_group_lines_and_enough_runs_no_note():
    rows = [dict(ROWS[0], study="s1"), dict(ROWS[2], study="s1")]
    assert format_table(rows, ["base", "new", "old.json"]) == (
        "benchmark | result class | base              | new        | old.json\n"
        "----------+--------------+-------------------+------------+-----------\n"
        "memset a  | bytes/sec    | 10.00 GB/s +-1.3% | -10.0% (R) | -\n"
        "memset c  | bytes/sec    | 2.50 GB/s +-0.0%  | +0.0%      | +12.0% (I)\n"
        "(R) regression and (I) improvement: beyond the threshold and significant"
    )


def test_rows_of_no_single_study_are_grouped_as_several_files():
    rows = [dict(ROWS[0], study=None), dict(ROWS[2], study="s1")]
    lines = format_table(rows, ["base", "new", "old.json"]).splitlines()
    assert lines[2] == "[in several files]" and lines[4] == "[s1]"


def test_runs_per_side_names_the_fewest_and_most():
    assert runs_per_side(ROWS, 3) == ["1-3", "3", "3-4"]
    assert runs_per_side([ROWS[0]], 3) == ["3", "3", "-"]


def test_runs_per_side_over_three_counts_is_the_fewest_to_the_most():
    rows = [dict(ROWS[0], base=base(1, 0, runs=n)) for n in (3, 5, 1)]
    assert runs_per_side(rows, 1) == ["1-5"]


def test_a_missing_point_in_a_middle_column_leaves_the_next_ones():
    row = dict(ROWS[0], changes=[None, change(3.0, "", [3, 3])])
    assert format_table([row], ["base", "a", "b"]).splitlines()[2] == (
        "memset a  | bytes/sec    | 10.00 GB/s +-1.3% | - | +3.0%"
    )


def test_an_unmarked_change_has_no_trailing_space():
    # "+3.0%" is the widest cell of its column: five wide, so is its rule.
    row = dict(ROWS[0], changes=[change(3.0, "", [3, 3])])
    assert format_table([row], ["base", "n"]).splitlines()[:3] == [
        "benchmark | result class | base              | n",
        "----------+--------------+-------------------+------",
        "memset a  | bytes/sec    | 10.00 GB/s +-1.3% | +3.0%",
    ]
