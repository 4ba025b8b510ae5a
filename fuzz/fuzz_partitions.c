/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_partitions - partitions files (OpenSM's partitions.conf grammar and the YAML form)
 *
 * Input: first byte even: a text file "fuzz.in", odd: "fuzz.yaml" (the
 * rest is the file). Checks: an error carries "NAME:LINE: text" and leaves
 * the output alone; a success holds the default partition 0x7fff first,
 * P_Keys unique in 1..0x7fff, names NUL-terminated, members with a
 * membership and a non-zero GUID where they name one, multicast groups with
 * a multicast MGID whose scope nibble is theirs, codes in range (MTU 1-5,
 * rate 2-24, SL 0-15, FlowLabel 20 bits), no MGID twice; every port of the
 * small test fabric resolves to a membership, switch external ports to
 * none; parsing again gives the same set.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "model/partitions.h"

static struct sm_fabric *fab;

static void check(const struct sm_partitions *ps)
{
	FUZZ_CHECK(ps->n >= 1 && ps->v[0].pkey == 0x7fff, "no default partition first");
	for (size_t i = 0; i < ps->n; i++) {
		const struct sm_partition *p = &ps->v[i];
		FUZZ_CHECK(p->pkey >= 1 && p->pkey <= 0x7fff, p->name);
		FUZZ_CHECK(memchr(p->name, '\0', sizeof(p->name)) != NULL, NULL);
		for (size_t k = 0; k < i; k++)
			FUZZ_CHECK(ps->v[k].pkey != p->pkey, "P_Key twice");
		for (size_t k = 0; k < p->n_members; k++) {
			const struct sm_part_member *m = &p->members[k];
			FUZZ_CHECK(m->m >= SM_PART_LIMITED && m->m <= SM_PART_BOTH, p->name);
			FUZZ_CHECK(m->who <= SM_PART_WHO_SELF, p->name);
			FUZZ_CHECK(m->who != SM_PART_WHO_GUID || m->guid != 0, p->name);
		}
		for (size_t k = 0; k < p->n_mgroups; k++) {
			const struct sm_part_mgroup *g = &p->mgroups[k];
			FUZZ_CHECK(g->mgid[0] == 0xff && (g->mgid[1] & 0xF) == g->scope && g->scope >= 1, p->name);
			FUZZ_CHECK(g->mtu >= 1 && g->mtu <= 5 && g->rate >= 2 && g->rate <= 24, p->name);
			FUZZ_CHECK(g->sl <= 15 && g->flow_label <= 0xFFFFF, p->name);
			for (size_t j = 0; j < ps->n; j++)
				for (size_t q = 0; q < ps->v[j].n_mgroups; q++)
					FUZZ_CHECK((j == i && q == k) || memcmp(ps->v[j].mgroups[q].mgid, g->mgid, 16),
						   "MGID twice");
		}
		for (uint32_t port = 0; port < fab->n_ports; port++) {
			const struct sm_port *pt = &fab->ports[port];
			enum sm_part_membership m = sm_partition_port(p, fab, port, 3);
			FUZZ_CHECK(m <= SM_PART_BOTH, p->name);
			if (fab->nodes[pt->node].type == SM_NODE_SWITCH && pt->num)
				FUZZ_CHECK(m == SM_PART_NONE, "switch external port in a partition");
		}
	}
}

static void same(const struct sm_partitions *a, const struct sm_partitions *b)
{
	FUZZ_CHECK(a->n == b->n, "a second parse differs");
	for (size_t i = 0; i < a->n; i++) {
		FUZZ_CHECK(a->v[i].pkey == b->v[i].pkey && !strcmp(a->v[i].name, b->v[i].name), "a second parse differs");
		FUZZ_CHECK(a->v[i].n_members == b->v[i].n_members && a->v[i].n_mgroups == b->v[i].n_mgroups,
			   "a second parse differs");
		FUZZ_CHECK(!a->v[i].n_members || !memcmp(a->v[i].members, b->v[i].members,
							 a->v[i].n_members * sizeof(*a->v[i].members)),
			   "a second parse differs");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sm_partitions *ps = (struct sm_partitions *)&fab, *ps2 = NULL;
	char err[512] = "";

	if (!fab)
		fab = fuzz_small_fabric();
	if (!size)
		return 0;
	const char *name = data[0] & 1 ? "fuzz.yaml" : FUZZ_NAME;
	const char *text = (const char *)data + 1;
	int rc = sm_partitions_parse(text, size - 1, name, &ps, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(rc == -EINVAL || rc == -ENOMEM, err);
		FUZZ_CHECK(ps == (struct sm_partitions *)&fab, "output written on error");
		if (rc == -EINVAL)
			fuzz_check_errmsg(err, name, 1);
		return 0;
	}
	check(ps);
	rc = sm_partitions_parse(text, size - 1, name, &ps2, err, sizeof(err));
	FUZZ_CHECK(rc == 0, err);
	same(ps, ps2);
	sm_partitions_free(ps);
	sm_partitions_free(ps2);
	return 0;
}
