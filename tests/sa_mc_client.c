/* SPDX-License-Identifier: MIT */
/*
 * tests/sa_mc_client: tests/sa_client as the multicast work (issue 14) left
 * it, with the MCMemberRecord joins, leaves and create/leave cycles below
 * (the two grew apart in parallel; sa_client has the InformInfo
 * subscriber). Resolves a path through the SA the way rdma_cm does.
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
 * Exit: 0 the SA answered with a path or record, 2 it answered with an
 * error status (printed), 1 no answer within the timeout (default 2000
 * ms, three tries) or a local error. Runs under ibsim's umad2sim like any
 * libibumad program.
 */
#include <arpa/inet.h>
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
#define MCM_ATTR 0x0038
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
			"       sa_client [-C CA] [-P PORT] [-t MS] -j|-l MGID [-J STATE] [-g GUID] [-q QKEY] [-k PKEY]\n"
			"       sa_client [-C CA] [-P PORT] [-t MS] -c CYCLES [-J STATE]\n");
	exit(1);
}

struct sa {
	int portid, agent, timeout;
	umad_port_t up;
	uint8_t *sbuf, *rbuf;
};

/*
 * One request (method, attribute, component mask, record of len bytes) and
 * its answer: 0 and the answer's record in out (len bytes), 2 and *status
 * for an error status, 1 for no answer.
 */
static int sa_call(struct sa *c, uint8_t method, uint16_t attr, uint64_t mask, const uint8_t *rec, size_t len,
		   uint16_t *status, uint8_t *out)
{
	uint8_t *m = umad_get_mad(c->sbuf);
	static uint32_t seq;

	memset(m, 0, MAD);
	m[0] = 1;                  /* base version */
	m[1] = SA_CLASS;
	m[2] = 2;                  /* class version */
	m[3] = method;
	put64(m + 8, (uint64_t)(unsigned)rand() << 32 | (uint32_t)(++seq << 8 | 0x5a));   /* TID: the low word is ours */
	put16(m + 16, attr);
	put64(m + 48, mask);
	memcpy(m + REC, rec, len);
	for (int attempt = 0; attempt < 3; attempt++) {
		umad_set_addr(c->sbuf, c->up.sm_lid, 1, c->up.sm_sl, 0x80010000);
		if (umad_send(c->portid, c->agent, c->sbuf, MAD, c->timeout, 0) < 0) {
			fprintf(stderr, "sa_mc_client: send failed\n");
			return 1;
		}
		for (;;) {
			int rlen = 4096;
			int r = umad_recv(c->portid, c->rbuf, &rlen, c->timeout);
			if (r < 0)
				break;   /* nothing within the timeout: try again */
			if (umad_status(c->rbuf))
				break;   /* the kernel (or umad2sim) timed our request out */
			const uint8_t *a = umad_get_mad(c->rbuf);
			/* the answer to a Set is a GetResp (IBA 13.4.5) */
			if (rlen < (int)(REC + len) || a[1] != SA_CLASS || a[3] != ((method == 0x02 ? 0x01 : method) | 0x80) || memcmp(a + 12, m + 12, 4))
				continue;   /* not our answer */
			*status = get16(a + 4);
			memcpy(out, a + REC, len);
			return *status ? 2 : 0;
		}
	}
	return 1;
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

/* -j/-l/-c: a join (create), a leave, or cycles of both. */
static int mcast(struct sa *c, char op, const char *arg, unsigned join, uint64_t guid, uint32_t qkey, uint16_t pkey)
{
	uint8_t rec[56] = { 0 }, ans[56];
	uint16_t status = 0;
	int rc;

	if (op != 'c' && strcmp(arg, "0") && inet_pton(AF_INET6, arg, rec) != 1) {
		fprintf(stderr, "sa_mc_client: bad MGID '%s'\n", arg);
		return 1;
	}
	put64(rec + 16, be64toh(c->up.gid_prefix));
	put64(rec + 24, guid ? guid : be64toh(c->up.port_guid));
	put16(rec + 32, (uint16_t)(qkey >> 16));
	put16(rec + 34, (uint16_t)qkey);
	put16(rec + 40, pkey);
	rec[48] = (uint8_t)(join & 0xf);
	if (op != 'c') {
		rc = sa_call(c, op == 'j' ? 0x02 : 0x15, MCM_ATTR, op == 'j' ? MC_CREATE : MC_JOIN & ~MC_PKEY, rec,
			     sizeof(rec), &status, ans);
		if (rc != 1)
			print_mcm(status, ans);
		return rc;
	}
	unsigned long n = strtoul(arg, NULL, 0), ok = 0, distinct = 0;
	uint16_t first_err = 0, max_mlid = 0;
	static uint8_t seen[0x4000];
	for (unsigned long i = 0; i < n; i++) {
		memset(rec, 0, 16);
		rc = sa_call(c, 0x02, MCM_ATTR, MC_CREATE, rec, sizeof(rec), &status, ans);
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
		rc = sa_call(c, 0x15, MCM_ATTR, MC_JOIN & ~MC_PKEY, rec, sizeof(rec), &status, ans);
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
	const char *ca = NULL, *dest = NULL;
	int port = 0, timeout = 2000, tclass = -1;
	char op = 0;
	unsigned join = 1;
	uint64_t guid = 0;
	uint32_t qkey = 0x0B1B;
	uint16_t pkey = 0xffff;
	umad_port_t up;
	uint8_t dgid[16], sgid[16];
	uint8_t *sbuf, *rbuf;
	int portid, agent, rc = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-C") && i + 1 < argc)
			ca = argv[++i];
		else if (!strcmp(argv[i], "-P") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			timeout = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-T") && i + 1 < argc)
			tclass = atoi(argv[++i]);
		else if ((!strcmp(argv[i], "-j") || !strcmp(argv[i], "-l") || !strcmp(argv[i], "-c")) && i + 1 < argc &&
			 !dest)
			op = argv[i][1], dest = argv[++i];
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
	if (!dest || timeout <= 0)
		usage();
	if (umad_init() < 0 || umad_get_port(ca, port, &up) < 0) {
		fprintf(stderr, "sa_mc_client: no port %s:%d\n", ca ? ca : "(default)", port);
		return 1;
	}
	if (!up.sm_lid || up.state != 4) {
		fprintf(stderr, "sa_mc_client: port not ACTIVE or no SM LID (state %u, SM LID %u)\n", up.state, up.sm_lid);
		umad_release_port(&up);
		return 1;
	}
	put64(sgid, be64toh(up.gid_prefix));
	put64(sgid + 8, be64toh(up.port_guid));
	if (!op && parse_dest(dest, be64toh(up.gid_prefix), dgid)) {
		fprintf(stderr, "sa_mc_client: bad destination '%s'\n", dest);
		umad_release_port(&up);
		return 1;
	}
	sbuf = calloc(1, umad_size() + MAD + 64);
	rbuf = calloc(1, umad_size() + 4096 + 64);
	portid = umad_open_port(up.ca_name, up.portnum);
	if (!sbuf || !rbuf || portid < 0) {
		fprintf(stderr, "sa_mc_client: cannot open %s:%d\n", up.ca_name, up.portnum);
		return 1;
	}
	agent = umad_register(portid, SA_CLASS, 2, 1, NULL);
	if (agent < 0) {
		fprintf(stderr, "sa_mc_client: cannot register an SA client agent\n");
		return 1;
	}

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	struct sa c = { .portid = portid, .agent = agent, .timeout = timeout, .up = up, .sbuf = sbuf, .rbuf = rbuf };
	if (op) {
		rc = mcast(&c, op, dest, join, guid, qkey, pkey);
	} else {
		/* the PathRecord rdma_cm asks for */
		uint64_t mask = CM_SGID | CM_DGID | CM_PKEY | CM_NUMB_PATH | CM_REVERSIBLE | CM_SERVICE_ID |
				(tclass >= 0 ? CM_TCLASS : CM_QOS_CLASS);
		uint8_t pr[64] = { 0 }, p[64];
		uint16_t status = 0;
		put64(pr, 0x0000000001060000ull);   /* ServiceID: RDMA_PS_TCP, port 0 */
		memcpy(pr + 8, dgid, 16);
		memcpy(pr + 24, sgid, 16);
		if (tclass >= 0)
			pr[48] = (uint8_t)tclass;
		pr[49] = 0x80 | 1;         /* Reversible, NumbPath 1 */
		put16(pr + 50, 0xffff);    /* P_Key */
		/* QoS class 0, SL 0 at 52..53 */
		rc = sa_call(&c, 0x01, PR_ATTR, mask, pr, sizeof(pr), &status, p);
		if (rc != 1)
			printf("status 0x%04x", status);
		if (rc == 2)
			printf("\n");
		if (rc == 0)
			printf(" slid %u dlid %u sl %u mtu %u rate %u pkt_life %u hop_limit %u reversible %u pkey 0x%04x\n",
			       get16(p + 42), get16(p + 40), get16(p + 52) & 0xf, p[54] & 0x3f, p[55] & 0x3f,
			       p[56] & 0x3f, p[47], p[49] >> 7, get16(p + 50));
	}
	if (rc == 1)
		fprintf(stderr, "sa_mc_client: no answer from the SA at LID %u\n", up.sm_lid);
	umad_unregister(portid, agent);
	umad_close_port(portid);
	umad_release_port(&up);
	free(sbuf);
	free(rbuf);
	return rc;
}
