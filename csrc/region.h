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

/* Bytes of a PMD-mapped transparent huge page on x86-64 and arm64 with 4KB pages. */
#define PZ_THP_BYTES ((size_t)2 << 20)

/*
 * This kernel's: /sys/kernel/mm/transparent_hugepage/hpage_pmd_size (32MB
 * over arm64's 16KB pages, 512MB over 64KB), PZ_THP_BYTES where the file is
 * missing or unreadable (kernels before 4.6, no THP). Read once.
 */
size_t pz_thp_bytes(void);

struct pz_region {
	void *addr;     /* first usable byte */
	size_t size;    /* usable bytes: the request rounded up to the page */
	void *map_addr; /* what munmap gets */
	size_t map_size;
	unsigned page_shift;
};

/*
 * Map @size bytes. A base-page region (PZ_PAGE_SHIFT_4KB: the kernel's base
 * page, whatever its size) asking for THP (PZ_THP_ON) of pz_thp_bytes() or
 * more starts on such a boundary, so that every THP-sized piece of it can be
 * a huge page.
 * Returns 0 or -errno: -EINVAL for a bad page shift or a
 * guard on hugetlb, -ENOMEM when the kernel refused (for hugetlb: not enough
 * free hugepages), -E2BIG when @size exceeds MemAvailable (4KB pages only;
 * checked before mapping). On failure nothing stays mapped.
 * Test switch (switches.h): PAGEZERO_FAIL_MAP=N fails the Nth call since the load, so
 * that the clean-up after a partial success (a copy's second buffer) runs anywhere.
 */
int pz_region_map(struct pz_region *r, size_t size, unsigned page_shift, enum pz_thp thp,
		  int populate, int guard);
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

/* The kernel's base page (sysconf(_SC_PAGESIZE)) as a shift: 12, 14 or 16 on arm64. */
unsigned pz_base_page_shift(void);

/* MemAvailable from /proc/meminfo, in bytes; 0 or -errno. */
int pz_mem_available(uint64_t *bytes);

/* An address range [start, end). */
struct pz_span {
	uintptr_t start, end;
};

/*
 * What the kernel gave some mappings, from their /proc/self/smaps entries.
 * A mapping the kernel merged with one of the spans counts whole: anonymous
 * neighbours with equal flags merge, so a region asking for THP can share
 * its entry with another such region next to it.
 */
struct pz_smaps_pages {
	uint64_t rss;         /* Rss: resident bytes in 4KB or THP pages */
	uint64_t anon_huge;   /* AnonHugePages: the part of Rss in PMD-mapped THP */
	uint64_t hugetlb;     /* Private_Hugetlb + Shared_Hugetlb */
	uint64_t kernel_page; /* KernelPageSize: the hugetlb page size, else 4KB */
};

/*
 * Sum the smaps counters of every mapping that overlaps one of the @n
 * spans, each mapping once, in one read of /proc/self/smaps (the kernel
 * walks every mapping's page tables to write it: reading it once per span
 * would cost n^2 walks). 0 or -errno.
 */
int pz_smaps_scan(const struct pz_span *s, unsigned n, struct pz_smaps_pages *pg);
/* The same from a file in smaps' format (tests read fixtures). */
int pz_smaps_scan_file(const char *path, const struct pz_span *s, unsigned n,
		       struct pz_smaps_pages *pg);

#endif /* PZ_REGION_H */
