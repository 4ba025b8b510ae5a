/* SPDX-License-Identifier: MIT */
/*
 * portcfg_bench [options]: what port configuration (smd/sm/portcfg.c) adds
 * to a bring-up of a generated fat tree on the mock backend, in SMPs: a
 * cold bring-up (every port as reset: SL2VL all VL0, VLArb zero), then a
 * second heavy bring-up of the same, now configured, fabric without state
 * (as a second smd --once), then one with the daemon's per-plane state
 * (struct sm_state). One line of key=value pairs per bring-up
 * (BENCHMARKS.md "Port configuration").
 *
 *   --hosts N (2048) --radix R (64) --levels L (2)
 *   --no-opt   switches without optimised SL2VL programming (one Set per pair)
 *
 * osm_sl2vl_sets is what OpenSM's non-optimised SL2VL programming (its
 * default, use_optimized_slvl FALSE, with qos TRUE) writes on the same
 * fabric on every sweep that needs it: (ports + 1) Sets per linked output
 * port of every switch, one per CA port; it reads nothing, so its warm
 * sweeps write only what it has not recorded.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "model/gen.h"
#include "mock/mock.h"
#include "routing/registry.h"
#include "sm/sm.h"

static unsigned long osm_sl2vl_sets(const struct sm_fabric *f)
{
	unsigned long n = 0;
	for (uint32_t i = 0; i < f->n_nodes; i++) {
		const struct sm_node *nd = &f->nodes[i];
		for (unsigned p = 1; p <= nd->nports; p++)
			if (f->ports[nd->port0 + p].peer_node != SM_NONE)
				n += nd->type == SM_NODE_SWITCH ? nd->nports + 1u : 1u;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned hosts = 2048, radix = 64, levels = 2;
	int no_opt = 0, rc = 0;
	char err[1024] = "", dir[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-opt")) {
			no_opt = 1;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "portcfg_bench: %s needs a value\n", argv[i]);
			return 2;
		}
		if (!bench_tree_opt(argv[i], (unsigned)strtoul(argv[i + 1], NULL, 10), &hosts, &radix, &levels)) {
			fprintf(stderr, "portcfg_bench: unknown option %s\n", argv[i]);
			return 2;
		}
		i++;
	}

	struct sm_fabric *model = bench_fat_tree("portcfg_bench", hosts, radix, levels);
	if (!model)
		return 1;
	struct sm_mock_cfg mc;
	struct sm_mock *m = NULL;
	struct sm_transport *t = NULL;
	sm_mock_cfg_default(&mc);
	mc.no_opt_sl2vl = no_opt;
	if (sm_mock_new(model, &mc, &m, err, sizeof(err)) || sm_mock_attach(m, sm_mock_default_port(m, 0), &t)) {
		fprintf(stderr, "portcfg_bench: mock: %s\n", err);
		return 1;
	}
	unsigned long osm = osm_sl2vl_sets(model);
	sm_fabric_free(model);
	struct sm_registry *reg;
	struct sm_chain *chain;
	if (bench_chain("portcfg_bench", "ftree,minhop", &reg, &chain))
		return 1;
	if (bench_state_dir(dir, "portcfg"))
		return 1;
	struct sm_state *state = NULL;
	if (sm_state_new(&state))
		return 1;
	for (int run = 0; run < 4 && !rc; run++) {
		static const char *const names[] = { "cold", "warm", "warm-state-1", "warm-state" };
		struct sm_cfg cfg;
		struct sm_summary s;
		sm_cfg_default(&cfg);
		cfg.state_dir = dir;
		/* run 2 fills the state (its own reads), run 3 is the daemon's next heavy sweep */
		rc = sm_bringup_state(t, chain, &cfg, run >= 2 ? state : NULL, &s, NULL, err, sizeof(err));
		unsigned long added = (unsigned long)s.portcfg_pi_sets + s.sl2vl_gets + s.sl2vl_sets + s.vlarb_gets +
				      s.vlarb_sets;
		if (run == 2)
			continue;
		printf("run=%s hosts=%u switches=%u opt_sl2vl=%d rc=%d smps=%" PRIu64 " portcfg_smps=%lu "
		       "portinfo_sets=%u sl2vl_gets=%u sl2vl_sets=%u vlarb_gets=%u vlarb_sets=%u tables_trusted=%u "
		       "set_errors=%u active=%u/%u osm_sl2vl_sets=%lu seconds=%.3f\n",
		       names[run], hosts, s.counts.switches, !no_opt, rc, s.txn.sent, added, s.portcfg_pi_sets,
		       s.sl2vl_gets, s.sl2vl_sets, s.vlarb_gets, s.vlarb_sets, s.tables_trusted, s.set_errors,
		       s.active_ports, s.link_ports, osm, s.total_s);
		if (rc)
			fprintf(stderr, "portcfg_bench: bring-up failed: %s\n", err);
	}
	bench_state_dir_rm(dir);
	sm_state_free(state);
	sm_chain_free(chain);
	sm_registry_free(reg);
	sm_transport_close(t);
	sm_mock_free(m);
	return rc ? 1 : 0;
}
