/*
 * pzpy.h - what the files of pagezero._core share: the exceptions, the one
 * function that turns the C core's -errno into one of them, the argument
 * converters, and the builders of Python values from C arrays.
 *
 * Each Python-facing concern (kernels.c, mem.c, fault.c, policy.c,
 * batch.c, system.c, region.c) has its own method table, which module.c
 * adds to the module with the constants and types of pzpy_init_*().
 * What they share: errors.c (exceptions), args.c (converters),
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
 * A timed call: its clock, and the signals around it. The loops run with
 * the GIL released and never reach the interpreter's signal handling, so
 * around every timed call SIGINT, SIGTERM and SIGHUP become a stop request
 * (csrc/stop.h) that the loops honour within one loop:
 *
 *	struct pzpy_timed t;
 *	if (pzpy_timed_begin(&t, clock_id) < 0) goto out;
 *	Py_BEGIN_ALLOW_THREADS
 *	ret = pz_bench_...(..., &t.clock, ...);
 *	Py_END_ALLOW_THREADS
 *	pzpy_timed_end(&t);
 *	if (pzpy_timed_check(&t, ret, &fail) < 0) goto out;
 *
 * After pzpy_timed_end, t.sig is 0 or the signal that stopped the run (its
 * -EINTR is then not an error: the binding returns the completed loops
 * with pzpy_interrupted(t.sig) under "interrupted", and the Python layer
 * raises pagezero.Interrupted carrying them).
 */
struct pzpy_timed {
	struct pz_clock clock;
	int sig;
};

/* Open @clock and catch the signals: 0, or -1 with an exception and nothing held. */
int pzpy_timed_begin(struct pzpy_timed *t, enum pz_clock_id clock);
/* Close the clock, give the signals back, and set t->sig. */
void pzpy_timed_end(struct pzpy_timed *t);
/*
 * 0 when the run's @ret leaves a result (done, or stopped by a signal);
 * else -1 with @ret raised for @f, and a signal that stopped the run too
 * redelivered to the restored handlers.
 */
int pzpy_timed_check(const struct pzpy_timed *t, int ret, const struct pzpy_failure *f);
/* None, or the signal's name ("SIGINT", "SIGTERM", "SIGHUP") as a new reference. */
PyObject *pzpy_interrupted(int sig);

/* The named kernel of @kind if it exists and this CPU runs it; NULL with ValueError/UnavailableError. */
const struct pz_kernel *pzpy_usable_kernel(enum pz_kernel_kind kind, const char *name);
/* The kernel kinds' names, by enum pz_kernel_kind: "clear" and "copy". */
extern const struct pz_names pzpy_kinds;

/* Open clock @id; UnavailableError (saying what is missing) when it cannot be read here. */
int pzpy_open_clock(struct pz_clock *c, enum pz_clock_id id);

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
 * evict_bytes, counters, trace: PZPY_POLICY_* in the call's
 * format), what they set up, and the timed call (ns clock).
 * Zero it, with flush = "", then: pzpy_policy_cond, pzpy_timed_begin,
 * the run with the GIL released, pzpy_timed_end, pzpy_policy_check,
 * pzpy_policy_keys into the result; pzpy_policy_release in every case.
 */
struct pzpy_policy_run {
	int cold, counters, trace;
	const char *flush;
	Py_ssize_t evict_bytes;
	struct pz_region evict; /* cold with evict: the buffer read */
	struct pzpy_flush_trace *tr;
	const char *method;      /* cold_method: the flush's name, or "" */
	unsigned failed, done;   /* the counter refused; the loops completed */
	struct pzpy_timed timed; /* the ns clock */
};

/* The conditions' keywords, last in the call's format, names and arguments. */
#define PZPY_POLICY_FORMAT "pzO&pp"
#define PZPY_POLICY_KWLIST "cold", "flush", "evict_bytes", "counters", "trace"
#define PZPY_POLICY_ARGS(pr) \
	&(pr).cold, &(pr).flush, pzpy_size, &(pr).evict_bytes, &(pr).counters, &(pr).trace

/* Fill @c from the keywords (the trace sees @bases, @len bytes each, @cap flushes). 0 or -1. */
int pzpy_policy_cond(struct pzpy_policy_run *pr, struct pz_policy_cond *c, char *const *bases,
		     size_t len, size_t cap);
/* pzpy_timed_check, naming the counter that failed. */
int pzpy_policy_check(struct pzpy_policy_run *pr, int ret, struct pzpy_failure *fail);
/* Add counters (@counters: per-loop deltas), cold_method, flushes, loops_done, interrupted. */
int pzpy_policy_keys(PyObject *d, const struct pzpy_policy_run *pr, const uint64_t *counters);
void pzpy_policy_release(struct pzpy_policy_run *pr);

/* args.c ------------------------------------------------------------------ */

/*
 * O& converters for PyArg_ParseTupleAndKeywords: 1 on success, 0 with an
 * exception set. The buffer ones return Py_CLEANUP_SUPPORTED: the parser
 * releases the view when a later argument fails; after a successful parse
 * the caller does.
 */
int pzpy_int(PyObject *obj, void *dest);          /* int */
int pzpy_size(PyObject *obj, void *dest);         /* Py_ssize_t *: 0..PY_SSIZE_T_MAX */
int pzpy_kind(PyObject *obj, void *dest);         /* enum pz_kernel_kind *: 'clear' or 'copy' */
int pzpy_clear_kernel(PyObject *obj, void *dest); /* const struct pz_kernel **, usable */
int pzpy_copy_kernel(PyObject *obj, void *dest);  /* const struct pz_kernel **, usable */
int pzpy_clock(PyObject *obj, void *dest);        /* enum pz_clock_id *, known (not opened) */
int pzpy_strategy(PyObject *obj, void *dest);     /* enum pz_strategy * */
int pzpy_workload(PyObject *obj, void *dest);     /* enum pz_fault_workload * */
int pzpy_touch(PyObject *obj, void *dest);        /* enum pz_touch * */
int pzpy_page_shift(PyObject *obj, void *dest);   /* unsigned *: 12, 21 or 30 */
int pzpy_thp(PyObject *obj, void *dest);          /* int *: PZ_THP_SYSTEM..PZ_THP_OFF */
int pzpy_loops(PyObject *obj, void *dest);        /* unsigned *: 1..UINT32_MAX */
int pzpy_threads(PyObject *obj, void *dest);      /* unsigned *: 1..PZ_MAX_THREADS */
int pzpy_settle(PyObject *obj, void *dest);       /* 0 (off) .. UINT32_MAX */
int pzpy_seed(PyObject *obj, void *dest);         /* unsigned *: 0..UINT32_MAX */
int pzpy_writable(PyObject *obj, void *dest);     /* Py_buffer *, writable, contiguous */
int pzpy_readable(PyObject *obj, void *dest);     /* Py_buffer *, contiguous */

/* A writable buffer of whole 4KB pages: 0 and its page count, or -1 with ValueError. */
int pzpy_pages(PyObject *obj, Py_buffer *view, size_t *nr_pages);

/* A method table entry for a function of (self, args, kwargs). */
#define PZPY_KW_METHOD(name, fn, doc)                                                      \
	{                                                                                  \
		name, (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS, doc \
	}

/* values.c ---------------------------------------------------------------- */

/* (item(0, ctx), ..., item(n - 1, ctx)), each a new reference; NULL with an exception. */
PyObject *pzpy_tuple_of(size_t n, PyObject *(*item)(size_t i, const void *ctx), const void *ctx);

/* v[0], v[stride], ... v[(n - 1) * stride] as a tuple of ints. */
PyObject *pzpy_u64_tuple(const uint64_t *v, size_t n, size_t stride);

/* @rows such tuples, row r from v + r * row_stride: per-thread samples. */
PyObject *pzpy_u64_rows(const uint64_t *v, size_t rows, size_t row_stride, size_t n, size_t stride);

/* The names of @t whose values are bits of @mask (PZPY_ALL: every one), as a tuple of str. */
PyObject *pzpy_names_tuple(const struct pz_names *t, uint64_t mask);
/* The same for the names name_of(0..n-1) of a table the C core keeps to itself. */
PyObject *pzpy_names_from(unsigned n, const char *(*name_of)(unsigned), uint64_t mask);
#define PZPY_ALL (~(uint64_t)0)

/* {counter name: per-loop deltas} from @v[loop * PZ_CTR_COUNT + counter]; None when @v is NULL. */
PyObject *pzpy_counters_dict(const uint64_t *v, unsigned loops);

/* The steps of a log as (first_page, page_count, nontemporal) tuples. */
PyObject *pzpy_steps_tuple(const struct pz_step_log *log);

/* Per-concern method tables (NULL-terminated), and the constants and types ------ */

extern PyMethodDef pzpy_kernel_methods[], pzpy_mem_methods[], pzpy_fault_methods[],
	pzpy_policy_methods[], pzpy_batch_methods[], pzpy_system_methods[], pzpy_region_methods[];
int pzpy_init_switches(PyObject *m); /* after BUILD, which it completes */

int pzpy_init_kernels(PyObject *m); /* VALUE_LOOP, ARCH */
int pzpy_init_region(PyObject *m);  /* Region, THP_* */

/* region.c: a Region that owns the mapping @r holds (unmapped on failure too). */
PyObject *pzpy_region_adopt(struct pz_region *r);

#endif /* PZPY_H */
