/*
 * pz.h - conventions shared by the whole C core.
 *
 * The core knows nothing of Python: every function that can fail returns 0
 * or a negative errno, and only csrc/py/errors.c turns that into an exception.
 */
#ifndef PZ_H
#define PZ_H

#include <stddef.h>
#include <stdint.h>

#define PZ_PAGE_SHIFT_4KB 12u
#define PZ_PAGE_SHIFT_2MB 21u
#define PZ_PAGE_SHIFT_1GB 30u

#define PZ_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PZ_MIN(a, b) ((a) < (b) ? (a) : (b))

#endif /* PZ_H */
