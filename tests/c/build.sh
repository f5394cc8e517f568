#!/usr/bin/env bash
# Build and run one of the C-level tests (no Python involved).
#
#   bash tests/c/build.sh [normal|sanitize] [test args...]
#
# Environment:
#   TEST         which test: kernels (default), clock, fault, policy, mem, mem_tail or stats,
#                i.e. tests/c/test_$TEST.c, linked with the whole C core
#                (csrc/*.c but module.c) and the kernels of the target arch
#   CC           compiler (default gcc); a cross compiler selects its arch
#   TARGET_ARCH  arch/ directory to build (default: from `$CC -dumpmachine`); it
#                must match the compiler's target, since csrc/kernels.c picks
#                the .def rows by predefined macros (__x86_64__, ...)
#   RUN          prefix to run the binary, e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu"
#   EXTRA_CFLAGS appended to the compiler flags
#   CORE_DIR     a directory to build the C core into once, as an archive per arch,
#                mode and flags, and to link each test against from then on (the
#                pytest session's: tests/test_c_core.py); unset, the core is compiled
#                with each test, as before
#
# The kernels are every arch/generic/*.c plus every arch/$TARGET_ARCH/*.c (and
# *.S), so new kernel files are picked up without touching this script.
set -euo pipefail

mode=${1:-normal}
[ $# -gt 0 ] && shift
case $mode in
normal | sanitize) ;;
*)
	echo "usage: bash tests/c/build.sh [normal|sanitize] [test args...]" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

CC=${CC:-gcc}
if [ -z "${TARGET_ARCH:-}" ]; then
	machine=$($CC -dumpmachine 2>/dev/null || uname -m)
	case $machine in
	x86_64* | amd64*) TARGET_ARCH=x86 ;;
	aarch64* | arm64*) TARGET_ARCH=arm64 ;;
	*) TARGET_ARCH=generic ;;
	esac
fi

TEST=${TEST:-kernels}
test_src=tests/c/test_$TEST.c
if [ ! -f "$test_src" ]; then
	echo "build.sh: no $test_src (TEST is one of: kernels clock fault policy mem mem_tail stats)" >&2
	exit 2
fi

shopt -s nullglob
sources=()
for f in csrc/*.c; do
	[ "$f" = csrc/module.c ] || sources+=("$f") # module.c is the Python binding
done
sources+=(arch/generic/*.c arch/generic/*.S)
if [ "$TARGET_ARCH" != generic ]; then
	if [ -d "arch/$TARGET_ARCH" ]; then
		sources+=(arch/"$TARGET_ARCH"/*.c arch/"$TARGET_ARCH"/*.S)
	else
		echo "build.sh: no arch/$TARGET_ARCH, building the generic kernels only" >&2
	fi
fi
shopt -u nullglob

# PZ_TEST_SWITCHES: the tests set the core's PAGEZERO_* test switches (csrc/switches.h),
# which a release build leaves out.
cflags=(-O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -pthread -fno-tree-loop-distribute-patterns
	-DPZ_TEST_SWITCHES -Icsrc -Iarch)
if [ "$mode" = sanitize ]; then
	cflags+=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
fi
# shellcheck disable=SC2206
cflags+=(${EXTRA_CFLAGS:-})

outdir=build/ctest/$TARGET_ARCH-$mode
mkdir -p "$outdir"
bin=$outdir/test_$TEST

if [ -n "${CORE_DIR:-}" ]; then
	# The core once per arch, mode and flags (the archive's name says which), every
	# object kept by --whole-archive as when the sources are named on the command line.
	key=$(echo "$CC ${cflags[*]}" | cksum | cut -d' ' -f1)
	lib=$CORE_DIR/libpzcore-$TARGET_ARCH-$mode-$key.a
	if [ ! -f "$lib" ]; then
		objdir=$(mktemp -d "$CORE_DIR/obj.XXXXXX")
		objs=()
		for src in "${sources[@]}"; do
			obj=$objdir/$(echo "$src" | tr / _).o
			objs+=("$obj")
			$CC "${cflags[@]}" -c -o "$obj" "$src" &
		done
		echo "+ $CC ${cflags[*]} -c ${sources[*]} (into $lib)" >&2
		failed=0
		for job in $(jobs -p); do wait "$job" || failed=1; done
		[ $failed = 0 ] || exit 1
		ar rcs "$lib.tmp" "${objs[@]}" && mv "$lib.tmp" "$lib"
	fi
	echo "+ $CC ${cflags[*]} -o $bin $test_src $lib -lm" >&2
	$CC "${cflags[@]}" -o "$bin" "$test_src" -Wl,--whole-archive "$lib" -Wl,--no-whole-archive -lm
else
	echo "+ $CC ${cflags[*]} -o $bin $test_src ${sources[*]} -lm" >&2
	$CC "${cflags[@]}" -o "$bin" "$test_src" "${sources[@]}" -lm
fi

if [ "$mode" = sanitize ]; then
	# LeakSanitizer needs ptrace, which qemu-user does not give it.
	if [ -n "${RUN:-}" ]; then
		export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
	else
		export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
	fi
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi

echo "+ ${RUN:+$RUN }$bin $*" >&2
set +e
# shellcheck disable=SC2086
${RUN:-} "$bin" "$@"
status=$?
set -e
exit $status
