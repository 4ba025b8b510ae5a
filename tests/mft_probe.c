/* SPDX-License-Identifier: MIT */
/*
 * mft_probe: multicast under a real peer (tests/mft_ibsim.sh).
 *
 *   mft_probe program SPEC N GROUPS_OUT
 *     Brings the subnet behind SPEC (e.g. "ibsim") up with a state, then
 *     builds N groups from what it found (the dry-run's synthetic groups:
 *     group 0 every CA port; the stand-in for the SA's groups until smd's
 *     SA hands them over), writes them to GROUPS_OUT (one line per group:
 *     MLID then PORTGUID:RECV...), and programs them: the MFT-only pass, then
 *     a bring-up with the state, then one with a fresh state (which reads the
 *     blocks back). Prints one line per step: "STEP groups G written W read R".
 *
 *   mft_probe check TOPO MFTS GROUPS
 *     TOPO from ibnetdiscover, MFTS from dump_mfts (ibroute -M format):
 *     floods every member of every group through the read-back MFTs and
 *     prints "floods F unreached U extra E loops L max_hops H"; exit 1
 *     unless every member reached every receiver, with no loop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dryrun/mcast.h"
#include "mad/open.h"
#include "model/topo.h"
#include "routing/mcast.h"
#include "routing/registry.h"
#include "sm/mcast.h"
#include "sm/mft.h"
#include "sm/sm.h"

static int bringup(struct sm_transport *t, struct sm_chain *chain, struct sm_state *st, const struct sm_mc_set *set,
		   const char *step, struct sm_fabric **f)
{
	struct sm_cfg cfg;
	struct sm_summary sum;
	char err[1024] = "";
	sm_cfg_default(&cfg);
	cfg.mcast = set;
	if (sm_bringup_state(t, chain, &cfg, st, &sum, f, err, sizeof(err))) {
		fprintf(stderr, "mft_probe: %s: bring-up failed: %s\n", step, err);
		return 1;
	}
	printf("%s groups %u written %u read %u\n", step, sum.mft.groups, sum.mft.blocks_written, sum.mft.blocks_read);
	return 0;
}

/* The synthetic groups over f as a set (members by port GUID), written to path too. */
static struct sm_mc_set *make_set(const struct sm_fabric *f, unsigned n, const char *path)
{
	struct sm_mcast_group *g;
	struct sm_mcast_member *m;
	FILE *out = fopen(path, "w");
	struct sm_mc_set *s = NULL;
	if (!out || sm_mcast_synthetic(f, 0, n, &g, &m)) {
		if (out)
			fclose(out);
		return NULL;
	}
	s = sm_mc_set_from_groups(f, 0, 1, g, n);
	for (size_t i = 0; s && i < s->n_groups; i++) {
		fprintf(out, "0x%04x", s->groups[i].mlid);
		for (size_t j = 0; j < s->groups[i].n_members; j++)
			fprintf(out, " 0x%016" PRIx64 ":%u", s->groups[i].members[j].port_guid,
				s->groups[i].members[j].join_state != SM_MC_SENDONLY);
		fprintf(out, "\n");
	}
	free(g);
	free(m);
	fclose(out);
	return s;
}

static int program(const char *spec, unsigned n, const char *groups)
{
	struct sm_plane_port port = { 0 };
	struct sm_registry *reg = sm_registry_new(NULL);
	struct sm_chain *chain = NULL;
	struct sm_state *st = NULL, *fresh = NULL;
	struct sm_fabric *f = NULL;
	struct sm_mc_set *set = NULL;
	char err[1024] = "";
	int rc = 1;

	if (!reg || sm_chain_new(reg, "ftree,minhop", NULL, NULL, &chain, err, sizeof(err)) ||
	    sm_transport_open_spec(spec, NULL, &port, err, sizeof(err)) || sm_state_new(&st) || sm_state_new(&fresh)) {
		fprintf(stderr, "mft_probe: %s\n", err[0] ? err : "out of memory");
		goto out;
	}
	if (bringup(port.t, chain, st, NULL, "sweep", &f))
		goto out;
	set = make_set(f, n, groups);
	if (!set) {
		fprintf(stderr, "mft_probe: cannot make the groups (%s)\n", groups);
		goto out;
	}
	struct sm_cfg cfg;
	struct sm_mft_summary ms;
	sm_cfg_default(&cfg);
	cfg.mcast = set;
	if (sm_mft_update(port.t, &cfg, st, &ms, err, sizeof(err))) {
		fprintf(stderr, "mft_probe: MFT-only pass: %s\n", err);
		goto out;
	}
	printf("pass groups %u written %u read %u\n", ms.groups, ms.blocks_written, ms.blocks_read);
	if (bringup(port.t, chain, st, set, "again", NULL) || bringup(port.t, chain, fresh, set, "fresh", NULL))
		goto out;
	rc = 0;
out:
	sm_mc_set_unref(set);
	sm_fabric_free(f);
	sm_state_free(st);
	sm_state_free(fresh);
	sm_plane_port_close(&port);
	sm_chain_free(chain);
	sm_registry_free(reg);
	return rc;
}

/* dump_mfts (ibroute -M) text: "... of switch ... guid 0x...:" headers, "0xMLID      x   x ..." rows. */
static int read_mfts(const struct sm_fabric *f, const char *path, struct sm_mfts *m)
{
	FILE *in = fopen(path, "r");
	char line[4096];
	uint32_t node = SM_NONE;
	if (!in)
		return -errno;
	while (fgets(line, sizeof(line), in)) {
		char *g = strstr(line, " guid 0x");
		if (!strncmp(line, "Multicast mlids", 15) && g) {
			node = sm_fabric_find_node(f, strtoull(g + 6, NULL, 16));
			continue;
		}
		if (strncmp(line, "0x", 2) || node == SM_NONE || m->row[node] == SM_NONE)
			continue;
		unsigned long mlid = strtoul(line, NULL, 16);
		if (mlid < SM_MCAST_MLID_FIRST || mlid - SM_MCAST_MLID_FIRST >= m->n_mlids)
			continue;
		uint64_t *mask = m->mask[(size_t)m->row[node] * m->n_mlids + (mlid - SM_MCAST_MLID_FIRST)];
		size_t len = strlen(line);
		for (unsigned p = 0; p <= f->nodes[node].nports && 12 + 2 * p < len; p++)
			if (line[12 + 2 * p] == 'x')
				mask[p / 64] |= 1ULL << (p % 64);
	}
	fclose(in);
	return 0;
}

static int check(const char *topo, const char *mfts, const char *groups)
{
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err te;
	struct sm_mfts m = { 0 };
	struct sm_mcast_group g[SM_MLID_LAST - SM_MLID_FIRST + 1];
	struct sm_mcast_member *mem = NULL;
	size_t ng = 0, nm = 0, cap = 0;
	char line[1 << 16];
	FILE *in = fopen(groups, "r");
	int rc = 1;

	if (!f || !in || sm_topo_load(f, topo, SM_TOPO_AUTO, 0, &te)) {
		fprintf(stderr, "mft_probe: cannot load %s or %s\n", topo, groups);
		goto out;
	}
	/* members as (group, offset into mem) first: mem grows */
	size_t first[SM_MLID_LAST - SM_MLID_FIRST + 1];
	while (ng < sizeof(g) / sizeof(g[0]) && fgets(line, sizeof(line), in)) {
		char *s = line, *end;
		g[ng].mlid = (uint16_t)strtoul(s, &end, 16);
		first[ng] = nm;
		g[ng].n = 0;
		for (s = end; *s && *s != '\n';) {
			uint64_t guid = strtoull(s, &end, 16);
			if (end == s || *end != ':')
				break;
			unsigned recv = (unsigned)strtoul(end + 1, &s, 10);
			if (nm == cap) {
				cap = cap ? 2 * cap : 1024;
				mem = realloc(mem, cap * sizeof(*mem));
				if (!mem)
					goto out;
			}
			mem[nm++] = (struct sm_mcast_member){ .port = sm_fabric_find_port(f, guid), .recv = (uint8_t)recv };
			g[ng].n++;
		}
		if (g[ng].mlid >= SM_MCAST_MLID_FIRST && g[ng].mlid - SM_MCAST_MLID_FIRST + 1u > m.n_mlids)
			m.n_mlids = g[ng].mlid - SM_MCAST_MLID_FIRST + 1u;
		ng++;
	}
	for (size_t i = 0; i < ng; i++)
		g[i].m = mem + first[i];
	m.n_nodes = f->n_nodes;
	m.row = malloc((f->n_nodes + 1) * sizeof(*m.row));
	m.row_node = malloc((f->n_nodes + 1) * sizeof(*m.row_node));
	for (uint32_t n = 0; m.row && m.row_node && n < f->n_nodes; n++) {
		m.row[n] = SM_NONE;
		if (f->nodes[n].type == SM_NODE_SWITCH)
			m.row_node[m.row[n] = m.n_rows++] = n;
	}
	m.mask = calloc((size_t)m.n_rows * m.n_mlids + 1, sizeof(*m.mask));
	if (!m.row || !m.row_node || !m.mask || read_mfts(f, mfts, &m)) {
		fprintf(stderr, "mft_probe: cannot read %s\n", mfts);
		goto out;
	}
	struct sm_mcast_verdict v;
	if (sm_mcast_verify(f, 0, &m, g, ng, &v))
		goto out;
	printf("floods %" PRIu64 " unreached %" PRIu64 " extra %" PRIu64 " loops %" PRIu64 " max_hops %u\n", v.floods,
	       v.unreached, v.extra, v.loops, v.max_hops);
	rc = v.floods && !v.unreached && !v.extra && !v.loops ? 0 : 1;
out:
	if (in)
		fclose(in);
	free(m.row);
	free(m.row_node);
	free(m.mask);
	free(mem);
	sm_fabric_free(f);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "program"))
		return program(argv[2], (unsigned)strtoul(argv[3], NULL, 0), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "check"))
		return check(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: mft_probe program SPEC N GROUPS_OUT | mft_probe check TOPO MFTS GROUPS\n");
	return 2;
}
