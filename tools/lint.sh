#!/usr/bin/env bash
# The linters, CI's first step (.ci/run) and contributors' (.pre-commit-config.yaml
# runs the same checks on each commit):
#
#   bash tools/lint.sh
#
#   ruff check           pyproject.toml [tool.ruff]: E, W, F, I, B, UP at 100 columns
#   ruff format --check  the same line length, ruff's default style
#   clang-format         .clang-format, on csrc/, arch/ and tests/c/ (--dry-run -Werror)
#   vermin               tools/vermin.ini: nothing needs a Python newer than the floor
#                        pyproject's requires-python states (3.10)
#   lint-imports         pyproject.toml [tool.importlinter]: each layer of pagezero/ imports
#                        only the layers below it (import-linter reads the source, imports
#                        nothing)
#
# Every check runs, and the status is 1 if any failed. ruff, vermin and import-linter are pinned and
# installed from PyPI into build/venv-lint; clang-format is Debian's (installed with
# apt-get when missing, as root), the version .pre-commit-config.yaml pins too.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=build/venv-lint
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q ruff==0.17.6 vermin==1.9.2 import-linter==2.17
export PATH=$PWD/$venv/bin:$PATH
if ! command -v clang-format >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		-o DPkg::Lock::Timeout=300 clang-format
fi

failed=()
check() { # check <name> <command...>
	local name=$1
	shift
	echo "+ $*" >&2
	"$@" || failed+=("$name")
}
# clang-format on each file, naming those that would change (its own output lists every
# change, thousands of lines on an unformatted tree); the first change is shown.
clang_format_check() {
	local f bad=()
	for f in "$@"; do
		clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
	done
	[ ${#bad[@]} -eq 0 ] && return 0
	echo "clang-format: ${#bad[@]} of $# files would change (clang-format -i FILE...): ${bad[*]}" >&2
	clang-format --dry-run --ferror-limit=1 "${bad[0]}" 2>&1 | head -n 8 >&2
	return 1
}

shopt -s nullglob
c_sources=(csrc/*.[ch] csrc/py/*.[ch] arch/*/*.[ch] tests/c/*.[ch])
shopt -u nullglob

check "ruff check" ruff check --output-format concise .
check "ruff format" ruff format --check --output-format concise .
check clang-format clang_format_check "${c_sources[@]}"
check vermin vermin --config-file tools/vermin.ini pagezero tests benchmarks setup.py
# From the checkout's root, so that the graph is of this checkout's pagezero/.
check "lint-imports" env PYTHONPATH="$PWD" lint-imports --no-cache

if [ ${#failed[@]} -gt 0 ]; then
	echo "lint: failed: ${failed[*]}" >&2
	exit 1
fi
echo "lint: ok"
