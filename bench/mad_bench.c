/* SPDX-License-Identifier: MIT */
/*
 * mad_bench: throughput of the MAD layer (codecs + transaction engine +
 * mock fabric) on a generated multi-plane fat tree, with the SMP mix of a
 * cold bring-up, all planes driven from one thread:
 *
 *   discover  NodeInfo + NodeDescription of every node, PortInfo of every
 *             switch port and of the CA port, SwitchInfo of every switch
 *   program   PortInfo Set (LID, SM LID) on every switch port 0 and CA port,
 *             SwitchInfo Set (LinearFDBTop), every LFT block of every switch
 *   activate  PortInfo Set ARMED, then ACTIVE, on every linked port
 *
 * DR paths come from a BFS over the model (the SM core discovers them;
 * here only the MAD layer is measured). One mock holds all planes; each
 * plane has its own attachment and engine; the engines are polled
 * round-robin. At the end the mock's state is checked: every linked port
 * ACTIVE with the LID it was given, every LFT entry written.
 *
 *   mad_bench [--hosts N] [--planes P] [--radix K] [--window W] [--per-dest D]
 *             [--drop PPM]
 * Prints one line per phase and a total with MADs/second; exit 0 when the
 * final state checks out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/gen.h"
#include "lib/clock.h"
#include "mad/codec.h"
#include "mock/mock.h"
#include "mad/txn.h"

struct plane {
	struct sm_transport *t;
	struct sm_txn *e;
	uint32_t sm_port;
	uint64_t errors;
};

static struct sm_dr_path *paths;   /* per node */
static uint16_t *lids;             /* per node (switch: port 0; CA: port 1) */

static void cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct plane *p = ctx;

	(void)e;
	if (r->status || r->mad_status)
		p->errors++;
}

/* BFS over the model from the SM's node: a DR path to every node of the plane. */
static int bfs(const struct sm_fabric *f, uint32_t sm_port)
{
	uint32_t *queue = malloc(sizeof(*queue) * f->n_nodes);
	uint8_t *seen = calloc(f->n_nodes, 1);
	uint32_t head = 0, tail = 0, root = f->ports[sm_port].node;

	if (!queue || !seen) {
		free(queue);
		free(seen);
		return -ENOMEM;
	}
	memset(&paths[root], 0, sizeof(paths[root]));
	seen[root] = 1;
	queue[tail++] = root;
	while (head < tail) {
		uint32_t n = queue[head++];
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct sm_port *sp = &f->ports[nd->port0 + p];
			if (sp->peer_node == SM_NONE || seen[sp->peer_node])
				continue;
			if (n != root && nd->type != SM_NODE_SWITCH)
				continue;
			if (n == root && p != f->ports[sm_port].num)
				continue;
			seen[sp->peer_node] = 1;
			paths[sp->peer_node] = paths[n];
			sm_dr_path_push(&paths[sp->peer_node], (uint8_t)p);
			queue[tail++] = sp->peer_node;
		}
	}
	free(queue);
	free(seen);
	return 0;
}

static void drive(struct plane *pl, unsigned np)
{
	for (;;) {
		unsigned busy = 0;
		for (unsigned i = 0; i < np; i++) {
			if (!sm_txn_pending(pl[i].e))
				continue;
			busy++;
			sm_txn_poll(pl[i].e, 0);
		}
		if (!busy)
			return;
	}
}

static void submit(struct plane *p, uint8_t method, uint16_t attr, uint32_t mod, uint32_t node,
		   const uint8_t *data)
{
	struct sm_smp s;
	struct sm_txn_req_opts o = { .dest_key = (uint64_t)node + 1 };

	sm_smp_init_dr(&s, method, attr, mod, &paths[node]);
	if (data)
		memcpy(s.data, data, SM_SMP_DATA_SIZE);
	if (sm_txn_submit_opts(p->e, &s, 0, &o, cb, p) < 0)
		p->errors++;
}

int main(int argc, char **argv)
{
	struct sm_gen_params gp;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_mock *m = NULL;
	struct sm_mock_cfg mc;
	struct sm_txn_cfg tc;
	struct plane pl[SM_MAX_PLANES];
	char err[256];
	unsigned np, nblocks;
	uint16_t top = 0;
	double t0, t1, total = 0;
	uint64_t mads0 = 0, bad = 0;
	int rc = 1;

	memset(pl, 0, sizeof(pl));
	sm_gen_params_init(&gp);
	gp.hosts = 2048;
	gp.planes = 8;
	gp.no_lids = 1;
	sm_txn_cfg_default(&tc);
	sm_mock_cfg_default(&mc);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		unsigned long v;
		if (i + 1 >= argc)
			goto usage;
		v = strtoul(argv[++i], NULL, 10);
		if (!strcmp(a, "--hosts"))
			gp.hosts = (unsigned)v;
		else if (!strcmp(a, "--planes"))
			gp.planes = (unsigned)v;
		else if (!strcmp(a, "--radix"))
			gp.radix = (unsigned)v;
		else if (!strcmp(a, "--window"))
			tc.window = (unsigned)v;
		else if (!strcmp(a, "--per-dest"))
			tc.per_dest = (unsigned)v;
		else if (!strcmp(a, "--drop"))
			mc.drop_ppm = (uint32_t)v;
		else
			goto usage;
	}
	if (!f || sm_gen_fat_tree(&gp, f, err, sizeof(err)) < 0) {
		fprintf(stderr, "mad_bench: %s\n", f ? err : "no memory");
		goto out;
	}
	np = f->n_planes;
	t0 = sm_mono_sec();
	if (sm_mock_new(f, &mc, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "mad_bench: %s\n", err);
		goto out;
	}
	printf("fabric: %u planes, %u nodes, %u ports; mock built in %.3f s\n", np, f->n_nodes,
	       f->n_ports, sm_mono_sec() - t0);
	paths = calloc(f->n_nodes, sizeof(*paths));
	lids = calloc(f->n_nodes, sizeof(*lids));
	if (!paths || !lids)
		goto out;
	for (unsigned p = 0; p < np; p++) {
		pl[p].sm_port = sm_mock_default_port(m, p);
		if (pl[p].sm_port == SM_NONE || sm_mock_attach(m, pl[p].sm_port, &pl[p].t) < 0 ||
		    !(pl[p].e = sm_txn_new(pl[p].t, &tc)) || bfs(f, pl[p].sm_port) < 0) {
			fprintf(stderr, "mad_bench: cannot set up plane %u\n", p);
			goto out;
		}
	}
	/* LIDs: per plane 1.. in node order */
	{
		uint16_t next[SM_MAX_PLANES] = { 0 };
		for (uint32_t n = 0; n < f->n_nodes; n++) {
			lids[n] = ++next[f->nodes[n].plane];
			if (lids[n] > top)
				top = lids[n];
		}
	}
	nblocks = (top + SM_LFT_BLOCK) / SM_LFT_BLOCK;

	for (int phase = 0; phase < 4; phase++) {
		static const char *names[] = { "discover", "program", "arm", "activate" };
		uint64_t mads = 0;

		t0 = sm_mono_sec();
		for (uint32_t n = 0; n < f->n_nodes; n++) {
			const struct sm_node *nd = &f->nodes[n];
			struct plane *p = &pl[nd->plane];
			int sw = nd->type == SM_NODE_SWITCH;
			uint8_t d[SM_SMP_DATA_SIZE];

			if (phase == 0) {
				submit(p, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, n, NULL);
				submit(p, SM_METHOD_GET, SM_ATTR_NODE_DESC, 0, n, NULL);
				if (sw) {
					submit(p, SM_METHOD_GET, SM_ATTR_SWITCH_INFO, 0, n, NULL);
					for (unsigned q = 0; q <= nd->nports; q++)
						submit(p, SM_METHOD_GET, SM_ATTR_PORT_INFO, q, n, NULL);
				} else {
					submit(p, SM_METHOD_GET, SM_ATTR_PORT_INFO, 1, n, NULL);
				}
			} else if (phase == 1) {
				struct sm_port_info pi;
				struct sm_port_info_set s = { .lid = lids[n],
							      .sm_lid = lids[f->ports[p->sm_port].node],
							      .gid_prefix = 0xfe80000000000000ULL };
				sm_port_info_prepare_set(&pi, NULL, &s);
				sm_port_info_encode(&pi, d);
				submit(p, SM_METHOD_SET, SM_ATTR_PORT_INFO, sw ? 0 : 1, n, d);
				if (sw) {
					struct sm_switch_info si = { .lft_top = top };
					sm_switch_info_encode(&si, d);
					submit(p, SM_METHOD_SET, SM_ATTR_SWITCH_INFO, 0, n, d);
					for (unsigned b = 0; b < nblocks; b++) {
						memset(d, 1 + (int)(b % nd->nports), sizeof(d));
						submit(p, SM_METHOD_SET, SM_ATTR_LFT, b, n, d);
					}
				}
			} else {
				struct sm_port_info pi;
				struct sm_port_info_set s = { .lid = lids[n], .sm_lid = lids[f->ports[p->sm_port].node],
							      .gid_prefix = 0xfe80000000000000ULL,
							      .port_state = phase == 2 ? SM_PORT_ARMED : SM_PORT_ACTIVE };
				sm_port_info_prepare_set(&pi, NULL, &s);
				sm_port_info_encode(&pi, d);
				for (unsigned q = sw ? 0 : 1; q <= nd->nports; q++)
					if (q == 0 || f->ports[nd->port0 + q].peer_node != SM_NONE)
						submit(p, SM_METHOD_SET, SM_ATTR_PORT_INFO, q, n, d);
			}
		}
		drive(pl, np);
		t1 = sm_mono_sec();
		for (unsigned p = 0; p < np; p++)
			mads += sm_txn_stats(pl[p].e)->sent;
		printf("%-9s %8" PRIu64 " MADs in %.3f s (%.0f MADs/s)\n", names[phase], mads - mads0,
		       t1 - t0, (double)(mads - mads0) / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
		total += t1 - t0;
		mads0 = mads;
	}
	for (unsigned p = 0; p < np; p++)
		bad += pl[p].errors;
	printf("total     %8" PRIu64 " MADs in %.3f s (%.0f MADs/s), %" PRIu64 " failed\n", mads0,
	       total, (double)mads0 / (total > 0 ? total : 1e-9), bad);
	/* the emulated state must be what was written */
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned q = nd->type == SM_NODE_SWITCH ? 0 : 1; q <= nd->nports; q++) {
			struct sm_mock_port_state ps;
			uint32_t pi = nd->port0 + q;
			if (q && f->ports[pi].peer_node == SM_NONE)
				continue;
			sm_mock_port_state(m, pi, &ps);
			if (ps.state != SM_PORT_ACTIVE || (q == 0 || nd->type != SM_NODE_SWITCH ?
							     ps.lid != lids[n] : 0))
				bad++;
		}
		if (nd->type == SM_NODE_SWITCH && sm_mock_lft_get(m, n, top) != 1 + (top / 64) % nd->nports)
			bad++;
	}
	if (bad || mc.drop_ppm) {
		printf("check: %" PRIu64 " problems%s\n", bad, mc.drop_ppm ? " (drops injected)" : "");
		rc = bad && !mc.drop_ppm;
	} else {
		printf("check: every linked port ACTIVE with its LID, every LFT written\n");
		rc = 0;
	}
out:
	for (unsigned p = 0; p < SM_MAX_PLANES; p++) {
		sm_txn_free(pl[p].e);
		sm_transport_close(pl[p].t);
	}
	sm_mock_free(m);
	sm_fabric_free(f);
	free(paths);
	free(lids);
	return rc;
usage:
	fprintf(stderr, "usage: mad_bench [--hosts N] [--planes P] [--radix K] [--window W] "
			"[--per-dest D] [--drop PPM]\n");
	return 2;
}
