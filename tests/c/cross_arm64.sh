#!/usr/bin/env bash
# The arm64 kernels, checked on a machine that is not arm64: cross-build the
# C kernel tests (tests/c/test_kernels.c: the same registry, guard-page and
# canary exactness checks as a native run, every case) for aarch64 and run
# them under user-mode emulation.
#
#   bash tests/c/cross_arm64.sh
#
# It installs nothing. It needs Debian's cross compiler and emulator:
#   apt-get install gcc-aarch64-linux-gnu qemu-user
# (.ci/run installs them when missing, then runs this.)
#
# What runs:
#   1. every kernel, every case, built at -O2 with -Werror, then again with
#      ASan + UBSan, under `qemu-aarch64 -cpu max` (the model with the most
#      features; its DC ZVA block is 512 bytes);
#   2. DC ZVA, STP and STNP again under -cpu a64fx (256-byte DC ZVA block)
#      and -cpu neoverse-n1 (64 bytes, as on most arm64 servers): the rows'
#      unit is the block the CPU reports, so it is tried at three sizes;
#   3. PAGEZERO_HIDE_FEATURES=dczva,mops: those kernels must turn
#      unavailable, with that reason;
#   4. the tsc clock (CNTVCT_EL0) ticks at the rate CNTFRQ_EL0 states
#      (tests/c/test_clock.c); every step links the whole C core (all of
#      csrc/ but module.c, which needs the target's Python headers), built
#      for arm64 with -Werror;
#   5. the MOPS kernels run when the emulator offers FEAT_MOPS (HWCAP2_MOPS).
#      Debian 12's qemu 7.2 offers it with no -cpu model, so there they are
#      reported unavailable, and this script says so. Their .inst words are
#      checked either way: each must disassemble to the instruction its
#      comment in arch/arm64/mops.c names.
#
# The full case set is used: emulated, it takes seconds, not minutes.
#
# Environment: CROSS_CC (default aarch64-linux-gnu-gcc), QEMU (qemu-aarch64),
# SYSROOT (default /usr/aarch64-linux-gnu, where Debian's cross libc lives).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
OBJDUMP=${CROSS_CC%gcc}objdump

missing=()
command -v "$CROSS_CC" >/dev/null || missing+=(gcc-aarch64-linux-gnu)
command -v "$OBJDUMP" >/dev/null || missing+=(binutils-aarch64-linux-gnu)
[ -e "$SYSROOT/include/stdio.h" ] || missing+=(libc6-dev-arm64-cross)
command -v "$QEMU" >/dev/null || missing+=(qemu-user)
if [ ${#missing[@]} -gt 0 ]; then
	# binutils and the libc headers come with gcc-aarch64-linux-gnu (the headers as a Recommends).
	echo "cross_arm64: missing ${missing[*]}; install with (as root):" >&2
	echo "  apt-get update && apt-get install -y gcc-aarch64-linux-gnu qemu-user" >&2
	exit 2
fi

start=$SECONDS
log=build/ctest/cross_arm64.log
clock_log=build/ctest/cross_arm64_clock.log
mkdir -p build/ctest
bin=build/ctest/arm64-normal/test_kernels
qemu_version=$($QEMU --version | head -n1)
fail() {
	echo "cross_arm64: FAIL: $*" >&2
	exit 1
}
emulate() { # emulate <cpu model> <args...>
	local cpu=$1
	shift
	"$QEMU" -cpu "$cpu" -L "$SYSROOT" "$@"
}

# 1. Everything, optimized and sanitized, on the richest CPU model.
for mode in normal sanitize; do
	echo "== arm64 $mode build, qemu -cpu max"
	CC=$CROSS_CC TARGET_ARCH=arm64 RUN="$QEMU -cpu max -L $SYSROOT" EXTRA_CFLAGS=-Werror \
		bash tests/c/build.sh "$mode" | tee "$log"
	grep -q '^ok   fill arm64-stp ' "$log" || fail "arm64-stp did not run"
done

# 2. Other DC ZVA block sizes.
for cpu in a64fx neoverse-n1; do
	echo "== qemu -cpu $cpu: DC ZVA block of $cpu"
	emulate "$cpu" "$bin" arm64-dc-zva arm64-stp arm64-stnp | grep -v '^registry:' |
		tee build/ctest/cross_arm64_$cpu.log
	grep -q '^ok   fill arm64-dc-zva ' build/ctest/cross_arm64_$cpu.log ||
		fail "arm64-dc-zva did not run under -cpu $cpu"
done

# 3. Hidden features make kernels unavailable, named by their cpuinfo-style names.
echo "== PAGEZERO_HIDE_FEATURES=dczva,mops"
hidden=$(PAGEZERO_HIDE_FEATURES=dczva,mops emulate max "$bin" arm64-dc-zva arm64-mops arm64-mops-nt)
echo "$hidden" | grep '^SKIP'
echo "$hidden" | grep -q '^SKIP fill arm64-dc-zva: this CPU lacks dczva$' ||
	fail "hiding dczva did not make arm64-dc-zva unavailable"
echo "$hidden" | grep -q '^SKIP fill arm64-mops: this CPU lacks mops' ||
	fail "hiding mops did not make arm64-mops unavailable"

# 4. The tsc clock. (Step 1 already built all of the C core but module.c
# for arm64 with -Werror: build.sh links every test with it.)
echo "== tsc clock (CNTVCT_EL0 against CNTFRQ_EL0)"
TEST=clock CC=$CROSS_CC TARGET_ARCH=arm64 RUN="$QEMU -cpu max -L $SYSROOT" EXTRA_CFLAGS=-Werror \
	bash tests/c/build.sh normal | tee "$clock_log"
# Every arm64 CPU lets user space read the counter: each check must say "ok" (a
# SKIP here would be a clock that went missing, and exits 0). A log of its own: the
# kernels' log is read again below, for MOPS.
grep -q '^ok ' "$clock_log" || fail "test_clock printed no ok line"
! grep -qv '^ok ' "$clock_log" || fail "test_clock: $(grep -v '^ok ' "$clock_log" | head -n1)"

# 5. MOPS: each .inst word must be the instruction its comment names.
echo "== MOPS encodings (arch/arm64/mops.c .inst words vs $OBJDUMP)"
disasm=$("$OBJDUMP" -d "$bin")
words=0
while read -r word insn; do
	# No early exit in awk: under pipefail, echo would die of SIGPIPE on a large disassembly.
	got=$(echo "$disasm" | awk -v w="${word#0x}" '$2 == w && !seen { $1 = ""; $2 = ""; print; seen = 1 }' |
		tr -s ' \t' ' ' | sed 's/^ //')
	want=$(echo "$insn" | tr -s ' ' ' ')
	[ "$got" = "$want" ] || fail ".inst $word is \"$got\", its comment says \"$want\""
	echo "  $word  $got"
	words=$((words + 1))
done < <(sed -n 's|.*\.inst \(0x[0-9a-f]*\).*/\* \(.*\) \*/.*|\1 \2|p' arch/arm64/mops.c)
[ "$words" -eq 12 ] || fail "found $words .inst words in arch/arm64/mops.c, expected 12"

if grep -q '^cpu features:.*mops' "$log"; then
	grep -q '^ok   fill arm64-mops ' "$log" && grep -q '^ok   fill arm64-mops-nt ' "$log" ||
		fail "the emulator offers mops but the MOPS kernels did not pass"
	mops="arm64-mops and arm64-mops-nt ran under emulation"
else
	grep -q '^SKIP fill arm64-mops: this CPU lacks mops (' "$log" ||
		fail "no FEAT_MOPS here, yet arm64-mops was not reported unavailable with the reason"
	mops="$qemu_version offers no FEAT_MOPS (-cpu max has the most features):"
	mops+=" arm64-mops and arm64-mops-nt were reported unavailable and did not run:"
	mops+=" $(sed -n 's/^SKIP fill arm64-mops: //p' "$log")"
fi

echo "cross_arm64: ok in $((SECONDS - start))s; $mops"
