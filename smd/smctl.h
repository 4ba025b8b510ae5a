/* SPDX-License-Identifier: MIT */
#ifndef SMD_SMCTL_H
#define SMD_SMCTL_H
/* DOC: smctl subcommands. Each takes the words after its name and returns an exit status (0/1/2). */
struct smctl_global {
	const char *socket;  /* --socket PATH */
	int json;            /* --json */
};
int smctl_topo_gen(const struct smctl_global *g, int argc, char **argv);  /* smd/smctl_gen.c */
int smctl_topo_cmd(const struct smctl_global *g, int argc, char **argv);  /* smd/smctl_topo.c: info, convert */
int smctl_profile_cmd(const struct smctl_global *g, int argc, char **argv);  /* smd/smctl_profile.c */
#endif
