/*
 * cache.h - getting a range out of every cache level before it is timed.
 *
 * The 2012 reviewers of clear_page_nocache: "You need to make sure the data
 * is cache cold, cache hot is misleading". A page the kernel clears at fault
 * time was usually last touched long ago; a benchmark that clears the same
 * buffer again and again finds it in cache. Cold mode flushes the target by
 * address (x86-64: clflushopt, else clflush; arm64 Linux: DC CIVAC, which Linux
 * lets user space run) or, elsewhere, evicts it by reading a buffer twice the
 * LLC's size.
 */
#ifndef PZ_CACHE_H
#define PZ_CACHE_H

#include "pz.h"
#include "names.h"

enum pz_flush {
	PZ_FLUSH_CLFLUSHOPT = 0, /* weakly ordered flush, one mfence at the end */
	PZ_FLUSH_CLFLUSH,        /* the original, ordered with respect to itself */
	PZ_FLUSH_DC_CIVAC,       /* arm64: clean + invalidate by address, one dsb at the end */
	PZ_FLUSH_EVICT,          /* read a buffer >= 2x LLC: any architecture */
	PZ_FLUSH_COUNT
};

/* The methods' names, by id (names.h: pz_name, pz_lookup). */
extern const struct pz_names pz_flush_names;
/* 1 when this CPU has the instruction (evict: always). */
int pz_flush_available(enum pz_flush m);
/* The best available: clflushopt, then clflush, then dc-civac, then evict. */
enum pz_flush pz_flush_best(void);

struct pz_flusher {
	enum pz_flush method;
	const char *evict; /* PZ_FLUSH_EVICT: the buffer read */
	size_t evict_len;
};

/*
 * Make [p, p + len) absent from the caches (as far as the method can) and
 * wait until that is done, so the next clock read starts a cold operation.
 * Test switch (switches.h): PAGEZERO_FAKE_FLUSH_US=N makes each flush last N us longer.
 */
void pz_flush(const struct pz_flusher *f, const void *p, size_t len);

#endif /* PZ_CACHE_H */
