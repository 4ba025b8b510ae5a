/* SPDX-License-Identifier: MIT */
/*
 * bench/sa_load: a PathRecord load client for any SA (smd's or OpenSM's),
 * with libibumad only, so that it runs under ibsim's umad2sim like a host.
 *
 *   sa_load -f LIDS [-C CA] [-P PORT] [-n INFLIGHT] [-d SECONDS] [-g]
 *           [-t TIMEOUT_MS] [-s SEED] [-N NAME]
 *
 * LIDS is a file of "LID PORT_GUID" lines (the end ports to pick pairs
 * from; bench/sa_ibsim.sh writes it from ibnetdiscover -p). Keeps INFLIGHT
 * (default 1) SubnAdmGet(PathRecord) requests in flight to the SM LID of
 * our port for SECONDS (default 5), each between a random pair of the
 * file: by SLID/DLID (Reversible, NumbPath 1), or with -g in rdma_cm's
 * form (SGID, DGID, P_Key 0xffff, NumbPath 1, Reversible, ServiceID,
 * QoS class; see tests/sa_client.c). A request without an answer within
 * TIMEOUT_MS (default 1000) is counted and replaced (umad2sim never times
 * a MAD out; every wait here is a poll with a timeout). An answer with
 * BUSY is counted and its slot waits 1 ms before the next request
 * (IBA 13.4.7: back off on BUSY). Prints one line:
 *
 *   NAME: inflight 32 secs 5.00 sent N answered A ok O busy B err E timeouts T late L
 *     qps Q p50_us X p99_us Y max_us Z
 *
 * qps counts answers with status 0 per second of wall clock; latencies
 * are those of the answers with status 0 (send to receive, this
 * process's monotonic clock). Then waits up to 500 ms for the answers
 * still on their way before closing the port. Exit 0 if any query was
 * answered with a path, 1 otherwise.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#define MAD 256
#define SA_CLASS 0x03
#define PR_ATTR 0x0035
#define REC 56
#define MAX_INFLIGHT 4096

/* PathRecord component mask bits (IBA 15.2.5.16) */
#define CM_SERVICE_ID (3ull << 0)
#define CM_DGID (1ull << 2)
#define CM_SGID (1ull << 3)
#define CM_DLID (1ull << 4)
#define CM_SLID (1ull << 5)
#define CM_REVERSIBLE (1ull << 11)
#define CM_NUMB_PATH (1ull << 12)
#define CM_PKEY (1ull << 13)
#define CM_QOS_CLASS (1ull << 14)

struct end { uint16_t lid; uint64_t guid; };

struct slot {
	uint64_t sent_ns;     /* 0: idle */
	uint64_t wake_ns;     /* idle until (BUSY back-off) */
	uint16_t gen;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t rng;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static int load_ends(const char *path, struct end **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct end *v = NULL;
	size_t cap = 0, k = 0;
	unsigned lid;
	unsigned long long guid;

	if (!f)
		return -errno;
	while (fscanf(f, "%u %llx", &lid, &guid) == 2) {
		if (!lid || lid >= 0xc000)
			continue;
		if (k == cap) {
			cap = cap ? cap * 2 : 256;
			struct end *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v = nv;
		}
		v[k].lid = (uint16_t)lid;
		v[k++].guid = guid;
	}
	fclose(f);
	*out = v;
	*n = k;
	return k >= 2 ? 0 : -EINVAL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: sa_load -f LIDS [-C CA] [-P PORT] [-n INFLIGHT] [-d SECONDS] [-g] "
		"[-t TIMEOUT_MS] [-s SEED] [-N NAME]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	const char *ca = NULL, *lidfile = NULL, *name = "sa_load";
	int port = 0, inflight = 1, timeout_ms = 1000, gid_form = 0;
	double secs = 5;
	unsigned long long seed = 0;
	struct end *ends = NULL;
	size_t n_ends = 0;
	umad_port_t up;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-g"))
			gid_form = 1;
		else if (!v)
			usage();
		else if (!strcmp(a, "-f"))
			lidfile = v, i++;
		else if (!strcmp(a, "-C"))
			ca = v, i++;
		else if (!strcmp(a, "-P"))
			port = atoi(v), i++;
		else if (!strcmp(a, "-n"))
			inflight = atoi(v), i++;
		else if (!strcmp(a, "-d"))
			secs = atof(v), i++;
		else if (!strcmp(a, "-t"))
			timeout_ms = atoi(v), i++;
		else if (!strcmp(a, "-s"))
			seed = strtoull(v, NULL, 0), i++;
		else if (!strcmp(a, "-N"))
			name = v, i++;
		else
			usage();
	}
	if (!lidfile || inflight < 1 || inflight > MAX_INFLIGHT || secs <= 0 || timeout_ms < 1)
		usage();
	int rc = load_ends(lidfile, &ends, &n_ends);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", name, lidfile, rc == -EINVAL ? "fewer than 2 LIDs" : strerror(-rc));
		return 1;
	}
	if (umad_init() < 0 || umad_get_port(ca, port, &up) < 0) {
		fprintf(stderr, "%s: no port %s:%d\n", name, ca ? ca : "(default)", port);
		return 1;
	}
	if (!up.sm_lid || up.state != 4) {
		fprintf(stderr, "%s: port not ACTIVE or no SM LID (state %u, SM LID %u)\n", name, up.state, up.sm_lid);
		return 1;
	}
	uint64_t prefix = be64toh(up.gid_prefix);
	uint8_t *sbuf = calloc(1, umad_size() + MAD), *rbuf = calloc(1, umad_size() + 4096);
	int portid = umad_open_port(up.ca_name, up.portnum);
	if (!sbuf || !rbuf || portid < 0) {
		fprintf(stderr, "%s: cannot open %s:%d\n", name, up.ca_name, up.portnum);
		return 1;
	}
	int agent = umad_register(portid, SA_CLASS, 2, 1, NULL);
	if (agent < 0) {
		fprintf(stderr, "%s: cannot register an SA client agent\n", name);
		return 1;
	}
	rng = (seed ? seed : (uint64_t)now_ns()) | 1;

	struct slot *slots = calloc((size_t)inflight, sizeof(*slots));
	size_t lat_cap = 1 << 20, n_lat = 0;
	uint32_t *lat = malloc(lat_cap * sizeof(*lat));   /* ns / 100 */
	if (!slots || !lat)
		return 1;
	uint64_t sent = 0, answered = 0, ok = 0, busy = 0, err = 0, timeouts = 0, late = 0;
	uint8_t *m = umad_get_mad(sbuf);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9), t = t0, tmo = (uint64_t)timeout_ms * 1000000ull;

	m[0] = 1;
	m[1] = SA_CLASS;
	m[2] = 2;
	m[3] = 0x01;   /* SubnAdmGet */
	put16(m + 16, PR_ATTR);
	put64(m + 48, gid_form ? CM_SGID | CM_DGID | CM_PKEY | CM_NUMB_PATH | CM_REVERSIBLE | CM_SERVICE_ID | CM_QOS_CLASS
			       : CM_SLID | CM_DLID | CM_REVERSIBLE | CM_NUMB_PATH);
	while (t < end) {
		/* (re)issue every idle slot */
		for (int i = 0; i < inflight; i++) {
			struct slot *s = &slots[i];

			if (s->sent_ns && t - s->sent_ns > tmo) {
				timeouts++;
				s->sent_ns = 0;
			}
			if (s->sent_ns || s->wake_ns > t)
				continue;
			const struct end *a = &ends[rnd() % n_ends], *b;
			do
				b = &ends[rnd() % n_ends];
			while (b == a);
			uint8_t *pr = m + REC;
			memset(pr, 0, 64);
			if (gid_form) {
				put64(pr, 0x0000000001060000ull);   /* ServiceID: RDMA_PS_TCP, port 0 */
				put64(pr + 8, prefix);
				put64(pr + 16, b->guid);
				put64(pr + 24, prefix);
				put64(pr + 32, a->guid);
				put16(pr + 50, 0xffff);
			} else {
				put16(pr + 40, b->lid);
				put16(pr + 42, a->lid);
			}
			pr[49] = 0x80 | 1;   /* Reversible, NumbPath 1 */
			s->gen++;
			put64(m + 8, (uint64_t)s->gen << 16 | (uint64_t)i);
			umad_set_addr(sbuf, up.sm_lid, 1, up.sm_sl, 0x80010000);
			s->sent_ns = now_ns();
			if (umad_send(portid, agent, sbuf, MAD, timeout_ms, 0) < 0) {
				fprintf(stderr, "%s: send failed\n", name);
				return 1;
			}
			sent++;
		}
		/* take every answer waiting; wait at most 1 ms for one */
		for (int wait = 1;; wait = 0) {
			int len = 4096;
			if (umad_recv(portid, rbuf, &len, wait) < 0)
				break;
			t = now_ns();
			const uint8_t *r = umad_get_mad(rbuf);
			if (umad_status(rbuf) || len < REC || r[1] != SA_CLASS || r[3] != 0x81)
				continue;
			uint32_t tid = get32(r + 12);
			unsigned i = tid & 0xffff;
			if (i >= (unsigned)inflight || !slots[i].sent_ns || (uint16_t)(tid >> 16) != slots[i].gen) {
				late++;
				continue;
			}
			struct slot *s = &slots[i];
			uint16_t st = get16(r + 4);
			answered++;
			if (!st) {
				ok++;
				if (n_lat == lat_cap) {
					uint32_t *nl = realloc(lat, 2 * lat_cap * sizeof(*lat));
					if (nl)
						lat = nl, lat_cap *= 2;
				}
				if (n_lat < lat_cap)
					lat[n_lat++] = (uint32_t)((t - s->sent_ns) / 100);
			} else if ((st & 0x1f) == 1) {
				busy++;
				s->wake_ns = t + 1000000;
			} else {
				err++;
			}
			s->sent_ns = 0;
		}
		t = now_ns();
	}
	double el = (double)(t - t0) / 1e9;
	qsort(lat, n_lat, sizeof(*lat), cmp_u32);
	double p50 = n_lat ? lat[n_lat / 2] / 10.0 : 0, p99 = n_lat ? lat[n_lat * 99 / 100] / 10.0 : 0;
	double mx = n_lat ? lat[n_lat - 1] / 10.0 : 0;
	printf("%s: inflight %d secs %.2f sent %llu answered %llu ok %llu busy %llu err %llu timeouts %llu late %llu"
	       " qps %.0f p50_us %.1f p99_us %.1f max_us %.1f\n",
	       name, inflight, el, (unsigned long long)sent, (unsigned long long)answered, (unsigned long long)ok,
	       (unsigned long long)busy, (unsigned long long)err, (unsigned long long)timeouts,
	       (unsigned long long)late, ok / el, p50, p99, mx);
	fflush(stdout);
	/* wait for what is still on its way (at most 500 ms): umad2sim's exit
	 * handler can hang joining its receiver thread when an answer arrives
	 * for a closed port; alarm() ends the process if it does all the same */
	for (uint64_t stop = now_ns() + 500000000ull; now_ns() < stop;) {
		int busy_slots = 0, len = 4096;

		for (int i = 0; i < inflight; i++)
			busy_slots += slots[i].sent_ns != 0;
		if (!busy_slots)
			break;
		if (umad_recv(portid, rbuf, &len, 1) < 0)
			continue;
		const uint8_t *r = umad_get_mad(rbuf);
		unsigned i = get32(r + 12) & 0xffff;
		if (len >= REC && i < (unsigned)inflight)
			slots[i].sent_ns = 0;
	}
	alarm(5);
	umad_unregister(portid, agent);
	umad_close_port(portid);
	umad_release_port(&up);
	free(slots);
	free(lat);
	free(sbuf);
	free(rbuf);
	free(ends);
	return ok ? 0 : 1;
}
