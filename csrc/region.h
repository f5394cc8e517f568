/*
 * region.h - anonymous memory regions with a chosen page size.
 *
 * 4KB regions can ask for transparent huge pages or refuse them; 2MB and 1GB
 * regions are hugetlb mappings (MAP_HUGETLB | the size flag) and need
 * reserved hugepages. Optional PROT_NONE guard pages sit on both sides
 * (4KB regions only) so that a stray write faults instead of passing.
 */
#ifndef PZ_REGION_H
#define PZ_REGION_H

#include <sys/mman.h>

#include "pz.h"

/* Older C libraries' headers lack these; the kernel ABI has had them since 5.14 / 3.8. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

enum pz_thp { PZ_THP_SYSTEM = 0, PZ_THP_ON = 1, PZ_THP_OFF = 2 };

struct pz_region {
	void *addr;             /* first usable byte */
	size_t size;            /* usable bytes: the request rounded up to the page */
	void *map_addr;         /* what munmap gets */
	size_t map_size;
	unsigned page_shift;
};

/*
 * Map @size bytes. Returns 0 or -errno: -EINVAL for a bad page shift or a
 * guard on hugetlb, -ENOMEM when the kernel refused (for hugetlb: not enough
 * free hugepages), -E2BIG when @size exceeds MemAvailable (4KB pages only;
 * checked before mapping). On failure nothing stays mapped.
 */
int pz_region_map(struct pz_region *r, size_t size, unsigned page_shift,
		  enum pz_thp thp, int populate, int guard);
void pz_region_unmap(struct pz_region *r);

/*
 * Fault in [@addr, @addr + @len) of a region with 2^@page_shift pages,
 * writable, from the calling thread (so first-touch placement follows it),
 * with MADV_POPULATE_WRITE, which reports a failure instead of raising a
 * signal: a hugetlb page that cannot be allocated (a region bound to a node
 * whose pool is short, although mmap reserved against the whole pool; or
 * a MAP_NORESERVE mapping) gives -ENOMEM here, where a store would get
 * SIGBUS and kill the process. The range is widened to whole pages (the
 * system's page size for PZ_PAGE_SHIFT_4KB); what it holds is kept. 0 or
 * -errno. Kernels before 5.14 lack MADV_POPULATE_WRITE: the pages are
 * touched instead, which brings the SIGBUS back there.
 */
int pz_region_prefault(void *addr, size_t len, unsigned page_shift);

/* MemAvailable from /proc/meminfo, in bytes; 0 or -errno. */
int pz_mem_available(uint64_t *bytes);

#endif /* PZ_REGION_H */
