/* SPDX-License-Identifier: MIT */
/*
 * DOC: scale_bench: one plane near the LID limit on the mock (issue 17, "the next scale")
 *
 *   scale_bench DUMP [LATENCY_US [ENGINE]]
 *
 * Loads the mock fabric DUMP (e.g. one plane of `smctl topo gen fat-tree
 * --hosts 40960 --levels 3 --split`), and with LATENCY_US > 0 holds every
 * answer back that long in real time (the 20 us model of a switch
 * management CPU, as bench/planes_bench.c). Then, with one struct sm_state
 * as the daemon keeps per plane:
 *
 *   1. a cold bring-up: wall and CPU time, the phases (discover, LIDs,
 *      route, program, activate), SMPs, LFT blocks written against the
 *      floor (one block per 64 LIDs per switch, up to the top LID);
 *   2. a heavy sweep of the unchanged fabric (what a trap or a timer costs);
 *   3. one spine-side link of the first leaf's first aggregation switch
 *      taken down (sm_mock_link_down, as `smctl link down` on the mock),
 *      then the heavy sweep that reroutes around it, incremental as the
 *      daemon sweeps after a trap (cfg.incremental): time, SMPs, LFT
 *      blocks written, the validation's time and the LIDs it walked
 *      again (incremental validation; VALIDATE_FULL=1 in the environment
 *      validates in full, cfg.validate_full, to compare);
 *      With ROUTE_FULL=1 the reroute routes in full (cfg.route_full) instead
 *      of from the state's routes (engine.h reroute()); either way the step
 *      is followed by the entries/blocks/switches its LFTs changed
 *      ("diff=link_down"), a full routing of the same fabric with a fresh
 *      chain (its CPU, "step=full_route"), what that one would have
 *      changed and where the two differ;
 *   4. the process's peak RSS (VmHWM), the emulated fabric included, and
 *      the emulator's own CPU (cpu_account) so that the SM's is apart.
 *
 * One line of key=value per step; bench/scale40k.sh runs it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "lib/clock.h"
#include "mock/mock.h"
#include "model/fabric.h"
#include "routing/registry.h"
#include "sm/sm.h"
#include "sm/state.h"

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static long vm_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

static double emu_s(struct sm_mock *m)
{
	struct sm_mock_stats ms;
	sm_mock_stats(m, &ms);
	return (double)ms.emu_cpu_ns / 1e9;
}

/* LFT blocks a cold bring-up cannot avoid: one per 64 LIDs up to the top LID, per switch. */
static uint64_t lft_floor(const struct sm_fabric *f)
{
	uint16_t top = 0;
	uint64_t sw = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		sw += nd->type == SM_NODE_SWITCH;
		for (unsigned p = 0; p <= nd->nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			unsigned hi = pt->lid ? pt->lid + (1u << pt->lmc) - 1 : 0;
			if (hi > top)
				top = (uint16_t)(hi > 0xffff ? 0xffff : hi);
		}
	}
	return sw * ((uint64_t)top / 64 + 1);
}

static void line(const char *step, int rc, double wall, double cpu, double emu, const struct sm_summary *s,
		 const struct sm_fabric *f)
{
	printf("step=%s rc=%d wall_s=%.3f cpu_s=%.3f sm_cpu_s=%.3f emu_cpu_s=%.3f sweeps=%u incremental=%u "
	       "smps=%" PRIu64 " lft_blocks=%u lft_switches=%u lft_floor=%" PRIu64 " ph_discover_s=%.3f "
	       "ph_lids_s=%.3f ph_route_s=%.3f ph_program_s=%.3f ph_activate_s=%.3f switches=%u cas=%u "
	       "top_lid=%u validate_s=%.3f validate_rechecked=%u route_incremental=%u route_lids=%u route_s=%.3f route_cpu_s=%.3f "
	       "vmhwm_mb=%.1f\n",
	       step, rc, wall, cpu, cpu - emu, emu, s->sweeps, s->incremental, s->txn.sent, s->lft_blocks_written,
	       s->lft_switches_written, f ? lft_floor(f) : 0, s->phase_s[SM_PH_DISCOVER], s->phase_s[SM_PH_LIDS],
	       s->phase_s[SM_PH_ROUTE], s->phase_s[SM_PH_PROGRAM], s->phase_s[SM_PH_ACTIVATE], s->counts.switches,
	       s->counts.cas, s->top_lid, s->validate_s, s->validate_rechecked, s->route_incremental, s->route_lids, s->route_s, s->route_cpu_s,
	       (double)vm_kb("VmHWM:") / 1024);
	fflush(stdout);
}

/* A switch-switch link one level above the first leaf (its first uplink's peer's first uplink). */
static int pick_link(const struct sm_fabric *f, uint32_t *node, unsigned *port)
{
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];
		if (nd->type != SM_NODE_SWITCH)
			continue;
		int leaf = 0;
		for (unsigned p = 1; p <= nd->nports && !leaf; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			leaf = pt->peer_node != SM_NONE && f->nodes[pt->peer_node].type == SM_NODE_CA;
		}
		if (!leaf)
			continue;
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
				continue;
			uint32_t a = pt->peer_node;
			/* the aggregation switch's uplink: a port whose peer is a switch that is not a leaf */
			for (unsigned q = 1; q <= f->nodes[a].nports; q++) {
				const struct sm_port *qt = sm_port(f, a, q);
				if (qt->peer_node == SM_NONE || qt->peer_node == n ||
				    f->nodes[qt->peer_node].type != SM_NODE_SWITCH)
					continue;
				int below = 0; /* the peer has CAs: a leaf, not above */
				for (unsigned r = 1; r <= f->nodes[qt->peer_node].nports && !below; r++) {
					const struct sm_port *rt = sm_port(f, qt->peer_node, r);
					below = rt->peer_node != SM_NONE && f->nodes[rt->peer_node].type == SM_NODE_CA;
				}
				if (!below) {
					*node = a;
					*port = q;
					return 0;
				}
			}
			*node = n; /* 2 levels: the leaf's own uplink */
			*port = p;
			return 0;
		}
	}
	return -1;
}

/* Entries and 64-LID blocks (on how many switches) where b differs from a (same layout). */
static void lft_diff(const char *what, const struct sm_lfts *a, const struct sm_lfts *b)
{
	uint64_t entries = 0, blocks = 0, sw = 0;
	if (!a || !b || a->n_switches != b->n_switches || a->top_lid != b->top_lid) {
		printf("diff=%s layout_differs=1\n", what);
		return;
	}
	for (uint32_t s = 0; s < a->n_switches; s++) {
		const uint8_t *ra = sm_lfts_row(a, s), *rb = sm_lfts_row(b, s);
		uint64_t bl = 0;
		for (uint32_t b0 = 0; b0 <= a->top_lid; b0 += 64) {
			uint64_t e = 0;
			for (uint32_t l = b0; l < b0 + 64 && l <= a->top_lid; l++)
				e += ra[l] != rb[l];
			entries += e;
			bl += e > 0;
		}
		blocks += bl;
		sw += bl > 0;
	}
	printf("diff=%s entries=%" PRIu64 " blocks=%" PRIu64 " switches=%" PRIu64 "\n", what, entries, blocks, sw);
}

/* A cold routing of the state's fabric with a fresh chain (the full reroute), its CPU time. */
static struct sm_lfts *route_cold(struct sm_registry *reg, const char *engine, const struct sm_fabric *f)
{
	struct sm_chain *c = NULL;
	struct sm_plane_result res;
	struct sm_lfts *l = NULL;
	char err[512];
	if (sm_chain_new(reg, engine, NULL, NULL, &c, err, sizeof(err)))
		return NULL;
	double c0 = cpu_s();
	int rc = sm_route_chain(c, f, 0, NULL, &l, &res);
	printf("step=full_route rc=%d cpu_s=%.3f route_s=%.3f route_cpu_s=%.3f validate_s=%.3f\n", rc, cpu_s() - c0,
	       res.route_seconds, res.route_cpu_seconds, res.validate_seconds);
	sm_chain_free(c);
	return l;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: scale_bench DUMP [LATENCY_US [ENGINE]]\n");
		return 2;
	}
	unsigned lat = argc > 2 ? (unsigned)atoi(argv[2]) : 20;
	const char *engine = argc > 3 ? argv[3] : "ftree,minhop";
	char err[1024] = "", dir[64];
	struct sm_mock_cfg mc;
	struct sm_mock *m = NULL;
	struct sm_transport *t = NULL;

	bench_mock_cfg(&mc, lat);
	double l0 = sm_mono_sec();
	if (sm_mock_load(argv[1], &mc, &m, err, sizeof(err))) {
		fprintf(stderr, "scale_bench: %s\n", err);
		return 1;
	}
	printf("load=%s latency_us=%u engine=%s mock_load_s=%.3f vmhwm_mb=%.1f\n", argv[1], lat, engine,
	       sm_mono_sec() - l0, (double)vm_kb("VmHWM:") / 1024);
	if (sm_mock_attach(m, sm_mock_default_port(m, 0), &t)) {
		fprintf(stderr, "scale_bench: cannot attach\n");
		return 1;
	}
	struct sm_registry *reg = sm_registry_new(NULL);
	struct sm_chain *chain = NULL;
	struct sm_state *st = NULL;
	if (!reg || sm_chain_new(reg, engine, NULL, NULL, &chain, err, sizeof(err)) || sm_state_new(&st)) {
		fprintf(stderr, "scale_bench: chain: %s\n", err);
		return 1;
	}
	if (bench_state_dir(dir, "scale"))
		return 1;
	struct sm_cfg cfg;
	sm_cfg_default(&cfg);
	cfg.state_dir = dir;
	cfg.validate_full = getenv("VALIDATE_FULL") && atoi(getenv("VALIDATE_FULL"));  /* before/after */
	cfg.route_full = getenv("ROUTE_FULL") && atoi(getenv("ROUTE_FULL"));
	struct sm_lfts before_v, *before = NULL;  /* the routes before the link went: a plain copy of the rows */

	static const char *const steps[] = { "cold", "heavy", "link_down" };
	int status = 0;
	for (unsigned k = 0; k < 3; k++) {
		struct sm_summary sum;
		struct sm_fabric *f = NULL;
		if (k == 2) {
			uint32_t node;
			unsigned port;
			const struct sm_fabric *mf = sm_mock_fabric(m);
			if (!mf || pick_link(mf, &node, &port) || sm_mock_link_down(m, node, port)) {
				fprintf(stderr, "scale_bench: no link to take down\n");
				status = 1;
				break;
			}
			printf("link_down node=0x%016" PRIx64 " port=%u\n", mf->nodes[node].guid, port);
			/* not sm_lfts_dup(): that would take the spare table the reroute is meant to reuse (model/lfts.c) */
			if (st->snap) {
				before_v = *st->snap->lfts;
				size_t sz = (size_t)before_v.n_switches * ((size_t)before_v.top_lid + 1);
				before_v.ports = malloc(sz ? sz : 1);
				if (before_v.ports) {
					memcpy(before_v.ports, st->snap->lfts->ports, sz);
					before = &before_v;
				}
			}
			cfg.incremental = true; /* as the daemon sweeps after a trap */
		}
		double w0 = sm_mono_sec(), c0 = cpu_s(), e0 = emu_s(m);
		memset(&sum, 0, sizeof(sum));
		int rc = sm_bringup_state(t, chain, &cfg, st, &sum, &f, err, sizeof(err));
		line(steps[k], rc, sm_mono_sec() - w0, cpu_s() - c0, emu_s(m) - e0, &sum, f);
		if (rc) {
			fprintf(stderr, "scale_bench: %s: %s\n", steps[k], err);
			status = 1;
		}
		if (k == 2 && !rc && st->snap) {
			lft_diff("link_down", before, st->snap->lfts);
			struct sm_lfts *cold = route_cold(reg, engine, st->snap->fabric);
			lft_diff("full_route", before, cold);
			lft_diff("incremental_vs_full", cold, st->snap->lfts);
			sm_lfts_free(cold);
		}
		sm_fabric_free(f);
		if (rc)
			break;
	}
	if (before)
		free(before->ports);
	bench_state_dir_rm(dir);
	sm_state_free(st);
	sm_chain_free(chain);
	sm_registry_free(reg);
	sm_transport_close(t);
	sm_mock_free(m);
	return status;
}
