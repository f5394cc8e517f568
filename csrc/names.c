/*
 * names.c - the lookups of an enum's names table (see names.h).
 */
#include <string.h>

#include "names.h"

const char *pz_name(const struct pz_names *t, int value)
{
	return value >= 0 && value < t->count ? t->name[value] : "?";
}

int pz_lookup(const struct pz_names *t, const char *name)
{
	int i;

	for (i = 0; i < t->count; i++)
		if (strcmp(name, t->name[i]) == 0)
			return i;
	return -1;
}
