/*
 * names.h - an enum's names: a table indexed by the enum's values, with
 * its count, and the two lookups every such table needs. Clocks, flush
 * methods, strategies, cold baselines and fault workloads share them.
 */
#ifndef PZ_NAMES_H
#define PZ_NAMES_H

struct pz_names {
	const char *const *name; /* name[value] */
	int count;
};

/* The name of @value, or "?" for a value outside the enum. */
const char *pz_name(const struct pz_names *t, int value);

/* The value @name names, or -1. */
int pz_lookup(const struct pz_names *t, const char *name);

#endif /* PZ_NAMES_H */
