/*
 * region.c - anonymous mappings with 4KB, 2MB or 1GB pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "region.h"
#include "stop.h"
#include "switches.h"

unsigned pz_base_page_shift(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned shift = PZ_PAGE_SHIFT_4KB;

	/* POSIX allows -1; Linux always answers a power of two of 4KB or more. */
	if (page > 0)
		shift = (unsigned)__builtin_ctzl((unsigned long)page);
	return shift;
}

size_t pz_thp_bytes(void)
{
	/* 0 until read; threads that race read the same file and store the same value. */
	static size_t cached;
	size_t bytes = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	unsigned long long v;
	FILE *f;

	if (bytes)
		return bytes;
	bytes = PZ_THP_BYTES;
	f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
	if (f) {
		/* A power of two of the base page or more, or it is not a PMD size. */
		if (fscanf(f, "%llu", &v) == 1 && v >= 4096 && !(v & (v - 1)))
			bytes = (size_t)v;
		fclose(f);
	}
	__atomic_store_n(&cached, bytes, __ATOMIC_RELAXED);
	return bytes;
}

int pz_mem_available(uint64_t *bytes)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			*bytes = (uint64_t)kb * 1024u;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int map_hugetlb(struct pz_region *r, size_t size, unsigned shift, int populate)
{
	size_t page = (size_t)1 << shift;
	size_t len = (size + page - 1) & ~(page - 1);
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (int)(shift << MAP_HUGE_SHIFT);
	void *p;

	if (len < size)
		return -EOVERFLOW;
	if (populate)
		flags |= MAP_POPULATE;
	/* hugetlb reserves its pages at mmap time: too few free pages fails here, with ENOMEM. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->addr = r->map_addr = p;
	r->size = r->map_size = len;
	return 0;
}

static int map_small(struct pz_region *r, size_t size, enum pz_thp thp, int populate, int guard)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (size + page - 1) & ~(page - 1);
	size_t gap = guard ? page : 0;
	/*
	 * THP can only map the aligned THP-sized (2MB over 4KB pages) ranges
	 * of a mapping: one that starts elsewhere loses up to that much at
	 * each end to base pages. Kernels since "mm: align larger anonymous
	 * mappings on THP boundaries" (2023) align some anonymous mappings
	 * themselves, not all: reserve one THP more and trim it, so the region
	 * starts on a boundary everywhere.
	 */
	const size_t thp_bytes = pz_thp_bytes();
	size_t slack = thp == PZ_THP_ON && len >= thp_bytes ? thp_bytes : 0;
	uint64_t avail;
	char *p;

	if (len < size || len + 2 * gap + slack < len)
		return -EOVERFLOW;
	/* Refuse before mapping: overcommit would accept it and the OOM killer would answer later. */
	if (pz_mem_available(&avail) == 0 && (uint64_t)len > avail)
		return -E2BIG;

	p = mmap(NULL, len + 2 * gap + slack, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (slack) {
		char *start =
			(char *)(((uintptr_t)p + gap + slack - 1) & ~(uintptr_t)(slack - 1)) - gap;
		size_t head = (size_t)(start - p), tail = slack - head;

		if (head)
			munmap(p, head);
		if (tail)
			munmap(start + len + 2 * gap, tail);
		p = start;
	}
	r->map_addr = p;
	r->map_size = len + 2 * gap;
	r->addr = p + gap;
	r->size = len;

	if (mprotect(r->addr, len, PROT_READ | PROT_WRITE))
		goto fail;
	/* Before the first touch, or the first fault decides the page size. */
	if (thp != PZ_THP_SYSTEM &&
	    madvise(r->addr, len, thp == PZ_THP_ON ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		goto fail;
	if (populate) {
		int err = pz_region_prefault(r->addr, len, PZ_PAGE_SHIFT_4KB);

		if (err) {
			errno = -err;
			goto fail;
		}
	}
	return 0;
fail : {
	int err = -errno;

	pz_region_unmap(r);
	return err;
}
}

int pz_region_map(struct pz_region *r, size_t size, unsigned page_shift, enum pz_thp thp,
		  int populate, int guard)
{
	memset(r, 0, sizeof(*r));
	r->page_shift = page_shift;
	if (size == 0)
		return -EINVAL;
	/* PAGEZERO_FAIL_MAP (region.h): as mmap(2) fails when memory runs out. */
	if (pz_switch_nth(PZ_SW_FAIL_MAP))
		return -ENOMEM;
	switch (page_shift) {
	case PZ_PAGE_SHIFT_4KB:
		return map_small(r, size, thp, populate, guard);
	case PZ_PAGE_SHIFT_2MB:
	case PZ_PAGE_SHIFT_1GB:
		if (guard || thp == PZ_THP_ON)
			return -EINVAL;
		return map_hugetlb(r, size, page_shift, populate);
	default:
		return -EINVAL;
	}
}

/* Populated this much at a time, so a stop request waits for at most one slice. */
#define PZ_PREFAULT_SLICE ((uintptr_t)256 << 20)

int pz_region_prefault(void *addr, size_t len, unsigned page_shift)
{
	const uintptr_t page = page_shift == PZ_PAGE_SHIFT_4KB ? (uintptr_t)sysconf(_SC_PAGESIZE)
							       : (uintptr_t)1 << page_shift;
	const uintptr_t slice = PZ_PREFAULT_SLICE > page ? PZ_PREFAULT_SLICE : page;
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = ((uintptr_t)addr + len + page - 1) & ~(page - 1);
	uintptr_t at;
	volatile char *q;

	if (len == 0)
		return 0;
	/*
	 * Populating gigabytes of 4KB pages takes seconds: in slices, with
	 * the stop flag read between them, a signal ends it within ~0.2 s.
	 */
	for (at = start; at < end; at += PZ_MIN(slice, end - at)) {
		if (pz_stopping())
			return -EINTR;
		if (madvise((void *)at, PZ_MIN(slice, end - at), MADV_POPULATE_WRITE))
			break;
	}
	if (at >= end)
		return 0;
	/*
	 * mm/madvise.c madvise_populate(): a fault that would have raised
	 * SIGBUS or SIGSEGV comes back as EFAULT (incompatible permissions as
	 * EINVAL, holes as ENOMEM). On the writable anonymous memory here that
	 * is a page the kernel could not allocate: for hugetlb, no free page
	 * on a node the policy allows.
	 */
	if (errno == EFAULT)
		return -ENOMEM;
	if (errno != EINVAL)
		return -errno;
	/*
	 * Kernels before 5.14 lack MADV_POPULATE_WRITE. Touching a hugetlb
	 * page that cannot be had raises SIGBUS, which would kill the
	 * interpreter: refuse instead. 4KB pages: touch every page, writing
	 * back what is there (the widened range may hold the caller's bytes
	 * around the buffer).
	 */
	if (page_shift != PZ_PAGE_SHIFT_4KB)
		return -EOPNOTSUPP;
	for (q = (char *)start; q < (char *)end; q += page)
		*q = *q;
	return 0;
}

void pz_region_unmap(struct pz_region *r)
{
	if (r->map_addr)
		munmap(r->map_addr, r->map_size);
	r->addr = r->map_addr = NULL;
	r->size = r->map_size = 0;
}

static int overlaps(const struct pz_span *s, unsigned n, uintptr_t start, uintptr_t end)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (start < s[i].end && s[i].start < end)
			return 1;
	return 0;
}

int pz_smaps_scan(const struct pz_span *s, unsigned n, struct pz_smaps_pages *pg)
{
	return pz_smaps_scan_file("/proc/self/smaps", s, n, pg);
}

int pz_smaps_scan_file(const char *path, const struct pz_span *s, unsigned n,
		       struct pz_smaps_pages *pg)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int in = 0;

	memset(pg, 0, sizeof(*pg));
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long start, end;
		unsigned long long kb;
		char perms[8];

		/* Field names such as "AnonHugePages:" begin with hex digits too,
		   but only a mapping's header line has a range and permissions. */
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3) {
			in = overlaps(s, n, start, end);
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "Rss: %llu kB", &kb) == 1)
			pg->rss += kb * 1024u;
		else if (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			pg->anon_huge += kb * 1024u;
		else if (sscanf(line, "Private_Hugetlb: %llu kB", &kb) == 1 ||
			 sscanf(line, "Shared_Hugetlb: %llu kB", &kb) == 1)
			pg->hugetlb += kb * 1024u;
		else if (sscanf(line, "KernelPageSize: %llu kB", &kb) == 1 &&
			 kb * 1024u > pg->kernel_page)
			pg->kernel_page = kb * 1024u;
	}
	free(line);
	fclose(f);
	return 0;
}
