"""A fake sysfs for hugepage pools, for tests (conftest's `fake` fixture) and for the
subprocesses they start, which import it without conftest's imports."""

import pathlib


class FakeKernel:
    """A hugepages-2048kB directory (or another page size's, `page_kb`) whose
    nr_hugepages writes move free_hugepages along, up to `limit` pages (a fragmented
    machine gives fewer than asked)."""

    def __init__(self, root, total=0, free=0, reserved=0, limit=10**6, create=True, page_kb=2048):
        self.dir = pathlib.Path(root) / f"hugepages-{page_kb}kB"
        self.limit = limit
        self.writes = []
        if create:  # else: the tree another process made, as it stands
            self.dir.mkdir(parents=True)
            self.set(total=total, free=free, reserved=reserved)
            (self.dir / "surplus_hugepages").write_text("0\n")

    def set(self, **values):
        for name, v in values.items():
            f = {"total": "nr_hugepages", "free": "free_hugepages", "reserved": "resv_hugepages"}[
                name
            ]
            (self.dir / f).write_text(f"{v}\n")

    def get(self, name):
        f = {"total": "nr_hugepages", "free": "free_hugepages", "reserved": "resv_hugepages"}
        return int((self.dir / f[name]).read_text())

    def write(self, path, value):
        assert path == str(self.dir / "nr_hugepages")
        self.writes.append(value)
        total = self.get("total")
        value = min(value, self.limit)
        self.set(total=value, free=max(0, self.get("free") + value - total))


class FakePages:
    """A kernel with other page sizes than this machine's: `base` bytes for
    sysconf(_SC_PAGESIZE) and a transparent_hugepage/hpage_pmd_size of `pmd`, as arm64
    with 16KB (32MB) or 64KB (512MB) pages has. install() points pagezero at them."""

    def __init__(self, root, base=4096, pmd=2 << 20):
        self.base = base
        self.pmd_file = pathlib.Path(root) / "transparent_hugepage" / "hpage_pmd_size"
        self.pmd_file.parent.mkdir(parents=True, exist_ok=True)
        self.pmd_file.write_text(f"{pmd}\n")

    def install(self, monkeypatch):
        import os

        from pagezero.system import memory

        real = os.sysconf
        monkeypatch.setattr(
            os, "sysconf", lambda name: self.base if name == "SC_PAGE_SIZE" else real(name)
        )
        monkeypatch.setattr(memory, "THP_PMD_SYSFS", str(self.pmd_file))
        return self


class FakeBoot:
    """The files a kernel's boot facts are read from under a fake root: /proc/cmdline, the
    build config as /proc/config.gz (gzipped, as IKCONFIG gives it) or
    /boot/config-<release>, and debugfs's sched/preempt."""

    RELEASE = "6.18.0-fake"

    def __init__(self, root):
        self.root = pathlib.Path(root)

    def _write(self, rel, data):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
        return self

    def cmdline(self, text):
        return self._write("proc/cmdline", text + "\n")

    def config(self, *options, gz=True):
        """CONFIG_X=y lines ("X") and "# CONFIG_X is not set" lines ("!X")."""
        import gzip

        lines = [
            f"# CONFIG_{o[1:]} is not set" if o.startswith("!") else f"CONFIG_{o}=y"
            for o in options
        ]
        text = "\n".join(["# Linux kernel configuration", *lines, ""])
        if gz:
            return self._write("proc/config.gz", gzip.compress(text.encode()))
        return self._write(f"boot/config-{self.RELEASE}", text)

    def debugfs_preempt(self, text):
        return self._write("sys/kernel/debug/sched/preempt", text + "\n")
