/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_conf - the YAML configuration (smd.yaml) and the engines' subtrees
 *
 * Input: a config file. Checks: an error carries "fuzz.in:LINE: text" and
 * no config; a success has values inside their documented ranges (chain
 * of 1..SMD_CONF_MAX_CHAIN names, lmc 0..7, plane specs that parse,
 * engine entries with a name); then every built-in engine is initialised
 * from its subtree (as smd does when it builds a chain), which either
 * succeeds or returns an error with a message.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "routing/registry.h"
#include "config/smdconf.h"

static struct sm_registry *reg;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct sm_engine_ops *const *b;
	struct smd_conf *c = NULL;
	char err[512] = "", *copy;
	FILE *in;
	unsigned i;
	int rc;

	if (!reg) {
		reg = sm_registry_new("/nonexistent/smd-fuzz-plugins");
		FUZZ_CHECK(reg != NULL, "ENOMEM");
	}
	in = fuzz_stream(data, size, &copy);
	FUZZ_CHECK(in != NULL, "fmemopen");
	rc = smd_conf_load_stream(in, FUZZ_NAME, &c, err, sizeof(err));
	fclose(in);
	free(copy);
	if (rc < 0) {
		FUZZ_CHECK(c == NULL, "error but a config");
		FUZZ_CHECK(rc == -EINVAL, err);
		fuzz_check_errmsg(err, FUZZ_NAME, 1);
		return 0;
	}
	FUZZ_CHECK(c != NULL, "success without a config");
	FUZZ_CHECK(c->n_chain >= 1 && c->n_chain <= SMD_CONF_MAX_CHAIN, "chain length");
	for (i = 0; i < c->n_chain; i++)
		FUZZ_CHECK(c->chain[i][0] != '\0' && memchr(c->chain[i], '\0', sizeof(c->chain[i])), "chain name");
	FUZZ_CHECK(c->lmc >= 0 && c->lmc <= 7, "lmc");
	FUZZ_CHECK(c->n_planes <= SM_MAX_PLANES, "planes");
	for (i = 0; i < c->n_planes; i++) {
		struct smd_plane_spec ps;
		char msg[256];

		FUZZ_CHECK(c->planes[i] != NULL, "plane");
		FUZZ_CHECK(smd_plane_spec_parse(c->planes[i], &ps, msg, sizeof(msg)) == 0, "accepted plane spec does not parse");
	}
	FUZZ_CHECK(c->n_engines <= SMD_CONF_MAX_ENGINES, "engines");
	for (i = 0; i < c->n_engines; i++)
		FUZZ_CHECK(c->engines[i].name[0] != '\0', "engine without a name");
	FUZZ_CHECK(c->log_level == smd_log_level_parse(smd_log_level_name(c->log_level)), "log level");

	/* Each engine's own options, as a chain of that one engine. */
	for (b = sm_engine_builtins(); *b; b++) {
		struct sm_chain *ch = NULL;

		err[0] = '\0';
		rc = sm_chain_new(reg, (*b)->name, c->doc, c->engines_map, &ch, err, sizeof(err));
		if (rc < 0) {
			FUZZ_CHECK(ch == NULL, "chain error but a chain");
			FUZZ_CHECK(err[0] != '\0', "engine init error without a message");
		} else {
			FUZZ_CHECK(ch != NULL && ch->n == 1, "chain");
		}
		sm_chain_free(ch);
	}
	smd_conf_free(c);
	return 0;
}
