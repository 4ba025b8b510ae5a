/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_profile - traffic profiles (text/YAML matrices, counters, perfquery)
 *
 * Input: a profile, format auto-detected, resolved against the 8-host,
 * 2-plane fat tree the unit tests use (sm_gen_fat_tree radix 4, 2 planes).
 * Checks: an error carries "fuzz.in:[LINE:] text"; a success has flows
 * between distinct CA ports of the fabric, each in one plane, with finite
 * weights > 0, sorted heaviest first, distinct (src, dst) pairs, whose sum
 * is kept_weight; heat entries name real ports in increasing order; the
 * warning text starts with the input name.
 */
#include <errno.h>
#include <math.h>

#include "fuzz_common.h"
#include "model/profile.h"

static struct sm_fabric *fab;

static void setup(void)
{
	fab = fuzz_small_fabric();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sm_profile *p = NULL;
	struct sm_profile_opts o = { .format = SM_PROFILE_FMT_AUTO, .max_flows = 64 };
	char err[512] = "", warn[1024];
	double sum = 0;
	size_t i;
	int rc;

	if (!fab)
		setup();
	rc = sm_profile_parse(fab, FUZZ_NAME, (const char *)data, size, &o, &p, err, sizeof(err));
	if (rc < 0) {
		FUZZ_CHECK(p == NULL, "error but a profile");
		FUZZ_CHECK(rc == -EINVAL || rc == -ENOENT, err);
		fuzz_check_errmsg(err, FUZZ_NAME, 0);
		return 0;
	}
	FUZZ_CHECK(p != NULL, "success without a profile");
	FUZZ_CHECK(p->n_flows > 0 || p->n_heat > 0, "an empty profile was accepted");
	FUZZ_CHECK(p->kind != SM_PROFILE_COUNTERS || p->n_flows <= o.max_flows, "gravity cap ignored");
	for (i = 0; i < p->n_flows; i++) {
		const struct sm_flow *fl = &p->flows[i];

		FUZZ_CHECK(fl->src < fab->n_ports && fl->dst < fab->n_ports, "flow port out of range");
		FUZZ_CHECK(fl->src != fl->dst, "self flow kept");
		FUZZ_CHECK(fab->nodes[fab->ports[fl->src].node].type != SM_NODE_SWITCH &&
			   fab->nodes[fab->ports[fl->dst].node].type != SM_NODE_SWITCH, "flow endpoint is a switch");
		FUZZ_CHECK(fab->nodes[fab->ports[fl->src].node].plane == fab->nodes[fab->ports[fl->dst].node].plane,
			   "flow across planes");
		FUZZ_CHECK(isfinite(fl->weight) && fl->weight > 0, "bad flow weight");
		if (i) {
			const struct sm_flow *pf = &p->flows[i - 1];

			FUZZ_CHECK(pf->weight >= fl->weight, "flows not sorted heaviest first");
		}
		sum += fl->weight;
	}
	if (p->kind == SM_PROFILE_MATRIX && p->n_flows <= 1024)
		for (i = 0; i < p->n_flows; i++)
			for (size_t j = i + 1; j < p->n_flows; j++)
				FUZZ_CHECK(p->flows[i].src != p->flows[j].src || p->flows[i].dst != p->flows[j].dst,
					   "two flows with the same (src, dst)");
	FUZZ_CHECK(fabs(sum - p->stats.kept_weight) <= 1e-6 * (sum > 1 ? sum : 1), "kept_weight is not the sum");
	for (i = 0; i < p->n_heat; i++) {
		FUZZ_CHECK(p->heat[i].port < fab->n_ports, "heat port out of range");
		FUZZ_CHECK(i == 0 || p->heat[i - 1].port < p->heat[i].port, "heat not sorted by port");
		FUZZ_CHECK(isfinite(p->heat[i].xmit_bytes) && p->heat[i].xmit_bytes >= 0 &&
			   isfinite(p->heat[i].rcv_bytes) && p->heat[i].rcv_bytes >= 0, "bad heat");
	}
	sm_profile_warning(p, warn, sizeof(warn));
	FUZZ_CHECK(strncmp(warn, FUZZ_NAME ": ", strlen(FUZZ_NAME) + 2) == 0, warn);
	sm_profile_free(p);
	return 0;
}
