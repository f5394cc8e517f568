"""``pagezero fleet up|run|table``: many machines, one Dask cluster, on the command line."""

import argparse
import contextlib
import importlib
import io
import json
import logging
import os
import shlex
import sys
import time

from pagezero._core import PagezeroError
from pagezero.cli.mem import plan_mem, plan_mmap
from pagezero.cli.options import UsageError, add, check_output, command, integer, number
from pagezero.cli.policy import plan_batches, plan_folios
from pagezero.fleet.run import FILE_COMMANDS, FOLDER_COMMANDS, FleetError, command_argv
from pagezero.interrupt import as_interrupted
from pagezero.runs.processes import check_runs

__all__ = ["add_parsers", "check_command"]


def _require_extra(command, *modules):
    """UsageError naming the extra (pyproject.toml's `fleet`) if one of `modules` is missing."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise UsageError(
            f"pagezero {command} needs {' and '.join(missing)}, not installed here: "
            "pip install 'pagezero[fleet]'"
        )


def _quiet_dask(level=logging.CRITICAL):
    # Its connection trouble (tracebacks too) is one line here; some loggers have levels: set each.
    import distributed  # noqa: F401  (configures its loggers on import)

    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(level)


def _names(text):
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def _parse(commands, argv):
    """`argv` parsed by pagezero's own parser (its COMMAND choices), without running it."""
    refused, parser = f"pagezero would refuse '{shlex.join(argv)}'", commands.choices.get(argv[0])
    if parser is None:
        raise ValueError(f"{refused}: argument COMMAND: invalid choice: {argv[0]!r}")
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # -h would print the help
            return parser.parse_args(argv[1:], argparse.Namespace(command=argv[0]))
    except UsageError as e:
        raise ValueError(f"{refused}: {e}") from None
    except SystemExit:
        raise ValueError(f"'{shlex.join(argv)}' prints help and measures nothing") from None


# A fleet's values are checked as a local run checks them (docs/cli.rst, "Fleet commands");
# what only the running machine can judge is left to it.
_CHECKS = {
    "memset": plan_mem,
    "memcpy": plan_mem,
    "mmap": plan_mmap,
    "batch": plan_batches,
    "folio": plan_folios,
    "report": lambda args: None if args.runs is None else check_runs(args.runs),  # as it does first
}


def _any_machine(args):
    """A copy of `args` with what only the running machine can judge taken out."""
    args = argparse.Namespace(**vars(args))
    threads, cpus = getattr(args, "threads", None), len(os.sched_getaffinity(0))
    if isinstance(threads, int) and threads > cpus:
        # As many as this machine has CPUs for: more is the running machine's to judge.
        args.threads = cpus
    for name in ("node", "cpu_node", "kernel", "nt_kernel"):  # this machine's defaults stand in
        value = getattr(args, name, None)
        if name.endswith("node") and value is not None and value < 0:
            raise ValueError(f"{name} must be a NUMA node's number (0 or more), not {value}")
        setattr(args, name, None)
    return args


def check_command(commands, argv):
    """A fleet's command checked as a local run: (argv, "file" or "folder") or ValueError."""
    argv, kind = command_argv(argv)
    try:
        args = _parse(commands, argv + ["-o", "/nonexistent"])  # as the fleet will give it
    except ValueError:
        args = _parse(commands, argv)  # a command without -o (said below), or the mistake
    if args.command not in FILE_COMMANDS + FOLDER_COMMANDS:
        raise ValueError(
            f"'{shlex.join(argv)}' writes no results; a fleet runs "
            f"mem memset|memcpy|mmap, batch, folio, sweep or report"
        )
    try:
        _CHECKS.get(args.command, lambda args: None)(_any_machine(args))
    except (PagezeroError, OSError):
        pass  # this machine's memory, hugepages or kernels: each machine checks its own
    except (UsageError, ValueError) as e:
        raise ValueError(f"pagezero would refuse '{shlex.join(argv)}': {e}") from None
    return argv, kind


def cmd_fleet_up(args):
    _require_extra("fleet up", "distributed", "asyncssh")
    from pagezero.fleet.run import start_fleet

    _quiet_dask(logging.ERROR)
    options = {"username": args.ssh_username, "port": args.ssh_port}
    options["client_keys"] = [args.ssh_key] if args.ssh_key else None
    options = {k: v for k, v in options.items() if v is not None}
    hosts = _names(args.hosts)
    cluster = start_fleet(hosts, args.scheduler_host, args.port, options, args.remote_python)
    try:
        address = cluster.scheduler_address
        print(f"scheduler: {address}\nworkers: {', '.join(hosts)} (benchmark=1 each)")
        run = f"pagezero fleet run --scheduler {address} -o DIR -- COMMAND"
        print(f"run: {run}; Ctrl-C stops the fleet", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP: the way to stop a fleet
        return 0
    finally:
        cluster.close()


def cmd_fleet_run(args):
    _require_extra("fleet run", "distributed")
    from pagezero.fleet.run import run_fleet

    argv, _ = check_command(args.commands, args.fleet_command)
    _quiet_dask()
    store = None
    if args.store is not None:
        from pagezero.store import Store

        store = Store(args.store or None, create=True)  # refuse a bad store before running
        store.require_writable()
    progress = None if args.quiet else sys.stderr
    machines = _names(args.machines)
    try:
        log = run_fleet(
            args.scheduler, argv, args.output, machines, args.runs, progress, args.timeout
        )
    except KeyboardInterrupt as e:
        _store_results(store, args.output)
        stop = as_interrupted(e)
        where = os.path.join(args.output, "fleet.json")
        print(f"pagezero: {stop}; what finished is in {args.output} (see {where})", file=sys.stderr)
        return stop.exit_status
    _store_results(store, args.output)
    for m in log.machines:
        ok = sum(1 for r in m["runs"] if r["status"] == "ok")
        line = f"{m['name']}: {m['status']}, {ok}/{args.runs} runs ok"
        print(line + (f" ({m['error']})" if m["error"] else ""))
    print(f"results in {args.output} (pagezero fleet table {args.output})")
    bad = [m for m in log.machines if m["status"] != "ok"]
    if bad:
        states = "; ".join(f"{m['name']} {m['status']}" for m in bad)
        raise FleetError(
            f"{len(bad)} of {len(log.machines)} machines did not finish: {states}; "
            "the others' results are kept"
        )
    return 0


def _store_results(store, out_dir):
    if store is None:
        return
    with store:
        try:
            outcomes = store.add([out_dir])
        except ValueError:
            return  # no machine wrote results: nothing to store
    added = sum(1 for _, status, _ in outcomes if status == "added")
    print(f"store: {added} result sets added to {store.path}", file=sys.stderr)


def cmd_fleet_table(args):
    from pagezero.fleet.run import format_table, machine_sets, only_matching, table_rows

    check_output(args.plot)
    sets, notes = machine_sets(args.dir)
    if args.match:
        sets = only_matching(sets, args.match)
    names = [n for n, _ in sets]
    if args.format == "json":
        print(json.dumps({"machines": names, "rows": table_rows(sets), "notes": notes}, indent=1))
    else:
        print("\n".join(format_table(sets, notes)))
    if args.plot:
        from pagezero.figures import plot_comparison

        if len(sets) < 2:
            raise ValueError("--plot draws machines side by side: it needs two or more")
        sides = [rs for _, rs in sets]
        print("\n".join(plot_comparison(sides, names, args.plot, title="Machines side by side")))
    return 0


def add_parsers(sub):
    """Add ``fleet up|run|table`` to `sub`, the subparsers of the ``pagezero`` parser."""
    fleet = sub.add_parser("fleet", help="run a study on every machine of a Dask cluster")
    fleet_sub = fleet.add_subparsers(dest="fleet_action", metavar="ACTION", required=True)
    text = "start a scheduler and one worker per host over SSH, print the scheduler address"
    p = command(fleet_sub, "up", text, cmd_fleet_up, command="fleet-up")
    text = "the machines, one worker each, named after the host"
    p.add_argument("--hosts", required=True, metavar="A,B,C", help=text)
    p.add_argument("--scheduler-host", help="where the scheduler runs (default: the first host)")
    p.add_argument("--port", type=integer, default=8786, help="the scheduler's port (default 8786)")
    p.add_argument("--ssh-username", help="SSH user (default: as ~/.ssh/config says)")
    p.add_argument("--ssh-port", type=integer, help="SSH port (default 22)")
    p.add_argument("--ssh-key", metavar="FILE", help="SSH private key")
    text = "the Python with pagezero on the hosts (default: this one's path)"
    p.add_argument("--remote-python", metavar="PATH", help=text)
    text = "run a pagezero command on every machine of the cluster, one at a time per machine"
    # The command is checked by pagezero's own parser: its COMMAND choices, `sub`.
    p = command(fleet_sub, "run", text, cmd_fleet_run, command="fleet-run", commands=sub)
    p.usage = "pagezero fleet run --scheduler ADDRESS -o DIR [--machines A,B] [--runs N] "
    p.usage += "[--store [PATH]] -- COMMAND [OPTIONS]"
    text = "the Dask scheduler, e.g. tcp://host:8786"
    p.add_argument("--scheduler", required=True, metavar="ADDRESS", help=text)
    text = "folder for DIR/<machine>/ and DIR/fleet.json (new, or without fleet.json)"
    p.add_argument("-o", "--output", required=True, metavar="DIR", help=text)
    p.add_argument("--machines", metavar="A,B", help="worker names (default: every worker)")
    add(p, "runs")
    text = "also add the results to the store (default store without PATH)"
    p.add_argument("--store", nargs="?", const="", metavar="PATH", help=text)
    text = "seconds to wait for the scheduler to answer (default 10)"
    p.add_argument("--timeout", type=number, default=10, help=text)
    add(p, "quiet")
    text = "the pagezero command, without -o"
    p.add_argument("fleet_command", nargs=argparse.REMAINDER, metavar="-- COMMAND", help=text)
    text = "one row per measured point, one column per machine: median and spread"
    p = command(fleet_sub, "table", text, cmd_fleet_table, command="fleet-table")
    p.add_argument("dir", metavar="DIR", help="a fleet run's folder")
    text = "only the points with all these words in their label, e.g. 'x86-64-stosb chunk=0'"
    p.add_argument("--match", metavar="WORDS", help=text)
    add(p, "plot format")
