#!/usr/bin/env bash
# Check that the C loops that must stay loops do: the "generic" kernels
# (arch/generic/kernels.c) and the head/tail byte loops (csrc/kernels.c, inlined into
# pz_kernel_fill and pz_kernel_copy). A compiler that recognises a loop as a memset or
# memcpy replaces it with a call (gcc's loop distribution, clang's loop-idiom
# recognition), and "generic" would then measure glibc. setup.py's KEEP_LOOPS stops
# both; this compiles the two files with the flags given, disassembles them with their
# relocations (objdump -dr: a call out of an object is a relocation against the
# callee), and fails if one of those functions calls or jumps to memset, memcpy or
# memmove (or a _chk variant).
#
#   CC=clang bash tests/c/check_loops.sh FLAGS...
#
# tests/test_c_core.py runs it with the flags setup.py gives each compiler installed
# (gcc; clang where there is one). Prints "N passed, M failed", like the C tests.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
CC=${CC:-gcc}
OBJDUMP=${OBJDUMP:-objdump}
flags=("$@")

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

passed=0
failed=0
check() { # check <object> <function...>
	local obj=$1 fn calls
	shift
	"$OBJDUMP" -dr --no-show-raw-insn "$obj" >"$out/dis"
	for fn in "$@"; do
		# The function's lines: from its "<fn>:" header to the blank line that ends it.
		if ! grep -q "^[0-9a-f]* <$fn>:\$" "$out/dis"; then
			echo "FAIL $fn: not in $obj"
			failed=$((failed + 1))
			continue
		fi
		calls=$(awk -v fn="<$fn>:" '$2 == fn { on = 1; next } /^$/ { on = 0 } on' "$out/dis" |
			grep -E '(^|[^A-Za-z0-9_])_*mem(set|cpy|move)(_chk)?([^A-Za-z0-9_]|$)' || true)
		if [ -n "$calls" ]; then
			echo "FAIL $fn calls memset/memcpy/memmove ($CC ${flags[*]}):"
			echo "$calls"
			failed=$((failed + 1))
		else
			echo "ok   $fn: no memset/memcpy/memmove call"
			passed=$((passed + 1))
		fi
	done
}

# The kernels' own includes, as setup.py and tests/c/build.sh give them.
"$CC" "${flags[@]}" -Icsrc -Iarch -c -o "$out/generic.o" arch/generic/kernels.c
"$CC" "${flags[@]}" -Icsrc -Iarch -c -o "$out/kernels.o" csrc/kernels.c
check "$out/generic.o" pz_fill_generic pz_copy_generic
check "$out/kernels.o" pz_kernel_fill pz_kernel_copy
echo "$passed passed, $failed failed"
[ $failed = 0 ]
