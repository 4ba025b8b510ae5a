/* SPDX-License-Identifier: MIT */
/*
 * faults_bench [options]: one cold bring-up of a generated 2-level fat tree
 * on the mock backend with a share of SMPs dropped, printed as one line of
 * key=value pairs (bench/faults.sh makes the table).
 *
 *   --hosts N (2048) --radix R (64) --drop PPM (0) --corrupt PPM (0)
 *   --seed S (1) --retries N (engine default 3) --adaptive-max N (default 24;
 *   0 turns the adaptation off) --min-timeout-ms N (default 10; 0: the
 *   first-try timeout stays 100 ms) --latency-us U (0: every answer held back U
 *   microseconds of virtual time, a model of the wire and switch CPU)
 *   --engine CHAIN (ftree,minhop)
 *
 * wall_s is the CPU-bound wall time of sm_bringup (emulation included);
 * fabric_s is the mock's virtual clock at the end: the time the timeouts
 * (100 ms first try) and latencies would take on a real fabric, with no
 * emulation cost. Exit 0 when the bring-up succeeded with every CA found
 * and every link port ACTIVE, 1 otherwise (the line is printed either way).
 */
#include <errno.h>
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

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);
	if (!*s || *end) {
		fprintf(stderr, "faults_bench: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned hosts = 2048, radix = 64;
	unsigned long drop = 0, corrupt = 0, seed = 1, latency = 0;
	long retries = -1, adaptive = -1, min_to = -1;
	const char *engine = "ftree,minhop";
	char err[1024] = "", dir[64];
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			fprintf(stderr, "faults_bench: %s needs a value\n", o);
			return 2;
		}
		if (!strcmp(o, "--hosts"))
			hosts = (unsigned)num(v);
		else if (!strcmp(o, "--radix"))
			radix = (unsigned)num(v);
		else if (!strcmp(o, "--drop"))
			drop = num(v);
		else if (!strcmp(o, "--corrupt"))
			corrupt = num(v);
		else if (!strcmp(o, "--seed"))
			seed = num(v);
		else if (!strcmp(o, "--retries"))
			retries = (long)num(v);
		else if (!strcmp(o, "--adaptive-max"))
			adaptive = (long)num(v);
		else if (!strcmp(o, "--min-timeout-ms"))
			min_to = (long)num(v);
		else if (!strcmp(o, "--latency-us"))
			latency = num(v);
		else if (!strcmp(o, "--engine"))
			engine = v;
		else {
			fprintf(stderr, "faults_bench: unknown option %s\n", o);
			return 2;
		}
		i++;
	}

	struct sm_gen_params gp;
	struct sm_fabric *model = sm_fabric_new();
	if (!model)
		return 1;
	sm_gen_params_init(&gp);
	gp.hosts = hosts;
	gp.radix = radix;
	gp.levels = 2;
	gp.no_lids = 1;
	if (sm_gen_fat_tree(&gp, model, err, sizeof(err))) {
		fprintf(stderr, "faults_bench: gen: %s\n", err);
		return 1;
	}
	struct sm_mock_cfg mc;
	struct sm_mock *m = NULL;
	struct sm_transport *t = NULL;
	sm_mock_cfg_default(&mc);
	mc.seed = seed;
	mc.drop_ppm = (uint32_t)drop;
	mc.corrupt_ppm = (uint32_t)corrupt;
	if (latency) {
		mc.delay_ppm = 1000000;
		mc.delay_us = (uint32_t)latency;
	}
	if (sm_mock_new(model, &mc, &m, err, sizeof(err))) {
		fprintf(stderr, "faults_bench: mock: %s\n", err);
		return 1;
	}
	sm_fabric_free(model);
	if (sm_mock_attach(m, sm_mock_default_port(m, 0), &t)) {
		fprintf(stderr, "faults_bench: cannot attach\n");
		return 1;
	}
	struct sm_registry *reg = sm_registry_new(NULL);
	struct sm_chain *chain = NULL;
	if (!reg || sm_chain_new(reg, engine, NULL, NULL, &chain, err, sizeof(err))) {
		fprintf(stderr, "faults_bench: chain: %s\n", err);
		return 1;
	}
	if (bench_state_dir(dir, "faults"))
		return 1;

	struct sm_cfg cfg;
	struct sm_summary sum;
	struct sm_fabric *f = NULL;
	sm_cfg_default(&cfg);
	cfg.state_dir = dir;
	if (retries >= 0)
		cfg.txn.retries = (unsigned)retries;
	if (adaptive >= 0)
		cfg.txn.adaptive_max = (unsigned)adaptive;
	if (min_to >= 0)
		cfg.txn.min_timeout_ms = (unsigned)min_to;
	uint64_t v0 = sm_mock_now_us(m);
	rc = sm_bringup(t, chain, &cfg, &sum, &f, err, sizeof(err));
	uint64_t v1 = sm_mock_now_us(m);
	struct sm_mock_stats ms;
	sm_mock_stats(m, &ms);

	uint64_t rej = 0;
	for (unsigned k = 1; k < SM_CHK_COUNT; k++)
		rej += sum.txn.rejected[k];
	int ok = rc == 0 && sum.counts.cas == hosts && sum.active_ports == sum.link_ports;
	printf("hosts=%u drop_pct=%.1f seed=%lu ok=%d rc=%d wall_s=%.3f fabric_s=%.3f sweeps=%u cas=%u "
	       "smps=%" PRIu64 " retried=%" PRIu64 " adaptive=%" PRIu64 " lost=%" PRIu64 " rejected=%" PRIu64
	       " dropped_by_mock=%" PRIu64 " unresponsive=%u set_errors=%u active=%u/%u\n",
	       hosts, drop / 10000.0, seed, ok, rc, sum.total_s, (double)(v1 - v0) / 1e6, sum.sweeps,
	       sum.counts.cas, sum.txn.sent, sum.txn.retried, sum.txn.adaptive_retries, sum.txn.timed_out, rej,
	       ms.fault_dropped, sum.unresponsive, sum.set_errors, sum.active_ports, sum.link_ports);
	if (rc)
		fprintf(stderr, "faults_bench: bring-up failed: %s\n", err);

	bench_state_dir_rm(dir);
	sm_fabric_free(f);
	sm_chain_free(chain);
	sm_registry_free(reg);
	sm_transport_close(t);
	sm_mock_free(m);
	return ok ? 0 : 1;
}
