/*
 * sample.c - perf_event_open(2) sampling of instruction pointers (see sample.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sample.h"
#include "switches.h"

static const char *const event_names[PZ_SAMPLE_EVENT_COUNT] = {
	[PZ_SAMPLE_CYCLES] = "cycles",
	[PZ_SAMPLE_CPU_CLOCK] = "cpu-clock",
};

const struct pz_names pz_sample_event_names = { event_names, PZ_SAMPLE_EVENT_COUNT };

static const char *const stage_names[PZ_SAMPLE_STAGE_COUNT] = {
	[PZ_SAMPLE_STAGE_OPEN] = "open",
	[PZ_SAMPLE_STAGE_MMAP] = "mmap",
};

const struct pz_names pz_sample_stage_names = { stage_names, PZ_SAMPLE_STAGE_COUNT };

/* Linux 6.0's read_format bit; older headers lack it. */
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1u << 4)
#endif

/*
 * Data pages of the ring, a power of two (perf_event_open(2)): 1MB with 4KB
 * pages holds about 32,000 samples of 32 bytes, 8 s of one thread at 4 kHz,
 * drained after every loop. Fewer where the locked memory an unprivileged
 * user may map (perf_event_mlock_kb) is shared by many threads.
 */
#define RING_PAGES 256u
#define MIN_RING_PAGES 8u

/*
 * A sample as PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD lays it
 * out after its header: perf_event_open(2) orders the fields ip, pid and tid,
 * time, addr, id, stream_id, cpu, period, whatever order the bits are named in.
 */
struct sample_body {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t period;
};

/* PERF_RECORD_LOST's body. */
struct lost_body {
	uint64_t id, lost;
};

static int open_event(enum pz_sample_event ev, int format_lost)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	if (ev == PZ_SAMPLE_CYCLES) {
		if (pz_switch(PZ_SW_HIDE_PMU))
			return -ENOENT; /* as perf_event_open(2) without a PMU */
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.freq = 1; /* the kernel adjusts the period to keep the rate */
		attr.sample_freq = PZ_SAMPLE_HZ;
	} else {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		attr.sample_period = 1000000000ull / PZ_SAMPLE_HZ; /* ns of this thread's CPU */
	}
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	if (format_lost) {
		if (pz_switch(PZ_SW_REFUSE_FORMAT_LOST))
			return -EINVAL; /* as a kernel before 6.0 refuses the bit */
		attr.read_format = PERF_FORMAT_LOST;
	}
	attr.disabled = 1;
	/* Kernel and user: the fault's time is the kernel's. */
	attr.exclude_kernel = 0;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/* An integer sysctl, or @otherwise where it cannot be read. */
static long read_sysctl(const char *path, long otherwise)
{
	FILE *f = fopen(path, "re");
	long v = otherwise;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = otherwise;
		fclose(f);
	}
	return v;
}

/* Whether the calling thread's effective capabilities hold CAP_IPC_LOCK. */
static int has_ipc_lock(void)
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &head, data))
		return 0;
	return !!(data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK));
}

/*
 * The pages (metadata included) the rings of one user may lock, as
 * kernel/events/core.c perf_mmap() charges them: perf_event_mlock_kb per
 * online CPU against the user's locked_vm, then RLIMIT_MEMLOCK against the
 * process's pinned_vm; UINT64_MAX where neither applies (CAP_IPC_LOCK,
 * perf_event_paranoid -1, an unlimited RLIMIT_MEMLOCK).
 */
static uint64_t lock_budget(size_t page)
{
	const uint64_t fake_kb = pz_switch(PZ_SW_FAKE_MLOCK_KB);
	long kb, cpus;
	struct rlimit rl;

	if (fake_kb)
		return fake_kb * 1024 / page;
	if (has_ipc_lock() || read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2) < 0)
		return UINT64_MAX;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	kb = read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", 516); /* the kernel's default */
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return (uint64_t)(kb > 0 ? kb : 0) * 1024 / page * (uint64_t)(cpus > 0 ? cpus : 1) +
	       rl.rlim_cur / page;
}

unsigned pz_sample_ring_pages(unsigned sharers)
{
	const uint64_t budget = lock_budget((size_t)sysconf(_SC_PAGESIZE));
	const uint64_t each = budget / (sharers ? sharers : 1);
	unsigned pages = RING_PAGES;

	/* Each ring locks its data pages and one metadata page. */
	while (pages > MIN_RING_PAGES && pages + 1 > each)
		pages /= 2;
	return pages;
}

/* Pages the rings hold against PAGEZERO_FAKE_MLOCK_KB, over every thread. */
static uint64_t fake_locked;

/* mmap(2) of @s's ring, or MAP_FAILED with errno EPERM past the fake budget. */
static void *mmap_ring(struct pz_sampler *s, size_t page)
{
	const uint64_t pages = s->ring_bytes / page;
	void *ring;

	if (pz_switch(PZ_SW_FAKE_MLOCK_KB) &&
	    __atomic_add_fetch(&fake_locked, pages, __ATOMIC_RELAXED) > lock_budget(page)) {
		__atomic_sub_fetch(&fake_locked, pages, __ATOMIC_RELAXED);
		errno = EPERM;
		return MAP_FAILED;
	}
	ring = mmap(NULL, s->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (ring == MAP_FAILED && pz_switch(PZ_SW_FAKE_MLOCK_KB))
		__atomic_sub_fetch(&fake_locked, pages, __ATOMIC_RELAXED);
	return ring;
}

/*
 * The ring of @fd: this thread's share of the locked memory, halved further
 * where other rings of this user (another process's) hold some of it.
 */
static int map_ring(struct pz_sampler *s, unsigned sharers)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned pages;

	for (pages = pz_sample_ring_pages(sharers); pages >= MIN_RING_PAGES; pages /= 2) {
		s->ring_bytes = (pages + 1) * page;
		s->ring = mmap_ring(s, page);
		if (s->ring != MAP_FAILED)
			return 0;
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	s->ring = NULL;
	return -errno;
}

/* @ev opened with PERF_FORMAT_LOST, or without it where the kernel refuses the bit. */
static int open_counting_lost(struct pz_sampler *s, enum pz_sample_event ev)
{
	int fd = open_event(ev, 1);

	s->format_lost = fd >= 0;
	if (fd == -EINVAL)
		fd = open_event(ev, 0);
	return fd;
}

int pz_sampler_open(struct pz_sampler *s, unsigned sharers)
{
	int fd = -ENOENT, ret;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (pz_switch(PZ_SW_REFUSE_PROFILE))
		return -EACCES; /* as perf_event_paranoid 2 for an unprivileged user */
	s->event = PZ_SAMPLE_CYCLES;
	fd = open_counting_lost(s, s->event);
	/* No PMU (a VM): the event or the sampling on it is not supported. */
	if (fd == -ENOENT || fd == -ENODEV || fd == -EOPNOTSUPP || fd == -EINVAL) {
		s->event = PZ_SAMPLE_CPU_CLOCK;
		fd = open_counting_lost(s, s->event);
	}
	if (fd < 0)
		return fd;
	s->fd = fd;
	ret = map_ring(s, sharers);
	if (ret) {
		s->stage = PZ_SAMPLE_STAGE_MMAP;
		pz_sampler_close(s);
	}
	return ret;
}

int pz_sampler_enable(struct pz_sampler *s, int on)
{
	return ioctl(s->fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) ? -errno : 0;
}

/* Append a kernel sample. */
static int keep_kernel(struct pz_sampler *s, uint64_t ip, uint64_t period)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		uint64_t *ips = realloc(s->ips, cap * sizeof(*ips)), *periods;

		if (!ips)
			return -ENOMEM;
		s->ips = ips;
		periods = realloc(s->periods, cap * sizeof(*periods));
		if (!periods)
			return -ENOMEM;
		s->periods = periods;
		s->cap = cap;
	}
	s->ips[s->n] = ip;
	s->periods[s->n++] = period;
	return 0;
}

/* Loop @loop's counts, zeroed when new; NULL without memory. */
static struct pz_sample_loop *loop_counts(struct pz_sampler *s, unsigned loop)
{
	if (loop >= s->nloops) {
		struct pz_sample_loop *loops = realloc(s->loops, (loop + 1) * sizeof(*loops));

		if (!loops)
			return NULL;
		memset(loops + s->nloops, 0, (loop + 1 - s->nloops) * sizeof(*loops));
		s->loops = loops;
		s->nloops = loop + 1;
	}
	return &s->loops[loop];
}

/* The growth of the event's lost count since the last read (PERF_FORMAT_LOST). */
static int read_lost(struct pz_sampler *s, uint64_t *lost)
{
	uint64_t v[2]; /* read_format PERF_FORMAT_LOST alone: value, lost */
	ssize_t got = read(s->fd, v, sizeof(v));

	if (got != (ssize_t)sizeof(v))
		return got < 0 ? -errno : -EIO;
	*lost = v[1] - s->lost_read;
	s->lost_read = v[1];
	return 0;
}

/* @len bytes of the ring's data from @at, which may wrap around its end. */
static void ring_copy(const char *data, size_t size, uint64_t at, void *dst, size_t len)
{
	size_t off = (size_t)(at & (size - 1)), first = PZ_MIN(len, size - off);

	memcpy(dst, data + off, first);
	memcpy((char *)dst + first, data, len - first);
}

int pz_sampler_drain(struct pz_sampler *s, unsigned loop)
{
	struct pz_sample_loop *counts = loop_counts(s, loop);
	struct perf_event_mmap_page *meta = s->ring;
	const char *data = (const char *)s->ring + meta->data_offset;
	const size_t size = (size_t)meta->data_size;
	/* Acquire: the records up to data_head are written before it moved. */
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
	uint64_t lost = 0;
	int ret = counts ? 0 : -ENOMEM;

	/* The count after the loop's disable: also samples a full ring lost with no record yet. */
	if (!ret && s->format_lost && !(ret = read_lost(s, &lost)))
		counts->lost += lost;
	while (tail < head && !ret) {
		struct perf_event_header h;
		union {
			struct sample_body sample;
			struct lost_body lost;
		} body;

		ring_copy(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h))
			break; /* never written so by the kernel: stop rather than spin */
		memset(&body, 0, sizeof(body));
		ring_copy(data, size, tail + sizeof(h), &body,
			  PZ_MIN(sizeof(body), (size_t)h.size - sizeof(h)));
		if (h.type == PERF_RECORD_LOST) {
			/* With PERF_FORMAT_LOST read() has counted these already. */
			if (!s->format_lost)
				counts->lost += body.lost.lost;
		} else if (h.type == PERF_RECORD_SAMPLE) {
			switch (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) {
			case PERF_RECORD_MISC_KERNEL:
				ret = keep_kernel(s, body.sample.ip, body.sample.period);
				counts->kernel += !ret;
				break;
			case PERF_RECORD_MISC_USER:
				counts->user++;
				counts->user_period += body.sample.period;
				break;
			default:
				counts->other++;
				counts->other_period += body.sample.period;
			}
		}
		tail += h.size;
	}
	/* Release: the kernel may overwrite what was read only after this store. */
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return ret;
}

void pz_sampler_close(struct pz_sampler *s)
{
	if (s->ring) {
		munmap(s->ring, s->ring_bytes);
		if (pz_switch(PZ_SW_FAKE_MLOCK_KB))
			__atomic_sub_fetch(&fake_locked,
					   s->ring_bytes / (size_t)sysconf(_SC_PAGESIZE),
					   __ATOMIC_RELAXED);
	}
	s->ring = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void pz_sampler_free(struct pz_sampler *s)
{
	free(s->ips);
	free(s->periods);
	free(s->loops);
	s->ips = s->periods = NULL;
	s->loops = NULL;
	s->n = s->cap = s->nloops = 0;
}
