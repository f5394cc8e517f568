"""pagezero advise | predict | report: questions answered from many measurements."""

import contextlib
import os
import sys

from pagezero.cli.options import check_output
from pagezero.cli.render import interrupted_line, on_stop, print_json, stopped, write_json
from pagezero.runs.progress import Progress
from pagezero.studies.advise.study import DEFAULT_BUDGETS_MS, SWEEPS, advise
from pagezero.studies.predict import predict
from pagezero.studies.report import SCALES, run_report


def _progress(args, what, runs):
    """A line on stderr per run (`runs` of them) with the time left; none with --quiet."""
    if args.quiet:
        return contextlib.nullcontext()
    return Progress(what, runs, counts_runs=True)


def cmd_advise(args):
    """pagezero advise: the fastest kernel per extent, the LLC knee, a batch per budget."""
    check_output(args.output)

    def keep(stop):  # the advice from the cells measured, marked interrupted
        if stop.partial is None:
            return "; too little measured to advise"
        if not args.output:
            return "; not saved (no -o)"
        write_json(args.output, stop.partial.to_json())
        return f"; the partial advice is in {args.output}"

    runs = SWEEPS["quick" if args.quick else "default"]["runs"]
    with on_stop(keep), _progress(args, "pagezero advise", runs):
        advice = advise(
            quick=args.quick,
            budgets_ms=args.budget or DEFAULT_BUDGETS_MS,
            progress=None if args.quiet else sys.stderr,
        )
    if args.output:
        write_json(args.output, advice.to_json())
    if args.format == "json":
        print_json(advice.to_json())
    else:
        print("\n".join(advice.describe(explain=args.explain)))
    return 0


def _prediction(args, prediction):
    if args.format == "json":
        print_json(prediction.to_json())
    else:
        print("\n".join(prediction.simple() if args.format == "simple" else prediction.describe()))
    if args.output:
        write_json(args.output, prediction.to_json())


def cmd_predict(args):
    """pagezero predict: what every clearing policy would give this machine's faults."""
    check_output(args.output)

    def keep(stop):  # what was measured, printed and saved
        if stop.partial is None:
            return "; nothing measured"
        _prediction(args, stop.partial)
        return f"; saved to {args.output}" if args.output else "; shown above"

    # One warming pass, then the fault runs and the replays' (studies.predict.study).
    with on_stop(keep), _progress(args, "pagezero predict", 1 + 2 * args.runs):
        prediction = predict(
            args.page, runs=args.runs, reserve=args.reserve, size=args.size, loops=args.nr_loops
        )
    _prediction(args, prediction)
    return 0


def cmd_report(args):
    """pagezero report: the default study of this machine, as a folder."""
    scale = "quick" if args.quick else os.environ.get("PAGEZERO_SCALE", "full")
    if scale not in SCALES:
        raise ValueError(f"PAGEZERO_SCALE={scale!r} is not one of {', '.join(SCALES)}")
    progress = None if args.quiet else sys.stderr
    run = run_report(
        args.output, scale=scale, progress=progress, reserve=args.reserve, runs=args.runs
    )
    print(f"report written to {run.out_dir}/report.md; its answers, from summary.txt:\n")
    with open(os.path.join(run.out_dir, "summary.txt")) as f:
        print(f.read(), end="")
    for section in run.failed:
        print(f'pagezero: study "{section.title}" failed: {section.failed}', file=sys.stderr)
    if run.interrupted:  # the report caught the signal to write what was measured
        stop = stopped(run.interrupted)
        print(interrupted_line(stop, f"; the part measured is in {run.out_dir}"), file=sys.stderr)
        return stop.exit_status
    return 0
