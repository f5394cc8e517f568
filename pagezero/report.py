"""`pagezero report`: the default study of this machine, as a folder.

Studies:
  extents  every available clear kernel over extents from 4KB to beyond the
           LLC, dense around the cache sizes (which kernel wins where);
  chunks   the seeds' chunk study: one large region cleared in chunks of 4KB
           up to the whole region (where the CPU stops allocating cache
           lines, compared with the LLC size);
  advice   `pagezero advise`: the batch size for clear_pages() per latency
           budget, with the kernel to use.

The folder holds each study's results (JSON, loadable with
pagezero.ResultSet.load), PNG and SVG plots, and report.md with the tables,
the pictures and a summary in plain words.

Sizes: "full" (the default, minutes), "quick" (under three minutes on a
2-core machine) and "tiny" (seconds; for tests and CI), the last two picked
by --quick or the PAGEZERO_SCALE environment variable.
"""
import datetime
import json
import os
import time

from .advise import advise
from .kernels import kernels
from .plot import extent_of, plot_rates
from .results import ResultSet, _atomic_write
from .stats import KNEE_CLEAR_STEP, TIE, best_kernels, find_knee
from .sweeps import default_sizes, sweep
from .sysinfo import llc_bytes, machine, summary
from .units import format_size

__all__ = ["report", "SCALES"]

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30

# Below this extent, a loop clears the extent repeatedly over a region of
# this size (chunk = extent): the region stays in L2, and each timed loop is
# long enough that the clock reads around it do not count.
SMALL_REGION = 256 * KB

SCALES = {
    "full": dict(extents=None, repeat=3, warmup=1, chunk_size=1 * GB, chunk_loops=3,
                 chunk_kernels=("x86-64-stosb", "x86-64-avx512-nt", "default", "generic"),
                 chunks=None),
    "quick": dict(extents=[4 * KB, 16 * KB, 64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB,
                           32 * MB, 64 * MB, 256 * MB],
                  repeat=2, warmup=1, chunk_size=512 * MB, chunk_loops=2,
                  chunk_kernels=("x86-64-stosb", "default"),
                  chunks=[4 * KB, 64 * KB, 2 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB, 512 * MB]),
    "tiny": dict(extents=[4 * KB, 64 * KB, 1 * MB], repeat=1, warmup=0,
                 chunk_size=16 * MB, chunk_loops=1, chunk_kernels=("default", "generic"),
                 chunks=[4 * KB, 1 * MB, 16 * MB]),
}


def _loops(size):
    # About 16MB of clearing per timed run, between 2 and 20 loops.
    return max(2, min(20, (16 * MB) // size))


def _extent_points(extents, functions):
    points = []
    for e in extents:
        size = max(e, SMALL_REGION)
        points.append({"size": size, "chunk": e if e < size else 0, "loops": _loops(size)})
    return [dict(p, function=f) for p in points for f in functions]


def _run_points(benchmark, points, repeat, warmup):
    """Points that are not a grid (size and chunk go together): one sweep per
    point shape, merged. Interleaving still holds within each sweep."""
    results, runs, interrupted = [], [], False
    shapes = {}
    for p in points:
        key = tuple(sorted((k, v) for k, v in p.items() if k != "function"))
        shapes.setdefault(key, []).append(p["function"])
    for key, functions in shapes.items():
        grid = {k: [v] for k, v in key}
        grid["function"] = functions
        rs = sweep(benchmark, grid, repeat=repeat, warmup=warmup)
        results += rs.results
        runs += rs.runs
        if rs.interrupted:
            interrupted = True
            break
    return ResultSet(results, runs, machine(), interrupted)


def _medians(rs, x):
    """{function: {x: median}} of a result set's rates."""
    table = {}
    for first, results in rs.points():
        values = sorted(v for r in results for v in r.values())
        table.setdefault(first.function, {})[x(first)] = values[len(values) // 2]
    return table


def _gbps(v):
    return f"{v / 1e9:.1f}" if v is not None else "-"


def _markdown_table(medians, xs, x_label):
    functions = sorted(medians)
    lines = [f"| {x_label} | " + " | ".join(functions) + " |",
             "|---|" + "---|" * len(functions)]
    for x in xs:
        row = [format_size(x)] + [_gbps(medians[f].get(x)) for f in functions]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _summarize(info, extents, chunks, chunk_size, advice=None):
    lines = []
    llc = llc_bytes(info)
    if extents is not None and len(extents):
        med = _medians(extents, extent_of)
        xs = sorted({x for m in med.values() for x in m})
        for r in best_kernels(med, xs):
            span = format_size(r["min_bytes"]) if r["min_bytes"] == r["max_bytes"] else \
                f"{format_size(r['min_bytes'])} to {format_size(r['max_bytes'])}"
            lines.append(f"For extents of {span}, {r['kernel']} clears fastest, or within "
                         f"{TIE:.0%} of the fastest ({r['bytes_per_sec'] / 1e9:.0f} GB/s).")
    if chunks is not None and len(chunks):
        med = _medians(chunks, lambda r: r.params["chunk"] or r.params["size"])
        for f, by_chunk in sorted(med.items()):
            try:
                knee, step = find_knee(by_chunk.items())
            except ValueError:
                continue  # too few chunk sizes of 64KB and up to look for a step
            xs = sorted(by_chunk)
            if step < KNEE_CLEAR_STEP:
                lines.append(f"{f}: no clear step in rate with chunk size up to "
                             f"{format_size(xs[-1])} (whole region: {by_chunk[xs[-1]] / 1e9:.1f} GB/s).")
                continue
            below = max(x for x in xs if x < knee)
            where = (f"{format_size(knee)} chunks and up clear {step:.1f}x as fast as smaller "
                     f"ones ({by_chunk[knee] / 1e9:.1f} vs {by_chunk[below] / 1e9:.1f} GB/s at "
                     f"{format_size(below)}), over a {format_size(chunk_size)} region")
            if llc and llc // 2 <= knee <= 2 * llc and below >= llc // 4:
                # The seeds' threshold: long enough stores stop allocating lines near the LLC size.
                lines.append(f"{f} stops allocating cache lines above ~{format_size(below)} per "
                             f"call here (LLC: {format_size(llc)}): {where}.")
            else:
                lines.append(f"{f}: the rate steps up at {format_size(knee)} per call: {where}.")
    if advice is not None:
        for row, fits in zip(advice.batch, advice.batch_fits):
            if fits:
                lines.append(f"Within a {row['budget_ms']:g} ms budget between resched points, "
                             f"clear_pages() batches of {format_size(row['batch_bytes'])} with "
                             f"{row['kernel']} clear fastest ({row['bytes_per_sec'] / 1e9:.0f} GB/s, "
                             f"worst batch {row['worst_ms']:.2f} ms).")
            else:
                lines.append(f"No batch measured stays within {row['budget_ms']:g} ms here.")
    return lines


def report(out_dir=None, scale="full", functions=None, progress=None):
    """Run the default study and write the report folder; returns its path.

    Refuses a folder that already holds a report. Ctrl-C stops the study,
    and the report is written from what was measured, saying so.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown report scale {scale!r} (expected {', '.join(SCALES)})")
    cfg = SCALES[scale]
    if out_dir is None:
        out_dir = "pagezero-report-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if os.path.exists(os.path.join(out_dir, "report.md")):
        raise ValueError(f"{out_dir} already holds a report; choose another folder")
    os.makedirs(out_dir, exist_ok=True)

    info = machine()
    available = [k.name for k in kernels("clear") if k.available]
    functions = list(functions) if functions else available
    start = time.monotonic()
    interrupted = False

    extent_list = cfg["extents"] or default_sizes(info)
    extents = _run_points("memset", _extent_points(extent_list, functions),
                          cfg["repeat"], cfg["warmup"])
    extents.save(os.path.join(out_dir, "extents.json"))
    interrupted = extents.interrupted

    chunks = None
    if not interrupted:
        chunk_size = cfg["chunk_size"]
        chunk_list = cfg["chunks"] or [1 << s for s in range(12, chunk_size.bit_length())]
        chunk_functions = [f for f in cfg["chunk_kernels"] if f in available] or available[:1]
        chunks = sweep("memset", {"function": chunk_functions, "size": [chunk_size],
                                  "chunk": chunk_list, "loops": [cfg["chunk_loops"]]},
                       repeat=cfg["repeat"], warmup=cfg["warmup"], progress=progress)
        chunks.save(os.path.join(out_dir, "chunks.json"))
        interrupted = chunks.interrupted

    advice = None
    if not interrupted:
        try:
            advice = advise(quick=scale != "full")
        except KeyboardInterrupt:
            interrupted = True
        else:
            _atomic_write(os.path.join(out_dir, "advice.json"),
                          lambda f: json.dump(advice.to_json(), f, indent=1))

    if len(extents):
        plot_rates(extents, os.path.join(out_dir, "extents"),
                   title="Clearing rate by extent (memset, each kernel)")
    if chunks is not None and len(chunks):
        plot_rates(chunks, os.path.join(out_dir, "chunks"),
                   x=lambda r: r.params["chunk"] or r.params["size"], xlabel="chunk per call",
                   title=f"Clearing {format_size(cfg['chunk_size'])} in chunks")
    elapsed = time.monotonic() - start
    summary_lines = _summarize(info, extents, chunks, cfg["chunk_size"], advice)
    _write_markdown(out_dir, info, scale, elapsed, interrupted, summary_lines, extents, chunks,
                    advice)
    return out_dir


def _write_markdown(out_dir, info, scale, elapsed, interrupted, summary_lines, extents, chunks,
                    advice):
    md = [f"# pagezero report: {info['cpu_model']}", ""]
    md.append(f"{datetime.datetime.now():%Y-%m-%d %H:%M}, scale `{scale}`, "
              f"{elapsed:.0f} s of measuring. Rates are medians in GB/s (10^9 bytes/s).")
    if interrupted:
        md += ["", "**Interrupted: this report covers only what was measured before Ctrl-C.**"]
    md += ["", "## Summary", ""] + [f"- {line}" for line in summary_lines]
    md += ["", "## Machine", "", "```"] + summary(info) + ["```"]
    if len(extents):
        med = _medians(extents, extent_of)
        xs = sorted({x for m in med.values() for x in m})
        md += ["", "## Kernels by extent", "",
               f"Each kernel clears an extent in one call, repeatedly; extents under "
               f"{format_size(SMALL_REGION)} are cleared in extent-sized calls over a "
               f"{format_size(SMALL_REGION)} region so the timing clock does not count.", ""]
        md += _markdown_table(med, xs, "extent")
        md += ["", "![rate by extent](extents.png)"]
    if chunks is not None and len(chunks):
        med = _medians(chunks, lambda r: r.params["chunk"] or r.params["size"])
        xs = sorted({x for m in med.values() for x in m})
        md += ["", "## Chunk study", "",
               "One region cleared per loop in chunk-sized calls, as "
               "`perf bench mem memset -k CHUNK`.", ""]
        md += _markdown_table(med, xs, "chunk")
        md += ["", "![rate by chunk](chunks.png)"]
    if advice is not None:
        md += ["", "## Advice", "", "From `pagezero advise`"
               + (" (its quick sweep)" if scale != "full" else "") + ":", "", "```"]
        md += advice.describe() + ["```"]
    md += ["", "## Files", ""]
    md += [f"- `{name}`" for name in sorted(os.listdir(out_dir)) if not name.startswith(".")]
    _atomic_write(os.path.join(out_dir, "report.md"), lambda f: f.write("\n".join(md) + "\n"))
