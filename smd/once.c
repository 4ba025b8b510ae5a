/* SPDX-License-Identifier: MIT */
/* Placeholder until this mode lands: refuses honestly with exit 1. */
#include "options.h"
#include "log.h"

int smd_once(const struct smd_opts *o)
{
	(void)o;
	sm_err("SMD-0001", "this mode is not implemented yet in this build");
	return 1;
}
