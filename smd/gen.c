/* SPDX-License-Identifier: MIT */
/* Placeholder until the generator lands. */
#include <stdio.h>
#include "smctl.h"

int smctl_topo_gen(const struct smctl_global *g, int argc, char **argv)
{
	(void)g; (void)argc; (void)argv;
	fprintf(stderr, "smctl: topo gen is not implemented yet in this build\n");
	return 1;
}
