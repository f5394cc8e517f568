"""`pagezero fleet up|run|table`: many machines, one Dask cluster, on the command line.

Registered into pagezero's command line like the other command families
(COMMANDS and add_parsers). A command, folder or machine name that cannot
be used is a user error (ValueError: exit 2, before anything is sent); a
cluster that cannot be used (unreachable, no workers, SSH failing) and
machines that did not finish exit 1 (FleetError, a PagezeroError), after
writing what the others measured; Ctrl-C exits 130 with what finished kept.
"""

import argparse
import json
import logging
import os
import sys
import time

from pagezero.cli.options import add_format, check_output, integer, number
from pagezero.fleet.run import FleetError
from pagezero.interrupt import as_interrupted

__all__ = ["COMMANDS", "add_parsers"]


def _quiet_dask(level=logging.CRITICAL):
    # distributed logs connection trouble on stderr by itself, tracebacks
    # included; pagezero says what went wrong in one line instead. Its
    # configuration gives some loggers (distributed.client, ...) levels of
    # their own, so each is set, not only the parent.
    import distributed  # noqa: F401  (configures its loggers on import)

    for name in ["distributed"] + list(logging.root.manager.loggerDict):
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(level)


def _names(text):
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def cmd_fleet_up(args):
    """`pagezero fleet up`: start a Dask scheduler here and a worker per host over SSH.

    Prints the scheduler's address, the workers and the ``fleet run`` command to use,
    then holds the fleet up until Ctrl-C (or SIGTERM, SIGHUP), which closes it.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0 (also when a signal stops the fleet, its way to end).
    """
    from pagezero.fleet.cluster import start_fleet

    _quiet_dask(logging.ERROR)
    options = {}
    if args.ssh_username:
        options["username"] = args.ssh_username
    if args.ssh_port is not None:
        options["port"] = args.ssh_port
    if args.ssh_key:
        options["client_keys"] = [args.ssh_key]
    cluster = start_fleet(
        _names(args.hosts),
        scheduler_host=args.scheduler_host,
        port=args.port,
        connect_options=options,
        remote_python=args.remote_python,
    )
    try:
        print(f"scheduler: {cluster.scheduler_address}")
        print(f"workers: {', '.join(_names(args.hosts))} (benchmark=1 each)")
        print(
            f"run: pagezero fleet run --scheduler {cluster.scheduler_address} -o DIR -- "
            f"COMMAND; Ctrl-C stops the fleet",
            flush=True,
        )
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        # Ctrl-C, SIGTERM or SIGHUP (signals_interrupt): the way to stop a fleet.
        return 0
    finally:
        cluster.close()


def cmd_fleet_run(args):
    """`pagezero fleet run`: run one pagezero command on every machine of a fleet.

    Each machine's results go to its own folder under ``-o`` with ``fleet.json``, the
    log (:func:`pagezero.fleet.run.run_fleet`); ``--store`` also adds them to the
    store. Prints one line per machine (its status and runs ok) and where the results
    are.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status: 0; after a stop signal (Ctrl-C, SIGTERM, SIGHUP) what was
        measured is saved and the signal's status (130, 143, 129) is returned.
        Errors are raised for :func:`pagezero.cli.main` to turn into one line and
        exit status 2 (usage) or 1 (the machine cannot do it).

    Raises
    ------
    pagezero.fleet.run.FleetError
        A machine did not finish; the others' results are kept (exit status 1).
    """
    from pagezero.fleet.run import run_fleet

    _quiet_dask()
    store = None
    if args.store is not None:
        from pagezero.store import Store

        store = Store(args.store or None, create=True)  # refuse a bad store before running
        store.require_writable()
    try:
        log = run_fleet(
            args.scheduler,
            args.fleet_command,
            args.output,
            machines=_names(args.machines),
            runs=args.runs,
            progress=sys.stderr if sys.stderr.isatty() else None,
            timeout=args.timeout,
        )
    except KeyboardInterrupt as e:
        if store is not None:
            _store_results(store, args.output)
        stop = as_interrupted(e)
        print(
            f"pagezero: {stop}; what finished is in {args.output} "
            f"(see {os.path.join(args.output, 'fleet.json')})",
            file=sys.stderr,
        )
        return stop.exit_status
    if store is not None:
        _store_results(store, args.output)
    for m in log.machines:
        ok = sum(1 for r in m["runs"] if r["status"] == "ok")
        line = f"{m['name']}: {m['status']}, {ok}/{args.runs} runs ok"
        print(line + (f" ({m['error']})" if m["error"] else ""))
    print(f"results in {args.output} (pagezero fleet table {args.output})")
    bad = [m for m in log.machines if m["status"] != "ok"]
    if bad:
        raise FleetError(
            f"{len(bad)} of {len(log.machines)} machines did not finish: "
            + "; ".join(f"{m['name']} {m['status']}" for m in bad)
            + "; the others' results are kept"
        )
    return 0


def _store_results(store, out_dir):
    with store:
        try:
            outcomes = store.add([out_dir])
        except ValueError:
            return  # no machine wrote results: nothing to store
    added = sum(1 for _, status, _ in outcomes if status == "added")
    print(f"store: {added} result sets added to {store.path}", file=sys.stderr)


def cmd_fleet_table(args):
    """`pagezero fleet table`: the machines of a fleet run side by side.

    Prints per point the median over runs and the stdev of the runs' medians for
    each machine (``--match`` keeps the points whose label matches); ``--format
    json`` the same as a document; ``--plot STEM`` also draws them.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. Errors are raised for :func:`pagezero.cli.main` to turn
        into one line and exit status 2 (usage) or 1 (the machine cannot do it).

    Raises
    ------
    ValueError
        ``--plot`` with fewer than two machines (exit status 2).
    """
    from pagezero.fleet.table import format_table, machine_sets

    check_output(args.plot)
    sets, notes = machine_sets(args.dir)
    if args.match:
        from pagezero.fleet.table import only_matching

        sets = only_matching(sets, args.match)
    if args.format == "json":
        from pagezero.fleet.table import table_rows

        print(
            json.dumps(
                {"machines": [n for n, _ in sets], "rows": table_rows(sets), "notes": notes},
                indent=1,
            )
        )
    else:
        print("\n".join(format_table(sets, notes)))
    if args.plot:
        from pagezero.figures import plot_comparison

        if len(sets) < 2:
            raise ValueError("--plot draws machines side by side: it needs two or more")
        print(
            "\n".join(
                plot_comparison(
                    [rs for _, rs in sets],
                    [n for n, _ in sets],
                    args.plot,
                    title="Machines side by side",
                )
            )
        )
    return 0


COMMANDS = {"fleet-up": cmd_fleet_up, "fleet-run": cmd_fleet_run, "fleet-table": cmd_fleet_table}


def _positive(text):
    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def add_parsers(sub):
    """Add the ``fleet`` command and its ``up``, ``run`` and ``table`` actions.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``pagezero`` parser (:func:`pagezero.cli.build_parser`).
    """
    fleet = sub.add_parser("fleet", help="run a study on every machine of a Dask cluster")
    fleet_sub = fleet.add_subparsers(dest="fleet_action", metavar="ACTION")
    fleet_sub.required = True

    text = "start a scheduler and one worker per host over SSH, print the scheduler address"
    p = fleet_sub.add_parser("up", help=text, description=text)
    p.add_argument(
        "--hosts",
        required=True,
        metavar="A,B,C",
        help="the machines, one worker each, named after the host",
    )
    p.add_argument("--scheduler-host", help="where the scheduler runs (default: the first host)")
    p.add_argument("--port", type=integer, default=8786, help="the scheduler's port (default 8786)")
    p.add_argument("--ssh-username", help="SSH user (default: as ~/.ssh/config says)")
    p.add_argument("--ssh-port", type=integer, help="SSH port (default 22)")
    p.add_argument("--ssh-key", metavar="FILE", help="SSH private key")
    p.add_argument(
        "--remote-python",
        metavar="PATH",
        help="the Python with pagezero on the hosts (default: this one's path)",
    )
    p.set_defaults(command="fleet-up")

    text = "run a pagezero command on every machine of the cluster, one at a time per machine"
    p = fleet_sub.add_parser(
        "run",
        help=text,
        description=text,
        usage="pagezero fleet run --scheduler ADDRESS -o DIR "
        "[--machines A,B] [--runs N] [--store [PATH]] "
        "-- COMMAND [OPTIONS]",
    )
    p.add_argument(
        "--scheduler",
        required=True,
        metavar="ADDRESS",
        help="the Dask scheduler, e.g. tcp://host:8786",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="folder for DIR/<machine>/ and DIR/fleet.json (new, or without fleet.json)",
    )
    p.add_argument("--machines", metavar="A,B", help="worker names (default: every worker)")
    p.add_argument(
        "--runs",
        type=_positive,
        default=1,
        help="fresh processes per machine, one after the other (default 1)",
    )
    p.add_argument(
        "--store",
        nargs="?",
        const="",
        metavar="PATH",
        help="also add the results to the store (default store without PATH)",
    )
    p.add_argument(
        "--timeout",
        type=number,
        default=10,
        help="seconds to wait for the scheduler to answer (default 10)",
    )
    p.add_argument(
        "fleet_command",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the pagezero command, without -o",
    )
    p.set_defaults(command="fleet-run")

    text = "one row per measured point, one column per machine: median and spread"
    p = fleet_sub.add_parser("table", help=text, description=text)
    p.add_argument("dir", metavar="DIR", help="a fleet run's folder")
    p.add_argument(
        "--match",
        metavar="WORDS",
        help="only the points with every one of these words in their label, "
        "e.g. 'x86-64-stosb chunk=0'",
    )
    p.add_argument("--plot", metavar="STEM", help="also draw STEM.png and STEM.svg")
    add_format(p, ("default", "json"))
    p.set_defaults(command="fleet-table")
