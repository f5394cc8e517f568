/*
 * policy_run.c - what the two timed policy bindings (bench_batch in
 * batch.c, bench_folio in policy.c) share: the keywords of the measured
 * conditions and what they set up (cold flusher, flush trace), the
 * failure, and the keys every policy result carries (counters,
 * cold_method, flushes, loops_done, interrupted).
 */
#include "counters.h"
#include "policy_bench.h"
#include "pzpy.h"

int pzpy_policy_cond(struct pzpy_policy_run *pr, struct pz_policy_cond *c, char *const *bases,
		     size_t len, size_t cap)
{
	c->cold = pr->cold;
	c->counters = pr->counters;
	c->loops_done = &pr->done;
	pr->failed = PZ_CTR_COUNT;
	c->failed_counter = &pr->failed;
	if (pr->cold && pzpy_cold_flusher(pr->flush, pr->evict_bytes, &c->flush, &pr->evict) < 0)
		return -1;
	if (pr->trace) {
		pr->tr = pzpy_flush_trace_new(bases, len, cap);
		if (!pr->tr)
			return -1;
		c->hook = pzpy_flush_trace_record;
		c->hook_ctx = pr->tr;
	}
	pr->method = pr->cold ? pz_name(&pz_flush_names, c->flush.method) : "";
	return 0;
}

int pzpy_policy_check(struct pzpy_policy_run *pr, int ret, struct pzpy_failure *fail)
{
	fail->failed_counter = pr->counters && pr->failed < PZ_CTR_COUNT ? &pr->failed : NULL;
	return pzpy_timed_check(&pr->timed, ret, fail);
}

static int set_new(PyObject *d, const char *key, PyObject *v)
{
	int ret = v ? PyDict_SetItemString(d, key, v) : -1;

	Py_XDECREF(v);
	return ret;
}

int pzpy_policy_keys(PyObject *d, const struct pzpy_policy_run *pr, const uint64_t *counters)
{
	if (set_new(d, "counters", pzpy_counters_dict(pr->counters ? counters : NULL, pr->done)) <
		    0 ||
	    set_new(d, "cold_method", PyUnicode_FromString(pr->method)) < 0 ||
	    set_new(d, "flushes", pzpy_flush_trace_list(pr->tr)) < 0 ||
	    set_new(d, "loops_done", PyLong_FromUnsignedLong(pr->done)) < 0 ||
	    set_new(d, "interrupted", pzpy_interrupted(pr->timed.sig)) < 0)
		return -1;
	return 0;
}

void pzpy_policy_release(struct pzpy_policy_run *pr)
{
	pzpy_flush_trace_free(pr->tr);
	pr->tr = NULL;
	pz_region_unmap(&pr->evict);
}
