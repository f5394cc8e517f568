/*
 * test_kernels.c - C-level correctness tests of every fill and copy kernel.
 *
 * No Python: this builds with the C core alone (tests/c/build.sh), so it also
 * runs under AddressSanitizer/UBSan and under qemu for cross-built arches.
 *
 * Every kernel of the registry is driven through pz_kernel_fill() /
 * pz_kernel_copy() (so the shared head/tail peeling is tested too) over
 * buffers that sit between PROT_NONE guard pages. A stray write lands either
 * in the region (caught by the canary scan of the whole region after every
 * call) or in a guard page (caught as SIGSEGV, reported with the case).
 *
 * Usage: test_kernels [NAME...]   (NAMEs restrict the kernels run)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pz.h"
#include "cpu.h"
#include "kernels.h"
#include "region.h"
#include "switches.h"

#define CANARY 0x5Cu
#define MAX_FAIL_LINES 20

/* Region size classes: a case uses the smallest one it fits in, so the
 * whole-region scan after each call costs about as much as the call. */
static const size_t class_size[] = { 4096, 16384, 73728, 139264, 270336 };
#define NCLASS PZ_ARRAY_SIZE(class_size)

struct rclass {
	struct pz_region dst;
	struct pz_region src;
	uint8_t *pristine; /* what src holds; src must never change */
};

static struct rclass cls[NCLASS];
static uint8_t *canary_ref; /* CANARY bytes, as long as the largest region */
static uint8_t *value_ref;  /* the current fill byte, same length */
static size_t max_region;

static unsigned long n_passed, n_failed;

/* What is running now, for the SIGSEGV handler. */
static struct {
	const char *kind, *name;
	int c;
	const char *anchor;
	size_t off, len, region_size;
	const char *src_anchor;
	size_t src_off;
	uintptr_t dst_base, src_base;
	int active;
} cur;

static const char *kind_name(enum pz_kernel_kind kind)
{
	return kind == PZ_KIND_FILL ? "fill" : kind == PZ_KIND_COPY ? "copy" : "?";
}

/* ---------------------------------------------------------------- checks */

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		n_passed++;
		return;
	}
	n_failed++;
	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void describe_fault_addr(uintptr_t a, char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < NCLASS; i++) {
		const struct pz_region *rs[2] = { &cls[i].dst, &cls[i].src };
		const char *nm[2] = { "dst", "src" };
		int j;

		for (j = 0; j < 2; j++) {
			uintptr_t lo = (uintptr_t)rs[j]->addr, hi = lo + rs[j]->size;

			if (a >= lo - 65536 && a < lo)
				snprintf(buf, n,
					 "%zu bytes below the %s region of size %zu (lower guard)",
					 (size_t)(lo - a), nm[j], rs[j]->size);
			else if (a >= hi && a < hi + 65536)
				snprintf(buf, n,
					 "%zu bytes past the end of the %s region of size %zu "
					 "(upper guard)",
					 (size_t)(a - hi), nm[j], rs[j]->size);
			else
				continue;
			return;
		}
	}
	snprintf(buf, n, "not next to a test region");
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char where[160];
	(void)uc;

	if (cur.active) {
		describe_fault_addr((uintptr_t)si->si_addr, where, sizeof(where));
		fprintf(stderr, "\nCRASH (signal %d) in %s %s, dst=%s %zu len=%zu (region %zu)",
			sig, cur.kind, cur.name, cur.anchor, cur.off, cur.len, cur.region_size);
		if (cur.src_anchor)
			fprintf(stderr, ", src=%s %zu", cur.src_anchor, cur.src_off);
		else
			fprintf(stderr, ", c=0x%02x", cur.c & 0xff);
		fprintf(stderr, ": fault at %p, %s\n", si->si_addr, where);
		fflush(stderr);
	}
	/* Let it die of the signal it got (or let a sanitizer report it). */
	signal(sig, SIG_DFL);
}

static void install_segv_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* ------------------------------------------------------------- registry */

static int is_pow2(size_t x)
{
	return x && !(x & (x - 1));
}

static void expect_not_found(enum pz_kernel_kind kind, const char *q)
{
	const struct pz_kernel *k = pz_kernel_find(kind, q);

	/* q may happen to be a real name; then it must be that kernel. */
	if (k && k->kind == kind && strcmp(k->name, q) == 0) {
		n_passed++;
		return;
	}
	check(k == NULL, "registry: pz_kernel_find(%s, \"%s\") returned \"%s\" (%s), want NULL",
	      kind_name(kind), q, k ? k->name : "", k ? kind_name(k->kind) : "");
}

static int name_exists(enum pz_kernel_kind kind, const char *q)
{
	size_t i, n = pz_kernel_count();

	for (i = 0; i < n; i++) {
		const struct pz_kernel *k = pz_kernel_at(i);

		if (k && k->kind == kind && k->name && strcmp(k->name, q) == 0)
			return 1;
	}
	return 0;
}

/* One reader of every row's unit and alignment, as a measurement's thread reads its kernel's. */
static void *read_rows(void *arg)
{
	size_t *sum = arg, i;

	for (i = 0; i < pz_kernel_count(); i++)
		*sum += pz_kernel_at(i)->unit + pz_kernel_at(i)->align;
	return NULL;
}

/*
 * The registry's first use from several threads at once (run first, before
 * anything else touched it): its one-time fill of the DC ZVA rows is a
 * pthread_once, so every thread sees the filled rows and ThreadSanitizer no
 * race (a plain flag let a second caller store while a first one read).
 */
static void test_first_use_from_threads(void)
{
	pthread_t tid[4];
	size_t sums[4] = { 0 }, i, started = 0;

	for (i = 0; i < 4; i++)
		started += pthread_create(&tid[i], NULL, read_rows, &sums[i]) == 0;
	check(started == 4, "registry: %zu of 4 threads started", started);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 1; i < started; i++)
		check(sums[i] == sums[0], "registry: thread %zu saw other units (%zu, not %zu)", i,
		      sums[i], sums[0]);
	for (i = 0; i < pz_kernel_count(); i++)
		check(pz_kernel_at(i)->unit != PZ_DCZVA_BLOCK &&
			      pz_kernel_at(i)->align != PZ_DCZVA_BLOCK,
		      "registry: row %zu kept the DC ZVA placeholder", i);
}

static void test_registry(void)
{
	size_t n = pz_kernel_count(), i, j;
	uint64_t cpu = pz_cpu_features();
	const uint64_t all_feats = (PZ_FEAT_COUNT >= 64) ? ~0ull : ((1ull << PZ_FEAT_COUNT) - 1);
	size_t nfill = 0, ncopy = 0;
	char buf[512];

	check(n > 0, "registry: pz_kernel_count() is 0");

	for (i = 0; i < PZ_FEAT_COUNT; i++) {
		const char *fn = pz_feature_name((unsigned)i);

		check(fn && fn[0], "cpu: pz_feature_name(%zu) is empty", i);
	}
	check((cpu & ~all_feats) == 0, "cpu: pz_cpu_features() has unknown bits 0x%llx",
	      (unsigned long long)(cpu & ~all_feats));
	pz_feature_list(all_feats, buf, 8);
	check(strlen(buf) < 8, "cpu: pz_feature_list() did not NUL-terminate a short buffer");
	pz_feature_list(cpu, buf, sizeof(buf));
	printf("cpu features: %s\n", buf[0] ? buf : "(none)");

	for (i = 0; i < n; i++) {
		const struct pz_kernel *k = pz_kernel_at(i);
		char reason[256], small[8];
		int avail, want;

		check(k != NULL, "registry: pz_kernel_at(%zu) is NULL", i);
		if (!k)
			continue;
		check(k->name && k->name[0], "registry: row %zu has no name", i);
		if (!k->name || !k->name[0])
			continue;
		check(k->kind == PZ_KIND_FILL || k->kind == PZ_KIND_COPY,
		      "registry: %s has bad kind %d", k->name, (int)k->kind);
		nfill += k->kind == PZ_KIND_FILL;
		ncopy += k->kind == PZ_KIND_COPY;
		check(k->description && k->description[0],
		      "registry: %s %s has an empty description", kind_name(k->kind), k->name);
		check(k->arch && k->arch[0], "registry: %s %s has an empty arch",
		      kind_name(k->kind), k->name);
		check(k->kind == PZ_KIND_FILL ? k->fn.fill != NULL : k->fn.copy != NULL,
		      "registry: %s %s has no function", kind_name(k->kind), k->name);
		check(k->unit >= 1, "registry: %s %s has unit 0", kind_name(k->kind), k->name);
		check(is_pow2(k->align), "registry: %s %s align %zu is not a power of two",
		      kind_name(k->kind), k->name, k->align);
		check((k->features & ~all_feats) == 0, "registry: %s %s needs unknown feature bits",
		      kind_name(k->kind), k->name);
		check((k->flags & ~(PZ_NONTEMPORAL | PZ_ZERO_ONLY)) == 0,
		      "registry: %s %s has unknown flags 0x%x", kind_name(k->kind), k->name,
		      k->flags);
		check(k->kind == PZ_KIND_FILL || !(k->flags & PZ_ZERO_ONLY),
		      "registry: copy %s is marked PZ_ZERO_ONLY", k->name);

		/* names are unique per kind */
		for (j = 0; j < i; j++) {
			const struct pz_kernel *o = pz_kernel_at(j);

			if (o && o->name && o->kind == k->kind && strcmp(o->name, k->name) == 0)
				check(0, "registry: %s name \"%s\" is used by rows %zu and %zu",
				      kind_name(k->kind), k->name, j, i);
		}

		/* find returns this very row */
		check(pz_kernel_find(k->kind, k->name) == k,
		      "registry: pz_kernel_find(%s, \"%s\") is not row %zu", kind_name(k->kind),
		      k->name, i);
		/* the other kind: that kind's row of the same name, or NULL */
		{
			enum pz_kernel_kind other = k->kind == PZ_KIND_FILL ? PZ_KIND_COPY
									    : PZ_KIND_FILL;
			const struct pz_kernel *o = pz_kernel_find(other, k->name);

			if (name_exists(other, k->name))
				check(o && o->kind == other && strcmp(o->name, k->name) == 0,
				      "registry: pz_kernel_find(%s, \"%s\") missed the row",
				      kind_name(other), k->name);
			else
				check(o == NULL,
				      "registry: pz_kernel_find(%s, \"%s\") should be NULL",
				      kind_name(other), k->name);
		}
		/* near misses are not found */
		snprintf(buf, sizeof(buf), "%s-", k->name);
		expect_not_found(k->kind, buf);
		snprintf(buf, sizeof(buf), " %s", k->name);
		expect_not_found(k->kind, buf);
		snprintf(buf, sizeof(buf), "%.*s", (int)strlen(k->name) - 1, k->name);
		expect_not_found(k->kind, buf);

		/* availability agrees with the CPU's features, with a reason */
		reason[0] = '\0';
		avail = pz_kernel_available(k, reason, sizeof(reason));
		want = (k->features & ~cpu) == 0;
		check(avail == 0 || avail == 1, "registry: pz_kernel_available(%s) returned %d",
		      k->name, avail);
		check(!!avail == want,
		      "registry: %s %s available=%d but its features are %s on this CPU (%s)",
		      kind_name(k->kind), k->name, avail, want ? "all present" : "missing", reason);
		if (!avail)
			check(reason[0] != '\0' && memchr(reason, '\0', sizeof(reason)),
			      "registry: %s %s unavailable without a reason", kind_name(k->kind),
			      k->name);
		memset(small, 'x', sizeof(small));
		pz_kernel_available(k, small, sizeof(small));
		check(memchr(small, '\0', sizeof(small)) != NULL,
		      "registry: pz_kernel_available(%s, buf, 8) left buf unterminated", k->name);
	}

	check(nfill > 0, "registry: no fill kernel");
	check(ncopy > 0, "registry: no copy kernel");
	check(pz_kernel_find(PZ_KIND_FILL, "default") != NULL, "registry: no fill \"default\"");
	check(pz_kernel_find(PZ_KIND_COPY, "default") != NULL, "registry: no copy \"default\"");
	expect_not_found(PZ_KIND_FILL, "");
	expect_not_found(PZ_KIND_COPY, "");
	expect_not_found(PZ_KIND_FILL, "no-such-kernel");
	expect_not_found(PZ_KIND_COPY, "no-such-kernel");
	expect_not_found(PZ_KIND_FILL, "all");
	expect_not_found(PZ_KIND_COPY, "all");
	printf("registry: %zu fill, %zu copy kernels\n", nfill, ncopy);

	/* clear_page()'s row: a fill kernel this CPU runs, printed for the callers to
	 * check per CPU model and hidden feature (tests/c/cross_arm64.sh). */
	{
		const struct pz_kernel *cp = pz_kernel_clear_pages();
		char reason[64];

		check(cp && cp->kind == PZ_KIND_FILL, "registry: clear_pages is not a fill row");
		check(cp && pz_kernel_available(cp, reason, sizeof(reason)),
		      "registry: clear_pages is %s, which this CPU cannot run",
		      cp ? cp->name : "?");
		printf("clear_pages: %s\n", cp ? cp->name : "(none)");
	}
}

/* --------------------------------------------------------------- regions */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

/* 1 when writing one byte at @p kills a child process (a guard page is there). */
static int write_faults(volatile uint8_t *p)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) { /* a sanitizer's SEGV report is expected noise */
			dup2(fd, 2);
			dup2(fd, 1);
		}
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		*p = 1;
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int map_regions(void)
{
	size_t i, j;

	for (i = 0; i < NCLASS; i++) {
		int err;

		err = pz_region_map(&cls[i].dst, class_size[i], PZ_PAGE_SHIFT_4KB, PZ_THP_OFF, 1,
				    1);
		if (err == 0)
			err = pz_region_map(&cls[i].src, class_size[i], PZ_PAGE_SHIFT_4KB,
					    PZ_THP_OFF, 1, 1);
		if (err) {
			printf("FAIL region: pz_region_map(%zu, guard) = %d (%s)\n", class_size[i],
			       err, strerror(-err));
			n_failed++;
			return -1;
		}
		check(cls[i].dst.size >= class_size[i] && cls[i].src.size >= class_size[i],
		      "region: asked for %zu bytes, got %zu", class_size[i], cls[i].dst.size);
		if (cls[i].dst.size > max_region)
			max_region = cls[i].dst.size;
		if (cls[i].src.size > max_region)
			max_region = cls[i].src.size;
	}

	canary_ref = malloc(max_region);
	value_ref = malloc(max_region);
	if (!canary_ref || !value_ref)
		return -1;
	memset(canary_ref, CANARY, max_region);

	for (i = 0; i < NCLASS; i++) {
		uint8_t *s = cls[i].src.addr;

		memset(cls[i].dst.addr, CANARY, cls[i].dst.size);
		cls[i].pristine = malloc(cls[i].src.size);
		if (!cls[i].pristine)
			return -1;
		for (j = 0; j < cls[i].src.size; j++)
			s[j] = (uint8_t)(rng() >> 56);
		memcpy(cls[i].pristine, s, cls[i].src.size);
	}

	/* The guard pages the tests rely on really are there. */
	{
		uint8_t *a = cls[0].dst.addr;
		int lo = write_faults(a - 1), hi = write_faults(a + cls[0].dst.size);

		check(lo == 1, "region: no guard page below the region (write at addr-1 %s)",
		      lo == 0 ? "succeeded" : "could not be tested");
		check(hi == 1, "region: no guard page above the region (write at addr+size %s)",
		      hi == 0 ? "succeeded" : "could not be tested");
		check(write_faults(a) == 0, "region: writing the first usable byte faults");
	}
	return 0;
}

static void unmap_regions(void)
{
	size_t i;

	for (i = 0; i < NCLASS; i++) {
		if (cls[i].dst.map_addr)
			pz_region_unmap(&cls[i].dst);
		if (cls[i].src.map_addr)
			pz_region_unmap(&cls[i].src);
		free(cls[i].pristine);
	}
	free(canary_ref);
	free(value_ref);
}

static struct rclass *class_for(size_t need)
{
	size_t i;

	for (i = 0; i < NCLASS; i++)
		if (cls[i].dst.size >= need && cls[i].src.size >= need)
			return &cls[i];
	return NULL;
}

/* ----------------------------------------------------------- the cases */

/*
 * A placement is an offset from the start of a region (at_end = 0) or a gap
 * between the end of the buffer and the end of the region (at_end = 1; gap 0
 * means the buffer ends exactly at the upper guard page).
 */
struct place {
	int at_end;
	size_t pos;
};

static size_t place_off(struct place p, size_t region, size_t len)
{
	return p.at_end ? region - p.pos - len : p.pos;
}

static const char *anchor_name(struct place p)
{
	return p.at_end ? "end-gap" : "start";
}

struct kstate {
	const struct pz_kernel *k;
	int c; /* fill byte */
	unsigned long cases, fails;
};

static void report_fail(struct kstate *ks, const char *fmt, ...)
{
	va_list ap;

	ks->fails++;
	n_failed++;
	if (ks->fails > MAX_FAIL_LINES) {
		if (ks->fails == MAX_FAIL_LINES + 1)
			printf("FAIL %s %s: further failures not shown\n", kind_name(ks->k->kind),
			       ks->k->name);
		return;
	}
	printf("FAIL %s %s: ", kind_name(ks->k->kind), ks->k->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/*
 * Describe what is wrong in @region (size @n) where [off, off+len) should
 * equal @want and the rest CANARY: the first bad byte, how many, and their span.
 */
static void describe_bad(const uint8_t *region, size_t n, size_t off, size_t len,
			 const uint8_t *want, char *buf, size_t bn)
{
	size_t i, first = (size_t)-1, last = 0, count = 0;
	uint8_t got = 0, exp = 0;

	for (i = 0; i < n; i++) {
		uint8_t e = (i >= off && i < off + len) ? want[i - off] : CANARY;

		if (region[i] != e) {
			if (first == (size_t)-1) {
				first = i;
				got = region[i];
				exp = e;
			}
			last = i;
			count++;
		}
	}
	if (first == (size_t)-1) {
		snprintf(buf, bn, "no bad byte found on rescan (nondeterministic?)");
		return;
	}
	snprintf(buf, bn,
		 "first bad byte at region+%zu (dst%+lld) is 0x%02x, expected 0x%02x (%s); "
		 "%zu bad bytes in region[%zu, %zu]",
		 first, (long long)first - (long long)off, got, exp,
		 (first >= off && first < off + len) ? "inside the buffer"
		 : first < off                       ? "BEFORE the buffer"
						     : "PAST the end of the buffer",
		 count, first, last);
}

static void run_fill_case(struct kstate *ks, struct place dp, size_t len)
{
	struct rclass *rc = class_for(dp.pos + len);
	uint8_t *base;
	size_t size, off;
	char why[256];

	if (!rc) {
		report_fail(ks, "test bug: no region for dst %zu + len %zu", dp.pos, len);
		return;
	}
	base = rc->dst.addr;
	size = rc->dst.size;
	off = place_off(dp, size, len);

	cur.anchor = anchor_name(dp);
	cur.off = dp.pos;
	cur.len = len;
	cur.region_size = size;
	cur.src_anchor = NULL;
	cur.dst_base = (uintptr_t)base;
	cur.active = 1;
	pz_kernel_fill(ks->k, base + off, ks->c, len);
	cur.active = 0;

	ks->cases++;
	if (memcmp(base, canary_ref, off) == 0 && memcmp(base + off, value_ref, len) == 0 &&
	    memcmp(base + off + len, canary_ref, size - off - len) == 0) {
		n_passed++;
		memset(base + off, CANARY, len);
		return;
	}
	describe_bad(base, size, off, len, value_ref, why, sizeof(why));
	report_fail(ks, "c=0x%02x dst=region+%zu (%s %zu, dst mod 64 = %zu) len=%zu region=%zu: %s",
		    ks->c & 0xff, off, anchor_name(dp), dp.pos,
		    (size_t)((uintptr_t)(base + off) & 63), len, size, why);
	memset(base, CANARY, size);
}

static void run_copy_case(struct kstate *ks, struct place dp, struct place sp, size_t len)
{
	struct rclass *rc = class_for(dp.pos + len);
	uint8_t *dbase, *sbase;
	size_t size, ssize, off, soff;
	char why[256];

	if (!rc) {
		report_fail(ks, "test bug: no region for dst %zu + len %zu", dp.pos, len);
		return;
	}
	dbase = rc->dst.addr;
	sbase = rc->src.addr;
	size = rc->dst.size;
	ssize = rc->src.size;
	if (sp.pos > ssize - len) /* whole-region copies */
		sp.pos = ssize - len;
	off = place_off(dp, size, len);
	soff = place_off(sp, ssize, len);

	cur.anchor = anchor_name(dp);
	cur.off = dp.pos;
	cur.len = len;
	cur.region_size = size;
	cur.src_anchor = anchor_name(sp);
	cur.src_off = sp.pos;
	cur.dst_base = (uintptr_t)dbase;
	cur.src_base = (uintptr_t)sbase;
	cur.active = 1;
	pz_kernel_copy(ks->k, dbase + off, sbase + soff, len);
	cur.active = 0;

	ks->cases++;
	if (memcmp(dbase, canary_ref, off) == 0 &&
	    memcmp(dbase + off, rc->pristine + soff, len) == 0 &&
	    memcmp(dbase + off + len, canary_ref, size - off - len) == 0 &&
	    memcmp(sbase + soff, rc->pristine + soff, len) == 0) {
		n_passed++;
		memset(dbase + off, CANARY, len);
		return;
	}
	if (memcmp(sbase + soff, rc->pristine + soff, len) != 0) {
		snprintf(why, sizeof(why), "the SOURCE was modified");
		memcpy(sbase, rc->pristine, ssize);
	} else {
		describe_bad(dbase, size, off, len, rc->pristine + soff, why, sizeof(why));
	}
	report_fail(ks,
		    "dst=region+%zu (%s %zu, dst mod 64 = %zu) src=region+%zu (%s %zu, src mod 64 "
		    "= %zu) "
		    "len=%zu region=%zu: %s",
		    off, anchor_name(dp), dp.pos, (size_t)((uintptr_t)(dbase + off) & 63), soff,
		    anchor_name(sp), sp.pos, (size_t)((uintptr_t)(sbase + soff) & 63), len, size,
		    why);
	memset(dbase, CANARY, size);
}

static void run_case(struct kstate *ks, struct place dp, size_t len)
{
	if (ks->k->kind == PZ_KIND_FILL) {
		run_fill_case(ks, dp, len);
		return;
	}
	/* Source placements independent of the destination's: both ends of the
	 * source region, the same misalignment as dst, and two others that
	 * vary with the case. */
	{
		struct place sps[5];
		size_t i, n = 0;

		sps[n++] = (struct place){ 0, 0 };
		sps[n++] = (struct place){ 1, 0 };
		sps[n++] = (struct place){ 0, dp.pos };
		sps[n++] = (struct place){ 0, (dp.pos * 13 + len * 7 + 5) % 130 };
		sps[n++] = (struct place){ 1, (dp.pos * 5 + len * 3 + 1) % 64 };
		for (i = 0; i < n; i++)
			run_copy_case(ks, dp, sps[i], len);
	}
}

static const size_t big_lens[] = {
	301,   320,   383,    384,    385,    447,    448,    449,    511,    512,    513,
	1000,  1023,  1024,   1025,   2047,   2048,   2049,   3000,   4031,   4032,   4033,
	4095,  4096,  4097,   4159,   4160,   4161,   5000,   8128,   8191,   8192,   8193,
	8256,  12288, 16383,  16384,  16385,  32767,  32768,  32769,  65472,  65535,  65536,
	65537, 65600, 100000, 131071, 131072, 131073, 200003, 262143, 262144, 262145,
};
static const size_t big_offs[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 127, 128, 129,
};
static const size_t big_gaps[] = { 0, 1, 7, 8, 31, 32, 63, 64, 65 };

static void run_all_cases(struct kstate *ks)
{
	size_t pos, len, i, j;
	int end;

	/* every offset 0..129 with every length 0..300, from both ends */
	for (end = 0; end < 2; end++)
		for (pos = 0; pos <= 129; pos++)
			for (len = 0; len <= 300; len++)
				run_case(ks, (struct place){ end, pos }, len);

	/* larger lengths around powers of two and pages */
	for (i = 0; i < PZ_ARRAY_SIZE(big_lens); i++) {
		for (j = 0; j < PZ_ARRAY_SIZE(big_offs); j++)
			run_case(ks, (struct place){ 0, big_offs[j] }, big_lens[i]);
		for (j = 0; j < PZ_ARRAY_SIZE(big_gaps); j++)
			run_case(ks, (struct place){ 1, big_gaps[j] }, big_lens[i]);
	}

	/* every length within 63 of 64KB, at a few offsets */
	for (len = 65536 - 63; len <= 65536 + 63; len++) {
		run_case(ks, (struct place){ 0, 0 }, len);
		run_case(ks, (struct place){ 0, 1 }, len);
		run_case(ks, (struct place){ 0, 63 }, len);
		run_case(ks, (struct place){ 1, 0 }, len);
		run_case(ks, (struct place){ 1, 1 }, len);
	}

	/* whole regions: start at the region start, end at the upper guard */
	for (i = 0; i < NCLASS; i++)
		run_case(ks, (struct place){ 0, 0 }, cls[i].dst.size);
}

static int selected(const struct pz_kernel *k, int argc, char **argv)
{
	int i, any = 0;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		any = 1;
		if (strcmp(argv[i], k->name) == 0)
			return 1;
	}
	return !any;
}

static void test_kernel(const struct pz_kernel *k, unsigned *skipped)
{
	char reason[256] = "";
	struct kstate ks;
	static const int fill_values[] = { 0, 0xA7 };
	size_t nv, v;

	if (!pz_kernel_available(k, reason, sizeof(reason))) {
		printf("SKIP %s %s: %s\n", kind_name(k->kind), k->name, reason);
		(*skipped)++;
		return;
	}

	memset(&ks, 0, sizeof(ks));
	ks.k = k;
	cur.kind = kind_name(k->kind);
	cur.name = k->name;

	if (k->kind == PZ_KIND_FILL) {
		nv = (k->flags & PZ_ZERO_ONLY) ? 1 : PZ_ARRAY_SIZE(fill_values);
		for (v = 0; v < nv; v++) {
			ks.c = fill_values[v];
			cur.c = ks.c;
			memset(value_ref, ks.c, max_region);
			run_all_cases(&ks);
		}
		/*
		 * memset() semantics: c is converted to unsigned char, so a
		 * caller that passes a loop index (perf's memset(dst, i, n))
		 * gets its low byte.
		 */
		if (!(k->flags & PZ_ZERO_ONLY)) {
			static const int odd_c[] = { 0x1A7, -89 /* (signed char)0xA7 */ };
			size_t pos, len;

			memset(value_ref, 0xA7, max_region);
			for (v = 0; v < PZ_ARRAY_SIZE(odd_c); v++) {
				ks.c = odd_c[v];
				cur.c = ks.c;
				for (pos = 0; pos < 70; pos += 3)
					for (len = 0; len <= 600; len += 7)
						run_case(&ks, (struct place){ 0, pos }, len);
			}
		}
	} else {
		run_all_cases(&ks);
	}

	printf("%s %s %s (%s, unit %zu, align %zu%s%s): %lu cases, %lu failed\n",
	       ks.fails ? "FAIL" : "ok  ", kind_name(k->kind), k->name, k->arch, k->unit, k->align,
	       (k->flags & PZ_NONTEMPORAL) ? ", non-temporal" : "",
	       (k->flags & PZ_ZERO_ONLY) ? ", zero-only" : "", ks.cases, ks.fails);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t i, n;
	unsigned skipped = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	install_segv_handler();
	/* PAGEZERO_HIDE_FEATURES from the caller (tests/c/cross_arm64.sh) hides kernels. */
	if (pz_switches_load() < 0)
		return 2;

	test_first_use_from_threads();
	test_registry();

	if (map_regions() == 0) {
		n = pz_kernel_count();
		for (i = 0; i < n; i++) {
			const struct pz_kernel *k = pz_kernel_at(i);

			if (k && k->name && selected(k, argc, argv))
				test_kernel(k, &skipped);
		}
	}
	unmap_regions();

	printf("%u kernels skipped\n", skipped);
	printf("%lu passed, %lu failed\n", n_passed, n_failed);
	return n_failed ? 1 : 0;
}
