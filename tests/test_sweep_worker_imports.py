"""Where a worker finds a registered benchmark: the folder its top-level
package sits in, also when the run function is defined in a package's
__init__.py (the module is then the package, one folder further down)."""

import sys
import textwrap

import pytest

import pagezero
from pagezero.runs import sweeps

PACKAGE = """
import pagezero

def run(size="64KB", loops=1):
    return pagezero.memset(size=size, loops=loops)[0]
"""


@pytest.fixture
def package_benchmark(tmp_path, monkeypatch):
    """A benchmark defined in tmp_path/pz_pkg_bench/__init__.py, importable
    only through this interpreter's sys.path (as a script's own folder is)."""
    pkg = tmp_path / "pz_pkg_bench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("pz_pkg_bench")
    sweeps.register("pz_pkg_bench", module.run)
    yield tmp_path
    sweeps.BENCHMARKS.pop("pz_pkg_bench", None)
    sys.modules.pop("pz_pkg_bench", None)


def test_a_benchmark_in_a_package_init_runs_in_workers(package_benchmark):
    rs = pagezero.sweep(
        "pz_pkg_bench", {"size": ["64KB"]}, repeat=2, warmup=0, processes=2, progress=False
    )
    assert rs.lost == () and [r["process"] for r in rs.runs] == [0, 1]
    assert all(r.bytes_per_sec > 0 and r.params["size"] == 64 << 10 for r in rs.results)
