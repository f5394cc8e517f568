/*
 * numa.c - mbind()/get_mempolicy() through syscall(2) (see numa.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "numa.h"

/* From <linux/mempolicy.h>, which not every libc's headers bring. */
#define PZ_MPOL_BIND 2
#define PZ_MPOL_MF_STRICT (1u << 0)
#define PZ_MPOL_MF_MOVE (1u << 1)
#define PZ_MPOL_F_NODE (1u << 0)
#define PZ_MPOL_F_ADDR (1u << 1)

#define PZ_MASK_LONGS (PZ_NUMA_MAX_NODES / (8 * sizeof(unsigned long)))

int pz_numa_bind(void *p, size_t len, int node)
{
	unsigned long mask[PZ_MASK_LONGS];
	const unsigned bits = 8 * sizeof(unsigned long);

	if (node < 0 || node >= PZ_NUMA_MAX_NODES)
		return -EINVAL;
	memset(mask, 0, sizeof(mask));
	mask[node / bits] = 1ul << (node % bits);
	/* MOVE too: pages already there (a populated mapping) follow the policy. */
	if (syscall(SYS_mbind, p, len, PZ_MPOL_BIND, mask, (unsigned long)PZ_NUMA_MAX_NODES + 1,
		    PZ_MPOL_MF_STRICT | PZ_MPOL_MF_MOVE))
		return -errno;
	return 0;
}

int pz_numa_policy(void *p, int *mode, int *first_node)
{
	unsigned long mask[PZ_MASK_LONGS];
	const unsigned bits = 8 * sizeof(unsigned long);
	unsigned i;

	memset(mask, 0, sizeof(mask));
	if (syscall(SYS_get_mempolicy, mode, mask, (unsigned long)PZ_NUMA_MAX_NODES + 1, p,
		    PZ_MPOL_F_ADDR))
		return -errno;
	*first_node = -1;
	for (i = 0; i < PZ_NUMA_MAX_NODES; i++)
		if (mask[i / bits] & (1ul << (i % bits))) {
			*first_node = (int)i;
			break;
		}
	return 0;
}

int pz_numa_node_of(void *p, int *node)
{
	if (syscall(SYS_get_mempolicy, node, NULL, 0ul, p, PZ_MPOL_F_NODE | PZ_MPOL_F_ADDR))
		return -errno;
	return 0;
}
