/* SPDX-License-Identifier: MIT */
/*
 * DOC: smd --check-config and smd --print-config / --print-defaults
 *
 * --check-config [-c FILE] (like sshd -t): the file is read and checked
 * as the daemon's start or reload reads it (every key, the command line
 * laid over it, the engine chain built with each engine's own settings),
 * without opening any transport: "FILE: ok" on stdout and exit 0, or the
 * FILE:LINE error on stderr and exit 1. Without -c the defaults (and the
 * command line) are checked, as smd -f without -c runs with them.
 *
 * --print-config [-c FILE]: the effective config as smd.yaml text
 * (config/print.c): defaults, the file, the command line. --print-defaults:
 * the defaults alone (-c is ignored). Fixed keys are printed: the output
 * is for the administrator who can read the file anyway.
 */
#include "config/options.h"
#include "config/smdconf.h"
#include "routing/registry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Defaults or FILE, with the command line over it; 0 or 1 after saying why on stderr. */
static int load(const struct smd_opts *o, int file, struct smd_conf **out)
{
	char err[1024] = "";
	struct smd_conf *conf = NULL;
	int rc;

	if (file && o->config)
		rc = smd_conf_load(o->config, &conf, err, sizeof(err));
	else
		rc = (conf = smd_conf_new()) ? 0 : -ENOMEM;
	if (!rc && file)
		rc = smd_conf_apply_opts(conf, o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "smd: %s\n", err[0] ? err : strerror(-rc));
		smd_conf_free(conf);
		return 1;
	}
	*out = conf;
	return 0;
}

int smd_check_config(const struct smd_opts *o)
{
	const char *name = o->config ? o->config : "(defaults)";
	char spec[SMD_CONF_MAX_CHAIN * (SMD_CONF_NAME_MAX + 2)], err[1024] = "";
	struct smd_conf *conf = NULL;
	struct sm_registry *reg = NULL;
	struct sm_chain *chain = NULL;
	int rc;

	if (load(o, 1, &conf))
		return 1;
	/* the engines check their own settings when the chain is built (as the daemon does) */
	smd_conf_chain_str(conf, spec, sizeof(spec));
	reg = sm_registry_new(conf->plugin_dir);
	rc = reg ? sm_chain_new(reg, spec, conf->doc, conf->engines_map, &chain, err, sizeof(err)) : -ENOMEM;
	if (rc) {
		smd_conf_chain_error(conf, spec, err, sizeof(err));
		if (!strncmp(err, name, strlen(name)))   /* already "FILE:LINE: ..." */
			fprintf(stderr, "smd: %s\n", err);
		else
			fprintf(stderr, "smd: %s: routing: %s\n", name, err[0] ? err : strerror(-rc));
	} else {
		printf("%s: ok\n", name);
	}
	sm_chain_free(chain);
	sm_registry_free(reg);
	smd_conf_free(conf);
	return rc ? 1 : 0;
}

int smd_print_config(const struct smd_opts *o, int defaults)
{
	struct smd_conf *conf = NULL;

	if (load(o, !defaults, &conf))
		return 1;
	int rc = smd_conf_print(stdout, conf, 0);
	smd_conf_free(conf);
	if (rc || fflush(stdout)) {
		fprintf(stderr, "smd: cannot write the configuration\n");
		return 1;
	}
	return 0;
}
