/* SPDX-License-Identifier: MIT */
/* Placeholder until topo info/convert land. */
#include <stdio.h>
#include "smctl.h"

int smctl_topo_cmd(const struct smctl_global *g, int argc, char **argv)
{
	(void)g; (void)argc; (void)argv;
	fprintf(stderr, "smctl: topo %s is not implemented yet in this build\n", argc ? argv[0] : "");
	return 1;
}
