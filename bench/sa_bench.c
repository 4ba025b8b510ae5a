/* SPDX-License-Identifier: MIT */
/*
 * DOC: sa_bench: PathRecord queries answered on one thread, no transport
 *
 * Builds a fat tree with the generator (smd/model/gen.h; 2,048 hosts on
 * radix-64 switches by default), routes it with an engine chain from the
 * registry (ftree,minhop as the dry-run does), makes the plane's snapshot
 * (sm/snapshot.h) and then drives sm_sa_query() directly, as the SA server
 * would for each decoded request, with one answer buffer reused:
 *
 *   - PathRecord Gets between random hosts, by SLID/DLID and by SGID/DGID
 *     (what rdma_cm sends: SGID, DGID, P_Key, NumbPath 1, Reversible,
 *     ServiceID): queries/s and ns/query over --queries (one timer around
 *     the loop), then p50/p99/p99.9 from a second pass timing each query
 *     (clock_gettime per query; its own cost is printed and included);
 *   - MultiPathRecord GetMulti in the APM form (2 sources, 2 destinations,
 *     NumbPath 2: two paths), --queries / 4 of them;
 *   - GetTable of every path from one source (SGID only) and of every path
 *     of the plane (empty mask): wall and CPU time, records, record bytes
 *     and the bytes RMPP puts on the wire (256-byte MADs of 200 bytes).
 *
 * Requests are pre-encoded (a pool of --pool, 4,096 by default: 800 KB, as a
 * request just received is in cache) and cycled, so the loop times the SA
 * alone. CPU time is this thread's (the machine may be shared).
 *
 * --probe: the SA server itself (sa/server.h) on an event loop, over an
 * in-process GSI (an eventfd the loop watches; whole RMPP messages, as a
 * kernel agent takes them), while one host asks for the whole plane's
 * PathRecords (GetTable, empty mask). A probe on the same loop every
 * millisecond stands for `smctl status` and any other SA client: a timer
 * (its lateness is how long a status request would wait) that also sends a
 * PathRecord Get between random hosts (its answer's latency). Prints the
 * table's time from request to send and the probe's p50/p99/max, before
 * and while the table is built.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"
#include "lib/loop.h"
#include "mad/gsi.h"
#include "model/gen.h"
#include "model/lfts.h"
#include "routing/registry.h"
#include "sa/path.h"
#include "sa/query.h"
#include "sa/server.h"
#include "sm/snapshot.h"

#define PREFIX 0xFE80000000000000ULL

struct pool {
	uint8_t (*data)[SM_SA_DATA_SIZE];
	struct sm_sa_req *req;
	unsigned n;
};

static void gid(uint8_t *g, uint64_t guid)
{
	for (int i = 0; i < 8; i++)
		g[i] = (uint8_t)(PREFIX >> (56 - 8 * i)), g[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
}

static void req_init(struct sm_sa_req *r, uint8_t *data, uint8_t method, uint64_t mask, uint16_t from)
{
	memset(r, 0, sizeof(*r));
	r->hdr.base_version = 1, r->hdr.mgmt_class = SM_CLASS_SA, r->hdr.class_version = SM_SA_CLASS_VERSION;
	r->hdr.method = method, r->hdr.attr_id = SM_SA_ATTR_PATH_RECORD, r->hdr.comp_mask = mask;
	r->data = data, r->len = SM_SA_DATA_SIZE, r->from.lid = from;
}

#define B(b) (1ULL << (b))

/* Room for n requests and their data; -1 when out of memory (the caller frees p either way). */
static int pool_alloc(struct pool *p, unsigned n)
{
	p->n = n;
	p->data = calloc(n, sizeof(*p->data));
	p->req = calloc(n, sizeof(*p->req));
	return p->data && p->req ? 0 : -1;
}

/* n random host pairs, by LIDs (by_gid 0) or GIDs in rdma_cm's form. */
static int pool_make(struct pool *p, unsigned n, unsigned hosts, bool by_gid, uint64_t *rng)
{
	if (pool_alloc(p, n))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		uint32_t s = (uint32_t)(sm_splitmix64(rng) % hosts), d = (uint32_t)(sm_splitmix64(rng) % hosts);
		struct sm_sa_path_rec r = { 0 };
		uint64_t mask;
		if (by_gid) {
			gid(r.sgid, sm_gen_ca_port_guid(0, s));
			gid(r.dgid, sm_gen_ca_port_guid(0, d));
			r.p.pkey = 0xFFFF, r.p.numb_path = 1, r.p.reversible = true;
			r.service_id = 0x0000000001060000ULL | (i & 0xFFFF);
			mask = B(SM_PR_CM_SGID) | B(SM_PR_CM_DGID) | B(SM_PR_CM_PKEY) | B(SM_PR_CM_NUMB_PATH) |
			       B(SM_PR_CM_REVERSIBLE) | B(SM_PR_CM_SERVICE_ID_MSB) | B(SM_PR_CM_SERVICE_ID_LSB);
		} else {
			r.slid = (uint16_t)(s + 1), r.dlid = (uint16_t)(d + 1);   /* generator LIDs: host i is i+1 */
			mask = B(SM_PR_CM_SLID) | B(SM_PR_CM_DLID);
		}
		sm_sa_path_rec_encode(&r, p->data[i]);
		req_init(&p->req[i], p->data[i], SM_SA_GET, mask, (uint16_t)(s + 1));
	}
	return 0;
}

/* n GetMulti requests of the APM form: 2 random source hosts, 2 random destinations, NumbPath 2. */
static int pool_make_apm(struct pool *p, unsigned n, unsigned hosts, uint64_t *rng)
{
	if (pool_alloc(p, n))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		struct sm_sa_mpath_rec m = { .p = { .numb_path = 2 }, .sgid_count = 2, .dgid_count = 2 };
		sm_sa_mpath_rec_encode(&m, p->data[i]);
		for (int g = 0; g < 4; g++)
			gid(p->data[i] + SM_SA_MPATH_REC_SIZE + 16 * g,
			    sm_gen_ca_port_guid(0, (uint32_t)(sm_splitmix64(rng) % hosts)));
		req_init(&p->req[i], p->data[i], SM_SA_GET_MULTI,
			 B(SM_MPR_CM_SGID_COUNT) | B(SM_MPR_CM_DGID_COUNT) | B(SM_MPR_CM_NUMB_PATH), 1);
		p->req[i].hdr.attr_id = SM_SA_ATTR_MULTIPATH_RECORD;
	}
	return 0;
}

static void pool_free(struct pool *p)
{
	free(p->data);
	free(p->req);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int run_gets(const char *name, const struct sm_sa_ctx *ctx, const struct pool *p, unsigned queries,
		    struct sm_sa_ans *ans, size_t want)
{
	unsigned bad = 0;
	/* throughput: one timer around the loop */
	double w0 = sm_mono_sec(), c0 = bench_cpu_sec();
	for (unsigned i = 0; i < queries; i++) {
		if (sm_sa_query(ctx, &p->req[i % p->n], ans) || ans->n != want)
			bad++;
	}
	double wall = sm_mono_sec() - w0, cpu = bench_cpu_sec() - c0;
	/* latency: a timer around each query */
	uint64_t *lat = malloc(queries * sizeof(*lat));
	if (!lat)
		return -1;
	uint64_t t_over = now_ns();
	for (unsigned i = 0; i < 1000; i++)
		(void)now_ns();
	t_over = (now_ns() - t_over) / 1000;
	for (unsigned i = 0; i < queries; i++) {
		uint64_t t = now_ns();
		(void)sm_sa_query(ctx, &p->req[i % p->n], ans);
		lat[i] = now_ns() - t;
	}
	qsort(lat, queries, sizeof(*lat), cmp_u64);
	printf("%-24s %8u queries  %6.3f s wall  %6.3f s cpu  %8.0f q/s wall  %8.0f q/s cpu  %5.1f ns/q cpu  "
	       "p50 %4llu ns  p99 %4llu ns  p99.9 %5llu ns  (timer %llu ns)  bad %u\n",
	       name, queries, wall, cpu, queries / wall, queries / cpu, cpu * 1e9 / queries,
	       (unsigned long long)lat[queries / 2], (unsigned long long)lat[(size_t)queries * 99 / 100],
	       (unsigned long long)lat[(size_t)queries * 999 / 1000], (unsigned long long)t_over, bad);
	free(lat);
	return bad ? -1 : 0;
}

static int run_table(const char *name, const struct sm_sa_ctx *ctx, uint64_t mask, uint64_t sguid,
		     struct sm_sa_ans *ans)
{
	uint8_t data[SM_SA_DATA_SIZE] = { 0 };
	struct sm_sa_path_rec r = { 0 };
	struct sm_sa_req req;

	gid(r.sgid, sguid);
	sm_sa_path_rec_encode(&r, data);
	req_init(&req, data, SM_SA_GET_TABLE, mask, 1);
	double w0 = sm_mono_sec(), c0 = bench_cpu_sec();
	int rc = sm_sa_query(ctx, &req, ans);
	double wall = sm_mono_sec() - w0, cpu = bench_cpu_sec() - c0;
	if (rc || ans->status) {
		fprintf(stderr, "sa_bench: %s: rc %d status 0x%04x\n", name, rc, ans->status);
		return -1;
	}
	size_t bytes = ans->n * ans->rec_size, segs = (bytes + SM_SA_DATA_SIZE - 1) / SM_SA_DATA_SIZE;
	printf("%-24s %8zu records  %8.3f s wall  %8.3f s cpu  %6.1f ns/record  %11zu record bytes  "
	       "%11zu wire bytes (%zu MADs)\n",
	       name, ans->n, wall, cpu, cpu * 1e9 / (double)(ans->n ? ans->n : 1), bytes, segs * SM_SA_MAD_SIZE,
	       segs);
	return 0;
}

/* ---- --probe: the server on a loop, a probe during a whole-plane GetTable ---- */

#define PQ 256
#define PROBE_TID 0x50520000u          /* probe Gets: PROBE_TID | n */
#define TABLE_TID 0x7AB1E000u
#define MAX_PROBES 20000

struct pgsi {
	struct sm_gsi g;
	int efd;                       /* readable while in[] holds requests */
	struct { uint8_t mad[SM_SA_MAD_SIZE]; uint16_t lid; } in[PQ];
	unsigned in_head, in_n;
	uint64_t sent_ns[MAX_PROBES];  /* probe Get n sent at */
	uint64_t lat_ns[MAX_PROBES];   /* its answer's latency, 0 none yet */
	uint64_t table_ns;             /* when the table's answer was sent, 0 not yet */
	size_t table_len;
	uint16_t table_status;
};

static int p_send(struct sm_gsi *g, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	struct pgsi *p = (struct pgsi *)g;
	uint32_t tid = (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 | (uint32_t)mad[14] << 8 | mad[15];

	(void)to;
	if (tid == TABLE_TID) {
		p->table_ns = now_ns();
		p->table_len = len;
		p->table_status = (uint16_t)(mad[4] << 8 | mad[5]);
	} else if ((tid & 0xFFFF0000u) == PROBE_TID && (tid & 0xFFFF) < MAX_PROBES && !(mad[4] | mad[5])) {
		p->lat_ns[tid & 0xFFFF] = now_ns() - p->sent_ns[tid & 0xFFFF];
	}
	return 0;
}

static int p_recv(struct sm_gsi *g, uint8_t *buf, size_t cap, size_t *len, struct sm_gsi_addr *from)
{
	struct pgsi *p = (struct pgsi *)g;
	uint64_t v;

	if (!p->in_n) {
		(void)!read(p->efd, &v, sizeof(v));
		return -EAGAIN;
	}
	if (cap < SM_SA_MAD_SIZE)
		return -EMSGSIZE;
	memcpy(buf, p->in[p->in_head].mad, SM_SA_MAD_SIZE);
	memset(from, 0, sizeof(*from));
	from->lid = p->in[p->in_head].lid;
	from->qpn = 1;
	p->in_head = (p->in_head + 1) % PQ;
	p->in_n--;
	*len = SM_SA_MAD_SIZE;
	return 0;
}

static int p_fd(struct sm_gsi *g)
{
	return ((struct pgsi *)g)->efd;
}

static void p_close(struct sm_gsi *g)
{
	(void)g;   /* the bench owns it */
}

static const struct sm_gsi_ops p_ops = {
	.size = sizeof(struct sm_gsi_ops), .version = SM_GSI_OPS_VERSION, .name = "probe",
	.send = p_send, .recv = p_recv, .fd = p_fd, .close = p_close,
};

static void p_inject(struct pgsi *p, const struct sm_sa_req *r, uint32_t tid)
{
	uint8_t *m = p->in[(p->in_head + p->in_n) % PQ].mad;
	struct sm_sa_hdr h = r->hdr;
	uint64_t one = 1;

	if (p->in_n == PQ)
		return;
	h.tid = tid;
	memset(m, 0, SM_SA_MAD_SIZE);
	sm_sa_hdr_encode(&h, m);
	memcpy(m + SM_SA_HDR_SIZE, r->data, SM_SA_DATA_SIZE);
	p->in[(p->in_head + p->in_n) % PQ].lid = r->from.lid;
	p->in_n++;
	(void)!write(p->efd, &one, sizeof(one));
}

struct prober {
	struct pgsi *p;
	const struct pool *gets;
	struct sm_loop_src *timer;
	uint64_t due_us;
	unsigned n;                   /* probes sent */
	uint64_t late_ns[MAX_PROBES]; /* timer lateness of probe n */
};

static void on_probe(struct sm_loop_src *s, void *arg)
{
	struct prober *pr = arg;
	uint64_t now = sm_mono_us();

	if (pr->n < MAX_PROBES) {
		pr->late_ns[pr->n] = (now - pr->due_us) * 1000u;
		pr->p->sent_ns[pr->n] = now_ns();
		p_inject(pr->p, &pr->gets->req[pr->n % pr->gets->n], PROBE_TID | pr->n);
		pr->n++;
	}
	pr->due_us += 1000;
	if (pr->due_us < now)
		pr->due_us = now + 1000;   /* missed ticks are not made up */
	sm_loop_timer_set(s, pr->due_us);
}

/* p50/p99/max of v[a..b) (sorted in place), in us; n 0 when empty. */
static void pct(uint64_t *v, unsigned a, unsigned b, const char *what)
{
	unsigned n = 0;

	for (unsigned i = a; i < b; i++)
		if (v[i])
			v[a + n++] = v[i];
	if (!n) {
		printf("  %-34s none\n", what);
		return;
	}
	qsort(v + a, n, sizeof(*v), cmp_u64);
	printf("  %-34s n %5u  p50 %8.1f us  p99 %8.1f us  max %8.1f us\n", what, n, v[a + n / 2] / 1e3,
	       v[a + (size_t)n * 99 / 100] / 1e3, v[a + n - 1] / 1e3);
}

static int run_probe(const struct sm_snapshot *snap, const struct pool *gets)
{
	static struct pgsi p;
	static struct prober pr;
	struct sm_loop *loop = NULL;
	struct sm_sa *sa = NULL;
	struct sm_sa_cfg cfg = { .plane = 0, .self = { .subnet_timeout = 18, .state = 3 } };
	char err[256];
	int rc;

	p.g.ops = &p_ops;
	p.g.flags = SM_GSI_KERNEL_RMPP;
	p.g.mgmt_class = SM_CLASS_SA;
	p.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p.efd < 0 || sm_loop_new(&loop) || (rc = sm_sa_new(&cfg, &p.g, loop, &sa, err, sizeof(err)))) {
		fprintf(stderr, "sa_bench: probe: set-up failed\n");
		return -1;
	}
	sm_sa_publish(sa, snap);
	pr.p = &p;
	pr.gets = gets;
	if (sm_loop_timer_add(loop, on_probe, &pr, &pr.timer))
		return -1;
	pr.due_us = sm_mono_us() + 1000;
	sm_loop_timer_set(pr.timer, pr.due_us);
	/* 300 ms of probes alone */
	uint64_t end = sm_mono_us() + 300000;
	while (sm_mono_us() < end)
		sm_loop_dispatch(loop, 10);
	unsigned before = pr.n;
	/* the whole plane's PathRecords, asked by host 1 */
	uint8_t data[SM_SA_DATA_SIZE] = { 0 };
	struct sm_sa_req req;
	req_init(&req, data, SM_SA_GET_TABLE, 0, 1);
	struct sm_sa_stats st0, st1;
	sm_sa_stats(sa, &st0);
	double c0 = bench_cpu_sec();
	uint64_t t0 = now_ns();
	p_inject(&p, &req, TABLE_TID);
	while (!p.table_ns && now_ns() - t0 < 60000000000ull)
		sm_loop_dispatch(loop, 10);
	unsigned during = pr.n;
	double cpu = bench_cpu_sec() - c0;
	end = sm_mono_us() + 50000;   /* late answers of the last probes */
	while (sm_mono_us() < end)
		sm_loop_dispatch(loop, 10);
	sm_sa_stats(sa, &st1);
	printf("whole-plane GetTable through the server: %.3f s from request to send, %zu bytes, status 0x%04x; "
	       "CPU: the loop's thread %.3f s, the SA's (cpu_s) %.3f s\n",
	       p.table_ns ? (double)(p.table_ns - t0) / 1e9 : -1.0, p.table_len, p.table_status, cpu,
	       (double)(st1.cpu_ns - st0.cpu_ns) / 1e9);
	pct(pr.late_ns, 0, before, "probe timer lateness, before");
	pct(p.lat_ns, 0, before, "probe Get latency, before");
	pct(pr.late_ns, before, during, "probe timer lateness, during");
	pct(p.lat_ns, before, during, "probe Get latency, during");
	sm_loop_remove(pr.timer);
	sm_sa_free(sa);
	sm_loop_free(loop);
	close(p.efd);
	return p.table_ns ? 0 : -1;   /* NO_RESOURCES: more than the server's 1 M records */
}

static void usage(void)
{
	fprintf(stderr, "usage: sa_bench [--hosts N] [--radix K] [--levels 2|3] [--queries Q] [--pool P]\n"
			"                [--seed S] [--chain ftree,minhop] [--no-all-pairs] [--probe]\n");
}

int main(int argc, char **argv)
{
	unsigned hosts = 2048, radix = 64, levels = 0, queries = 2000000, pool = 4096;
	uint64_t seed = 1;
	const char *chain_spec = "ftree,minhop";
	int all_pairs = 1, probe = 0;
	static const struct option lo[] = {
		{ "hosts", 1, 0, 'n' }, { "radix", 1, 0, 'k' }, { "levels", 1, 0, 'l' }, { "queries", 1, 0, 'q' },
		{ "pool", 1, 0, 'P' }, { "seed", 1, 0, 's' }, { "chain", 1, 0, 'c' }, { "no-all-pairs", 0, 0, 'A' },
		{ "probe", 0, 0, 'p' },
		{ 0, 0, 0, 0 }
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n': hosts = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'k': radix = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'l': levels = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'q': queries = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'P': pool = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'c': chain_spec = optarg; break;
		case 'A': all_pairs = 0; break;
		case 'p': probe = 1; break;
		default: usage(); return 2;
		}
	}
	if (!queries || !pool || !hosts) {
		usage();
		return 2;
	}
	char err[512];
	struct sm_gen_params gp;
	bench_gen_params(&gp, hosts, radix, levels, 1, 0, seed);
	struct sm_fabric *f = sm_fabric_new();
	if (!f || sm_gen_fat_tree(&gp, f, err, sizeof(err))) {
		fprintf(stderr, "sa_bench: gen: %s\n", f ? err : "out of memory");
		return 1;
	}
	struct sm_registry *reg = sm_registry_new(NULL);
	struct sm_chain *chain = NULL;
	struct sm_lfts *lfts = NULL;
	struct sm_plane_result res;
	if (!reg || sm_chain_new(reg, chain_spec, NULL, NULL, &chain, err, sizeof(err))) {
		fprintf(stderr, "sa_bench: chain: %s\n", reg ? err : "out of memory");
		return 1;
	}
	double t0 = sm_mono_sec();
	if (sm_route_chain(chain, f, 0, NULL, &lfts, &res)) {
		sm_plane_result_format(&res, err, sizeof(err));
		fprintf(stderr, "sa_bench: route: %s\n", err);
		return 1;
	}
	double t_route = sm_mono_sec() - t0;
	struct sm_fabric_counts cnt;
	sm_fabric_count(f, 0, &cnt);
	struct sm_snapshot *snap = sm_snapshot_new(0, f, lfts);
	if (!snap) {
		fprintf(stderr, "sa_bench: out of memory\n");
		return 1;
	}
	snap->subnet_prefix = PREFIX, snap->up = true;
	struct sm_sa_self self = { .subnet_timeout = 18, .state = 3 };
	struct sm_sa_ctx ctx = { .snap = snap, .self = &self };
	printf("fabric: %u hosts, %u switches, %u LIDs; routed by %s in %.3f s\n", cnt.cas, cnt.switches, cnt.lids,
	       res.engine, t_route);

	struct sm_sa_ans ans = { 0 };
	struct pool by_lid, by_gid, apm;
	uint64_t rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	int rc = 0;
	if (pool_make(&by_lid, pool, hosts, false, &rng) || pool_make(&by_gid, pool, hosts, true, &rng) ||
	    pool_make_apm(&apm, pool, hosts, &rng)) {
		fprintf(stderr, "sa_bench: out of memory\n");
		return 1;
	}
	if (probe) {
		rc = run_probe(snap, &by_lid);
		goto out;
	}
	rc |= run_gets("Get SLID/DLID", &ctx, &by_lid, queries, &ans, 1);
	rc |= run_gets("Get SGID/DGID (rdma_cm)", &ctx, &by_gid, queries, &ans, 1);
	rc |= run_gets("GetMulti APM 2x2", &ctx, &apm, queries / 4, &ans, 2);
	/* as the server answers: with its per-snapshot rate/MTU table (path.h sm_sa_port_rm_build) */
	uint16_t *rm = sm_sa_port_rm_build(snap);
	ctx.port_rm = rm;
	rc |= run_gets("Get SLID/DLID, server's table", &ctx, &by_lid, queries, &ans, 1);
	rc |= run_gets("Get SGID/DGID (rdma_cm), server's table", &ctx, &by_gid, queries, &ans, 1);
	ctx.port_rm = NULL;
	free(rm);
	rc |= run_table("GetTable one source", &ctx, B(SM_PR_CM_SGID), sm_gen_ca_port_guid(0, 0), &ans);
	if (all_pairs)
		rc |= run_table("GetTable all pairs", &ctx, 0, 0, &ans);
out:
	pool_free(&by_lid);
	pool_free(&by_gid);
	pool_free(&apm);
	sm_sa_ans_free(&ans);
	sm_snapshot_unref(snap);
	sm_chain_free(chain);
	sm_registry_free(reg);
	return rc ? 1 : 0;
}
