/* SPDX-License-Identifier: MIT */
#ifndef SMD_VALIDATE_PRIV_H
#define SMD_VALIDATE_PRIV_H
/* Between validate.c and validate_incr.c only. */
#include <stdint.h>
#include "routing/validate.h"

/* The check over every destination, or only those set in lid_mask (by LID; no CDG then). */
int sm_validate_run(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l, unsigned flags,
		    struct sm_validation *v, int cdg_only, const uint8_t *lid_mask);

#endif
