/*
 * kernels.c - the kernel registry and the shared head/tail handling.
 *
 * The table is the x-macro expansion of arch/<arch>/kernels.def: there is
 * no second list anywhere (Python reads this one through csrc/py/kernels.c),
 * and no second answer to which row clear_page() runs (its PZ_CLEAR_PAGES rows).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "kernels.h"

/* Prototypes, once. */
#define PZ_FILL(fn, name, desc, feat, flags, unit, align) void fn(void *, int, size_t);
#define PZ_COPY(fn, name, desc, feat, flags, unit, align) void fn(void *, const void *, size_t);
#define PZ_CLEAR_PAGES(name, condition)
#include "kernel_rows.h"
#undef PZ_FILL
#undef PZ_COPY
#undef PZ_CLEAR_PAGES

/* The registry, once: a row of either kind, its function in fn.fill or fn.copy. */
#define PZ_ROW(kd, fld, f, nm, desc, feat, fl, un, al) \
	{ .name = nm,                                  \
	  .description = desc,                         \
	  .arch = PZ_ARCH,                             \
	  .kind = kd,                                  \
	  .features = feat,                            \
	  .flags = fl,                                 \
	  .unit = un,                                  \
	  .align = al,                                 \
	  .fn.fld = f },
#define PZ_FILL(...) PZ_ROW(PZ_KIND_FILL, fill, __VA_ARGS__)
#define PZ_COPY(...) PZ_ROW(PZ_KIND_COPY, copy, __VA_ARGS__)

#define PZ_CLEAR_PAGES(name, condition)

static struct pz_kernel registry[] = {
#include "kernel_rows.h"
};
#undef PZ_FILL
#undef PZ_COPY
#undef PZ_ROW
#undef PZ_CLEAR_PAGES

/*
 * What clear_page() / clear_pages() runs, by the PZ_CLEAR_PAGES rows of the
 * .def files (which cite the kernel source each follows), in their order.
 */
struct clear_pages_choice {
	const char *name;
	uint64_t condition; /* PZ_FEAT_* Linux must have set, beyond the row's own features */
	const char *arch;
};

#define PZ_FILL(...)
#define PZ_COPY(...)
#define PZ_CLEAR_PAGES(nm, cond) { .name = nm, .condition = cond, .arch = PZ_ARCH },

static const struct clear_pages_choice clear_pages_order[] = {
#include "kernel_rows.h"
};
#undef PZ_FILL
#undef PZ_COPY
#undef PZ_CLEAR_PAGES

/*
 * Not const only for this: rows whose unit is the DC ZVA block get the
 * size this CPU reports, once, before any row is handed out. pthread_once:
 * the first callers can be two threads (a measurement running with the GIL
 * released, another Python thread listing the kernels), and a store racing
 * another thread's read of the same row is a data race under C11 even when
 * both would hold the same value; pthread_once also orders the stores
 * before every caller's reads.
 */
static pthread_once_t rows_once = PTHREAD_ONCE_INIT;

static void rows_init(void)
{
	size_t block = pz_cpu_dczva_block(), i;

	for (i = 0; i < PZ_ARRAY_SIZE(registry); i++) {
		if (registry[i].unit == PZ_DCZVA_BLOCK)
			registry[i].unit = block ? block : 1;
		if (registry[i].align == PZ_DCZVA_BLOCK)
			registry[i].align = block ? block : 1;
	}
}

static const struct pz_kernel *rows(void)
{
	/* Cannot fail with a static once and an init routine that returns. */
	pthread_once(&rows_once, rows_init);
	return registry;
}

size_t pz_kernel_count(void)
{
	return PZ_ARRAY_SIZE(registry);
}

const struct pz_kernel *pz_kernel_at(size_t i)
{
	return i < PZ_ARRAY_SIZE(registry) ? &rows()[i] : NULL;
}

const struct pz_kernel *pz_kernel_find(enum pz_kernel_kind kind, const char *name)
{
	const struct pz_kernel *r = rows();
	size_t i;

	for (i = 0; i < PZ_ARRAY_SIZE(registry); i++)
		if (r[i].kind == kind && strcmp(r[i].name, name) == 0)
			return &r[i];
	return NULL;
}

/* The clear_pages_order row @c names, when this CPU can run it and Linux would pick it. */
static const struct pz_kernel *clear_pages_pick(const struct clear_pages_choice *c)
{
	const struct pz_kernel *k = pz_kernel_find(PZ_KIND_FILL, c->name);
	char reason[8];

	if (!k || (c->condition & ~pz_cpu_features()))
		return NULL;
	return pz_kernel_available(k, reason, sizeof(reason)) ? k : NULL;
}

/* This architecture's choices first, then the portable ones ("default"). */
const struct pz_kernel *pz_kernel_clear_pages(void)
{
	const struct pz_kernel *k;
	size_t i;
	int portable;

	for (portable = 0; portable < 2; portable++)
		for (i = 0; i < PZ_ARRAY_SIZE(clear_pages_order); i++)
			if ((strcmp(clear_pages_order[i].arch, "any") == 0) == portable &&
			    (k = clear_pages_pick(&clear_pages_order[i])))
				return k;
	/* Unreachable: "default" needs nothing. */
	return pz_kernel_find(PZ_KIND_FILL, "default");
}

int pz_kernel_available(const struct pz_kernel *k, char *reason, size_t n)
{
	uint64_t missing = k->features & ~pz_cpu_features();
	int w;

	if (n)
		reason[0] = '\0';
	if (!missing)
		return 1;
	w = snprintf(reason, n, "this CPU lacks ");
	if (w > 0 && (size_t)w < n)
		pz_missing_list(missing, reason + w, n - (size_t)w);
	return 0;
}

/*
 * Head and tail bytes, the only code shared by all kernels. At most
 * align-1 + unit-1 bytes go through here per call, so a byte loop is fine;
 * it must not become a memset() call (setup.py's KEEP_LOOPS flags, checked by
 * tests/c/check_loops.sh) or a "generic" measurement would secretly include
 * glibc.
 */
static void edge_bytes(unsigned char *d, const unsigned char *s, int c, size_t n)
{
	if (s)
		while (n--)
			*d++ = *s++;
	else
		while (n--)
			*d++ = (unsigned char)c;
}

/*
 * Bytes from @addr to the next multiple of @align. Units and alignments are
 * powers of two, so masks replace divisions: at 4KB chunks a 64-bit divide
 * per call would cost more than the harness may add.
 */
static size_t head_bytes(const void *addr, size_t align)
{
	return (size_t)(-(uintptr_t)addr) & (align - 1);
}

/* @k's body on @len bytes of whole units: a fill (@s NULL, byte @c) or a copy. */
static inline __attribute__((always_inline)) void body(const struct pz_kernel *k, unsigned char *d,
						       const unsigned char *s, int c, size_t len)
{
	if (s)
		k->fn.copy(d, s, len);
	else
		k->fn.fill(d, c, len);
}

/*
 * A call of @k on any @len bytes: the head up to its alignment and the
 * tail past its last whole unit byte by byte, the body by the kernel.
 * Inlined into each kind's entry, where @s is NULL or not at compile time.
 */
static inline __attribute__((always_inline)) void edged(const struct pz_kernel *k, unsigned char *d,
							const unsigned char *s, int c, size_t len)
{
	size_t head, whole;

	/* The common case, page-aligned chunks, goes straight to the body. */
	if (len && !head_bytes(d, k->align) && !(len & (k->unit - 1))) {
		body(k, d, s, c, len);
		return;
	}
	head = PZ_MIN(head_bytes(d, k->align), len);
	edge_bytes(d, s, c, head);
	d += head;
	s = s ? s + head : NULL;
	len -= head;
	whole = len & ~(k->unit - 1);
	if (whole)
		body(k, d, s, c, whole);
	edge_bytes(d + whole, s ? s + whole : NULL, c, len - whole);
}

void pz_kernel_fill(const struct pz_kernel *k, void *dst, int c, size_t len)
{
	edged(k, dst, NULL, c, len);
}

void pz_kernel_copy(const struct pz_kernel *k, void *dst, const void *src, size_t len)
{
	edged(k, dst, src, 0, len);
}
