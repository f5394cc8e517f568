/*
 * test_cache.c - csrc/cache.c: which flush methods this CPU and OS offer, the best
 * one, and that flushing by every method keeps what the range holds (a flush that
 * discarded dirty lines, DC IVAC for DC CIVAC, would lose the clear's zeros on real
 * hardware), over aligned and unaligned ranges and ones ending on a page boundary.
 *
 *   TEST=cache bash tests/c/build.sh sanitize
 *
 * Cross-built for arm64 by tests/c/cross_arm64.sh, where DC CIVAC must be offered:
 * Linux lets user space run it (csrc/cache.c says why).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "check.h"
#include "names.h"

#define BUF (64 * 1024)

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 131 + 7);
}

int main(void)
{
	static char evict_buf[1 << 20];
	unsigned char *buf = aligned_alloc(4096, BUF);
	static const size_t offs[] = { 0, 1, 63, 64, 65, 4095 };
	static const size_t lens[] = { 1, 63, 64, 65, 4096, BUF / 2 };
	int m, any = 0;
	size_t i, o, l;

	if (!buf)
		return 2;
	for (m = 0; m < PZ_FLUSH_COUNT; m++) {
		printf("%s: %s\n", pz_name(&pz_flush_names, m),
		       pz_flush_available(m) ? "available" : "not available");
		any |= pz_flush_available(m);
	}
	CHECK(any);
	CHECK(pz_flush_available(PZ_FLUSH_EVICT));
	CHECK(pz_flush_available(pz_flush_best()));
#if defined(__x86_64__)
	CHECK(!pz_flush_available(PZ_FLUSH_DC_CIVAC));
	CHECK(pz_flush_best() == PZ_FLUSH_CLFLUSHOPT || pz_flush_best() == PZ_FLUSH_CLFLUSH);
#elif defined(__aarch64__) && defined(__linux__)
	CHECK(pz_flush_available(PZ_FLUSH_DC_CIVAC));
	CHECK(!pz_flush_available(PZ_FLUSH_CLFLUSHOPT) && !pz_flush_available(PZ_FLUSH_CLFLUSH));
	CHECK(pz_flush_best() == PZ_FLUSH_DC_CIVAC);
#endif
	printf("best: %s\n", pz_name(&pz_flush_names, pz_flush_best()));

	for (m = 0; m < PZ_FLUSH_COUNT; m++) {
		struct pz_flusher f = { .method = m,
					.evict = evict_buf,
					.evict_len = sizeof(evict_buf) };
		int intact = 1;

		if (!pz_flush_available(m))
			continue;
		for (o = 0; o < PZ_ARRAY_SIZE(offs); o++)
			for (l = 0; l < PZ_ARRAY_SIZE(lens); l++) {
				size_t off = offs[o], len = PZ_MIN(lens[l], BUF - off);

				for (i = 0; i < BUF; i++)
					buf[i] = pattern(i);
				/* The range's lines dirty, as a clear leaves them. */
				memset(buf + off, 0, len);
				pz_flush(&f, buf + off, len);
				for (i = 0; i < BUF; i++)
					intact &= buf[i] ==
						  (i >= off && i < off + len ? 0 : pattern(i));
			}
		/* And a range that ends on the buffer's last byte. */
		pz_flush(&f, buf + BUF - 100, 100);
		intact &= buf[BUF - 1] == pattern(BUF - 1);
		printf("%s %s keeps the data\n", intact ? "ok  " : "FAIL",
		       pz_name(&pz_flush_names, m));
		CHECK(intact);
	}
	free(buf);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
