"""Variants side by side: the functions (kernels, workloads) measured at one point, one column
per function against a base function, as the seeds' tables set rep stosb beside movnti and
clzero ("x86/clear_page: ..." threads). The same rows, markers and test as compare(): the
run is the unit, a change is called only beyond the threshold and significant, and a change
within the threshold is a tie with the base.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pagezero.analysis.compare import point_rows, side_points
from pagezero.analysis.significance import IMPROVEMENT, MARKERS, NOT_SIGNIFICANT, REGRESSION
from pagezero.measure.fault import WORKLOADS
from pagezero.results.points import variant_key
from pagezero.results.resultset import ResultSet
from pagezero.system.kernels import KINDS, kernels

if TYPE_CHECKING:
    from pagezero.results.resultset import Result

BY = ("function",)  # what a variant can be told by

# format_table()'s legend for variants: against the base function, not an older boot.
_MARKED = "(R) worse and (I) better than the base function: beyond the threshold and significant"
VARIANT_LEGEND = MARKERS | {REGRESSION: _MARKED, IMPROVEMENT: _MARKED}
VARIANT_LEGEND[NOT_SIGNIFICANT] += ": a tie within the noise"
TIE_NOTE = "a change without a marker is within the threshold: a tie with the base"


def _label(result: Result) -> str:
    """The point without its function: "memset chunk=0 page=4KB size=1GB value=0"."""
    benchmark, _function, *rest = result.label().split(" ", 2)
    return " ".join([benchmark, *rest])


def variants_of(rs: ResultSet, by: str = "function") -> list[str]:
    """The values of `by` the set holds (its functions): in the registry's order (clear, then
    copy kernels, then the fault workloads), which --runs' shuffled order does not change,
    then those it does not know, as first seen."""
    if by not in BY:
        raise ValueError(f"cannot tell variants by {by!r}: only by {', '.join(BY)}")
    known = [k.name for kind in KINDS for k in kernels(kind)] + list(WORKLOADS)
    order = {name: i for i, name in reversed(list(enumerate(known)))}
    seen = list(dict.fromkeys(getattr(r, by) for r in rs.results))
    return sorted(seen, key=lambda n: (order.get(n, len(order)), seen.index(n)))


def compare_variants(
    rs: ResultSet,
    base: str | None = None,
    by: str = "function",
    threshold: float = 0.02,
    alpha: float = 0.01,
    sources: Sequence[str | None] | None = None,
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any]]:
    """The functions of `rs` side by side at each point, against the `base` function.

    Parameters
    ----------
    rs : ResultSet
        The results, of one file or several (``folders.load_sources`` of each, merged with
        their processes numbered apart).
    base : str, optional
        The base function; default, the first of variants_of(rs) (the registry's order:
        ``default``, glibc's memset, where it was measured; ``demand`` for mmap).
    by : str
        What tells variants apart: ``"function"`` (kernels of memset, workloads of mmap).
    threshold, alpha : float
        As in :func:`pagezero.analysis.compare.compare`.
    sources : sequence of str, optional
        One name per Result (its study), for the rows' "study".

    Returns
    -------
    tuple
        (names, rows, left_out): the functions, the base first, then the others in
        first-seen order; compare()'s rows (label without the function) for each point
        that the base and at least one other function measured; left_out, the points
        passed over, as compare.left_out_line() takes them: "base_only" (points only the
        base measured) and "without_base" ({function: points it measured that the base
        did not}).

    Raises
    ------
    ValueError
        `base` not among the functions, fewer than two functions, no point that the base
        shares with another, or a bad threshold or alpha.
    """
    names = variants_of(rs, by)
    if base is None and names:
        base = names[0]
    if base not in names:
        raise ValueError(
            f"--base {base!r} is not a {by} of these results (they hold {', '.join(names)})"
        )
    if len(names) < 2:
        raise ValueError(
            f"nothing to compare: every result is of the {by} {base!r}; "
            f"--by {by} needs results of at least two"
        )
    names = [base, *(n for n in names if n != base)]
    sources = list(sources) if sources else [None] * len(rs.results)
    sides = []
    for name in names:
        keep = [i for i, r in enumerate(rs.results) if getattr(r, by) == name]
        side = ResultSet([rs.results[i] for i in keep], [rs.runs[i] for i in keep], rs.machine)
        sides.append(side_points(side, [sources[i] for i in keep], key=variant_key))
    base_points, others = sides[0], sides[1:]
    shared = {k: v for k, v in base_points.items() if any(k in o for o in others)}
    if not shared:
        raise ValueError(
            f"nothing to compare: no point where {base!r} and another {by} were both measured"
        )
    rows = point_rows(shared, others, threshold, alpha, label=_label)
    lacking = {n: sum(k not in base_points for k in o) for n, o in zip(names[1:], others)}
    return names, rows, {"base_only": len(base_points) - len(shared), "without_base": lacking}
