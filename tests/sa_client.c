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
	fprintf(stderr, "usage: sa_client [-C CA] [-P PORT] [-t MS] [-T TCLASS] DEST_GUID|DEST_GID\n");
	exit(1);
}

int main(int argc, char **argv)
{
	const char *ca = NULL, *dest = NULL;
	int port = 0, timeout = 2000, tclass = -1;
	umad_port_t up;
	uint8_t dgid[16], sgid[16];
	uint8_t *sbuf, *rbuf, *m;
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
		else if (argv[i][0] == '-' || dest)
			usage();
		else
			dest = argv[i];
	}
	if (!dest || timeout <= 0)
		usage();
	if (umad_init() < 0 || umad_get_port(ca, port, &up) < 0) {
		fprintf(stderr, "sa_client: no port %s:%d\n", ca ? ca : "(default)", port);
		return 1;
	}
	if (!up.sm_lid || up.state != 4) {
		fprintf(stderr, "sa_client: port not ACTIVE or no SM LID (state %u, SM LID %u)\n", up.state, up.sm_lid);
		umad_release_port(&up);
		return 1;
	}
	put64(sgid, be64toh(up.gid_prefix));
	put64(sgid + 8, be64toh(up.port_guid));
	if (parse_dest(dest, be64toh(up.gid_prefix), dgid)) {
		fprintf(stderr, "sa_client: bad destination '%s'\n", dest);
		umad_release_port(&up);
		return 1;
	}
	sbuf = calloc(1, umad_size() + MAD);
	rbuf = calloc(1, umad_size() + 4096);
	portid = umad_open_port(up.ca_name, up.portnum);
	if (!sbuf || !rbuf || portid < 0) {
		fprintf(stderr, "sa_client: cannot open %s:%d\n", up.ca_name, up.portnum);
		return 1;
	}
	agent = umad_register(portid, SA_CLASS, 2, 1, NULL);
	if (agent < 0) {
		fprintf(stderr, "sa_client: cannot register an SA client agent\n");
		return 1;
	}

	/* the request */
	m = umad_get_mad(sbuf);
	m[0] = 1;                  /* base version */
	m[1] = SA_CLASS;
	m[2] = 2;                  /* class version */
	m[3] = 0x01;               /* SubnAdmGet */
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	put64(m + 8, (uint64_t)(unsigned)rand() << 8 | 0x5a);   /* TID (the low word is ours) */
	put16(m + 16, PR_ATTR);
	uint64_t mask = CM_SGID | CM_DGID | CM_PKEY | CM_NUMB_PATH | CM_REVERSIBLE | CM_SERVICE_ID |
			(tclass >= 0 ? CM_TCLASS : CM_QOS_CLASS);
	put64(m + 48, mask);
	uint8_t *pr = m + REC;
	put64(pr, 0x0000000001060000ull);   /* ServiceID: RDMA_PS_TCP, port 0 */
	memcpy(pr + 8, dgid, 16);
	memcpy(pr + 24, sgid, 16);
	if (tclass >= 0)
		pr[48] = (uint8_t)tclass;
	pr[49] = 0x80 | 1;         /* Reversible, NumbPath 1 */
	put16(pr + 50, 0xffff);    /* P_Key */
	/* QoS class 0, SL 0 at 52..53 */

	for (int attempt = 0; attempt < 3 && rc == 1; attempt++) {
		umad_set_addr(sbuf, up.sm_lid, 1, up.sm_sl, 0x80010000);
		if (umad_send(portid, agent, sbuf, MAD, timeout, 0) < 0) {
			fprintf(stderr, "sa_client: send failed\n");
			break;
		}
		for (;;) {
			int len = 4096;
			int r = umad_recv(portid, rbuf, &len, timeout);
			if (r < 0)
				break;   /* nothing within the timeout: try again */
			if (umad_status(rbuf))
				break;   /* the kernel (or umad2sim) timed our request out */
			const uint8_t *a = umad_get_mad(rbuf);
			if (len < REC + 64 || a[1] != SA_CLASS || a[3] != 0x81 || memcmp(a + 12, m + 12, 4))
				continue;   /* not our answer */
			uint16_t status = get16(a + 4);
			const uint8_t *p = a + REC;
			printf("status 0x%04x", status);
			if (status) {
				printf("\n");
				rc = 2;
				break;
			}
			printf(" slid %u dlid %u sl %u mtu %u rate %u pkt_life %u hop_limit %u reversible %u pkey 0x%04x\n",
			       get16(p + 42), get16(p + 40), get16(p + 52) & 0xf, p[54] & 0x3f, p[55] & 0x3f,
			       p[56] & 0x3f, p[47], p[49] >> 7, get16(p + 50));
			rc = 0;
			break;
		}
	}
	if (rc == 1)
		fprintf(stderr, "sa_client: no answer from the SA at LID %u\n", up.sm_lid);
	umad_unregister(portid, agent);
	umad_close_port(portid);
	umad_release_port(&up);
	free(sbuf);
	free(rbuf);
	return rc;
}
