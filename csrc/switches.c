/*
 * switches.c - the test switches (see switches.h): empty in a release build.
 */
#include "switches.h"

#ifdef PZ_TEST_SWITCHES
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

enum kind {
	FLAG,     /* on when set to anything non-empty */
	NUMBER,   /* on when a positive decimal: "12ns" or "-5" would be misread */
	FEATURES, /* on when it names a feature pz_feature_name() knows */
};

static const struct {
	const char *name;
	enum kind kind;
} table[PZ_SW_COUNT] = {
	[PZ_SW_FAKE_CLOCK_STEP_NS] = { "PAGEZERO_FAKE_CLOCK_STEP_NS", NUMBER },
	[PZ_SW_FAKE_CYCLES] = { "PAGEZERO_FAKE_CYCLES", FLAG },
	[PZ_SW_FAKE_COUNTERS] = { "PAGEZERO_FAKE_COUNTERS", FLAG },
	[PZ_SW_FAKE_MULTIPLEXED] = { "PAGEZERO_FAKE_MULTIPLEXED", FLAG },
	[PZ_SW_FAKE_COUNTER_COST_US] = { "PAGEZERO_FAKE_COUNTER_COST_US", NUMBER },
	[PZ_SW_FAIL_COUNTER_READ] = { "PAGEZERO_FAIL_COUNTER_READ", NUMBER },
	[PZ_SW_FAKE_FLUSH_US] = { "PAGEZERO_FAKE_FLUSH_US", NUMBER },
	[PZ_SW_HIDE_FEATURES] = { "PAGEZERO_HIDE_FEATURES", FEATURES },
	[PZ_SW_HIDE_PMU] = { "PAGEZERO_HIDE_PMU", FLAG },
	[PZ_SW_FAIL_MAP] = { "PAGEZERO_FAIL_MAP", NUMBER },
	[PZ_SW_FAIL_TEAM_INIT] = { "PAGEZERO_FAIL_TEAM_INIT", NUMBER },
	[PZ_SW_SIGNAL_AT_RELEASE] = { "PAGEZERO_SIGNAL_AT_RELEASE", NUMBER },
	[PZ_SW_LOOP_DONE_FD] = { "PAGEZERO_LOOP_DONE_FD", NUMBER },
	[PZ_SW_FAKE_UNSETTLED] = { "PAGEZERO_FAKE_UNSETTLED", NUMBER },
	[PZ_SW_REFUSE_PROFILE] = { "PAGEZERO_REFUSE_PROFILE", FLAG },
	[PZ_SW_FAKE_MLOCK_KB] = { "PAGEZERO_FAKE_MLOCK_KB", NUMBER },
	[PZ_SW_REFUSE_FORMAT_LOST] = { "PAGEZERO_REFUSE_FORMAT_LOST", FLAG },
};

uint64_t pz_switch_values[PZ_SW_COUNT];
/* Kept, so that a result can say what was set: the longest in use is 60 bytes. */
static char raw[PZ_SW_COUNT][256];
static uint64_t calls[PZ_SW_COUNT];

static uint64_t parse_number(const char *s)
{
	char *end;
	unsigned long long n;

	if (*s < '0' || *s > '9') /* strtoull would take "-5" as 2^64 - 5 */
		return 0;
	errno = 0;
	n = strtoull(s, &end, 10);
	return errno || *end ? 0 : (uint64_t)n;
}

/* As GLIBC_TUNABLES masks hwcaps: whole comma-separated names, unknown ones ignored. */
static uint64_t parse_features(const char *s)
{
	uint64_t mask = 0;
	unsigned i;

	while (*s) {
		size_t n = strcspn(s, ",");

		for (i = 0; i < PZ_FEAT_COUNT; i++) {
			const char *name = pz_feature_name(i);

			if (strlen(name) == n && !strncmp(s, name, n))
				mask |= 1ull << i;
		}
		s += n + (s[n] == ',');
	}
	return mask;
}

static uint64_t parse(enum kind kind, const char *s)
{
	switch (kind) {
	case FLAG:
		return *s != '\0';
	case NUMBER:
		return parse_number(s);
	default:
		return parse_features(s);
	}
}

int pz_switches_load(void)
{
	const char *env[PZ_SW_COUNT];
	unsigned i;

	for (i = 0; i < PZ_SW_COUNT; i++) {
		env[i] = getenv(table[i].name);
		if (!env[i])
			env[i] = "";
		if (strlen(env[i]) >= sizeof(raw[i]))
			return -E2BIG;
	}
	for (i = 0; i < PZ_SW_COUNT; i++) {
		strcpy(raw[i], env[i]);
		pz_switch_values[i] = parse(table[i].kind, raw[i]);
		__atomic_store_n(&calls[i], 0, __ATOMIC_RELAXED);
	}
	return 0;
}

const char *pz_switch_name(enum pz_switch s)
{
	return table[s].name;
}

const char *pz_switch_value(enum pz_switch s)
{
	return pz_switch_values[s] ? raw[s] : NULL;
}

int pz_switch_nth(enum pz_switch s)
{
	uint64_t n = pz_switch_values[s];

	return n && __atomic_add_fetch(&calls[s], 1, __ATOMIC_RELAXED) == n;
}
#endif
