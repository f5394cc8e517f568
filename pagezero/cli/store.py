"""`pagezero store add|list|history|export|publish`: the results store on the command line.

Registered into pagezero's command line like the other command families
(COMMANDS and add_parsers). A results file or folder that is not one is a
user error (ValueError: exit 2); a store that cannot be used (corrupt,
foreign, newer, read-only, busy: StoreError, a PagezeroError) exits 1.
"""

import csv
import json
import os
import sys

from pagezero.cli.options import add_format, check_output
from pagezero.results.resultset import atomic_write
from pagezero.store import Store, default_path, read_records
from pagezero.store.history import format_history, plot_history
from pagezero.store.publish import publish

__all__ = ["COMMANDS", "add_parsers", "add_store_option"]


def cmd_store_add(args):
    """`pagezero store add`: add results files and folders to the store.

    Prints one line per file (added, or already stored, with its set number) and the
    totals.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. Errors are raised for :func:`pagezero.cli.main` to turn
        into one line and exit status 2 (usage) or 1 (the machine cannot do it).
    """
    records = read_records(args.paths)  # a bad file is refused before a store is made
    with Store(args.store, create=True) as store:
        outcomes = store.add_records(records)
    for path, status, set_id in outcomes:
        print(f"{status}: {path} (set #{set_id})")
    added = sum(1 for _, status, _ in outcomes if status == "added")
    print(f"{added} added, {len(outcomes) - added} already stored, in {store.path}")
    return 0


def cmd_store_list(args):
    """`pagezero store list`: the result sets in the store, one line each
    (``--format json``: as a document).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. Errors are raised for :func:`pagezero.cli.main` to turn
        into one line and exit status 2 (usage) or 1 (the machine cannot do it).
    """
    with Store(args.store) as store:
        rows = store.list()
    if args.format == "json":
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        mark = f" (interrupted: {r['interrupted']})" if r["interrupted"] else ""
        print(
            f"#{r['id']:<4} {r['measured_at'].replace('+00:00', 'Z')}  {r['machine_name']}  "
            f"{r['kernel_release'] or '?'}  {r['benchmarks']}  "
            f"pagezero {r['pagezero_version'] or '?'}  {r['points']} points{mark}"
        )
    if not rows:
        print(f"{store.path}: no result sets yet", file=sys.stderr)
    return 0


def cmd_store_history(args):
    """`pagezero store history`: one point's results over time, across kernels
    and machines, filtered by machine, kernel, benchmark, function, size and page;
    prints a table (or JSON) and with ``--plot STEM`` draws it.

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
        No stored point matches the filters (exit status 2).
    """
    check_output(args.plot)
    with Store(args.store) as store:
        rows = store.history(
            machine=args.machine,
            kernel=args.kernel,
            benchmark=args.benchmark,
            function=args.function,
            size=args.size,
            page=args.page,
        )
    if not rows:
        raise ValueError("no stored point matches these filters (see pagezero store list)")
    if args.format == "json":
        print(json.dumps(rows, indent=1))
    else:
        print("\n".join(format_history(rows)))
    if args.plot:
        print("\n".join(plot_history(rows, args.plot)))
    return 0


def cmd_store_export(args):
    """`pagezero store export`: every result in the store, as CSV rows or JSON
    documents, to ``-o`` or standard output.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. Errors are raised for :func:`pagezero.cli.main` to turn
        into one line and exit status 2 (usage) or 1 (the machine cannot do it).
    """
    check_output(args.output)
    with Store(args.store) as store:
        if args.format == "json":
            doc = [{"set": set_id, **json.loads(text)} for set_id, text in store.documents()]
        else:
            rows = store.export()

    def write(f):
        if args.format == "json":
            json.dump(doc, f, indent=1)
            f.write("\n")
            return
        w = csv.writer(f)
        w.writerow(rows[0].keys() if rows else ["set_id"])
        w.writerows(r.values() for r in rows)

    if args.output:
        atomic_write(args.output, write)
    else:
        write(sys.stdout)
    return 0


def cmd_store_publish(args):
    """`pagezero store publish -o SITE`: the store as a static site of HTML pages
    (:func:`pagezero.store.publish.publish`); prints the index's path.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. A bad SITE or an empty store is a ValueError (exit status
        2), with nothing written.
    """
    with Store(args.store) as store:
        pages = publish(store, args.output)
    print(f"{len(pages)} pages in {args.output}; open {pages[0]}")
    return 0


COMMANDS = {
    "store-add": cmd_store_add,
    "store-list": cmd_store_list,
    "store-history": cmd_store_history,
    "store-export": cmd_store_export,
    "store-publish": cmd_store_publish,
}


def add_store_option(p, **kwargs):
    """Add ``--store PATH``: the store file to use.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    **kwargs
        Passed on to :meth:`argparse.ArgumentParser.add_argument`.
    """
    p.add_argument("--store", metavar="PATH", **kwargs)


def add_parsers(sub):
    """Add the ``store`` command and its actions.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``pagezero`` parser (:func:`pagezero.cli.build_parser`).
    """
    where = f"the store file (default: {default_path().replace(os.path.expanduser('~'), '~')})"
    store = sub.add_parser("store", help="keep every result set in a SQLite store, with history")
    store_sub = store.add_subparsers(dest="store_command", metavar="ACTION")
    store_sub.required = True

    p = store_sub.add_parser(
        "add",
        help="add results files, or every results file under folders; each result set is kept once",
    )
    p.add_argument("paths", nargs="+", metavar="FILE|DIR")
    add_store_option(p, help=where)
    p.set_defaults(command="store-add")

    p = store_sub.add_parser("list", help="one line per stored result set")
    add_store_option(p, help=where)
    add_format(p, ("default", "json"))
    p.set_defaults(command="store-list")

    p = store_sub.add_parser(
        "history", help="a point's median per result set, in time order, with its spread"
    )
    p.add_argument("--machine", help="machine name in a fleet, or hostname")
    p.add_argument("--kernel", help="kernel release, as uname -r says")
    p.add_argument("--benchmark", help="memset, memcpy, mmap, batch, folio, ...")
    p.add_argument("--function", help="kernel or workload, e.g. x86-64-stosb")
    p.add_argument("--size", help="region size, e.g. 1GB")
    p.add_argument("--page", help="page size: 4KB, 2MB or 1GB")
    p.add_argument("--plot", metavar="STEM", help="also draw STEM.png and STEM.svg")
    add_format(p, ("default", "json"))
    add_store_option(p, help=where)
    p.set_defaults(command="store-history")

    p = store_sub.add_parser(
        "export", help="every stored point as CSV, or every result set's document as JSON"
    )
    p.add_argument("--format", default="csv", choices=["csv", "json"])
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    add_store_option(p, help=where)
    p.set_defaults(command="store-export")

    p = store_sub.add_parser(
        "publish",
        help="the store as a static site: machines, points' histories, comparisons",
    )
    p.add_argument(
        "-o", "--output", metavar="SITE", required=True, help="the site's folder (replaced whole)"
    )
    add_store_option(p, help=where)
    p.set_defaults(command="store-publish")
