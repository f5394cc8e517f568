"""The pagezero the suite tests: the package that would be imported (installed, editable
or this checkout's), with its C core swapped for a test build of this tree's csrc/ and
arch/, compiled with -DPZ_TEST_SWITCHES so that the PAGEZERO_* test switches work
(csrc/switches.h; a release build has none).

Importing this module does it, so tests/conftest.py imports it before anything imports
pagezero: the test build is compiled into build/test-core/ (cached by a hash of the C
sources, flags, compiler and Python; 10 to 20 s on two cores the first time, nothing
after), the package is mirrored there with symbolic links (edits to its Python show at
once) and the test build in place of _core, and that mirror goes first on sys.path and on
PYTHONPATH, for the processes the tests start (CLI runs, sweep workers, notebooks).
"""

import concurrent.futures
import fcntl
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "build", "test-core")
DEFINE = "-DPZ_TEST_SWITCHES"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def _setup():
    """setup.py, the build's one description, imported without running setuptools."""
    spec = importlib.util.spec_from_file_location("pagezero_setup", os.path.join(ROOT, "setup.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _digest(*parts):
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"building the suite's test core failed:\n{' '.join(cmd)}\n{p.stderr}")


def _new_dir():
    """A directory to fill, then rename into place: a half-made one is never seen."""
    tmp = tempfile.mkdtemp(dir=OUT, prefix="tmp-")
    os.chmod(tmp, 0o755)  # mkdtemp's 0700 would keep other users' runs out
    return tmp


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def build_core():
    """The test build of _core (its path), compiled unless this tree's build is cached."""
    setup = _setup()
    cc = os.environ.get("CC") or "gcc"
    try:
        kind = setup.compiler_kind([cc])
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"the suite's test core needs a C compiler ({cc}): {e}") from None
    # Every flag of its compile commands (BUILD["flags"] records them, as setup.py's do).
    flags = ["-fPIC", *setup.compile_flags(kind), DEFINE]
    macros = [f"-D{name}={value}" for name, value in setup.define_macros(flags)]
    includes = [f"-I{os.path.join(ROOT, d)}" for d in setup.INCLUDE_DIRS]
    includes.append(f"-I{sysconfig.get_paths()['include']}")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    sources = setup.sources(ROOT)
    files = sources + setup.headers(ROOT)
    key = _digest(cc, version, flags, macros, includes, SUFFIX, *files)
    key = _digest(key, *(_read(os.path.join(ROOT, f)) for f in files))
    done = os.path.join(OUT, f"core-{key}")
    core = os.path.join(done, "_core" + SUFFIX)
    if os.path.exists(core):
        return core
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session building the same: wait for it
        if os.path.exists(core):
            return core
        tmp = _new_dir()
        objects = [os.path.join(tmp, src.replace("/", "_") + ".o") for src in sources]
        compile_ = [cc, *flags, *macros, *includes, "-c"]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
            for job in [
                pool.submit(_run, [*compile_, os.path.join(ROOT, src), "-o", obj])
                for src, obj in zip(sources, objects)
            ]:
                job.result()
        _run(
            [cc, "-shared", *objects, *setup.LINK_FLAGS, "-o", os.path.join(tmp, "_core" + SUFFIX)]
        )
        for obj in objects:
            os.remove(obj)
        os.rename(tmp, done)
    return core


def package_source():
    """The directory of the pagezero that would be imported. pytest may have imported it
    already (the pagezero plugin, an entry point, loads before any conftest); a mirror
    made here leads back to its source through its links."""
    module = sys.modules.get("pagezero")
    origin = module.__file__ if module is not None else None
    if origin is None:
        spec = importlib.util.find_spec("pagezero")
        if spec is None or spec.origin is None:
            raise RuntimeError("no pagezero to test: pip install -e . (or the wheel) first")
        origin = spec.origin
    return os.path.dirname(os.path.realpath(origin))


def mirror(source, core):
    """A directory holding pagezero: links to `source`'s files, and `core` as _core."""
    entries = sorted(
        e
        for e in os.listdir(source)
        if e != "__pycache__" and not (e.startswith("_core.") and e.endswith(".so"))
    )
    where = os.path.join(OUT, f"pkg-{_digest(source, core, *entries)}")
    if os.path.isdir(where):
        return where
    tmp = _new_dir()
    os.mkdir(os.path.join(tmp, "pagezero"))
    for e in entries:
        os.symlink(os.path.join(source, e), os.path.join(tmp, "pagezero", e))
    os.symlink(core, os.path.join(tmp, "pagezero", "_core" + SUFFIX))
    try:
        os.rename(tmp, where)
    except OSError:  # another process made the same mirror meanwhile
        shutil.rmtree(tmp)
    return where


def _path_without(path, entry):
    return [p for p in (path or "").split(os.pathsep) if p and p != entry]


SOURCE = package_source()
MIRROR = mirror(SOURCE, build_core())
if "pagezero" in sys.modules and not sys.modules["pagezero"].__file__.startswith(MIRROR + os.sep):
    # Imported by pytest's plugin loading with its release core: dropped, so that every
    # import from here on (the tests', pytester's plugin loading) takes the mirror's.
    for name in [n for n in sys.modules if n == "pagezero" or n.startswith("pagezero.")]:
        del sys.modules[name]
sys.path[:] = [MIRROR, *(p for p in sys.path if p != MIRROR)]
os.environ["PYTHONPATH"] = os.pathsep.join(
    [MIRROR, *_path_without(os.environ.get("PYTHONPATH"), MIRROR)]
)


def release_env(env=None):
    """`env` (os.environ by default) for a process that imports the package under test
    with its own, release, core: the mirror off PYTHONPATH, the package's parent first."""
    env = dict(os.environ if env is None else env)
    rest = _path_without(env.get("PYTHONPATH"), MIRROR)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(SOURCE), *rest])
    return env


def run_check_script(script, cc, opt):
    """tests/c/`script` run with `cc` and setup.py's flags for it at `opt`, Python's CFLAGS
    and CCSHARED first (as setuptools gives them): the completed process."""
    setup = _setup()
    python = shlex.split(sysconfig.get_config_var("CFLAGS") or "")
    python += shlex.split(sysconfig.get_config_var("CCSHARED") or "")
    flags = [*python, *setup.compile_flags(setup.compiler_kind([cc])), opt]
    return subprocess.run(
        ["bash", os.path.join(ROOT, "tests", "c", script), *flags],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, CC=cc),
        timeout=300,
    )
