/*
 * sample.c - perf_event_open(2) sampling of instruction pointers (see sample.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sample.h"
#include "switches.h"

static const char *const event_names[PZ_SAMPLE_EVENT_COUNT] = {
	[PZ_SAMPLE_CYCLES] = "cycles",
	[PZ_SAMPLE_CPU_CLOCK] = "cpu-clock",
};

const struct pz_names pz_sample_event_names = { event_names, PZ_SAMPLE_EVENT_COUNT };

/*
 * Data pages of the ring, a power of two (perf_event_open(2)): 1MB with 4KB
 * pages holds about 43,000 samples of 24 bytes, 10 s of one thread at 4 kHz,
 * drained after every loop. Halved down to MIN_RING_PAGES where the locked
 * memory an unprivileged user may map (perf_event_mlock_kb) is smaller.
 */
#define RING_PAGES 256u
#define MIN_RING_PAGES 8u

/* A sample as PERF_SAMPLE_IP | PERF_SAMPLE_TID lays it out after its header. */
struct sample_body {
	uint64_t ip;
	uint32_t pid, tid;
};

/* PERF_RECORD_LOST's body. */
struct lost_body {
	uint64_t id, lost;
};

static int open_event(enum pz_sample_event ev)
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
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	attr.disabled = 1;
	/* Kernel and user: the fault's time is the kernel's. */
	attr.exclude_kernel = 0;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/* The ring of @fd, as large as the locked-memory limit allows. */
static int map_ring(struct pz_sampler *s)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned pages;

	for (pages = RING_PAGES; pages >= MIN_RING_PAGES; pages /= 2) {
		s->ring_bytes = (pages + 1) * page;
		s->ring = mmap(NULL, s->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
		if (s->ring != MAP_FAILED)
			return 0;
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	s->ring = NULL;
	return -errno;
}

int pz_sampler_open(struct pz_sampler *s)
{
	int fd = -ENOENT, ret;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (pz_switch(PZ_SW_REFUSE_PROFILE))
		return -EACCES; /* as perf_event_paranoid 2 for an unprivileged user */
	s->event = PZ_SAMPLE_CYCLES;
	fd = open_event(s->event);
	/* No PMU (a VM): the event or the sampling on it is not supported. */
	if (fd == -ENOENT || fd == -ENODEV || fd == -EOPNOTSUPP || fd == -EINVAL) {
		s->event = PZ_SAMPLE_CPU_CLOCK;
		fd = open_event(s->event);
	}
	if (fd < 0)
		return fd;
	s->fd = fd;
	ret = map_ring(s);
	if (ret)
		pz_sampler_close(s);
	return ret;
}

int pz_sampler_enable(struct pz_sampler *s, int on)
{
	return ioctl(s->fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) ? -errno : 0;
}

static int keep_ip(struct pz_sampler *s, uint64_t ip)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		uint64_t *ips = realloc(s->ips, cap * sizeof(*ips));

		if (!ips)
			return -ENOMEM;
		s->ips = ips;
		s->cap = cap;
	}
	s->ips[s->n++] = ip;
	return 0;
}

/* @len bytes of the ring's data from @at, which may wrap around its end. */
static void ring_copy(const char *data, size_t size, uint64_t at, void *dst, size_t len)
{
	size_t off = (size_t)(at & (size - 1)), first = PZ_MIN(len, size - off);

	memcpy(dst, data + off, first);
	memcpy((char *)dst + first, data, len - first);
}

int pz_sampler_drain(struct pz_sampler *s)
{
	struct perf_event_mmap_page *meta = s->ring;
	const char *data = (const char *)s->ring + meta->data_offset;
	const size_t size = (size_t)meta->data_size;
	/* Acquire: the records up to data_head are written before it moved. */
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
	int ret = 0;

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
			s->lost += body.lost.lost;
		} else if (h.type == PERF_RECORD_SAMPLE) {
			switch (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) {
			case PERF_RECORD_MISC_KERNEL:
				ret = keep_ip(s, body.sample.ip);
				break;
			case PERF_RECORD_MISC_USER:
				s->user++;
				break;
			default:
				s->other++;
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
	if (s->ring)
		munmap(s->ring, s->ring_bytes);
	s->ring = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void pz_sampler_free(struct pz_sampler *s)
{
	free(s->ips);
	s->ips = NULL;
	s->n = s->cap = 0;
}
