/*
 * numa.h - binding a buffer to a NUMA node, without libnuma.
 *
 * The 2025 clear_pages() series measures on "the local NUMA node"; local
 * and remote clearing differ by the interconnect. mbind() and
 * get_mempolicy() are raw system calls here so that nothing beyond libc is
 * needed to build.
 */
#ifndef PZ_NUMA_H
#define PZ_NUMA_H

#include "pz.h"

/* Nodes a mask here can name; machines with more are not pagezero's yet. */
#define PZ_NUMA_MAX_NODES 1024

/* MPOL_BIND [p, p + len) to @node, before its pages are touched. 0 or -errno. */
int pz_numa_bind(void *p, size_t len, int node);

/*
 * The policy of the mapping holding @p (get_mempolicy with MPOL_F_ADDR):
 * its mode (MPOL_* value) and the lowest node of its mask (-1 if empty).
 */
int pz_numa_policy(void *p, int *mode, int *first_node);

/* The node of the page holding @p (MPOL_F_NODE | MPOL_F_ADDR; touches it). */
int pz_numa_node_of(void *p, int *node);

#endif /* PZ_NUMA_H */
