#!/usr/bin/env bash
# Build and run the C-level tests of the clearing policies (no Python involved).
#
#   bash tests/c/build_policy.sh [normal|sanitize]
#
# The same compiler, flags and arch selection as build.sh (CC, TARGET_ARCH,
# RUN, EXTRA_CFLAGS), for tests/c/test_policy.c: the orders of csrc/policy.c
# and the timed loops of csrc/policy_bench.c, on the C core alone.
set -euo pipefail

mode=${1:-normal}
case $mode in
normal | sanitize) ;;
*)
	echo "usage: bash tests/c/build_policy.sh [normal|sanitize]" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

CC=${CC:-gcc}
if [ -z "${TARGET_ARCH:-}" ]; then
	case $($CC -dumpmachine 2>/dev/null || uname -m) in
	x86_64* | amd64*) TARGET_ARCH=x86 ;;
	aarch64* | arm64*) TARGET_ARCH=arm64 ;;
	*) TARGET_ARCH=generic ;;
	esac
fi

shopt -s nullglob
sources=(csrc/cpu.c csrc/kernels.c csrc/region.c csrc/clock.c csrc/policy.c csrc/policy_bench.c csrc/threads.c csrc/cache.c
	csrc/counters.c csrc/numa.c
	arch/generic/*.c arch/generic/*.S)
if [ "$TARGET_ARCH" != generic ] && [ -d "arch/$TARGET_ARCH" ]; then
	sources+=(arch/"$TARGET_ARCH"/*.c arch/"$TARGET_ARCH"/*.S)
fi
shopt -u nullglob

cflags=(-O2 -g -Wall -Wextra -pthread -fno-tree-loop-distribute-patterns -Icsrc -Iarch)
if [ "$mode" = sanitize ]; then
	cflags+=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=$([ -n "${RUN:-}" ] && echo 0 || echo 1)}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
# shellcheck disable=SC2206
cflags+=(${EXTRA_CFLAGS:-})

outdir=build/ctest/$TARGET_ARCH-$mode
mkdir -p "$outdir"
bin=$outdir/test_policy

echo "+ $CC ${cflags[*]} -o $bin tests/c/test_policy.c ${sources[*]}" >&2
$CC "${cflags[@]}" -o "$bin" tests/c/test_policy.c "${sources[@]}"
echo "+ ${RUN:+$RUN }$bin" >&2
# shellcheck disable=SC2086
exec ${RUN:-} "$bin"
