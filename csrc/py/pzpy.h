/*
 * pzpy.h - what the files of pagezero._core share: the exceptions, the one
 * function that turns the C core's -errno into one of them, the argument
 * parser and converters, and the builders of Python values from C arrays.
 *
 * Each Python-facing concern (kernels.c, mem.c, fault.c, policy.c,
 * batch.c, system.c, region.c) has its own method table and a
 * pzpy_init_*() that adds it to the module; module.c calls them in turn.
 * What they share: errors.c (exceptions), args.c (parser, converters),
 * conditions.c (cold flushers, pinned CPUs, flush traces), values.c
 * (tuples and dicts from C arrays).
 */
#ifndef PZPY_H
#define PZPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "mem_bench.h"
#include "cache.h"
#include "clock.h"
#include "fault.h"
#include "kernels.h"
#include "policy.h"
#include "region.h"
#include "stop.h"

extern PyObject *pzpy_PagezeroError;
extern PyObject *pzpy_UnavailableError;
extern PyObject *pzpy_MappingError;

/* Below this many bytes, dropping the GIL costs more than it lets others do. */
#define PZPY_GIL_RELEASE_BYTES (64 * 1024)

/* errors.c ---------------------------------------------------------------- */

/*
 * What a failed C call was doing, for pzpy_raise(). Every field is optional:
 * a zeroed context gives PagezeroError("<doing> failed: <strerror>").
 */
struct pzpy_failure {
	const char *doing;              /* "mmap", "mbind", ... */
	size_t bytes;                   /* > 0: a mapping of this many bytes each ... */
	unsigned shift;                 /* ... of 1 << shift pages ... */
	unsigned buffers;               /* ... times this many (0 counts as 1) */
	int memory;                     /* a memory call: MappingError whatever the errno */
	unsigned threads;               /* > 1: -EAGAIN means they could not start */
	const int *cpus;                /* pinned: -EINVAL is sched_setaffinity's */
	const int *node;                /* bound to *node: -EINVAL/-EIO/-EPERM are mbind's */
	const unsigned *failed_counter; /* < PZ_CTR_COUNT: perf_event_open refused it */
	const char *unsupported;        /* the message for -EOPNOTSUPP */
	/*
	 * The step that failed, where the C core says (enum pz_run_stage,
	 * mem_bench.h; 0: unknown, the fields above decide), and in which thread:
	 * an -EINVAL of pinning and one of binding then get their own messages,
	 * as do a counter read that failed and one that was multiplexed.
	 */
	int stage;
	unsigned thread;
};

/*
 * Raise the pagezero exception for @err (a negative errno) and return NULL:
 * UnavailableError for what this machine lacks, ValueError for arguments
 * the OS refused, MappingError(errno, message) for memory that could not be
 * mapped or bound, PagezeroError for the rest.
 */
PyObject *pzpy_raise(int err, const struct pzpy_failure *f);

/*
 * Signals during a timed call. The loops run with the GIL released and never
 * reach the interpreter's signal handling, so around every timed call
 * SIGINT, SIGTERM and SIGHUP become a stop request (csrc/stop.h) that the
 * loops honour within one loop:
 *
 *	struct pzpy_stop stop;
 *	if (pzpy_stop_begin(&stop) < 0) goto out;
 *	Py_BEGIN_ALLOW_THREADS
 *	rc = pz_bench_...(...);
 *	Py_END_ALLOW_THREADS
 *	pzpy_stop_end(&stop);
 *
 * After pzpy_stop_end, stop.sig is 0 or the signal that stopped the run
 * (its -EINTR is then not an error: the binding returns the completed
 * loops with pzpy_interrupted(stop.sig) under "interrupted", and the Python
 * layer raises pagezero.Interrupted carrying them).
 */
struct pzpy_stop {
	int sig;
};

/* 0, or -1 with an exception (the handlers could not be installed). */
int pzpy_stop_begin(struct pzpy_stop *s);
void pzpy_stop_end(struct pzpy_stop *s);
/* After raising a stopped run's other error: the signal to the restored handlers. */
void pzpy_stop_redeliver(const struct pzpy_stop *s);
/* None, or the signal's name ("SIGINT", "SIGTERM", "SIGHUP") as a new reference. */
PyObject *pzpy_interrupted(int sig);

/* The named kernel of @kind if it exists and this CPU runs it; NULL with ValueError/UnavailableError. */
const struct pz_kernel *pzpy_usable_kernel(enum pz_kernel_kind kind, const char *name);
const char *pzpy_kind_name(enum pz_kernel_kind kind);

/* Open clock @id; UnavailableError (saying what is missing) when it cannot be read here. */
int pzpy_open_clock(struct pz_clock *c, enum pz_clock_id id);

/* kernels.c: a fill byte @k can write: 0..255 (or the loop index where @allow_loop). */
int pzpy_check_fill_value(const struct pz_kernel *k, int value, int allow_loop);

/* conditions.c: what measured conditions (cold caches, pinned threads) share ---- */

/* The cache flush method @name names, the best one for NULL or "". */
int pzpy_flush_method(const char *name, enum pz_flush *m);

/* The flusher cold mode asks for; evict maps its buffer into @evict (unmapped by the caller). */
int pzpy_cold_flusher(const char *name, Py_ssize_t evict_bytes, struct pz_flusher *f,
		      struct pz_region *evict);

/* @threads CPU numbers from a sequence of ints into *cpus (PyMem), NULL for an empty one. */
int pzpy_cpus(PyObject *seq, unsigned threads, int **cpus);

/* The cold flushes a test sees: (thread, offset in that thread's buffer or -1, length). */
struct pzpy_flush_trace;
struct pzpy_flush_trace *pzpy_flush_trace_new(char *const *bases, size_t len, size_t cap);
void pzpy_flush_trace_free(struct pzpy_flush_trace *tr);
void pzpy_flush_trace_record(void *ctx, unsigned t, const void *p, size_t len);
PyObject *pzpy_flush_trace_list(const struct pzpy_flush_trace *tr);

/* policy_run.c: what bench_batch and bench_folio share --------------------- */

struct pz_policy_cond;

/*
 * One timed policy call: the measured conditions' keywords (cold, flush,
 * evict_bytes, counters, trace: PZPY_POLICY_PARAMS in the call's parameter
 * table), what they set up, the clock and the signals around the run.
 * Zero it, with flush = "", then: pzpy_policy_cond, pzpy_policy_begin,
 * the run with the GIL released, pzpy_policy_end, pzpy_policy_check,
 * pzpy_policy_keys into the result; pzpy_policy_release in every case.
 */
struct pzpy_policy_run {
	int cold, counters, trace;
	const char *flush;
	Py_ssize_t evict_bytes;
	struct pz_region evict; /* cold with evict: the buffer read */
	struct pzpy_flush_trace *tr;
	const char *method;    /* cold_method: the flush's name, or "" */
	unsigned failed, done; /* the counter refused; the loops completed */
	struct pzpy_stop stop;
	struct pz_clock clock;
	int clock_open;
};

#define PZPY_POLICY_PARAMS(pr)                                                         \
	{ "cold", pzpy_bool, &(pr).cold }, { "flush", pzpy_str_or_none, &(pr).flush }, \
		{ "evict_bytes", pzpy_ssize, &(pr).evict_bytes },                      \
		{ "counters", pzpy_bool, &(pr).counters },                             \
	{                                                                              \
		"trace", pzpy_bool, &(pr).trace                                        \
	}

/* Fill @c from the keywords (the trace sees @bases, @len bytes each, @cap flushes). 0 or -1. */
int pzpy_policy_cond(struct pzpy_policy_run *pr, struct pz_policy_cond *c, char *const *bases,
		     size_t len, size_t cap);
/* Open the ns clock (pr->clock) and catch the stop signals. 0 or -1 with an exception. */
int pzpy_policy_begin(struct pzpy_policy_run *pr);
void pzpy_policy_end(struct pzpy_policy_run *pr);
/* The run's @ret: 0 when there is a result (done, or stopped by a signal), else -1 raised. */
int pzpy_policy_check(struct pzpy_policy_run *pr, int ret, struct pzpy_failure *fail);
/* Add counters (@counters: per-loop deltas), cold_method, flushes, loops_done, interrupted. */
int pzpy_policy_keys(PyObject *d, const struct pzpy_policy_run *pr, const uint64_t *counters);
void pzpy_policy_release(struct pzpy_policy_run *pr);

/* args.c ------------------------------------------------------------------ */

/*
 * O& converters: int conv(PyObject *obj, void *dest), 1 on success, 0 with
 * an exception set. Called with obj == NULL they release what they acquired
 * (buffers), as CPython's Py_CLEANUP_SUPPORTED converters do.
 */
typedef int (*pzpy_converter)(PyObject *obj, void *dest);

int pzpy_object(PyObject *obj, void *dest);       /* PyObject **, borrowed */
int pzpy_str(PyObject *obj, void *dest);          /* const char ** */
int pzpy_str_or_none(PyObject *obj, void *dest);  /* const char **, NULL for None */
int pzpy_bool(PyObject *obj, void *dest);         /* int *, truth value */
int pzpy_int(PyObject *obj, void *dest);          /* int * */
int pzpy_ssize(PyObject *obj, void *dest);        /* Py_ssize_t * */
int pzpy_kind(PyObject *obj, void *dest);         /* enum pz_kernel_kind *: 'clear' or 'copy' */
int pzpy_clear_kernel(PyObject *obj, void *dest); /* const struct pz_kernel **, usable */
int pzpy_copy_kernel(PyObject *obj, void *dest);  /* const struct pz_kernel **, usable */
int pzpy_clock(PyObject *obj, void *dest);        /* enum pz_clock_id *, known (not opened) */
int pzpy_strategy(PyObject *obj, void *dest);     /* enum pz_strategy * */
int pzpy_workload(PyObject *obj, void *dest);     /* enum pz_fault_workload * */
int pzpy_page_shift(PyObject *obj, void *dest);   /* unsigned *: 12, 21 or 30 */
int pzpy_thp(PyObject *obj, void *dest);          /* int *: PZ_THP_SYSTEM..PZ_THP_OFF */
int pzpy_loops(PyObject *obj, void *dest);        /* unsigned *: 1..UINT32_MAX */
int pzpy_threads(PyObject *obj, void *dest);      /* unsigned *: 1..PZ_MAX_THREADS */
int pzpy_seed(PyObject *obj, void *dest);         /* unsigned *: 0..UINT32_MAX */
int pzpy_writable(PyObject *obj, void *dest);     /* Py_buffer *, writable, contiguous */
int pzpy_readable(PyObject *obj, void *dest);     /* Py_buffer *, contiguous */

/* A writable buffer of whole 4KB pages: 0 and its page count, or -1 with ValueError. */
int pzpy_pages(PyObject *obj, Py_buffer *view, size_t *nr_pages);

struct pzpy_param {
	const char *name;
	pzpy_converter convert;
	void *dest;
};

/*
 * Parse a METH_FASTCALL | METH_KEYWORDS call onto @params: the first
 * @required are required, the first @positional may be passed by position
 * (the rest are keyword-only), every one by keyword. Optional ones not
 * given keep their destination's value. TypeError, as CPython words it,
 * for too many positional, unknown, duplicate or missing arguments.
 * 0, or -1 with an exception and every converted argument released.
 */
int pzpy_parse(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
	       const struct pzpy_param *params, int n, int required, int positional);

#define PZPY_PARSE(fname, params, required, positional)                                       \
	pzpy_parse(fname, args, nargs, kwnames, params, (int)PZ_ARRAY_SIZE(params), required, \
		   positional)

#define PZPY_FASTCALL(fn) ((PyCFunction)(void (*)(void))(fn))
#define PZPY_KW (METH_FASTCALL | METH_KEYWORDS)

/* values.c ---------------------------------------------------------------- */

/* v[0], v[stride], ... v[(n - 1) * stride] as a tuple of ints. */
PyObject *pzpy_u64_tuple(const uint64_t *v, size_t n, size_t stride);

/* The names name_at(0..n-1) that @keep accepts (all when NULL), as a tuple of str. */
PyObject *pzpy_names_tuple(int n, const char *(*name_at)(int), int (*keep)(int));

/* {counter name: per-loop deltas} from @v[loop * PZ_CTR_COUNT + counter]; None when @v is NULL. */
PyObject *pzpy_counters_dict(const uint64_t *v, unsigned loops);

/* The steps of a log as (first_page, page_count, nontemporal) tuples. */
PyObject *pzpy_steps_tuple(const struct pz_step_log *log);

/* Per-concern method tables and types --------------------------------------- */

int pzpy_init_kernels(PyObject *m);
int pzpy_init_mem(PyObject *m);
int pzpy_init_fault(PyObject *m);
int pzpy_init_policy(PyObject *m);
int pzpy_init_batch(PyObject *m);
int pzpy_init_system(PyObject *m);
int pzpy_init_region(PyObject *m);
int pzpy_init_switches(PyObject *m); /* after BUILD, which it completes */

/* Add a NULL-terminated method table to module @m. */
int pzpy_add_methods(PyObject *m, PyMethodDef *methods);

/* region.c: a Region that owns the mapping @r holds (unmapped on failure too). */
PyObject *pzpy_region_adopt(struct pz_region *r);

#endif /* PZPY_H */
