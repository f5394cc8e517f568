#!/usr/bin/env bash
# The arm64 kernels, checked on a machine that is not arm64: cross-build the
# C kernel tests (tests/c/test_kernels.c: the same registry, guard-page and
# canary exactness checks as a native run, every case) for aarch64 and run
# them under user-mode emulation.
#
#   bash tests/c/cross_arm64.sh
#
# It installs nothing on the machine. It needs Debian's cross compiler:
#   apt-get install gcc-aarch64-linux-gnu
# (.ci/run installs it when missing, then runs this), and an emulator with
# FEAT_MOPS: Debian 13's qemu-user (10.0) offers it under -cpu max, Debian 12's
# (7.2) does not. So it fetches trixie's qemu-user with apt, under a source
# list, state and cache of its own in build/qemu-trixie/ (the machine's apt
# configuration is not touched), takes qemu-aarch64 (static) out of it with
# dpkg-deb, and keeps it there: a second run fetches nothing. Where that
# package cannot be had (no network), it falls back to the machine's
# qemu-aarch64 (apt-get install qemu-user) and says in the log that the MOPS
# rows did not run.
#
# What runs:
#   1. every kernel, every case, built at -O2 with -Werror, then again with
#      ASan + UBSan, under `qemu-aarch64 -cpu max` (the model with the most
#      features; its DC ZVA block is 512 bytes);
#   2. DC ZVA, STP and STNP again under -cpu a64fx (256-byte DC ZVA block)
#      and -cpu neoverse-n1 (64 bytes, as on most arm64 servers): the rows'
#      unit is the block the CPU reports, so it is tried at three sizes;
#   3. PAGEZERO_HIDE_FEATURES=dczva,mops: those kernels must turn
#      unavailable, with that reason; and clear_page()'s row follows what is
#      left, as arch/arm64/lib/clear_page.S does: arm64-mops-nt with MOPS,
#      arm64-dc-zva without, arm64-stnp without either;
#   4. the tsc clock (CNTVCT_EL0) ticks at the rate CNTFRQ_EL0 states
#      (tests/c/test_clock.c), and cold mode flushes with DC CIVAC, keeping the
#      data (tests/c/test_cache.c); every step links the whole C core (all of
#      csrc/ but module.c, which needs the target's Python headers), built
#      for arm64 with -Werror;
#   5. no clear kernel has a dmb ishst, and the folio replays have one per folio
#      (tests/c/check_barriers.sh);
#   6. the MOPS kernels: with trixie's emulator they must have run (FEAT_MOPS,
#      HWCAP2_MOPS), or this fails. Their .inst words are checked either way:
#      each must disassemble to the instruction its comment in
#      arch/arm64/mops.c names.
#
# The full case set is used: emulated, it takes seconds, not minutes.
#
# Environment: CROSS_CC (default aarch64-linux-gnu-gcc), QEMU (an emulator to
# use instead of fetching one; the MOPS rows are then required only if it
# offers FEAT_MOPS), SYSROOT (default /usr/aarch64-linux-gnu, where Debian's
# cross libc lives), DEBIAN_MIRROR (default: the machine's own Debian mirror,
# from /etc/apt/sources.list.d/, else http://deb.debian.org/debian).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
OBJDUMP=${CROSS_CC%gcc}objdump

# The Debian mirror this machine's apt already uses: a URIs line of a deb822
# .sources file, or a one-line deb entry, for the main archive (not -security).
debian_mirror() {
	local url=${DEBIAN_MIRROR:-}
	[ -n "$url" ] || url=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		sed -n 's|^URIs:[[:space:]]*\([^[:space:]]*/debian\)/*[[:space:]]*$|\1|p' | head -n1)
	[ -n "$url" ] || url=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -n 's|^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*/debian\)/*[[:space:]].*|\2|p' |
		head -n1)
	echo "${url:-http://deb.debian.org/debian}"
}

# trixie's qemu-user, fetched once into build/qemu-trixie/ with apt's own
# directories there; prints the qemu-aarch64 path, or fails (the caller falls back).
trixie_qemu() {
	local dir=$root/build/qemu-trixie bin deb
	bin=$dir/root/usr/bin/qemu-aarch64
	if [ ! -x "$bin" ]; then
		command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || return 1
		local apt=(apt-get -q -o "Dir::Etc::sourcelist=$dir/etc/sources.list"
			-o Dir::Etc::sourceparts=- -o "Dir::State=$dir/state"
			-o "Dir::State::status=$dir/state/status" -o "Dir::Cache=$dir/cache"
			-o APT::Sandbox::User=root)
		mkdir -p "$dir/etc" "$dir/state/lists/partial" "$dir/cache/archives/partial" "$dir/deb"
		: >"$dir/state/status" # no packages installed, as far as this apt knows
		# Trixie's Release is signed by keys that Debian 12's keyring holds.
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) trixie main" \
			>"$dir/etc/sources.list"
		if ! compgen -G "$dir/deb/qemu-user_*.deb" >/dev/null; then
			"${apt[@]}" update >&2 || return 1
			# In trixie qemu-user holds the static binaries (qemu-user-static is a transitional package).
			(cd "$dir/deb" && "${apt[@]}" download qemu-user >&2) || return 1
		fi
		deb=$(compgen -G "$dir/deb/qemu-user_*.deb" | head -n1)
		# The one binary, not dpkg-deb -x's whole package: 465 MB of emulators for one 16 MB file.
		mkdir -p "$dir/root"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/root" ./usr/bin/qemu-aarch64 || return 1
	fi
	"$bin" --version >/dev/null 2>&1 || return 1
	echo "$bin"
}

require_mops=0
mops_note=""
if [ -n "${QEMU:-}" ]; then
	mops_note="QEMU=$QEMU given"
elif QEMU=$(trixie_qemu); then
	require_mops=1
else
	QEMU=qemu-aarch64
	mops_note="trixie's qemu-user could not be fetched (no network?): fell back to this machine's emulator"
	echo "cross_arm64: $mops_note; the MOPS rows need FEAT_MOPS, which Debian 12's qemu lacks" >&2
fi

missing=()
command -v "$CROSS_CC" >/dev/null || missing+=(gcc-aarch64-linux-gnu)
command -v "$OBJDUMP" >/dev/null || missing+=(binutils-aarch64-linux-gnu)
[ -e "$SYSROOT/include/stdio.h" ] || missing+=(libc6-dev-arm64-cross)
command -v "$QEMU" >/dev/null || missing+=(qemu-user)
if [ ${#missing[@]} -gt 0 ]; then
	# binutils and the libc headers come with gcc-aarch64-linux-gnu (the headers as a Recommends).
	echo "cross_arm64: missing ${missing[*]}; install with (as root):" >&2
	echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
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

# clear_page()'s row, as arch/arm64/lib/clear_page.S picks it: MOPS, else DC ZVA, else STNP.
echo "== clear_page()'s kernel, by the features left"
if grep -q '^cpu features:.*mops' "$log"; then full=arm64-mops-nt; else full=arm64-dc-zva; fi
for case in ":$full" "dczva:${full/arm64-dc-zva/arm64-stnp}" "mops:arm64-dc-zva" "dczva,mops:arm64-stnp"; do
	hide=${case%%:*} want=${case#*:}
	got=$(PAGEZERO_HIDE_FEATURES=$hide emulate max "$bin" no-kernel | sed -n 's/^clear_pages: //p')
	echo "  hidden: ${hide:-nothing}  clear_pages: $got"
	[ "$got" = "$want" ] || fail "with ${hide:-nothing} hidden clear_pages is \"$got\", want $want"
done

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

# Cold mode's flush: DC CIVAC offered and chosen, and no method loses data (tests/c/test_cache.c).
echo "== cache flush (DC CIVAC at EL0)"
TEST=cache CC=$CROSS_CC TARGET_ARCH=arm64 RUN="$QEMU -cpu max -L $SYSROOT" EXTRA_CFLAGS=-Werror \
	bash tests/c/build.sh normal | tee build/ctest/cross_arm64_cache.log
grep -q '^best: dc-civac$' build/ctest/cross_arm64_cache.log || fail "cold mode does not flush with DC CIVAC"

# 5. The fault path's barrier, dmb ishst, once per folio in the replays, in no kernel (csrc/kernels.h).
echo "== barriers (tests/c/check_barriers.sh)"
CC=$CROSS_CC OBJDUMP=$OBJDUMP bash tests/c/check_barriers.sh -O3 -Werror ||
	fail "a dmb ishst in a clear kernel, or not once per folio in a replay"

# 6. MOPS: each .inst word must be the instruction its comment names.
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
	mops="arm64-mops and arm64-mops-nt ran under $qemu_version"
	mops+=": $(grep -E '^ok   fill arm64-mops(-nt)? ' "$log" | sed 's/^ok   fill \([^ ]*\) .*): /\1 /' |
		paste -sd';' - | sed 's/;/; /g')"
else
	[ $require_mops = 0 ] ||
		fail "$qemu_version (trixie's) offers no FEAT_MOPS under -cpu max: the MOPS rows did not run"
	grep -q '^SKIP fill arm64-mops: this CPU lacks mops (' "$log" ||
		fail "no FEAT_MOPS here, yet arm64-mops was not reported unavailable with the reason"
	mops="$qemu_version offers no FEAT_MOPS (-cpu max has the most features):"
	mops+=" arm64-mops and arm64-mops-nt were reported unavailable and DID NOT RUN"
	mops+="${mops_note:+ ($mops_note)}: $(sed -n 's/^SKIP fill arm64-mops: //p' "$log")"
fi

echo "cross_arm64: ok in $((SECONDS - start))s; $mops"
