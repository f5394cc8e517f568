/*
 * errors.c - the one place where the C core's -errno becomes a Python
 * exception, and the lookups whose failure is worded for the user
 * (kernels, clocks).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "pzpy.h"

PyObject *pzpy_PagezeroError;
PyObject *pzpy_UnavailableError;
PyObject *pzpy_MappingError;

const struct pz_kernel *pzpy_usable_kernel(enum pz_kernel_kind kind, const char *name)
{
	const struct pz_kernel *k = pz_kernel_find(kind, name);
	char reason[128];

	if (!k) {
		PyErr_Format(PyExc_ValueError,
			     "unknown %s kernel '%s' (pagezero.kernels() lists them)",
			     pz_name(&pzpy_kinds, kind), name);
		return NULL;
	}
	if (!pz_kernel_available(k, reason, sizeof(reason))) {
		PyErr_Format(pzpy_UnavailableError, "kernel '%s' is not available: %s", name,
			     reason);
		return NULL;
	}
	return k;
}

int pzpy_open_clock(struct pz_clock *c, enum pz_clock_id id)
{
	int ret = pz_clock_open(c, id);

	if (ret == 0)
		return 0;
	if (id == PZ_CLOCK_CYCLES)
		PyErr_Format(pzpy_UnavailableError,
			     "the cycles clock needs a hardware cycle counter, and "
			     "perf_event_open(cpu-cycles) failed: %s (no PMU on this machine, "
			     "or kernel.perf_event_paranoid forbids it); use the tsc clock "
			     "(--clock tsc) to count a constant-rate counter's ticks (reference "
			     "cycles) instead",
			     strerror(-ret));
	else
		PyErr_Format(pzpy_UnavailableError, "the %s clock is not available here: %s",
			     pz_name(&pz_clock_names, id), strerror(-ret));
	return -1;
}

/* Raise MappingError(errno, message): an OSError whose errno says why. */
static PyObject *raise_mapping(int errnum, const char *fmt, ...)
{
	PyObject *msg, *exc;
	va_list ap;

	va_start(ap, fmt);
	msg = PyUnicode_FromFormatV(fmt, ap);
	va_end(ap);
	if (!msg)
		return NULL;
	exc = PyObject_CallFunction(pzpy_MappingError, "iO", errnum, msg);
	Py_DECREF(msg);
	if (exc) {
		PyErr_SetObject(pzpy_MappingError, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

static long free_hugepages(unsigned shift)
{
	char file[160];
	long n = -1;
	FILE *f;

	snprintf(file, sizeof(file), "/sys/kernel/mm/hugepages/hugepages-%lukB/free_hugepages",
		 (1ul << shift) / 1024);
	f = fopen(file, "re");
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/*
 * A mapping that failed, worded as perf's "maybe size (X) has insufficient
 * hugepages / is too large". Facts only: what to write into the pool, and
 * whether that is safe, is pagezero.hugepages' job (writing a number below
 * the pool's size shrinks it).
 */
static PyObject *mapping_failed(int err, const struct pzpy_failure *f)
{
	unsigned buffers = f->buffers ? f->buffers : 1;
	uint64_t avail = 0;

	if (f->shift && f->shift != PZ_PAGE_SHIFT_4KB && (err == -ENOMEM || err == -EINVAL)) {
		unsigned long page = 1ul << f->shift;
		unsigned long need = (unsigned long)((f->bytes + page - 1) / page) * buffers;

		return raise_mapping(
			-err,
			"memory allocation failed - maybe size (%zu bytes) "
			"has insufficient hugepages: %lu %luMB pages needed, %ld free "
			"in the pool (/sys/kernel/mm/hugepages/hugepages-%lukB/nr_hugepages)",
			f->bytes, need, page >> 20, free_hugepages(f->shift), page / 1024);
	}
	if (err == -E2BIG) {
		pz_mem_available(&avail);
		return raise_mapping(ENOMEM,
				     "size (%zu bytes) is too large: %zu bytes needed, "
				     "only %llu available (MemAvailable in /proc/meminfo); "
				     "use a smaller size",
				     f->bytes, f->bytes * buffers, (unsigned long long)avail);
	}
	if (err == -ENOMEM || err == -EOVERFLOW)
		return raise_mapping(ENOMEM,
				     "memory allocation failed - maybe size "
				     "(%zu bytes) is too large",
				     f->bytes);
	return raise_mapping(-err, "%s failed: %s", f->doing ? f->doing : "mmap", strerror(-err));
}

static PyObject *counters_unavailable(int err, unsigned counter)
{
	return PyErr_Format(pzpy_UnavailableError,
			    "--counters needs hardware performance counters, and "
			    "perf_event_open(%s) failed: %s (no PMU on this machine, as on "
			    "most VMs, or kernel.perf_event_paranoid forbids it)",
			    pz_counter_name(counter), strerror(-err));
}

/*
 * A counter read in a timed loop (the counters were open): never worded as
 * a perf_event_open failure. -EBUSY is pz_counters_delta()'s refusal of a
 * multiplexed group, whose counts would cover part of the loop only.
 */
static PyObject *counter_read_failed(int err, unsigned thread)
{
	if (err == -EBUSY)
		return PyErr_Format(pzpy_PagezeroError,
				    "the hardware counters were multiplexed during a loop of "
				    "thread %u: the kernel gave the PMU to other events for part "
				    "of it, so the counts cover only part of the loop (pagezero "
				    "does not scale them); stop other perf users (perf record, "
				    "perf top, the NMI watchdog: sysctl kernel.nmi_watchdog=0) "
				    "or run without --counters",
				    thread);
	return PyErr_Format(pzpy_PagezeroError,
			    "reading the hardware counters failed during a loop of thread "
			    "%u (read() of the perf event group: %s)",
			    thread, strerror(-err));
}

static PyObject *by_errno(int err, const struct pzpy_failure *f);

/* The step the C core named (f->stage): each its own words. */
static PyObject *stage_failed(int err, const struct pzpy_failure *f)
{
	switch (f->stage) {
	case PZ_STAGE_ARGS:
		return PyErr_Format(PyExc_ValueError, "%s refused its arguments: %s",
				    f->doing ? f->doing : "the C core", strerror(-err));
	case PZ_STAGE_BIND:
		return PyErr_Format(PyExc_ValueError,
				    "could not bind the buffers to node %d "
				    "(mbind: %s)",
				    f->node ? *f->node : -1, strerror(-err));
	case PZ_STAGE_START:
		return PyErr_Format(pzpy_PagezeroError, "could not start %u thread%s: %s",
				    f->threads ? f->threads : 1, f->threads > 1 ? "s" : "",
				    strerror(-err));
	case PZ_STAGE_PIN:
		return PyErr_Format(err == -EINVAL ? PyExc_ValueError : pzpy_PagezeroError,
				    "could not pin thread %u to CPU %d (sched_setaffinity: %s)",
				    f->thread, f->cpus ? f->cpus[f->thread] : -1, strerror(-err));
	case PZ_STAGE_CLOCK:
		return PyErr_Format(pzpy_UnavailableError,
				    "thread %u could not open its own cycles clock "
				    "(perf_event_open(cpu-cycles): %s)",
				    f->thread, strerror(-err));
	case PZ_STAGE_COUNTERS:
		return counters_unavailable(err,
					    f->failed_counter && *f->failed_counter < PZ_CTR_COUNT
						    ? *f->failed_counter
						    : 0);
	case PZ_STAGE_COUNTER_READ:
		return counter_read_failed(err, f->thread);
	case PZ_STAGE_MAP:
	case PZ_STAGE_PREFAULT:
		if (f->bytes)
			return mapping_failed(err, f);
		return raise_mapping(-err, "%s failed: %s", f->doing ? f->doing : "mmap",
				     strerror(-err));
	default:
		return by_errno(err, f);
	}
}

PyObject *pzpy_raise(int err, const struct pzpy_failure *f)
{
	return f->stage ? stage_failed(err, f) : by_errno(err, f);
}

/* What @err means for what @f was doing, where the C core named no step. */
static PyObject *by_errno(int err, const struct pzpy_failure *f)
{
	const char *doing = f->doing ? f->doing : "the C core";

	/*
	 * A failed_counter below PZ_CTR_COUNT is an open that failed, except
	 * -EIO, which perf_event_open never returns and a failed read does, and
	 * -EBUSY, pz_counters_delta()'s refusal of a multiplexed loop (the
	 * policy loops name no step; an exclusive PMU user that makes the open
	 * itself fail with EBUSY is rarer than multiplexing, and both say to
	 * stop other perf users).
	 */
	if (f->failed_counter && *f->failed_counter < PZ_CTR_COUNT)
		return (err == -EIO || err == -EBUSY)
			       ? counter_read_failed(err, f->thread)
			       : counters_unavailable(err, *f->failed_counter);
	if (err == -EOPNOTSUPP && f->unsupported)
		return PyErr_Format(pzpy_UnavailableError, "%s", f->unsupported);
	if (err == -EINVAL && f->cpus)
		return PyErr_Format(
			PyExc_ValueError,
			"could not pin the threads to their CPUs (sched_setaffinity: %s)",
			strerror(-err));
	if (err == -EAGAIN && f->threads > 1)
		return PyErr_Format(pzpy_PagezeroError, "could not start %u threads: %s",
				    f->threads, strerror(-err));
	if (f->node && (err == -EINVAL || err == -EIO || err == -EPERM))
		return PyErr_Format(PyExc_ValueError,
				    "could not bind the buffer to node %d "
				    "(mbind: %s)",
				    *f->node, strerror(-err));
	if (f->bytes)
		return mapping_failed(err, f);
	if (f->memory)
		return raise_mapping(-err, "%s failed: %s", doing, strerror(-err));
	if (err == -EINVAL)
		return PyErr_Format(PyExc_ValueError, "%s refused its arguments: %s", doing,
				    strerror(-err));
	return PyErr_Format(pzpy_PagezeroError, "%s failed: %s", doing, strerror(-err));
}

/*
 * Timed calls can overlap: the GIL is released while they run, so two
 * Python threads can each be in one. The handlers and the flag are the
 * process's, so they are taken by the first call and given back by the
 * last (begin and end run with the GIL held, which orders them): a signal
 * stops every run in progress, and none clears it under another's feet.
 */
static unsigned stop_users;
static struct pz_stop_saved stop_saved;

int pzpy_timed_begin(struct pzpy_timed *t, enum pz_clock_id clock)
{
	int err;

	t->sig = 0;
	if (pzpy_open_clock(&t->clock, clock) < 0)
		return -1;
	if (stop_users++ > 0)
		return 0;
	pz_stop_clear();
	err = pz_stop_catch(&stop_saved);
	if (err) {
		stop_users--;
		pz_clock_close(&t->clock);
		pzpy_raise(err, &(struct pzpy_failure){ .doing = "sigaction" });
		return -1;
	}
	return 0;
}

void pzpy_timed_end(struct pzpy_timed *t)
{
	pz_clock_close(&t->clock);
	if (--stop_users > 0) {
		/* The flag stays for the calls still running: the last one takes it. */
		t->sig = pz_stop_requested();
		return;
	}
	/*
	 * Not "read the flag, release, clear": a signal between the read and the
	 * clear was caught, then forgotten. Released first, then exchanged.
	 */
	t->sig = pz_stop_release_take(&stop_saved);
}

int pzpy_timed_check(const struct pzpy_timed *t, int ret, const struct pzpy_failure *f)
{
	/* Stopped by a signal: the completed loops are the result, not an error. */
	if (!ret || (ret == -EINTR && t->sig))
		return 0;
	pzpy_raise(ret, f);
	/*
	 * A failed run that a signal stopped too: its error is raised, and the
	 * signal, which the C handler took from the interpreter, goes back to
	 * the handlers now restored (Python's: KeyboardInterrupt or
	 * pagezero.Interrupted at the next check; SIG_DFL: what the signal
	 * means), so that a sweep catching the error still stops.
	 */
	if (t->sig && stop_users == 0)
		raise(t->sig);
	return -1;
}

PyObject *pzpy_interrupted(int sig)
{
	switch (sig) {
	case 0:
		Py_RETURN_NONE;
	case SIGINT:
		return PyUnicode_FromString("SIGINT");
	case SIGTERM:
		return PyUnicode_FromString("SIGTERM");
	case SIGHUP:
		return PyUnicode_FromString("SIGHUP");
	default:
		return PyUnicode_FromFormat("signal %d", sig);
	}
}
