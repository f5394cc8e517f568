"""Reading the pages pagezero writes (report.html, the published site) with
html.parser: their tags, headings, tables, and every address they name."""

import re
from html.parser import HTMLParser

# Attributes that make a browser fetch or go somewhere.
ADDRESS_ATTRIBUTES = ("src", "href", "xlink:href", "action", "data", "poster", "srcset")


class Page(HTMLParser):
    """A page's tags (name, attributes), heading texts, tables' header cells, and
    the stack of open elements each table and svg sits in."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.headings = []
        self.tables = []  # per table, its header cells' texts
        self.svg_parents = []  # per svg at the top level of a figure, its parents
        self.table_parents = []
        self._stack = []
        self._heading = None
        self._th = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
            self.table_parents.append(list(self._stack))
        if tag == "svg" and "svg" not in self._stack:
            self.svg_parents.append([t for t in self._stack])
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = ""
        if tag == "th":
            self._th = ""
        self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass
        if re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            self.headings.append(self._heading.strip())
            self._heading = None
        if tag == "th" and self._th is not None:
            self.tables[-1].append(self._th.strip())
            self._th = None

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        if self._heading is not None:
            self._heading += data
        if self._th is not None:
            self._th += data

    def addresses(self):
        """Every address an attribute names, and every url() of inline style."""
        out = [
            (tag, name, value)
            for tag, attrs in self.tags
            for name, value in attrs.items()
            if name in ADDRESS_ATTRIBUTES and value is not None
        ]
        out += [
            (tag, "style", v)
            for tag, attrs in self.tags
            for v in [attrs.get("style") or ""]
            if "url(" in v
        ]
        return out


def external(address):
    """Whether a page fetching `address` would reach outside itself."""
    return not address.startswith("#")
