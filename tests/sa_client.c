/* SPDX-License-Identifier: MIT */
/*
 * tests/sa_client: resolve a path through the SA the way rdma_cm does.
 *
 *   sa_client [-C CA] [-P PORT] [-t MS] [-T TCLASS] DEST
 *
 * DEST is the destination port GUID (0x...) or a whole GID (fe80::...).
 * Sends the one PathRecord request the kernel's rdma_cm sends when it
 * resolves a route (drivers/infiniband/core/cma.c, cma_query_ib_route():
 * SubnAdmGet(PathRecord) with SGID = our port's GID, DGID, P_Key = the
 * default 0xffff, NumbPath 1, Reversible 1, ServiceID = the RDMA_PS_TCP
 * range (port 0), QoS class 0; component mask SGID|DGID|PKEY|NUMB_PATH|
 * REVERSIBLE|SERVICE_ID|QOS_CLASS, as for an AF_INET id; -T adds
 * TRAFFIC_CLASS instead of QOS_CLASS, as for AF_INET6/AF_IB) to the SM LID
 * of our port, with libibumad only (the agent registered with
 * rmpp_version 1, as the kernel's SA client is), and prints the answer:
 *
 *   status 0x0000 slid 9 dlid 12 sl 0 mtu 4 rate 3 pkt_life 18 hop_limit 0 reversible 1 pkey 0xffff
 *
 * Exit: 0 the SA answered with a path, 2 it answered with an error status
 * (printed), 1 no answer within the timeout (default 2000 ms, three
 * tries) or a local error. Runs under ibsim's umad2sim like any libibumad
 * program.
 *
 *   sa_client [-C CA] [-P PORT] [-t MS] -s TRAP[,TRAP...] [-w MS] [-n COUNT] [-N] [-I]
 *
 * Subscribes (SubnAdmSet(InformInfo): every GID and LID, generic, every
 * type and producer, TrapNumber TRAP) to each trap, prints
 * "subscribed TRAP" once the SA accepted it, then waits up to -w MS
 * (default 10000) for COUNT (default 1) Reports, printing each as
 *
 *   report tid 0x... trap 128 type 1 producer 2 issuer_lid 5 issuer_gid fe80::... lid 5
 *
 * (lid: trap 128's LIDAddr; gid: trap 64-67's GIDAddr) and answering it
 * with a ReportResp, unless -N (then the SA resends it: every copy is
 * printed and counted). Unsubscribes before it exits. Exit 0 when COUNT
 * Reports came, 3 when fewer did, 2 when a subscription was refused (the
 * status printed), 1 on a local error. The agent registers for the Report
 * method, as a kernel SA client must to receive it. -I opens the port's
 * issm device first (under ibsim only an SM's client is handed a request
 * to QP1; see main): not for a real HCA, where it would claim IsSM.
 *
 * Multicast (MCMemberRecord, issue 14), as IPoIB and librdmacm join:
 *
 *   sa_client [...] -j MGID [-J STATE] [-g GUID] [-q QKEY] [-k PKEY]   join (create if
 *        none: SubnAdmSet with MGID|PortGID|JoinState|P_Key, plus Q_Key|TClass|
 *        FlowLabel|SL, the components a create needs; MGID 0: the SA assigns one)
 *   sa_client [...] -l MGID [-J STATE] [-g GUID]                       leave (SubnAdmDelete)
 *   sa_client [...] -c N [-J STATE]                                    N cycles of create
 *        (MGID 0) and leave, then one line: cycles, answers OK, the first error status,
 *        distinct MLIDs seen and the largest (an SA that does not reuse MLIDs runs out)
 *
 * STATE is the JoinState (default 1, full member; 8 send-only full member),
 * GUID the port joined (default ours; another port is a proxy join). A
 * join or leave prints
 *
 *   status 0x0000 mgid ff12:401b:ffff::ffff:ffff mlid 0xc000 qkey 0x00000b1b pkey 0xffff mtu 0x84 rate 0x83 join 0x1
 *
 * Exit as for a path: 0 a record, 2 an error status (printed), 1 no
 * answer. tests/sa_mc_client is this program under the name the
 * multicast tests call it by.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
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
#define NOTICE_ATTR 0x0002
#define II_ATTR 0x0003
#define MCM_ATTR 0x0038
#define METHOD_DELETE 0x15
#define METHOD_SET 0x02
#define METHOD_REPORT 0x06
#define REC 56      /* the record after the SA header */

/* PathRecord component mask bits (IBA 15.2.5.16) */
#define CM_SERVICE_ID (3ull << 0)
#define CM_DGID (1ull << 2)
#define CM_SGID (1ull << 3)
#define CM_TCLASS (1ull << 10)
#define CM_REVERSIBLE (1ull << 11)
#define CM_NUMB_PATH (1ull << 12)
#define CM_PKEY (1ull << 13)
#define CM_QOS_CLASS (1ull << 14)

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }
static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static int parse_dest(const char *s, uint64_t prefix, uint8_t gid[16])
{
	char *end;

	if (strchr(s, ':'))
		return inet_pton(AF_INET6, s, gid) == 1 ? 0 : -EINVAL;
	errno = 0;
	unsigned long long guid = strtoull(s, &end, 0);
	if (errno || *end || !*s)
		return -EINVAL;
	put64(gid, prefix);
	put64(gid + 8, guid);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sa_client [-C CA] [-P PORT] [-t MS] [-T TCLASS] DEST_GUID|DEST_GID\n"
			"       sa_client [-C CA] [-P PORT] [-t MS] -s TRAP[,TRAP...] [-w MS] [-n COUNT] [-N] [-I]\n"
			"       sa_client [-C CA] [-P PORT] [-t MS] -j|-l MGID [-J STATE] [-g GUID] [-q QKEY] [-k PKEY]\n"
			"       sa_client [-C CA] [-P PORT] [-t MS] -c CYCLES [-J STATE]\n");
	exit(1);
}

struct client {
	umad_port_t up;
	int portid, agent, timeout;
	uint8_t *sbuf, *rbuf;
};

static uint64_t new_tid(void)
{
	return (uint64_t)(unsigned)rand() << 8 | 0x5a;   /* the low word is ours (the kernel owns the high one) */
}

/* An SA request header in c->sbuf: method, attribute, component mask; returns the MAD. */
static uint8_t *request(struct client *c, uint8_t method, uint16_t attr, uint64_t mask)
{
	uint8_t *m = umad_get_mad(c->sbuf);

	memset(m, 0, MAD);
	m[0] = 1;                  /* base version */
	m[1] = SA_CLASS;
	m[2] = 2;                  /* class version */
	m[3] = method;
	put64(m + 8, new_tid());
	put16(m + 16, attr);
	put64(m + 48, mask);
	return m;
}

/*
 * Send c->sbuf's request to the SM and wait for its answer (three tries
 * of c->timeout ms): the answer MAD in c->rbuf, or NULL. A Report that
 * comes meanwhile is left unanswered (the SA sends it again).
 */
static const uint8_t *transact(struct client *c)
{
	const uint8_t *m = umad_get_mad(c->sbuf);
	uint8_t resp = m[3] == METHOD_SET ? 0x81 : m[3] | 0x80;   /* a Set is answered by a GetResp */

	for (int attempt = 0; attempt < 3; attempt++) {
		umad_set_addr(c->sbuf, c->up.sm_lid, 1, c->up.sm_sl, 0x80010000);
		if (umad_send(c->portid, c->agent, c->sbuf, MAD, c->timeout, 0) < 0) {
			fprintf(stderr, "sa_client: send failed\n");
			return NULL;
		}
		for (;;) {
			int len = 4096;
			if (umad_recv(c->portid, c->rbuf, &len, c->timeout) < 0)
				break;   /* nothing within the timeout: try again */
			if (umad_status(c->rbuf))
				break;   /* the kernel (or umad2sim) timed our request out */
			const uint8_t *a = umad_get_mad(c->rbuf);
			if (len >= REC && a[1] == SA_CLASS && a[3] == resp && !memcmp(a + 12, m + 12, 4))
				return a;
			/* not our answer */
		}
	}
	fprintf(stderr, "sa_client: no answer from the SA at LID %u\n", c->up.sm_lid);
	return NULL;
}

static int resolve(struct client *c, const char *dest, int tclass)
{
	uint8_t dgid[16], sgid[16];

	put64(sgid, be64toh(c->up.gid_prefix));
	put64(sgid + 8, be64toh(c->up.port_guid));
	if (parse_dest(dest, be64toh(c->up.gid_prefix), dgid)) {
		fprintf(stderr, "sa_client: bad destination '%s'\n", dest);
		return 1;
	}
	uint64_t mask = CM_SGID | CM_DGID | CM_PKEY | CM_NUMB_PATH | CM_REVERSIBLE | CM_SERVICE_ID |
			(tclass >= 0 ? CM_TCLASS : CM_QOS_CLASS);
	uint8_t *pr = request(c, 0x01, PR_ATTR, mask) + REC;   /* SubnAdmGet */
	put64(pr, 0x0000000001060000ull);   /* ServiceID: RDMA_PS_TCP, port 0 */
	memcpy(pr + 8, dgid, 16);
	memcpy(pr + 24, sgid, 16);
	if (tclass >= 0)
		pr[48] = (uint8_t)tclass;
	pr[49] = 0x80 | 1;         /* Reversible, NumbPath 1 */
	put16(pr + 50, 0xffff);    /* P_Key */
	/* QoS class 0, SL 0 at 52..53 */
	const uint8_t *a = transact(c);
	if (!a)
		return 1;
	uint16_t status = get16(a + 4);
	const uint8_t *p = a + REC;
	printf("status 0x%04x", status);
	if (status) {
		printf("\n");
		return 2;
	}
	printf(" slid %u dlid %u sl %u mtu %u rate %u pkt_life %u hop_limit %u reversible %u pkey 0x%04x\n",
	       get16(p + 42), get16(p + 40), get16(p + 52) & 0xf, p[54] & 0x3f, p[55] & 0x3f,
	       p[56] & 0x3f, p[47], p[49] >> 7, get16(p + 50));
	return 0;
}

/* SubnAdmSet(InformInfo) for trap (un)subscribing: 0, 2 refused (status printed), 1 no answer. */
static int inform(struct client *c, unsigned trap, int subscribe)
{
	uint8_t *ii = request(c, METHOD_SET, II_ATTR, 0) + REC;

	/* GID 0: every port; LIDRangeBegin 0xFFFF: every LID */
	put16(ii + 16, 0xffff);
	ii[22] = 1;                              /* IsGeneric */
	ii[23] = (uint8_t)subscribe;
	put16(ii + 24, 0xffff);                  /* every type */
	put16(ii + 26, (uint16_t)trap);
	ii[31] = 18;                             /* RespTimeValue; QPN: the SA takes ours */
	ii[33] = ii[34] = ii[35] = 0xff;         /* every producer */
	const uint8_t *a = transact(c);
	if (!a)
		return 1;
	if (get16(a + 4)) {
		printf("%ssubscribe %u: status 0x%04x\n", subscribe ? "" : "un", trap, get16(a + 4));
		return 2;
	}
	return 0;
}

static void print_gid(const uint8_t *g)
{
	char s[64];

	printf("%s", inet_ntop(AF_INET6, g, s, sizeof(s)) ? s : "?");
}

/* Wait for `count` Reports within wait_ms, answering each unless no_resp: 0 all came, 3 fewer did. */
static int reports(struct client *c, int wait_ms, int count, int no_resp)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < count) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = wait_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			break;
		int len = 4096;
		if (umad_recv(c->portid, c->rbuf, &len, (int)left) < 0)
			continue;
		const uint8_t *a = umad_get_mad(c->rbuf);
		if (umad_status(c->rbuf) || len < REC + 80 || a[1] != SA_CLASS || a[3] != METHOD_REPORT ||
		    get16(a + 16) != NOTICE_ATTR)
			continue;
		const uint8_t *n = a + REC;
		unsigned trap = get16(n + 4);
		printf("report tid 0x%016llx trap %u type %u producer %u issuer_lid %u issuer_gid ",
		       (unsigned long long)get64(a + 8), trap, n[0] & 0x7f, get32(n) & 0xffffff, get16(n + 6));
		print_gid(n + 64);
		if (trap == 128)
			printf(" lid %u", get16(n + 10));
		if (trap >= 64 && trap <= 67) {   /* GIDAddr: the port (64/65), the group (66/67) */
			printf(" gid ");
			print_gid(n + 16);
		}
		ib_mad_addr_t *from = umad_get_mad_addr(c->rbuf);
		printf(" from lid %u qpn %u\n", ntohs(from->lid), ntohl(from->qpn));
		fflush(stdout);
		got++;
		if (no_resp)
			continue;
		/* ReportResp: the Report back with the response bit, to where it came from */
		uint8_t *m = umad_get_mad(c->sbuf);
		memcpy(m, a, MAD);
		m[3] = 0x86;
		put16(m + 4, 0);
		umad_set_addr(c->sbuf, ntohs(from->lid), ntohl(from->qpn), from->sl, 0x80010000);
		if (umad_send(c->portid, c->agent, c->sbuf, MAD, 0, 0) < 0)
			fprintf(stderr, "sa_client: cannot send the ReportResp\n");
	}
	return got >= count ? 0 : 3;
}

/* ---- multicast: MCMemberRecord joins and leaves ---- */

/* MCMemberRecord component mask bits (IBA 15.2.5.17) */
#define MC_MGID (1ull << 0)
#define MC_PORT_GID (1ull << 1)
#define MC_QKEY (1ull << 2)
#define MC_TCLASS (1ull << 6)
#define MC_PKEY (1ull << 7)
#define MC_SL (1ull << 12)
#define MC_FLOW (1ull << 13)
#define MC_JOIN_STATE (1ull << 16)
#define MC_JOIN (MC_MGID | MC_PORT_GID | MC_JOIN_STATE | MC_PKEY)
#define MC_CREATE (MC_JOIN | MC_QKEY | MC_TCLASS | MC_SL | MC_FLOW)

/* One MCMemberRecord request: 0 and the answer's record in out, 2 and *status on an error status, 1 no answer. */
static int mc_call(struct client *c, uint8_t method, uint64_t mask, const uint8_t rec[56], uint16_t *status,
		   uint8_t out[56])
{
	memcpy(request(c, method, MCM_ATTR, mask) + REC, rec, 56);
	const uint8_t *a = transact(c);
	if (!a)
		return 1;
	*status = get16(a + 4);
	memcpy(out, a + REC, 56);
	return *status ? 2 : 0;
}

static void print_mcm(uint16_t status, const uint8_t *r)
{
	char g[64];

	printf("status 0x%04x", status);
	if (!status)
		printf(" mgid %s mlid 0x%04x qkey 0x%08x pkey 0x%04x mtu 0x%02x rate 0x%02x join 0x%x",
		       inet_ntop(AF_INET6, r, g, sizeof(g)), get16(r + 36),
		       (unsigned)get16(r + 32) << 16 | get16(r + 34), get16(r + 40), r[38], r[42], r[48] & 0xf);
	printf("\n");
}

/* -j/-l/-c: a join (create), a leave, or cycles of both. */
static int mcast(struct client *c, char op, const char *arg, unsigned join, uint64_t guid, uint32_t qkey,
		 uint16_t pkey)
{
	uint8_t rec[56] = { 0 }, ans[56];
	uint16_t status = 0;
	int rc;

	if (op != 'c' && strcmp(arg, "0") && inet_pton(AF_INET6, arg, rec) != 1) {
		fprintf(stderr, "sa_client: bad MGID '%s'\n", arg);
		return 1;
	}
	put64(rec + 16, be64toh(c->up.gid_prefix));
	put64(rec + 24, guid ? guid : be64toh(c->up.port_guid));
	put16(rec + 32, (uint16_t)(qkey >> 16));
	put16(rec + 34, (uint16_t)qkey);
	put16(rec + 40, pkey);
	rec[48] = (uint8_t)(join & 0xf);
	if (op != 'c') {
		rc = mc_call(c, op == 'j' ? METHOD_SET : METHOD_DELETE, op == 'j' ? MC_CREATE : MC_JOIN & ~MC_PKEY, rec,
			     &status, ans);
		if (rc != 1)
			print_mcm(status, ans);
		return rc;
	}
	unsigned long n = strtoul(arg, NULL, 0), ok = 0, distinct = 0;
	uint16_t first_err = 0, max_mlid = 0;
	static uint8_t seen[0x4000];
	for (unsigned long i = 0; i < n; i++) {
		memset(rec, 0, 16);
		rc = mc_call(c, METHOD_SET, MC_CREATE, rec, &status, ans);
		if (rc == 1)
			return 1;
		if (rc == 2) {
			if (!first_err)
				first_err = status;
			continue;
		}
		uint16_t mlid = get16(ans + 36);
		if (mlid >= 0xC000 && !seen[mlid - 0xC000]) {
			seen[mlid - 0xC000] = 1;
			distinct++;
		}
		if (mlid > max_mlid)
			max_mlid = mlid;
		memcpy(rec, ans, 16);
		rc = mc_call(c, METHOD_DELETE, MC_JOIN & ~MC_PKEY, rec, &status, ans);
		if (rc == 1)
			return 1;
		if (rc == 0)
			ok++;
		else if (!first_err)
			first_err = status;
	}
	printf("cycles %lu ok %lu first_error 0x%04x mlids %lu max_mlid 0x%04x\n", n, ok, first_err, distinct, max_mlid);
	return ok == n ? 0 : 2;
}

int main(int argc, char **argv)
{
	const char *ca = NULL, *dest = NULL, *traps = NULL, *mc_arg = NULL;
	int port = 0, tclass = -1, wait_ms = 10000, count = 1, no_resp = 0, issm = 0, issm_fd = -1, rc = 1;
	char mc_op = 0;
	unsigned join = 1;
	uint64_t guid = 0;
	uint32_t qkey = 0x0B1B;
	uint16_t pkey = 0xffff;
	struct client c = { .timeout = 2000 };
	long method_mask[16 / sizeof(long)] = { 0 };
	unsigned list[16], n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-C") && i + 1 < argc)
			ca = argv[++i];
		else if (!strcmp(argv[i], "-P") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			c.timeout = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-T") && i + 1 < argc)
			tclass = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			traps = argv[++i];
		else if (!strcmp(argv[i], "-w") && i + 1 < argc)
			wait_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			count = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-N"))
			no_resp = 1;
		else if (!strcmp(argv[i], "-I"))
			issm = 1;
		else if ((!strcmp(argv[i], "-j") || !strcmp(argv[i], "-l") || !strcmp(argv[i], "-c")) && i + 1 < argc &&
			 !mc_op)
			mc_op = argv[i][1], mc_arg = argv[++i];
		else if (!strcmp(argv[i], "-J") && i + 1 < argc)
			join = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-g") && i + 1 < argc)
			guid = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-q") && i + 1 < argc)
			qkey = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-k") && i + 1 < argc)
			pkey = (uint16_t)strtoul(argv[++i], NULL, 0);
		else if (argv[i][0] == '-' || dest)
			usage();
		else
			dest = argv[i];
	}
	if ((!!dest + !!traps + !!mc_op) != 1 || c.timeout <= 0 || wait_ms <= 0 || count < 1)
		usage();
	for (char *t = (char *)traps; t && *t && n < 16;) {
		char *end;
		unsigned long v = strtoul(t, &end, 0);
		if (end == t || v > 0xffff || (*end && *end != ','))
			usage();
		list[n++] = (unsigned)v;
		t = *end ? end + 1 : end;
	}
	if (umad_init() < 0 || umad_get_port(ca, port, &c.up) < 0) {
		fprintf(stderr, "sa_client: no port %s:%d\n", ca ? ca : "(default)", port);
		return 1;
	}
	if (!c.up.sm_lid || c.up.state != 4) {
		fprintf(stderr, "sa_client: port not ACTIVE or no SM LID (state %u, SM LID %u)\n", c.up.state,
			c.up.sm_lid);
		umad_release_port(&c.up);
		return 1;
	}
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	c.sbuf = calloc(1, umad_size() + MAD + 64);
	c.rbuf = calloc(1, umad_size() + 4096 + 64);
	c.portid = umad_open_port(c.up.ca_name, c.up.portnum);
	if (!c.sbuf || !c.rbuf || c.portid < 0) {
		fprintf(stderr, "sa_client: cannot open %s:%d\n", c.up.ca_name, c.up.portnum);
		return 1;
	}
	method_mask[METHOD_REPORT / (8 * sizeof(long))] |= 1L << (METHOD_REPORT % (8 * sizeof(long)));
	c.agent = umad_register(c.portid, SA_CLASS, 2, 1, traps ? method_mask : NULL);
	if (c.agent < 0) {
		fprintf(stderr, "sa_client: cannot register an SA client agent\n");
		return 1;
	}
	/*
	 * -I (for ibsim): ibsim hands a request to QP1 of a port (a Report)
	 * only to a client that is an SM, so we open the port's issm device as
	 * an SM does; the SM then asks us for SMInfo (IsSM is set), and
	 * umad2sim crashes on a MAD of a class nobody registered: sinks for
	 * the SMP classes first (their MADs are dropped by the loops above).
	 */
	if (issm) {
		char path[256];
		if (umad_register(c.portid, 0x01, 1, 0, NULL) < 0 || umad_register(c.portid, 0x81, 1, 0, NULL) < 0 ||
		    umad_get_issm_path(c.up.ca_name, c.up.portnum, path, sizeof(path)) < 0 ||
		    (issm_fd = open(path, O_RDWR)) < 0) {
			fprintf(stderr, "sa_client: cannot act as an SM (-I)\n");
			return 1;
		}
	}
	if (dest) {
		rc = resolve(&c, dest, tclass);
	} else if (mc_op) {
		rc = mcast(&c, mc_op, mc_arg, join, guid, qkey, pkey);
	} else {
		unsigned k;
		for (k = 0, rc = 0; k < n && !rc; k++) {
			if (!(rc = inform(&c, list[k], 1)))
				printf("subscribed %u\n", list[k]);
			fflush(stdout);
		}
		if (!rc)
			rc = reports(&c, wait_ms, count, no_resp);
		while (k--)
			(void)inform(&c, list[k], 0);
	}
	umad_unregister(c.portid, c.agent);
	if (issm_fd >= 0)
		close(issm_fd);
	umad_close_port(c.portid);
	umad_release_port(&c.up);
	free(c.sbuf);
	free(c.rbuf);
	return rc;
}
