"""``pagezero store add|list|history|export|publish``: the results store on the command line."""

import csv
import io
import json
import os
import sys

from pagezero.cli.options import add, check_output, command
from pagezero.results.resultset import atomic_write
from pagezero.store import Store, default_path, format_history, plot_history, publish, read_records

__all__ = ["add_parsers"]


def cmd_store_add(args):
    records = read_records(args.paths)  # a bad file is refused before a store is made
    with Store(args.store, create=True) as store:
        outcomes = store.add_records(records)
    for path, status, set_id in outcomes:
        print(f"{status}: {path} (set #{set_id})")
    added = sum(1 for _, status, _ in outcomes if status == "added")
    print(f"{added} added, {len(outcomes) - added} already stored, in {store.path}")
    return 0


def cmd_store_list(args):
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
    check_output(args.plot)
    filters = ("machine", "kernel", "benchmark", "function", "size", "page")
    with Store(args.store) as store:
        rows = store.history(**{name: getattr(args, name) for name in filters})
    if not rows:
        raise ValueError("no stored point matches these filters (see pagezero store list)")
    print(json.dumps(rows, indent=1) if args.format == "json" else "\n".join(format_history(rows)))
    if args.plot:
        print("\n".join(plot_history(rows, args.plot)))
    return 0


def cmd_store_export(args):
    check_output(args.output)
    with Store(args.store) as store:
        if args.format == "json":
            docs = [{"set": set_id, **json.loads(doc)} for set_id, doc in store.documents()]
            text = json.dumps(docs, indent=1) + "\n"
        else:
            rows, out = store.export(), io.StringIO()
            w = csv.writer(out)
            w.writerow(rows[0].keys() if rows else ["set_id"])
            w.writerows(r.values() for r in rows)
            text = out.getvalue()
    if args.output:
        atomic_write(args.output, lambda f: f.write(text))
    else:
        sys.stdout.write(text)
    return 0


def cmd_store_publish(args):
    with Store(args.store) as store:
        pages = publish(store, args.output)
    print(f"{len(pages)} pages in {args.output}; open {pages[0]}")
    return 0


def add_parsers(sub):
    """Add the ``store`` command and its actions to `sub`, the subparsers of ``pagezero``."""
    where = f"the store file (default: {default_path().replace(os.path.expanduser('~'), '~')})"
    store = sub.add_parser("store", help="keep every result set in a SQLite store, with history")
    actions = store.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    text = "add results files, or every results file under folders; each result set is kept once"
    p = command(actions, "add", text, cmd_store_add, command="store-add")
    p.add_argument("paths", nargs="+", metavar="FILE|DIR")
    text = "one line per stored result set"
    p = command(actions, "list", text, cmd_store_list, command="store-list")
    add(p, "format")
    text = "a point's median per result set, in time order, with its spread"
    p = command(actions, "history", text, cmd_store_history, command="store-history")
    p.add_argument("--machine", help="machine name in a fleet, or hostname")
    p.add_argument("--kernel", help="kernel release, as uname -r says")
    p.add_argument("--benchmark", help="memset, memcpy, mmap, batch, folio, ...")
    p.add_argument("--function", help="kernel or workload, e.g. x86-64-stosb")
    p.add_argument("--size", help="region size, e.g. 1GB")
    p.add_argument("--page", help="page size: 4KB, 2MB or 1GB")
    add(p, "plot format")
    text = "every stored point as CSV, or every result set's document as JSON"
    p = command(actions, "export", text, cmd_store_export, command="store-export")
    p.add_argument("--format", default="csv", choices=["csv", "json"])
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    text = "the store as a static site: machines, points' histories, comparisons"
    p = command(actions, "publish", text, cmd_store_publish, command="store-publish")
    site = "the site's folder (replaced whole)"
    p.add_argument("-o", "--output", metavar="SITE", required=True, help=site)
    for p in actions.choices.values():  # each action's last option
        p.add_argument("--store", metavar="PATH", help=where)
