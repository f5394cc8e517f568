#!/usr/bin/env bash
# Build and run one of the C-level tests (no Python involved).
#
#   bash tests/c/build.sh [normal|sanitize|thread] [test args...]
#
# sanitize builds under ASan + UBSan (every finding fatal, leaks included), thread under
# ThreadSanitizer: a data race reported (TSan's exit status, or its "WARNING:
# ThreadSanitizer" on stderr, whatever the status) fails the run. Without TEST, thread
# runs every test that starts threads: $THREAD_TESTS below.
#
# Environment:
#   TEST         which test: kernels (default), cache, clock, fault, policy, mem, mem_tail,
#                stats or team, i.e. tests/c/test_$TEST.c, linked with the whole C core
#                (csrc/*.c but module.c) and the kernels of the target arch
#   CC           compiler (default gcc; clang works too); a cross compiler selects its arch
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
normal | sanitize | thread) ;;
*)
	echo "usage: bash tests/c/build.sh [normal|sanitize|thread] [test args...]" >&2
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

# The tests that start threads (teams, the fault and memset workloads' threads, stop
# requests from another thread): what the thread mode runs when no TEST is named.
THREAD_TESTS="team mem fault policy"
if [ -n "${TEST:-}" ]; then
	tests=("$TEST")
elif [ "$mode" = thread ]; then
	read -r -a tests <<<"$THREAD_TESTS"
else
	tests=(kernels)
fi
for t in "${tests[@]}"; do
	if [ ! -f "tests/c/test_$t.c" ]; then
		echo "build.sh: no tests/c/test_$t.c (TEST is one of: kernels cache clock fault policy mem mem_tail stats team)" >&2
		exit 2
	fi
done

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
cflags=(-O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -pthread
	-DPZ_TEST_SWITCHES -Icsrc -Iarch)
# C loops stay loops (the generic kernels, the head/tail bytes): gcc's flag, or what stops
# clang's loop-idiom recognition (which warns about gcc's), as setup.py's KEEP_LOOPS.
if $CC -dM -E -x c /dev/null | grep -q '^#define __clang__ '; then
	cflags+=(-fno-builtin-memset -fno-builtin-memcpy -fno-builtin-memmove)
else
	cflags+=(-fno-tree-loop-distribute-patterns)
fi
# shellcheck disable=SC2054 # the commas are -fsanitize's own
case $mode in
sanitize) cflags+=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all) ;;
thread) cflags+=(-fsanitize=thread -fno-omit-frame-pointer) ;;
esac
# shellcheck disable=SC2206
cflags+=(${EXTRA_CFLAGS:-})

outdir=build/ctest/$TARGET_ARCH-$mode
mkdir -p "$outdir"
if [ -z "${CORE_DIR:-}" ] && [ ${#tests[@]} -gt 1 ]; then
	# Several tests: the core built once for them all, in a directory of this run's own
	# (the archive's key says nothing of the sources' contents, so none is kept).
	CORE_DIR=$(mktemp -d "$outdir/core.XXXXXX")
	trap 'rm -rf "$CORE_DIR"' EXIT
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
if [ "$mode" = thread ]; then
	# The first race ends the run with TSan's exit status; the report names both accesses.
	export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1:history_size=4}
fi

build() { # build <test>: tests/c/test_<test>.c linked with the core, into $outdir
	local bin=$outdir/test_$1 key lib objdir objs src obj failed job
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
		echo "+ $CC ${cflags[*]} -o $bin tests/c/test_$1.c $lib -lm" >&2
		$CC "${cflags[@]}" -o "$bin" "tests/c/test_$1.c" -Wl,--whole-archive "$lib" -Wl,--no-whole-archive -lm
	else
		echo "+ $CC ${cflags[*]} -o $bin tests/c/test_$1.c ${sources[*]} -lm" >&2
		$CC "${cflags[@]}" -o "$bin" "tests/c/test_$1.c" "${sources[@]}" -lm
	fi
}

run() { # run <test> [args...]: its exit status; under TSan, 1 also for a race it reported
	local name=$1 bin=$outdir/test_$1 log status
	shift
	echo "+ ${RUN:+$RUN }$bin $*" >&2
	if [ "$mode" != thread ]; then
		set +e
		# shellcheck disable=SC2086
		${RUN:-} "$bin" "$@"
		status=$?
		set -e
		return $status
	fi
	# TSan writes its reports to stderr: kept, passed on, and searched, so that a report
	# fails the run even where the exit status would not say so (exitcode=0 in the
	# caller's TSAN_OPTIONS, a race in a child that exits on its own).
	# Without address randomisation (setarch -R): TSan's fixed shadow layout fails
	# ("unexpected memory mapping") on kernels that randomise mmap with more bits
	# (vm.mmap_rnd_bits 32, as Ubuntu's) than its runtime (gcc 12's) expects.
	local norandom=()
	if [ -z "${RUN:-}" ] && setarch "$(uname -m)" -R true 2>/dev/null; then
		norandom=(setarch "$(uname -m)" -R)
	fi
	log=$(mktemp "$outdir/tsan.XXXXXX")
	set +e
	# shellcheck disable=SC2086
	${RUN:-} "${norandom[@]}" "$bin" "$@" 2>"$log"
	status=$?
	set -e
	cat "$log" >&2
	if grep -q "WARNING: ThreadSanitizer" "$log"; then
		echo "build.sh: ThreadSanitizer reported a race in test_$name (above)" >&2
		[ $status != 0 ] || status=1
	fi
	rm -f "$log"
	return $status
}

status=0
for t in "${tests[@]}"; do
	build "$t"
	run "$t" "$@" || status=$?
	[ $status = 0 ] || break
done
exit $status
