#!/usr/bin/env bash
# Mutation testing: how many planted bugs the tests catch. Not in CI (tens of minutes).
#
#   bash tools/mutation.sh [python|c|all]      (default all)
#
# python: mutmut (pip install mutmut) mutates the modules that decide numbers (units,
#   stats, comparison and significance, results, advise_ties and advise_choices, and
#   the words of the advice and the report: advice_text, report/words) and runs the
#   tests of each against every mutant, in a copy of this checkout
#   (build/mutation/python: mutmut is configured there, in a setup.cfg of its own, so
#   pyproject.toml stays as it is). Prints mutmut's summary; `mutmut results`
#   in that folder lists the survivors. MUTMUT_CHILDREN (default 1) test processes.
# c: the mutants of C_MUTANTS below, each a one-line change to a timed loop of
#   csrc/mem_bench.c (where the clock starts and stops, the head and tail of a chunk,
#   the threads' split, where the flush goes). Each is built into a copy of the
#   checkout (build/mutation/c), extension and C tests, and the tests of the timed
#   loops run against it: the C tests of mem_bench (test_mem, test_mem_tail) plainly,
#   then the Python tests of the benchmarks (test_timed_spans counts the spans a pass
#   sums through a clock that advances one step per reading,
#   $PAGEZERO_FAKE_CLOCK_STEP_NS). A mutant the tests let pass is printed as SURVIVED.
#   The unchanged copy is run first the same way, and must pass: else every mutant
#   would look killed.
#
# Needs the build tools of a checkout (gcc, setuptools >= 77) and the test extra.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
out=$root/build/mutation
python=${PYTHON:-python3}

copy_checkout() { # copy_checkout <dir>: this checkout's tracked files, as committed
	rm -rf "$1"
	mkdir -p "$1"
	git -C "$root" archive HEAD | tar -x -C "$1"
}

# The modules that decide numbers; MUTATE="pagezero/units.py ..." picks some of them.
MODULES="pagezero/units.py pagezero/analysis/compare.py pagezero/analysis/significance.py
pagezero/results/resultset.py pagezero/results/result.py pagezero/studies/advise/ties.py pagezero/studies/advise/choices.py
pagezero/studies/advise/text.py pagezero/studies/report/words.py"

run_python_mutants() {
	local dir=$out/python modules=${MUTATE:-$MODULES}
	copy_checkout "$dir"
	cp "$root"/pagezero/_core*.so "$dir/pagezero/"
	cat >"$dir/setup.cfg" <<-CFG
		[mutmut]
		source_paths=pagezero
		only_mutate=
		$(printf '    %s\n' $modules)
		pytest_add_cli_args_test_selection=
		    tests/test_units.py
		    tests/test_stats.py
		    tests/test_properties.py
		    tests/test_comparison_and_plots.py
		    tests/test_compare_runs.py
		    tests/test_resultset.py
		    tests/test_results_schema.py
		    tests/test_golden_results.py
		    tests/test_result_values.py
		    tests/test_rates_as_time.py
		    tests/test_advise_ties.py
		    tests/test_advise_range.py
		    tests/test_advise.py
		    tests/test_advice_rules.py
		    tests/test_significance_rules.py
		    tests/test_comparison_table.py
		    tests/test_result_rules.py
		    tests/test_comparison_rows.py
		    tests/test_results_file_rules.py
		    tests/test_report_words.py
		    tests/test_report_cells.py
		pytest_add_cli_args=
		    -q
		    -p
		    no:cacheprovider
		    -x
		    -n
		    0
		also_copy=
		    tests
		    benchmarks
		    notebooks
	CFG
	# One test process at a time unless MUTMUT_CHILDREN says otherwise: mutmut (3.x)
	# takes this only on its command line, not from setup.cfg, and would start one per core.
	(cd "$dir" && mutmut run --max-children "${MUTMUT_CHILDREN:-1}" &&
		mutmut results --all true >"$out/python-mutants.txt" || true)
	# Per module: total, killed, and the rest (survived, no tests, timeout...) as survivors.
	awk -F': ' '{ split($1, name, ".x"); m = name[1]; gsub(/ /, "", m); total[m]++ }
		$2 == "killed" { killed[m]++ } $2 != "killed" { print > "/dev/stderr" }
		END { for (m in total) printf "mutation: %s: %d mutants, %d killed, %d survived\n",
			m, total[m], killed[m], total[m] - killed[m] }' \
		"$out/python-mutants.txt" 2>"$out/python-survivors.txt" | sort
	echo "mutation: python survivors listed in $out/python-survivors.txt"
}

# file|what|the line as it is (a fixed string)|the line as mutated
C_MUTANTS=(
	'csrc/mem_bench.c|hot pass: clock started after the chunks|	*t1 = pz_clock_read(&w->clock);|	*t0 = pz_clock_read(&w->clock); *t1 = pz_clock_read(&w->clock);'
	'csrc/mem_bench.c|cold pass: clock started before the flush (at the last stop)|		t0 = pz_clock_read(&w->clock);|		t0 = off ? t1 : pz_clock_read(&w->clock);'
	'csrc/mem_bench.c|cold pass: only the last chunk summed|		*sum += t1 - t0;|		*sum = t1 - t0;'
	'csrc/mem_bench.c|cold pass: no flush|		pz_flush(&p->flush, d, len);|		;'
	'csrc/mem_bench.c|hot chunks: the tail called with a whole chunk|		size_t len = PZ_MIN(chunk, size - off);|		size_t len = chunk;'
	'csrc/mem_bench.c|hot chunks: the last chunk left out|	for (off = 0; off < size; off += chunk) {|	for (off = 0; off + chunk < size; off += chunk) {'
	'csrc/mem_bench.c|head and tail: whole units decided without the length|	return !((uintptr_t)dst & (k->align - 1)) && !(chunk & mask) && !(len & mask);|	return !((uintptr_t)dst & (k->align - 1)) && !(chunk & mask);'
	'csrc/mem_bench.c|thread split: the last part not given the rest|	return t + 1 < p->threads ? part : p->size - part * (p->threads - 1);|	return part;'
	'csrc/mem_bench.c|thread split: parts not page-aligned|	part = p->size / p->threads & ~(size_t)(PZ_PART_ALIGN - 1);|	part = p->size / p->threads;'
)

c_tests() { # c_tests <dir>: build the copy in <dir> and run the timed loops' tests
	(cd "$1" && "$python" setup.py -q build_ext --inplace >build.log 2>&1) || return 2
	(cd "$1" && TEST=mem bash tests/c/build.sh normal >c.log 2>&1) &&
		(cd "$1" && TEST=mem_tail bash tests/c/build.sh normal >>c.log 2>&1) &&
		(cd "$1" && PYTHONPATH=$1 "$python" -m pytest -q -x -p no:cacheprovider \
			tests/test_conditions.py tests/test_bench_api.py tests/test_rates_as_time.py \
			tests/test_perf_transcript.py tests/test_timed_spans.py >py.log 2>&1)
}

run_c_mutants() {
	local dir=$out/c killed=0 total=0 m file what from to status
	copy_checkout "$dir"
	c_tests "$dir" || {
		echo "mutation: the unchanged checkout fails its tests: see $dir/*.log" >&2
		exit 1
	}
	for m in "${C_MUTANTS[@]}"; do
		IFS='|' read -r file what from to <<<"$m"
		total=$((total + 1))
		copy_checkout "$dir"
		# Exactly one line must match: a mutant that changes nothing proves nothing.
		if [ "$(grep -cxF -- "$from" "$dir/$file")" != 1 ]; then
			echo "mutation: C $total ($what): the line is not in $file once: fix the list" >&2
			exit 1
		fi
		"$python" - "$dir/$file" "$from" "$to" <<-'PY'
			import sys
			path, old, new = sys.argv[1], sys.argv[2], sys.argv[3].replace("\&", "&")
			text = open(path).read().split("\n")
			text = [new if line == old.replace("\&", "&") else line for line in text]
			open(path, "w").write("\n".join(text))
		PY
		status=0
		c_tests "$dir" || status=$?
		case $status in
		0) echo "mutation: C $total SURVIVED: $what" ;;
		2) echo "mutation: C $total killed (does not build): $what" ;;
		*) echo "mutation: C $total killed: $what" ;;
		esac
		[ $status = 0 ] || killed=$((killed + 1))
	done
	echo "mutation: C mutants killed: $killed of $total"
}

case $what in
python) run_python_mutants ;;
c) run_c_mutants ;;
all)
	run_c_mutants
	run_python_mutants
	;;
*)
	echo "usage: bash tools/mutation.sh [python|c|all]" >&2
	exit 2
	;;
esac
