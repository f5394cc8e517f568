#!/usr/bin/env bash
# Check where the barrier the kernel's fault path pays after clearing a folio is paid
# (csrc/kernels.h, pz_publish_clear()): once per folio in the replays, never in a kernel
# body, the same rule for temporal and non-temporal rows:
#   arm64   no fill body has a dmb ishst (smp_wmb() is dmb ishst there; memset pays none),
#           and the replays' loops (folio_bench.c folio_loop, batch_bench.c batch_pass)
#           have exactly one, after their last kernel call;
#   x86-64  no fence in a body without non-temporal stores (smp_wmb() is a compiler
#           barrier), and an sfence after the last non-temporal store (movnt*, clzero)
#           in a body with them: those stores are weakly ordered.
# It compiles arch/generic/*.c and arch/<arch>/*.c (and on arm64 the replays) with the
# flags given, disassembles them and reads each pz_fill_* function.
#
#   CC=aarch64-linux-gnu-gcc OBJDUMP=aarch64-linux-gnu-objdump bash tests/c/check_barriers.sh -O2
#
# tests/test_kernels.py runs it natively; tests/c/cross_arm64.sh for arm64. Prints
# "N passed, M failed", like the C tests.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
CC=${CC:-gcc}
OBJDUMP=${OBJDUMP:-objdump}
flags=("$@")
case $($CC -dumpmachine) in
x86_64* | amd64*) arch=x86 ;;
aarch64* | arm64*) arch=arm64 ;;
*)
	echo "check_barriers: no rule for $($CC -dumpmachine)" >&2
	exit 2
	;;
esac

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

passed=0
failed=0
verdict() { # verdict <ok 0|1> <function> <why>
	if [ "$1" = 1 ]; then
		echo "ok   $2: $3"
		passed=$((passed + 1))
	else
		echo "FAIL $2: $3 ($CC ${flags[*]})"
		failed=$((failed + 1))
	fi
}

for src in arch/generic/*.c arch/"$arch"/*.c; do
	obj=$out/$(echo "$src" | tr / _).o
	"$CC" "${flags[@]}" -Icsrc -Iarch -c -o "$obj" "$src"
	"$OBJDUMP" -d --no-show-raw-insn "$obj" >>"$out/dis"
done
if [ $arch = arm64 ]; then
	# The replays: one dmb ishst per folio, after the walk (the call to pz_strategy_order).
	for pair in csrc/folio_bench.c:folio_loop csrc/batch_bench.c:batch_pass; do
		src=${pair%%:*} fn=${pair#*:}
		"$CC" "${flags[@]}" -Icsrc -Iarch -c -o "$out/replay.o" "$src"
		body=$("$OBJDUMP" -d --no-show-raw-insn "$out/replay.o" |
			awk -v fn="$fn" '$2 ~ "^<"fn"[.>]" { on = 1; next } /^$/ { on = 0 }
				on && /^ *[0-9a-f]+:\t/ { split($0, f, "\t"); print f[2], f[3] }')
		n=$(echo "$body" | grep -c '^dmb' || true)
		# The walk (pz_strategy_order) is a call: the barrier must follow it.
		order=$(echo "$body" | awk '/^bl/ && /pz_strategy_order/ { w = NR } /^dmb/ { d = NR }
			END { print (w && d > w) ? 1 : 0 }')
		if [ "$n" = 1 ] && [ "$order" = 1 ]; then
			verdict 1 "$fn" "one dmb ishst, after the walk"
		else
			verdict 0 "$fn" "$n barrier(s), after the walk: $order"
		fi
	done
fi

# One line per instruction of each fill body: "<function> <mnemonic>".
awk '/^[0-9a-f]+ <pz_fill_[A-Za-z0-9_]*>:$/ { fn = substr($2, 2, length($2) - 3); next }
	/^$/ { fn = "" }
	fn != "" && /^ *[0-9a-f]+:\t/ { split($0, f, "\t"); split(f[2], m, " "); print fn, m[1], f[3] }' \
	"$out/dis" >"$out/insns"
functions=$(cut -d' ' -f1 "$out/insns" | sort -u)
[ -n "$functions" ] || {
	echo "FAIL no pz_fill_* function in the disassembly"
	exit 1
}

for fn in $functions; do
	body=$(awk -v fn="$fn" '$1 == fn { $1 = ""; print substr($0, 2) }' "$out/insns")
	if [ $arch = arm64 ]; then
		if [ "$(echo "$body" | grep -c '^dmb')" = 0 ]; then
			verdict 1 "$fn" "no barrier (the replays pay it per folio)"
		else
			verdict 0 "$fn" "a dmb in a kernel body: $(echo "$body" | grep -m1 '^dmb')"
		fi
	else
		nt=$(echo "$body" | grep -cE '^(v?movnt[a-z0-9]*|clzero)( |$)' || true)
		fences=$(echo "$body" | grep -cE '^[slm]fence( |$)' || true)
		if [ "$nt" = 0 ]; then
			if [ "$fences" = 0 ]; then
				verdict 1 "$fn" "temporal, no fence"
			else
				verdict 0 "$fn" "temporal stores, yet $fences fence(s)"
			fi
		else
			last_fence_after_nt=$(echo "$body" | awk '/^(v?movnt|clzero)/ { s = NR } /^sfence/ { f = NR }
				END { print (f > s) ? 1 : 0 }')
			if [ "$last_fence_after_nt" = 1 ]; then
				verdict 1 "$fn" "non-temporal stores, sfence after the last"
			else
				verdict 0 "$fn" "non-temporal stores without an sfence after the last"
			fi
		fi
	fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
