/* SPDX-License-Identifier: MIT */
/*
 * mad_probe: exercise the umad transport + transaction engine + codecs on a
 * live port (a real HCA or ibsim's umad2sim).
 *
 *   mad_probe [SPEC] PATH|lid:N...
 *
 * SPEC is a transport spec ("umad", "umad:CA:PORT"; default "umad"). For
 * each DR PATH ("0", "0,1", "0,1,3"...) or "lid:N" (LID routed to LID N)
 * it sends NodeInfo, NodeDescription and PortInfo (of the port the SMP
 * entered by) Gets through one engine and prints one line per path:
 *
 *   path=0,1 type=2 ports=8 guid=0x... portguid=0x... localport=1 state=2 phys=5 desc="..."
 *
 * First line: the local port as the transport sees it:
 *   local ca=NAME port=N portguid=0x... lid=L state=S phys=P
 *
 * Last line: engine counters. Exit status 0 when every request was
 * answered and decoded, 1 otherwise (with the reason on stderr).
 *
 * With --trap SECONDS (first argument), it then prints "waiting for a
 * trap", waits that long for an unsolicited Trap, prints
 *   trap method=0x05 num=128 issuer=L lidaddr=L slid=L
 * answers it with a TrapRepress to the sender, and fails if none came.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/codec.h"
#include "lib/clock.h"
#include "mad/transport.h"
#include "mad/txn.h"

#define MAX_PATHS 32

struct probe {
	struct sm_dr_path path;
	uint16_t dlid;     /* LID-routed probe when != 0 */
	int got_ni, got_nd, got_pi;
	struct sm_node_info ni;
	struct sm_node_desc nd;
	struct sm_port_info pi;
	int failed;
	char why[200];
};

static void fail_probe(struct probe *p, const char *what, const struct sm_txn_result *r,
		       const struct sm_mad_err *me)
{
	p->failed = 1;
	if (me)
		snprintf(p->why, sizeof(p->why), "%s: %s", what, me->msg);
	else if (r->status)
		snprintf(p->why, sizeof(p->why), "%s: %s after %u tries", what, strerror(-r->status),
			 r->tries);
	else
		snprintf(p->why, sizeof(p->why), "%s: MAD status 0x%04x", what, r->mad_status);
}

static void init_get(struct sm_smp *req, const struct probe *p, uint16_t attr, uint32_t mod)
{
	if (p->dlid)
		sm_smp_init_lid(req, SM_METHOD_GET, attr, mod);
	else
		sm_smp_init_dr(req, SM_METHOD_GET, attr, mod, &p->path);
}

static void pi_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct probe *p = ctx;
	struct sm_mad_err me;

	(void)e;
	if (r->status || r->mad_status)
		return fail_probe(p, "PortInfo", r, NULL);
	if (sm_port_info_decode(r->resp->data, &p->pi, &me) < 0)
		return fail_probe(p, "PortInfo", r, &me);
	p->got_pi = 1;
}

static void nd_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct probe *p = ctx;

	(void)e;
	if (r->status || r->mad_status)
		return fail_probe(p, "NodeDescription", r, NULL);
	sm_node_desc_decode(r->resp->data, &p->nd, NULL);
	p->got_nd = 1;
}

static void ni_cb(struct sm_txn *e, const struct sm_txn_result *r, void *ctx)
{
	struct probe *p = ctx;
	struct sm_mad_err me;
	struct sm_smp req;

	if (r->status || r->mad_status)
		return fail_probe(p, "NodeInfo", r, NULL);
	if (sm_node_info_decode(r->resp->data, &p->ni, &me) < 0)
		return fail_probe(p, "NodeInfo", r, &me);
	p->got_ni = 1;
	/* PortInfo of the port we came in by; for a switch, port 0 (it holds the LID) */
	init_get(&req, p, SM_ATTR_PORT_INFO,
		 p->ni.node_type == 2 ? 0 : p->ni.local_port_num);
	if (sm_txn_submit(e, &req, p->dlid, pi_cb, p) < 0)
		fail_probe(p, "PortInfo submit", r, NULL);
}

struct trapwait {
	int got;
	int repress_rc;
};

static void trap_cb(struct sm_txn *e, const struct sm_smp *smp, const struct sm_mad_addr *from,
		    void *ctx)
{
	struct trapwait *tw = ctx;
	struct sm_notice n;
	struct sm_mad_err me;
	struct sm_smp rep;

	if (smp->method != SM_METHOD_TRAP || smp->attr_id != SM_ATTR_NOTICE)
		return;
	if (sm_notice_decode(smp->data, &n, &me) < 0) {
		fprintf(stderr, "mad_probe: bad notice: %s\n", me.msg);
		return;
	}
	printf("trap method=0x%02x num=%u issuer=%u lidaddr=%u slid=%u\n", smp->method, n.trap_num,
	       n.issuer_lid, n.lid_addr, from->slid);
	fflush(stdout);
	sm_smp_make_trap_repress(smp, &rep);
	tw->repress_rc = sm_txn_send_raw(e, &rep, from->slid);
	tw->got++;
}

int main(int argc, char **argv)
{
	const char *spec = "umad";
	struct probe probes[MAX_PATHS];
	unsigned n = 0;
	struct sm_transport *t = NULL;
	struct sm_txn *e = NULL;
	struct sm_txn_cfg cfg;
	char err[256];
	int rc, bad = 0, argi = 1;
	const struct sm_txn_stats *st;
	unsigned trap_wait_s = 0;
	struct trapwait tw = { 0, 0 };

	if (argc > 2 && strcmp(argv[1], "--trap") == 0) {
		trap_wait_s = (unsigned)strtoul(argv[2], NULL, 10);
		argi += 2;
	}
	if (argc > argi && strncmp(argv[argi], "umad", 4) == 0)
		spec = argv[argi++];
	if (argi >= argc) {
		fprintf(stderr, "usage: %s [--trap SECONDS] [umad[:CA[:PORT]]] PATH|lid:N...\n",
			argv[0]);
		return 2;
	}
	memset(probes, 0, sizeof(probes));
	for (; argi < argc && n < MAX_PATHS; argi++, n++) {
		if (strncmp(argv[argi], "lid:", 4) == 0) {
			char *end;
			unsigned long l = strtoul(argv[argi] + 4, &end, 0);
			if (!argv[argi][4] || *end || l < 1 || l > SM_UNICAST_LID_MAX) {
				fprintf(stderr, "mad_probe: bad LID in '%s'\n", argv[argi]);
				return 2;
			}
			probes[n].dlid = (uint16_t)l;
		} else if (sm_dr_path_parse(argv[argi], &probes[n].path) < 0) {
			fprintf(stderr, "mad_probe: bad DR path '%s'\n", argv[argi]);
			return 2;
		}
	}
	rc = sm_transport_open(spec, &t, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "mad_probe: %s\n", err);
		return 1;
	}
	printf("local ca=%s port=%u portguid=0x%016" PRIx64 " lid=%u state=%u phys=%u\n",
	       t->info.ca_name, t->info.port_num, t->info.port_guid, t->info.lid, t->info.state,
	       t->info.phys_state);
	sm_txn_cfg_default(&cfg);
	cfg.timeout_ms = 200;
	e = sm_txn_new(t, &cfg);
	if (!e) {
		fprintf(stderr, "mad_probe: no memory\n");
		sm_transport_close(t);
		return 1;
	}
	if (trap_wait_s)
		sm_txn_set_unsolicited(e, trap_cb, &tw);
	for (unsigned i = 0; i < n; i++) {
		struct sm_smp req;
		init_get(&req, &probes[i], SM_ATTR_NODE_INFO, 0);
		sm_txn_submit(e, &req, probes[i].dlid, ni_cb, &probes[i]);
		init_get(&req, &probes[i], SM_ATTR_NODE_DESC, 0);
		sm_txn_submit(e, &req, probes[i].dlid, nd_cb, &probes[i]);
	}
	rc = sm_txn_run(e);
	if (rc < 0) {
		fprintf(stderr, "mad_probe: transport failed: %s\n", strerror(-rc));
		bad = 1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct probe *p = &probes[i];
		char ps[256];

		if (p->dlid)
			snprintf(ps, sizeof(ps), "lid:%u", p->dlid);
		else
			sm_dr_path_str(&p->path, ps, sizeof(ps));
		if (p->failed || !p->got_ni || !p->got_nd || !p->got_pi) {
			fprintf(stderr, "mad_probe: path %s: %s\n", ps, p->why[0] ? p->why : "no answer");
			bad = 1;
			continue;
		}
		printf("path=%s type=%u ports=%u guid=0x%016" PRIx64 " portguid=0x%016" PRIx64
		       " localport=%u state=%u phys=%u lid=%u desc=\"%s\"\n",
		       ps, p->ni.node_type, p->ni.num_ports, p->ni.node_guid, p->ni.port_guid,
		       p->ni.local_port_num, p->pi.port_state, p->pi.phys_state, p->pi.lid,
		       p->nd.desc);
	}
	st = sm_txn_stats(e);
	printf("stats sent=%" PRIu64 " received=%" PRIu64 " completed=%" PRIu64 " retried=%" PRIu64
	       " timed_out=%" PRIu64 " malformed=%" PRIu64 " unknown=%" PRIu64 "\n",
	       st->sent, st->received, st->completed, st->retried, st->timed_out, st->malformed,
	       st->unknown_tid);
	if (trap_wait_s && !bad) {
		uint64_t end = sm_mono_us() + (uint64_t)trap_wait_s * 1000000u;

		tw.got = 0;   /* traps that came during the probes do not count */
		printf("waiting for a trap\n");
		fflush(stdout);
		while (!tw.got && sm_mono_us() < end)
			if (sm_txn_poll(e, 200) < 0)
				break;
		if (!tw.got) {
			fprintf(stderr, "mad_probe: no trap within %u s\n", trap_wait_s);
			bad = 1;
		} else if (tw.repress_rc < 0) {
			fprintf(stderr, "mad_probe: TrapRepress not sent: %s\n", strerror(-tw.repress_rc));
			bad = 1;
		}
	}
	sm_txn_free(e);
	sm_transport_close(t);
	return bad;
}
