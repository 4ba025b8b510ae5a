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
 *      of from the state's routes (engine.h reroute()); with
 *      SCALE_BENCH_DIFF=1 (a 160 MB copy of the routes before: it counts in
 *      the SM's memory of that step) the step is followed by the
 *      entries/blocks/switches its LFTs changed
 *      ("diff=link_down"), a full routing of the same fabric with a fresh
 *      chain (its CPU, "step=full_route"), what that one would have
 *      changed and where the two differ;
 *      SCALE_BENCH_LINK=host takes the second leaf's first host link
 *      down instead (step "host_down": a node that reboots; the sweep no
 *      longer finds the host; the SM's own host is on the first leaf),
 *      then brings it back (step "host_up", incremental; with
 *      SCALE_BENCH_DIFF=1 its tables against those before the host went:
 *      "diff=host_up_vs_before"); SCALE_BENCH_PERF_CTL=FIFO: a perf control
 *      FIFO (`perf record -D -1 --control fifo:FIFO`) enabled for the
 *      third step alone (SCALE_BENCH_PERF_STEP=3: the fourth, host_up);
 *   4. the process's peak RSS (VmHWM), the emulated fabric included, and
 *      the emulator's own CPU (cpu_account) so that the SM's is apart
 *      (cpu_s leaves out the memory sampler's thread of 5, its own
 *      thread CPU: mincore() over the emulated LFTs every 2 ms);
 *   5. the SM's own memory apart from the emulator's (issue 17): a thread
 *      samples the process's RSS every 2 ms and subtracts the emulator's,
 *      which is (a) what loading the mock added (its fabric copy and
 *      per-port/per-node state: RSS after sm_mock_load and malloc_trim
 *      minus RSS before), fixed from then on, and (b) the emulated
 *      switches' LFTs, which live in a mapping of their own whose
 *      resident bytes mincore() tells at each sample
 *      (sm_mock_lft_resident). Per step: the SM's peak (sm_peak_mb, and
 *      when in the step), the SM's RSS after the step (sm_after_mb), the
 *      process's peak (rss_peak_mb), the emulated LFTs (mock_lft_mb), and
 *      the SM's LID-indexed tables after the step: the snapshot's LFTs
 *      and the state's LFT shadows (lfts_mb, shadows_mb: their own
 *      entries, none where they share the LFTs' rows); malloc's
 *      statistics (mallinfo2) near the peak and after: bytes in use on the
 *      heaps, free but kept by them, and in blocks mapped on their own
 *      (the 160 MB tables). SCALE_BENCH_TRIM=1: also the SM's RSS after
 *      malloc_trim() (what the heaps keep). The mock's
 *      answer queues and QoS/P_Key tables (bounded by the window, small)
 *      count as the SM's.
 *
 * One line of key=value per step; bench/scale40k.sh runs it.
 */
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "lib/clock.h"
#include "mock/mock.h"
#include "model/fabric.h"
#include "routing/registry.h"
#include "sm/sm.h"
#include "sm/state.h"

/* The memory sampler's own thread CPU (DOC 5), kept out of cpu_s(). */
static atomic_llong sampler_cpu_us;

static long long thread_cpu_us(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The process's CPU but the sampler's. */
static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6 - (double)atomic_load(&sampler_cpu_us) / 1e6;
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

/* ---- the SM's memory apart from the emulator's (DOC 5) ---- */
static long page_kb;

static long rss_kb(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res < 0 ? -1 : res * page_kb;
}

struct sampler {
	const struct sm_mock *m;
	long mock_fixed_kb;
	atomic_int stop;
	atomic_long rss_peak_kb, sm_peak_kb, mock_lft_kb;
	atomic_llong sm_peak_us, step_us;   /* when the SM's peak was seen, when the step began */
	/* malloc's view at the SM's peak (taken when it rises by 4 MB or more): in use on the heaps,
	 * free but kept by them, in large blocks of their own (mmap: the LID-indexed tables) */
	atomic_long at_inuse_kb, at_free_kb, at_mmap_kb, at_taken_kb;
};

static long sm_kb(struct sampler *s, long *lft_kb)
{
	long rss = rss_kb();
	*lft_kb = (long)(sm_mock_lft_resident(s->m) / 1024);
	return rss - s->mock_fixed_kb - *lft_kb;
}

static void sample(struct sampler *s)
{
	long lft, rss = rss_kb(), sm = sm_kb(s, &lft);
	if (rss > atomic_load(&s->rss_peak_kb))
		atomic_store(&s->rss_peak_kb, rss);
	if (sm > atomic_load(&s->sm_peak_kb)) {
		atomic_store(&s->sm_peak_kb, sm);
		atomic_store(&s->sm_peak_us, (long long)sm_mono_us());
		if (sm >= atomic_load(&s->at_taken_kb) + 4096) {
			struct mallinfo2 mi = mallinfo2();
			atomic_store(&s->at_inuse_kb, (long)(mi.uordblks / 1024));
			atomic_store(&s->at_free_kb, (long)(mi.fordblks / 1024));
			atomic_store(&s->at_mmap_kb, (long)(mi.hblkhd / 1024));
			atomic_store(&s->at_taken_kb, sm);
		}
	}
	atomic_store(&s->mock_lft_kb, lft);
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	while (!atomic_load(&s->stop)) {
		sample(s);
		atomic_store(&sampler_cpu_us, thread_cpu_us());
		usleep(2000);
	}
	return NULL;
}

static void sampler_step(struct sampler *s)
{
	atomic_store(&s->rss_peak_kb, 0);
	atomic_store(&s->sm_peak_kb, 0);
	atomic_store(&s->at_taken_kb, 0);
	atomic_store(&s->step_us, (long long)sm_mono_us());
	sample(s);
}

/* The state's LID-indexed tables: the snapshot's LFTs and the LFT shadows. */
static void state_tables(const struct sm_state *st, double *lfts_mb, double *shadows_mb)
{
	size_t sh = 0;
	const struct sm_lfts *l = st->snap ? st->snap->lfts : NULL;
	*lfts_mb = l ? (double)l->n_switches * ((double)l->top_lid + 1) / 1048576 : 0;
	for (uint32_t n = 0; st->tab.shadow && n < st->tab.n_shadow; n++)   /* entries only where not shared */
		sh += (size_t)st->tab.shadow[n].n_blocks * (st->tab.shadow[n].ent ? SM_LFT_BLOCK + 1 : 1);
	*shadows_mb = (double)sh / 1048576;
}

static void mem_line(const char *step, struct sampler *s, const struct sm_state *st)
{
	long lft, after = sm_kb(s, &lft);
	double lm, sh;
	sample(s);
	state_tables(st, &lm, &sh);
	struct mallinfo2 mi = mallinfo2();
	printf("mem step=%s sm_peak_mb=%.1f sm_peak_at_s=%.2f sm_after_mb=%.1f rss_peak_mb=%.1f mock_fixed_mb=%.1f "
	       "mock_lft_mb=%.1f lfts_mb=%.1f shadows_mb=%.1f peak_heap_inuse_mb=%.1f peak_heap_free_mb=%.1f "
	       "peak_mmap_mb=%.1f after_heap_inuse_mb=%.1f after_heap_free_mb=%.1f after_mmap_mb=%.1f\n",
	       step, (double)atomic_load(&s->sm_peak_kb) / 1024,
	       (double)(atomic_load(&s->sm_peak_us) - atomic_load(&s->step_us)) / 1e6, (double)after / 1024,
	       (double)atomic_load(&s->rss_peak_kb) / 1024, (double)s->mock_fixed_kb / 1024, (double)lft / 1024,
	       lm, sh, (double)atomic_load(&s->at_inuse_kb) / 1024, (double)atomic_load(&s->at_free_kb) / 1024,
	       (double)atomic_load(&s->at_mmap_kb) / 1024, (double)mi.uordblks / 1048576, (double)mi.fordblks / 1048576,
	       (double)mi.hblkhd / 1048576);
	if (getenv("SCALE_BENCH_TRIM")) {   /* what the heaps keep that a trim gives back */
		malloc_trim(0);
		printf("mem step=%s sm_after_trim_mb=%.1f\n", step, (double)sm_kb(s, &lft) / 1024);
	}
	fflush(stdout);
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

/*
 * The second leaf's first host link, as (leaf, port): a node that reboots
 * (SCALE_BENCH_LINK=host; the SM's own host is on the first leaf).
 */
static int pick_host(const struct sm_fabric *f, uint32_t *node, unsigned *port)
{
	unsigned leaves = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		for (unsigned p = 1; f->nodes[n].type == SM_NODE_SWITCH && p <= f->nodes[n].nports; p++) {
			const struct sm_port *pt = sm_port(f, n, p);
			if (pt->peer_node == SM_NONE || f->nodes[pt->peer_node].type != SM_NODE_CA)
				continue;
			if (!leaves++)
				break;
			*node = n;
			*port = p;
			return 0;
		}
	return -1;
}

/*
 * SCALE_BENCH_PERF_CTL=FIFO: `perf record -D -1 --control fifo:FIFO` samples
 * only the third step (the reroute): cmd "enable" before it, "disable" after;
 * SCALE_BENCH_PERF_STEP=K: the step of index K instead (3: host_up).
 */
static unsigned perf_step(void)
{
	const char *s = getenv("SCALE_BENCH_PERF_STEP");
	return s ? (unsigned)atoi(s) : 2u;
}

static void perf_ctl(const char *cmd)
{
	const char *path = getenv("SCALE_BENCH_PERF_CTL");
	FILE *fp = cmd && path ? fopen(path, "w") : NULL;
	if (fp) {
		fprintf(fp, "%s\n", cmd);
		fclose(fp);
	}
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
	page_kb = sysconf(_SC_PAGESIZE) / 1024;
	malloc_trim(0);
	long rss0 = rss_kb();
	double l0 = sm_mono_sec();
	if (sm_mock_load(argv[1], &mc, &m, err, sizeof(err))) {
		fprintf(stderr, "scale_bench: %s\n", err);
		return 1;
	}
	double load_s = sm_mono_sec() - l0;
	malloc_trim(0);   /* the dump parser's garbage is not the emulator's */
	static struct sampler smp;
	smp.m = m;
	smp.mock_fixed_kb = rss_kb() - rss0 - (long)(sm_mock_lft_resident(m) / 1024);
	pthread_t smp_th;
	int smp_ok = !pthread_create(&smp_th, NULL, sampler_main, &smp);
	printf("load=%s latency_us=%u engine=%s mock_load_s=%.3f vmhwm_mb=%.1f rss_before_mb=%.1f mock_fixed_mb=%.1f\n",
	       argv[1], lat, engine, load_s, (double)vm_kb("VmHWM:") / 1024, (double)rss0 / 1024,
	       (double)smp.mock_fixed_kb / 1024);
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
	/* as the daemon: memory given back once idle, timed apart (GIVE_BACK_IN_STEP=1: in the step) */
	cfg.defer_give_back = !(getenv("GIVE_BACK_IN_STEP") && atoi(getenv("GIVE_BACK_IN_STEP")));
	struct sm_lfts before_v, *before = NULL;  /* the routes before the link went: a plain copy of the rows */

	const char *what = getenv("SCALE_BENCH_LINK");
	int host = what && !strcmp(what, "host");
	const char *const steps[] = { "cold", "heavy", host ? "host_down" : "link_down", "host_up" };
	int status = 0;
	uint32_t node = SM_NONE;
	unsigned port = 0;
	for (unsigned k = 0; k < 3u + host; k++) {
		struct sm_summary sum;
		if (k == 3 && sm_mock_link_up(m, node, port)) {
			fprintf(stderr, "scale_bench: cannot bring the host link back\n");
			status = 1;
			break;
		}
		if (k == 2) {
			const struct sm_fabric *mf = sm_mock_fabric(m);
			if (!mf || (host ? pick_host(mf, &node, &port) : pick_link(mf, &node, &port)) ||
			    sm_mock_link_down(m, node, port)) {
				fprintf(stderr, "scale_bench: no link to take down\n");
				status = 1;
				break;
			}
			printf("%s node=0x%016" PRIx64 " port=%u\n", steps[2], mf->nodes[node].guid, port);
			/* not sm_lfts_dup(): that would take the spare table the reroute is meant to reuse (model/lfts.c) */
			if (st->snap && getenv("SCALE_BENCH_DIFF") && atoi(getenv("SCALE_BENCH_DIFF"))) {
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
		sampler_step(&smp);
		perf_ctl(k == perf_step() ? "enable" : NULL);
		/* no copy of the fabric for us (f NULL): the daemon keeps only the state's */
		int rc = sm_bringup_state(t, chain, &cfg, st, &sum, NULL, err, sizeof(err));
		perf_ctl(k == perf_step() ? "disable" : NULL);
		line(steps[k], rc, sm_mono_sec() - w0, cpu_s() - c0, emu_s(m) - e0, &sum, sm_state_fabric(st));
		if (rc) {
			fprintf(stderr, "scale_bench: %s: %s\n", steps[k], err);
			status = 1;
		}
		mem_line(steps[k], &smp, st);
		if (k == 2 && !rc && st->snap && before) {
			lft_diff(steps[2], before, st->snap->lfts);
			struct sm_lfts *cold = route_cold(reg, engine, st->snap->fabric);
			lft_diff("full_route", before, cold);
			lft_diff("incremental_vs_full", cold, st->snap->lfts);
			sm_lfts_free(cold);
		}
		if (k == 3 && !rc && st->snap && before)
			lft_diff("host_up_vs_before", before, st->snap->lfts);
		if (rc)
			break;
		/*
		 * The daemon's worker, idle after a cycle, copies the state's tables
		 * into the spare one (model/lfts.h sm_lfts_prepare()): a reroute
		 * then starts without copying 160 MB. Timed apart, not in a step.
		 */
		double g0 = cpu_s();
		if (sm_state_give_back_idle()) {   /* sm_after_mb of the mem line is before it */
			long lft;
			printf("give_back step=%s cpu_s=%.4f sm_after_give_back_mb=%.1f\n", steps[k], cpu_s() - g0,
			       (double)sm_kb(&smp, &lft) / 1024);
		}
		const char *np = getenv("SCALE_BENCH_NO_PREPARE");
		if (st->snap && st->snap->lfts && !(np && atoi(np))) {
			double p0 = cpu_s();
			int prc = sm_lfts_prepare(st->snap->lfts);
			printf("prepare step=%s rc=%d cpu_s=%.4f\n", steps[k], prc, cpu_s() - p0);
		}
	}
	atomic_store(&smp.stop, 1);
	if (smp_ok)
		pthread_join(smp_th, NULL);
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
