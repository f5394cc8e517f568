"""The `pagezero-kernels` directive: the kernel table, generated from the registry.

    .. pagezero-kernels::
       :kind: clear

One row per kernel that `pagezero.kernels(kind)` lists on the machine building the
docs (its architecture's arch/*/kernels.def rows, plus the portable ones), with the
flags the registry gives: temporal or non-temporal, zeros only, unit and alignment,
the CPU features it needs, and whether it is clear_pages()'s kernel on that CPU.
"""

from docutils import nodes
from docutils.parsers.rst import Directive, directives

import pagezero

COLUMNS = ("kernel", "arch", "stores", "unit / align", "needs", "what it is")


def _cells(k):
    stores = "temporal" if k.temporal else "non-temporal"
    if k.zero_only:
        stores += ", zeros only"
    if getattr(k, "clear_pages", False):
        stores += ", clear_pages() here"
    return (
        k.name,
        k.arch,
        stores,
        f"{k.unit} / {k.align}",
        ", ".join(k.features) or "-",
        k.description,
    )


def _row(cells, literal_first=True):
    row = nodes.row()
    for i, text in enumerate(cells):
        para = nodes.paragraph()
        para += nodes.literal(text=text) if i == 0 and literal_first else nodes.Text(text)
        row += nodes.entry("", para)
    return row


class KernelTable(Directive):
    option_spec = {"kind": directives.unchanged}

    def run(self):
        kind = self.options.get("kind", "clear")
        table = nodes.table()
        group = nodes.tgroup(cols=len(COLUMNS))
        table += group
        for width in (18, 8, 18, 10, 14, 32):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        head += _row(COLUMNS, literal_first=False)
        body = nodes.tbody()
        for k in pagezero.kernels(kind):
            body += _row(_cells(k))
        group += head
        group += body
        return [table]


def setup(app):
    app.add_directive("pagezero-kernels", KernelTable)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
