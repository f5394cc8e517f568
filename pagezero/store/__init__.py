"""The results store (docs/store.rst): result sets kept once by content in a versioned SQLite
file; a point's history as text and as a plot; the store as a static site (``store publish``)."""

import contextlib
import datetime
import functools
import hashlib
import html
import itertools
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from importlib import resources

from pagezero._core import PagezeroError
from pagezero.analysis.compare import compare, format_table, header_lines, runs_per_side
from pagezero.analysis.significance import METHOD
from pagezero.figures.common import closes_on_error, printable
from pagezero.figures.palette import MARKERS, PALETTE
from pagezero.files import writable_parent
from pagezero.results.points import grouped, summarize_points
from pagezero.results.resultset import ResultSet, results_files
from pagezero.results.schema import is_int
from pagezero.studies.report.html import html_table, inline_svg
from pagezero.studies.report.html import page as html_page
from pagezero.units import parse_size

__all__ = ["Store", "StoreError", "default_path", "read_records", "SCHEMA_VERSION"]
__all__ += ["format_value", "format_history", "plot_history", "history_footer"]
__all__ += ["publish", "MARKER", "MAX_ALL_PAIRS"]

# Long enough for another pagezero's add (a few hundred rows) to finish.
BUSY_TIMEOUT_S = 30
# The schema's version, in a table of its own: a file without it is foreign (docs/store.rst).
VERSION_TABLE = "pagezero_store"
SCHEMA_VERSION = 3

CREATE = f"""
CREATE TABLE {VERSION_TABLE} (version INTEGER NOT NULL);
INSERT INTO {VERSION_TABLE} (version) VALUES ({SCHEMA_VERSION});
CREATE TABLE result_sets (
    id INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL UNIQUE,
    machine_name TEXT NOT NULL,
    hostname TEXT,
    cpu_model TEXT,
    kernel_release TEXT,
    benchmarks TEXT NOT NULL,
    measured_at TEXT NOT NULL,
    source TEXT,
    added_at TEXT NOT NULL,
    document TEXT NOT NULL,
    pagezero_version TEXT,
    interrupted TEXT
);
CREATE TABLE points (
    set_id INTEGER NOT NULL REFERENCES result_sets(id) ON DELETE CASCADE,
    benchmark TEXT NOT NULL,
    function TEXT NOT NULL,
    size INTEGER,
    page TEXT,
    label TEXT NOT NULL,
    params TEXT NOT NULL,
    unit TEXT NOT NULL,
    median REAL NOT NULL,
    spread_pct REAL NOT NULL,
    runs INTEGER NOT NULL,
    spread_of TEXT NOT NULL
);
CREATE INDEX points_by_point ON points (benchmark, function, size, page);
CREATE INDEX sets_by_time ON result_sets (measured_at);
"""
# MIGRATIONS[n]: version n to n + 1, in the caller's transaction; then every set's points anew.
MIGRATIONS = {
    1: (
        "ALTER TABLE result_sets ADD COLUMN pagezero_version TEXT",
        "ALTER TABLE result_sets ADD COLUMN interrupted TEXT",
        "ALTER TABLE points ADD COLUMN runs INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE points ADD COLUMN spread_of TEXT NOT NULL DEFAULT 'loops'",
        "CREATE INDEX IF NOT EXISTS sets_by_time ON result_sets (measured_at)",
    ),
    2: (),
}
# What a point's row keeps of its summary (results.points.point_summary).
SUMMARY = ("unit", "median", "spread_pct", "runs", "spread_of")


class StoreError(PagezeroError):
    """A store missing, corrupt, foreign, newer, read-only or busy: one line naming it."""


def default_path():
    """``$XDG_DATA_HOME/pagezero/results.sqlite``; ``~/.local/share`` for an unset or relative."""
    base = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):  # the specification says to ignore a relative one
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "pagezero", "results.sqlite")


class Store(contextlib.AbstractContextManager):
    """An open results store (older schemas migrated forward), a context manager that closes it.

    Parameters
    ----------
    path : str, optional
        The SQLite file; by default :func:`default_path`.
    create : bool
        Make the file (and its folder) when missing.

    Raises
    ------
    StoreError
        For a folder, a missing file (without `create`), one that cannot be created, a
        SQLite file that is no pagezero store, or one of a newer schema.
    """

    def __init__(self, path=None, create=False):
        self.path = path or default_path()
        self.db = None
        if os.path.isdir(self.path):
            raise StoreError(f"{self.path}: a folder, not a store file")
        exists = os.path.exists(self.path)
        if not exists and not create:
            raise StoreError(
                f"{self.path}: no store there yet (pagezero store add FILE creates it)"
            )
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.path}: cannot create the store: {e.strerror}") from None
        # Root may write through a file without write bits: chmod a-w makes it read-only for all.
        writable = exists and os.access(self.path, os.W_OK) and os.stat(self.path).st_mode & 0o222
        self.read_only = exists and not writable
        try:
            with self._errors():
                self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
                self.db.execute("PRAGMA foreign_keys = ON")
                self._open_schema()
        except BaseException:
            self.close()
            raise

    def _version(self):
        """The schema version, None for an empty file; StoreError for a foreign one."""
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
        tables = {name for (name,) in self.db.execute(sql)}
        if not tables:
            return None
        if VERSION_TABLE not in tables:
            raise StoreError(
                f"{self.path}: a SQLite database, but not a pagezero store "
                f"(no {VERSION_TABLE} table); choose another --store"
            )
        row = self.db.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
        if row is None or not isinstance(row[0], int):
            raise StoreError(f"{self.path}: a pagezero store without a valid schema version")
        return row[0]

    def _open_schema(self):
        version = self._version()
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: store schema version {version} is newer than this "
                f"pagezero's ({SCHEMA_VERSION}): it was written by a newer "
                f"pagezero; upgrade pagezero or use another --store"
            )
        if version == SCHEMA_VERSION:
            return
        self.require_writable("migrate" if version else "create")
        if version is None:
            self.db.execute("PRAGMA journal_mode = WAL")  # persistent: set once
        with self._transaction():
            version = self._version()  # another process may have got there first
            statements = CREATE.split(";") if version is None else []
            for v in range(version or SCHEMA_VERSION, SCHEMA_VERSION):
                statements += MIGRATIONS[v]
            for statement in statements:
                self.db.execute(statement)
            if version in (None, SCHEMA_VERSION):  # made here, or by another process
                return
            sets = self.db.execute("SELECT id, document FROM result_sets").fetchall()
            for set_id, document in sets:
                try:
                    rows = point_rows(stored_result_set(document))
                except ValueError:  # no longer reads (a loop of 0 ticks): keeps its points
                    continue
                self.db.execute("DELETE FROM points WHERE set_id = ?", (set_id,))
                _insert_points(self.db, set_id, rows)
            self.db.execute(f"UPDATE {VERSION_TABLE} SET version = ?", (SCHEMA_VERSION,))

    @contextlib.contextmanager
    def _errors(self):
        """sqlite3's exceptions as one-line StoreErrors naming the file."""
        try:
            yield
        except sqlite3.OperationalError as e:
            text = str(e)
            if "readonly" in text:
                raise StoreError(f"{self.path}: the store is read-only") from None
            if "locked" in text or "busy" in text:
                raise StoreError(
                    f"{self.path}: busy: another process held the store for {BUSY_TIMEOUT_S} s"
                ) from None
            raise StoreError(f"{self.path}: {text}") from None
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a pagezero store ({e})") from None

    def _transaction(self):
        """All or nothing (the connection's context), the write lock taken first."""
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def require_writable(self, what="add to"):
        """StoreError when the store is read-only, for `what` (the action) it cannot do."""
        if self.read_only:
            raise StoreError(f"{self.path}: the store is read-only; cannot {what} it")

    def add(self, paths):
        """Add results files, and every results file under folders, in one transaction.

        Parameters
        ----------
        paths : iterable of str
            Results files (``-o`` files of any command) and folders of them.

        Returns
        -------
        list of tuple
            ``(path, "added" or "already stored", set id)`` per file.

        Raises
        ------
        ValueError
            For a path that is no results file or folder; nothing is written.
        StoreError
            When the store is read-only or busy; nothing is written.
        """
        return self.add_records(read_records(paths))

    def add_records(self, records):
        """Add what :func:`read_records` read, in one transaction, as :meth:`add` does."""
        self.require_writable("add to")
        added_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        outcomes = []
        with self._errors(), self._transaction():
            for record in records:
                sql = "SELECT id FROM result_sets WHERE content_hash = ?"
                row = self.db.execute(sql, (record.content_hash,)).fetchone()
                if row:
                    outcomes.append((record.path, "already stored", row[0]))
                    continue
                set_id = _insert_row(self.db, "result_sets", record.set_row(added_at))
                _insert_points(self.db, set_id, point_rows(record.result_set))
                outcomes.append((record.path, "added", set_id))
        return outcomes

    def _query(self, sql, args=()):
        with self._errors():
            cursor = self.db.execute(sql, args)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor]

    def list(self):
        """Every stored result set, oldest measurement first: dicts of ``id``,
        ``measured_at``, ``machine_name``, ``hostname``, ``kernel_release``,
        ``benchmarks``, ``pagezero_version``, ``interrupted``, ``source``, ``points``."""
        return self._query(
            "SELECT s.id, s.measured_at, s.machine_name, s.hostname, s.kernel_release, "
            "s.benchmarks, s.pagezero_version, s.interrupted, s.source, "
            "(SELECT COUNT(*) FROM points p WHERE p.set_id = s.id) AS points "
            "FROM result_sets s ORDER BY s.measured_at, s.id"
        )

    def history(
        self, machine=None, kernel=None, benchmark=None, function=None, size=None, page=None
    ):
        """Every stored point matching the filters (a machine name or hostname, ``uname -r``,
        a benchmark, a kernel or workload, a size such as ``"1GB"``, a page size), by label
        and time: dicts of ``set_id``, ``measured_at``, ``machine_name``, ``kernel_release``,
        ``pagezero_version``, ``label``, ``unit``, ``median``, ``spread_pct``, ``runs`` and
        ``spread_of``."""
        size = None if size is None else parse_size(size)
        args = dict(machine=machine, kernel=kernel, benchmark=benchmark, function=function)
        args.update(size=size, page=None if page is None else str(page))
        tests = {
            "machine": "(s.machine_name = :machine OR s.hostname = :machine)",
            "kernel": "s.kernel_release = :kernel",
            "benchmark": "p.benchmark = :benchmark",
            "function": "p.function = :function",
            "size": "p.size = :size",
            "page": "UPPER(p.page) = UPPER(:page)",
        }
        where = [test for name, test in tests.items() if args[name] not in (None, "")]
        return self._query(
            "SELECT s.id AS set_id, s.measured_at, s.machine_name, s.kernel_release, "
            "s.pagezero_version, p.label, p.unit, p.median, p.spread_pct, p.runs, p.spread_of "
            "FROM points p JOIN result_sets s ON s.id = p.set_id"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY p.label, s.measured_at, s.id",
            args,
        )

    def export(self):
        """Every point with its set's metadata, one dict a point, in time order."""
        return self._query(
            "SELECT s.id AS set_id, s.measured_at, s.machine_name, s.hostname, s.cpu_model, "
            "s.kernel_release, s.pagezero_version, s.content_hash, p.benchmark, p.function, "
            "p.size, p.page, p.label, p.params, p.unit, p.median, p.spread_pct, p.runs, "
            "p.spread_of FROM points p JOIN result_sets s ON s.id = p.set_id "
            "ORDER BY s.measured_at, s.id, p.label"
        )

    def documents(self):
        """``(set id, document text)`` of every stored result set, oldest first."""
        sql = "SELECT id, document FROM result_sets ORDER BY measured_at, id"
        with self._errors():
            return self.db.execute(sql).fetchall()

    def close(self):
        """Close the database; calling it again does nothing."""
        if self.db is not None:
            self.db.close()
            self.db = None

    def __exit__(self, *exc):
        self.close()


def read_records(paths):
    """The Records of results files and of those under folders; ValueError for others."""
    records = []
    for path in paths:
        if not os.path.exists(path):
            raise ValueError(f"{path}: no such file")
        records += map(Record, results_files(path) if os.path.isdir(path) else [path])
    return records


def _insert_row(db, table, row):
    marks = ", ".join(f":{column}" for column in row)
    return db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", row).lastrowid


def _insert_points(db, set_id, rows):
    for row in rows:
        _insert_row(db, "points", dict(row, set_id=set_id))


class Record:
    """A results file read and checked for the store (docs/store.rst), or ValueError."""

    def __init__(self, path):
        self.result_set = ResultSet.load(path)  # validates; ValueError with the path otherwise
        if not len(self.result_set):
            raise ValueError(f"{path}: holds no results")
        with open(path) as f:
            self.path, self.document = path, f.read()
        self.doc = json.loads(self.document)
        canonical = json.dumps(self.doc, sort_keys=True, separators=(",", ":"))
        self.content_hash = hashlib.sha256(canonical.encode()).hexdigest()
        mtime = datetime.datetime.fromtimestamp(os.stat(path).st_mtime, datetime.timezone.utc)
        self.measured_at = mtime.isoformat(timespec="seconds")

    def set_row(self, added_at):
        """The store's ``result_sets`` row for this file, column name to value."""
        m, doc = self.result_set.machine, self.doc
        version = doc.get("pagezero")  # results schema 3 records it; older files did not
        stop = doc.get("interrupted")  # the signal's name, or true for an unknown one
        row = {key: m.get(key) for key in ("hostname", "cpu_model", "kernel_release")}
        # A machine is filed under its fleet name (the Dask worker's), else its hostname.
        name = m.get("fleet_name") or m.get("hostname") or "unknown"
        row.update(content_hash=self.content_hash, machine_name=name)
        row.update(benchmarks=",".join(self.result_set.benchmarks), measured_at=self.measured_at)
        row.update(source=os.path.abspath(self.path), added_at=added_at, document=self.document)
        row["pagezero_version"] = version if isinstance(version, str) else None
        row["interrupted"] = (stop if isinstance(stop, str) else "yes") if stop else None
        return row


def _size(params):
    size = params.get("size")
    if isinstance(size, str):
        with contextlib.suppress(ValueError):  # one that does not read: None
            return parse_size(size)
    return size if is_int(size) else None


def point_rows(result_set):
    """The store's ``points`` rows of a result set, one dict a point."""
    rows = []
    for first, summary in summarize_points(result_set).values():
        page = first.params.get("page")
        row = dict(benchmark=first.benchmark, function=first.function, size=_size(first.params))
        row.update(page=None if page is None else str(page), label=first.label())
        row["params"] = json.dumps(dict(first.params), sort_keys=True)
        rows.append(row | {key: summary[key] for key in SUMMARY})
    return rows


def stored_result_set(document_text):
    """The ResultSet of a stored document (ValueError when it is not a valid one)."""
    # ResultSet.load reads files, so the document goes through a temporary one.
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(document_text)
        f.flush()
        return ResultSet.load(f.name)


# Beyond this many lines a plot is unreadable: the filters should narrow it.
MAX_SERIES = 12


def format_value(value, unit):
    """A median as text: ``"12.34 GB/s"`` (10^9 bytes/s), else 4 digits and the unit."""
    if unit == "bytes/sec":
        return f"{value / 1e9:.2f} GB/s"
    return f"{value:.4g} {unit}"


# The columns of a point's history, one row a result set (store history and publish).
HEADER = ["measured (UTC)", "machine", "kernel", "pagezero", "median", "spread", "set"]


def history_cells(r):
    """A history row's cells under HEADER, its spread as ``+-1.2% (3 runs)``."""
    when, version = r["measured_at"].replace("+00:00", "Z"), r["pagezero_version"] or "?"
    of = f"{r['runs']} runs" if r["spread_of"] == "runs" else "loops, 1 run"
    spread = f"+-{r['spread_pct']:.1f}% ({of})"
    value = format_value(r["median"], r["unit"])
    return [when, r["machine_name"], r["kernel_release"] or "?", version, value, spread]


def by_point(rows):
    """History rows as ``[(label, rows)]``, a pair per point, in the rows' order."""
    points = grouped(rows, lambda row: (row["label"], row["unit"]))
    return [(label, group) for (label, _), group in points.items()]


def format_history(rows):
    """:meth:`Store.history` rows as lines: per point its label, then a line per result set."""
    lines = []
    for label, group in by_point(rows):
        lines += ([""] if lines else []) + [label]
        table = [HEADER] + [history_cells(r) + [f"#{r['set_id']}"] for r in group]
        widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    return lines


@closes_on_error
def plot_history(rows, stem):
    """Plot :meth:`pagezero.store.Store.history` rows to ``stem.png`` and ``stem.svg``, a line
    per point and machine; the files written. ValueError beyond MAX_SERIES lines."""
    from pagezero.figures.common import pyplot, save

    series = grouped(rows, lambda row: (row["label"], row["machine_name"]))
    if len(series) > MAX_SERIES:
        raise ValueError(
            f"{len(series)} points and machines match; a plot shows at most "
            f"{MAX_SERIES}: narrow the filters (--function, --size, --page, ...)"
        )
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    unit = rows[0]["unit"]
    scale = 1e9 if unit == "bytes/sec" else 1.0
    # In a fixed order (machine, then point): a machine keeps its colour as sets are added.
    for i, ((label, machine), group) in enumerate(sorted(series.items(), key=lambda s: s[0][::-1])):
        when = [datetime.datetime.fromisoformat(r["measured_at"]) for r in group]
        medians = [r["median"] / scale for r in group]
        errors = [m * r["spread_pct"] / 100 for m, r in zip(medians, group)]
        style = dict(marker=MARKERS[i % len(MARKERS)], color=PALETTE[i % len(PALETTE)], capsize=3)
        ax.errorbar(when, medians, yerr=errors, label=printable(f"{machine}: {label}"), **style)
    ax.set_ylabel("median rate (GB/s, 10^9 bytes/s)" if unit == "bytes/sec" else unit)
    ax.set_xlabel("measured (UTC)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    title = "History of stored points; error bars: spread between runs (one run: between its loops)"
    ax.set_title(title, fontsize=10)
    fig.autofmt_xdate()
    fig.text(0.01, 0.005, history_footer(rows), fontsize=7, color="dimgrey", va="bottom")
    return save(fig, stem)


def history_footer(rows):
    """The history figure's footer: each machine with its kernel releases, and the date."""
    releases = {}
    for r in rows:  # a dict for an ordered set
        releases.setdefault(r["machine_name"], {})[r["kernel_release"]] = None
    machines = "; ".join(f"{m}: Linux {', '.join(map(str, rs))}" for m, rs in releases.items())
    return printable(f"{machines}; drawn {datetime.date.today().isoformat()}")


# The file that marks a folder as a published site, safe to replace.
MARKER = ".pagezero-site"
# Up to this many sets every pair sharing a point gets a comparison page; beyond, neighbours.
MAX_ALL_PAIRS = 25


def publish(store, site: str) -> list[str]:
    """Write the store as a static site in `site`, replacing a site published before.

    Parameters
    ----------
    store : pagezero.store.Store
        The open store.
    site : str
        The site's folder (created; its parent must exist).

    Returns
    -------
    list of str
        The pages written, index.html first, as paths under `site`.

    Raises
    ------
    ValueError
        A bad `site` (missing parent, a file, a folder of other files) or an empty store.
    """
    parent, sets = writable_parent(site, "publish to", folder=True), store.list()
    if os.path.isdir(site) and os.listdir(site) and not os.path.exists(os.path.join(site, MARKER)):
        raise ValueError(
            f"cannot publish to {site!r}: it holds files that are no published site; "
            f"choose an empty or new folder"
        )
    if not sets:
        raise ValueError(f"{store.path}: the store holds no result sets to publish")
    tmp = tempfile.mkdtemp(prefix=".publish-", dir=parent)
    try:
        names = _write_site(tmp, store, sets)
        # Renamed into place; an old site goes only once the new one is in.
        old = tempfile.mkdtemp(prefix=".unpublished-", dir=parent) if os.path.exists(site) else None
        if old:
            os.rename(site, os.path.join(old, "site"))
        os.rename(tmp, site)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old:
        shutil.rmtree(old, ignore_errors=True)
    return [os.path.join(site, n) for n in names]


def _write_site(folder: str, store, sets: list[dict]) -> list[str]:
    """Write the site's pages into `folder`; their names, index.html first."""
    by_id = {s["id"]: s for s in sets}
    documents = dict(store.documents())
    load = functools.cache(lambda set_id: stored_result_set(documents[set_id]))
    points = by_point(store.history())
    pages = {
        f"point-{n}.html": _point_page(folder, n, label, rows, by_id)
        for n, (label, rows) in enumerate(points, 1)
    }
    ids = [s["id"] for s in sets]  # oldest first
    candidates = itertools.combinations(ids, 2) if len(ids) <= MAX_ALL_PAIRS else zip(ids, ids[1:])
    pairs = []
    for a, b in candidates:
        text = _compare_page(by_id[a], by_id[b], load)
        if text is not None:  # None: the two share no point
            pages[f"compare-{a}-{b}.html"] = text
            pairs.append((a, b))
    pages = {"index.html": _index_page(sets, points, pairs), **pages}
    pages[MARKER] = "a site written by pagezero store publish; safe to replace\n"
    for name, text in pages.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    return list(pages)[:-1]


def report_of(source: str | None) -> str | None:
    """The file:// address of report.html (else report.md) beside a set's `source`, else None."""
    if not source:
        return None
    paths = [os.path.join(os.path.dirname(source), name) for name in ("report.html", "report.md")]
    return next(("file://" + path for path in paths if os.path.isfile(path)), None)


def _e(text: object) -> str:
    return html.escape(str(text if text is not None else "?"))


def _when(row: dict) -> str:
    return _e(row["measured_at"].replace("+00:00", "Z"))


def _set_cell(s: dict) -> str:
    report = report_of(s.get("source"))
    link = f' (<a href="{_e(report)}">report</a>)' if report else ""
    return f"#{s['id']}{link}"


def _index_page(sets: list[dict], points: list, pairs: list[tuple[int, int]]) -> str:
    machines = grouped(sets, lambda s: s["machine_name"])
    machine_rows = []
    for name, group in machines.items():
        kernels = _e(", ".join(sorted({g["kernel_release"] or "?" for g in group})))
        machine_rows.append([_e(name), str(len(group)), kernels, _when(group[0]), _when(group[-1])])
    set_columns = ("machine_name", "kernel_release", "benchmarks", "points")
    set_rows = [
        [_set_cell(s), _when(s), *(_e(s[c]) for c in set_columns), _e(s["interrupted"] or "")]
        for s in sets
    ]
    point_rows = [
        [f'<a href="point-{n}.html">{_e(label)}</a>', str(len({r["machine_name"] for r in rows}))]
        + [str(len(rows)), _e(format_value(rows[-1]["median"], rows[-1]["unit"]))]
        for n, (label, rows) in enumerate(points, 1)
    ]
    options = "".join(
        f'<option value="{s["id"]}">#{s["id"]} {_when(s)} {_e(s["machine_name"])}</option>'
        for s in sets
    )
    names = json.dumps([f"compare-{a}-{b}.html" for a, b in pairs])
    script = resources.files("pagezero.store").joinpath("compare.js").read_text(encoding="utf-8")
    body = [
        "<h1>pagezero results</h1>",
        f"<p>{len(sets)} result sets of {len(machines)} machines, {len(points)} points. "
        "Every figure is a point's median of per-run medians; its interval the spread "
        "between runs (of one run's loops where a set has one run).</p>",
        '<h2 id="machines">Machines</h2>',
        html_table(["machine", "result sets", "kernels", "first", "last"], machine_rows),
        '<h2 id="result-sets">Result sets</h2>',
        html_table(
            ["set", "measured (UTC)", "machine", "kernel", "benchmarks", "points", "interrupted"],
            set_rows,
        ),
        '<h2 id="compare">Compare two result sets</h2>',
        f'<form onsubmit="return openComparison()"><select id="base">{options}</select> '
        f'against <select id="other">{options}</select> <button type="submit">compare</button> '
        '<span id="compare-message"></span></form>',
        f"<script>var PAIRS = {names};\n{script}</script>",
        "<p>"
        + ", ".join(f'<a href="compare-{a}-{b}.html">#{b} against #{a}</a>' for a, b in pairs[:50])
        + "</p>",
        '<h2 id="points">Points</h2>',
        html_table(["point", "machines", "result sets", "latest median"], point_rows),
    ]
    return html_page("pagezero results", "\n".join(body))


def _point_page(folder: str, n: int, label: str, rows: list[dict], by_id: dict) -> str:
    figure = "<p>One result set holds this point: no history to draw yet.</p>"
    if len(rows) > 1 and len({r["machine_name"] for r in rows}) <= MAX_SERIES:
        plot_history(rows, os.path.join(folder, f"point-{n}"))
        figure = inline_svg(folder, f"point-{n}.png", f"history of {label}")
    cells = [[*map(_e, history_cells(r)), _set_cell(by_id[r["set_id"]])] for r in rows]
    table = html_table(HEADER, cells)
    body = (
        f'<p><a href="index.html">all results</a></p><h1>{_e(label)}</h1>'
        "<p>The point's median of per-run medians per result set; error bars and the "
        "spread column: the spread between runs (of one run's loops where it had one).</p>"
        f'<div class="pair">{table}{figure}</div>'
    )
    return html_page(label, body)


def _compare_page(a: dict, b: dict, load: Callable[[int], ResultSet]) -> str | None:
    """The page of set `b` against set `a`, or None when they share no point."""
    sides = [load(a["id"]), load(b["id"])]
    names = [f"#{a['id']}", f"#{b['id']}"]
    try:
        rows = compare(*sides)
    except ValueError:  # nothing in common (compare's own check): no page
        return None
    lines = header_lines([dict(rs.machine) for rs in sides], names, runs_per_side(rows, 2), METHOD)
    title = f"#{b['id']} against #{a['id']}"
    body = (
        f'<p><a href="index.html">all results</a></p><h1>{_e(title)}</h1>'
        f"<p>Base {_set_cell(a)}: {_e(a['machine_name'])}, {_when(a)}; "
        f"against {_set_cell(b)}: {_e(b['machine_name'])}, {_when(b)}. As "
        "<code>pagezero compare</code> prints it.</p>"
        f"<pre>{_e(chr(10).join(lines))}\n\n{_e(format_table(rows, names))}</pre>"
    )
    return html_page(f"pagezero: {title}", body)
