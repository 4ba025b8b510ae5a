/* SPDX-License-Identifier: MIT */
#ifndef SMD_ROUTING_BUILTIN_H
#define SMD_ROUTING_BUILTIN_H
/* DOC: the built-in engines' descriptors (the registry lists them; an engine may compose another). */
#include "routing/engine.h"

/* Built-in engine descriptors (one per routing/<name>.c). */
extern const struct sm_engine_ops sm_engine_minhop;  /* routing/minhop.c */
extern const struct sm_engine_ops sm_engine_updn;    /* routing/updn.c */
extern const struct sm_engine_ops sm_engine_ftree;   /* routing/ftree/ftree.c (ftree component) */
extern const struct sm_engine_ops sm_engine_planes;  /* routing/planes/planes.c (multi-plane) */
extern const struct sm_engine_ops sm_engine_hotpath; /* routing/hotpath/hotpath.c (hot-path pinning) */

#endif
