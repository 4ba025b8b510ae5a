/* SPDX-License-Identifier: MIT */
/*
 * linkback_bench [options]: a link, host or switch that goes down and comes
 * back, on the mock backend (issue 17, BENCHMARKS.md "A link that comes
 * back"). Per case, on a fresh mock of a generated fat tree with the
 * daemon's per-plane state (struct sm_state):
 *   1. cold bring-up (full sweep), its LFTs kept (as the switches hold them);
 *   2. the event down, an incremental bring-up (as a trap cycle);
 *   3. the event up, an incremental bring-up: smd's own time (the
 *      summary's total and phases), the SM's CPU apart from the emulated
 *      SMAs' (mock cfg.cpu_account), SMPs, LFT blocks written, LFT entries
 *      changed, and whether every LFT equals the cold bring-up's;
 *   4. the same down and up once more, the up taken by a full heavy sweep
 *      with the state (what a returning link cost before: "full" lines).
 * One line of key=value pairs per measured bring-up.
 *
 *   --hosts N (2048) --radix R (64) --levels L (2) --rounds K (3: medians of step 3 and 4)
 *   --latency-us U (0)  per-answer latency of the emulated SMAs (real time; 0: virtual time)
 *   --case C (all)      only case C: 0 switch link, 1 host link, 2 spine, 3 leaf with its hosts
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "mock/mock.h"
#include "model/lfts.h"
#include "routing/registry.h"
#include "sm/sm.h"

enum what { W_ISL, W_HOST, W_SPINE, W_LEAF, W_COUNT };
static const char *const what_name[W_COUNT] = { "switch-link", "host-link", "spine", "leaf+hosts" };

struct env {
	struct sm_mock *m;
	struct sm_transport *t;
	struct sm_chain *chain;
	struct sm_state *state;
	const char *dir;
	unsigned latency_us;
};

struct run {
	struct sm_summary s;
	double cpu, emu;
	int rc;
};

static int bringup(struct env *e, int incremental, struct run *r)
{
	struct sm_cfg cfg;
	struct sm_mock_stats ms0, ms1;
	char err[1024] = "";

	sm_cfg_default(&cfg);
	cfg.state_dir = e->dir;
	cfg.incremental = incremental;
	sm_mock_stats(e->m, &ms0);
	double c0 = bench_cpu_sec();
	r->rc = sm_bringup_state(e->t, e->chain, &cfg, e->state, &r->s, NULL, err, sizeof(err));
	r->cpu = bench_cpu_sec() - c0;
	sm_mock_stats(e->m, &ms1);
	r->emu = (double)(ms1.emu_cpu_ns - ms0.emu_cpu_ns) / 1e9;
	if (r->rc)
		fprintf(stderr, "linkback_bench: bring-up failed: %s\n", err);
	return r->rc;
}

static uint8_t *snap_lfts(const struct sm_mock *m, uint16_t top)
{
	const struct sm_fabric *mf = sm_mock_fabric(m);
	uint8_t *t = malloc((size_t)mf->n_nodes * (top + 1u) + 1);
	for (uint32_t n = 0; t && n < mf->n_nodes; n++)
		for (unsigned l = 0; l <= top; l++)
			t[(size_t)n * (top + 1u) + l] = mf->nodes[n].type == SM_NODE_SWITCH ?
				sm_mock_lft_get(m, n, (uint16_t)l) : SM_LFT_NONE;
	return t;
}

static unsigned diff_entries(const struct sm_fabric *mf, const uint8_t *a, const uint8_t *b, uint16_t top)
{
	unsigned d = 0;
	for (size_t i = 0; i < (size_t)mf->n_nodes * (top + 1u); i++)
		d += a[i] != b[i];
	return d;
}

/* A switch with a CA behind a port? */
static int is_leaf(const struct sm_fabric *f, uint32_t n)
{
	for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
		uint32_t pn = sm_port(f, n, p)->peer_node;
		if (pn != SM_NONE && f->nodes[pn].type != SM_NODE_SWITCH)
			return 1;
	}
	return 0;
}

/* The node (and port) of case w: the last leaf's last uplink, the last CA, the last switch above the leaves, the last leaf. */
static void pick(const struct sm_fabric *f, enum what w, uint32_t *n, unsigned *p)
{
	*p = 0;
	for (*n = f->n_nodes; (*n)-- > 0;) {
		const struct sm_node *nd = &f->nodes[*n];
		if (w == W_HOST) {
			if (nd->type == SM_NODE_CA) {
				*p = 1;
				return;
			}
			continue;
		}
		if (nd->type != SM_NODE_SWITCH || is_leaf(f, *n) != (w != W_SPINE))
			continue;
		if (w == W_ISL)
			for (*p = nd->nports; *p > 0; (*p)--) {
				uint32_t pn = sm_port(f, *n, *p)->peer_node;
				if (pn != SM_NONE && f->nodes[pn].type == SM_NODE_SWITCH)
					break;
			}
		return;
	}
}

static int event(struct env *e, enum what w, int up, uint32_t n, unsigned p)
{
	unsigned links;
	if (w == W_ISL || w == W_HOST)
		return up ? sm_mock_link_up(e->m, n, p) : sm_mock_link_down(e->m, n, p);
	return up ? sm_mock_switch_up(e->m, n, &links) : sm_mock_switch_down(e->m, n, &links);
}

static void print_run(const char *kind, enum what w, unsigned round, const struct run *r, unsigned entries,
		      int same)
{
	const struct sm_summary *s = &r->s;
	printf("case=%s round=%u kind=%s rc=%d incremental=%u links_up=%u nodes_new=%u switches_gone=%u "
	       "total_ms=%.2f discover_ms=%.2f route_ms=%.2f program_ms=%.2f cpu_ms=%.2f emu_cpu_ms=%.2f "
	       "sm_cpu_ms=%.2f smps=%" PRIu64 " lft_blocks_written=%u lft_blocks_read=%u entries_changed=%u "
	       "pi_sets=%u same_as_cold=%s\n", what_name[w], round, kind, r->rc, s->incremental,
	       s->delta_links_up, s->delta_nodes_new, s->delta_switches_gone, s->total_s * 1e3,
	       s->phase_s[SM_PH_DISCOVER] * 1e3, s->phase_s[SM_PH_ROUTE] * 1e3, s->phase_s[SM_PH_PROGRAM] * 1e3,
	       r->cpu * 1e3, r->emu * 1e3, (r->cpu - r->emu) * 1e3, s->txn.sent, s->lft_blocks_written,
	       s->lft_blocks_read, entries, s->portinfo_lid_sets + s->portinfo_state_sets,
	       same < 0 ? "-" : same ? "yes" : "NO");
}

static int one_case(const struct sm_fabric *model, struct sm_chain *chain, const char *dir, enum what w,
		    unsigned rounds, unsigned latency_us)
{
	struct sm_mock_cfg mc;
	struct env e = { .chain = chain, .dir = dir, .latency_us = latency_us };
	struct run r;
	char err[512];
	int rc = 0;

	bench_mock_cfg(&mc, latency_us);
	if (sm_mock_new(model, &mc, &e.m, err, sizeof(err)) || sm_mock_attach(e.m, sm_mock_default_port(e.m, 0), &e.t) ||
	    sm_state_new(&e.state)) {
		fprintf(stderr, "linkback_bench: mock: %s\n", err);
		return 1;
	}
	const struct sm_fabric *mf = sm_mock_fabric(e.m);
	uint32_t n;
	unsigned p;
	pick(model, w, &n, &p);
	if (n == SM_NONE || bringup(&e, 1, &r))
		return 1;
	print_run("cold", w, 0, &r, 0, -1);
	uint16_t top = r.s.top_lid;
	uint8_t *l0 = snap_lfts(e.m, top), *l1 = NULL, *l2 = NULL;
	for (unsigned round = 1; round <= rounds && !rc; round++) {
		for (int full = 0; full < 2 && !rc; full++) {
			rc = event(&e, w, 0, n, p) || bringup(&e, 1, &r);
			if (rc)
				break;
			free(l1);
			l1 = snap_lfts(e.m, top);
			if (round == 1 && !full)
				print_run("down", w, round, &r, diff_entries(mf, l0, l1, top), -1);
			rc = event(&e, w, 1, n, p) || bringup(&e, !full, &r);
			if (rc)
				break;
			free(l2);
			l2 = snap_lfts(e.m, top);
			print_run(full ? "back-full" : "back", w, round, &r, diff_entries(mf, l1, l2, top),
				  r.s.top_lid == top && !diff_entries(mf, l0, l2, top));
		}
	}
	free(l0);
	free(l1);
	free(l2);
	sm_state_free(e.state);
	sm_transport_close(e.t);
	sm_mock_free(e.m);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned hosts = 2048, radix = 64, levels = 2, rounds = 3, latency_us = 0, only = W_COUNT;
	char dir[64];
	int rc = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned v = (unsigned)strtoul(argv[i + 1], NULL, 0);
		if (bench_tree_opt(argv[i], v, &hosts, &radix, &levels))
			continue;
		if (!strcmp(argv[i], "--rounds"))
			rounds = v;
		else if (!strcmp(argv[i], "--latency-us"))
			latency_us = v;
		else if (!strcmp(argv[i], "--case"))
			only = v;
		else {
			fprintf(stderr, "usage: linkback_bench [--hosts N] [--radix R] [--levels L] [--rounds K] "
				"[--latency-us U] [--case C]\n");
			return 2;
		}
	}
	if (argc % 2 == 0) {
		fprintf(stderr, "linkback_bench: %s needs a value\n", argv[argc - 1]);
		return 2;
	}
	struct sm_fabric *model = bench_fat_tree("linkback_bench", hosts, radix, levels);
	struct sm_registry *reg = NULL;
	struct sm_chain *chain = NULL;
	if (!model || bench_chain("linkback_bench", "ftree,minhop", &reg, &chain)) {
		sm_chain_free(chain);
		sm_registry_free(reg);
		sm_fabric_free(model);
		return 1;
	}
	if (bench_state_dir(dir, "linkback"))
		return 1;
	for (unsigned w = 0; w < W_COUNT && !rc; w++)
		if (only == W_COUNT || only == w)
			rc = one_case(model, chain, dir, (enum what)w, rounds, latency_us);
	bench_state_dir_rm(dir);
	sm_chain_free(chain);
	sm_registry_free(reg);
	sm_fabric_free(model);
	return rc ? 1 : 0;
}
