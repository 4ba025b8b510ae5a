/* SPDX-License-Identifier: MIT */
/*
 * tests/gsi_probe: the GSI endpoint of a transport (mad/gsi.h) on a live
 * port, with no SA behind it.
 *
 *   gsi_probe SPEC SECONDS
 *
 * Opens SPEC (umad[:CA[:PORT]] or ibsim[:NODE]) and its class 0x03
 * endpoint, prints "ready", and until SIGTERM (or SIGINT), at most
 * SECONDS (a bound, not a schedule: the test ends the probe when its
 * clients are done, however long a loaded machine made them take):
 *   - answers every SA request that arrives with its response method and
 *     status NO_RECORDS (0x0300), so a client (saquery) gets an answer;
 *   - meanwhile a second thread keeps the SMP side busy: DR NodeInfo Gets
 *     of the local port, one at a time, each read back with the
 *     transport's recv(), as a sweep would while the SA serves.
 * Then prints
 *   sa received R answered A bad B smp sent S answered N lost L
 * and exits 0 when every SMP was answered (no SA request was handed to
 * the SMP side and no SMP answer to the SA side) and nothing failed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "mad/codec.h"
#include "mad/gsi.h"
#include "mad/open.h"
#include "mad/transport.h"

static struct sm_transport *t;
static atomic_int stop;
static volatile sig_atomic_t term;

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}
static uint64_t smp_sent, smp_answered, smp_lost, smp_alien;

static void *smp_side(void *arg)
{
	struct sm_dr_path path = { .cnt = 0 };
	uint8_t out[SM_MAD_SIZE], in[SM_MAD_SIZE + 64];
	uint64_t tid = 0x1000;

	(void)arg;
	while (!atomic_load(&stop)) {
		struct sm_smp s, r;
		size_t len;
		int got = 0;

		sm_smp_init_dr(&s, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0, &path);
		s.tid = ++tid;
		if (sm_smp_encode(&s, out) || sm_transport_send(t, out, SM_MAD_SIZE, SM_PERMISSIVE_LID, 100))
			break;
		smp_sent++;
		int64_t end = sm_mono_ms() + 1000;
		while (!got && sm_mono_ms() < end) {
			if (sm_transport_recv(t, in, sizeof(in), &len, NULL, 100))
				continue;
			if (sm_smp_decode(in, len, &r, NULL) || r.mgmt_class == 0x03) {
				smp_alien++;   /* an SA MAD on the SMP side: must not happen */
				continue;
			}
			got = r.tid == s.tid;
		}
		if (got)
			smp_answered++;
		else
			smp_lost++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sm_plane_port pp = { 0 };
	struct sm_gsi *g = NULL;
	char err[256] = "";
	uint64_t received = 0, answered = 0, badmads = 0;
	pthread_t th;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: gsi_probe SPEC SECONDS\n");
		return 2;
	}
	rc = sm_transport_open_spec(argv[1], NULL, &pp, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "gsi_probe: %s\n", err);
		return 1;
	}
	t = pp.t;
	rc = sm_transport_gsi_open(t, 0x03, &g, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "gsi_probe: %s\n", err);
		sm_plane_port_close(&pp);
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready flags=0x%x\n", g->flags);
	fflush(stdout);
	if (pthread_create(&th, NULL, smp_side, NULL)) {
		fprintf(stderr, "gsi_probe: thread\n");
		return 1;
	}
	int64_t end = sm_mono_ms() + (int64_t)atoi(argv[2]) * 1000;
	while (!term && sm_mono_ms() < end) {
		uint8_t buf[4096];
		struct sm_gsi_addr from;
		size_t len;
		struct pollfd pf = { .fd = sm_gsi_fd(g), .events = POLLIN };

		if (pf.fd >= 0)
			(void)poll(&pf, 1, 50);
		rc = sm_gsi_recv(g, buf, sizeof(buf), &len, &from);
		if (rc == -EAGAIN) {
			if (pf.fd < 0) {
				struct timespec ts = { 0, 2000000 };
				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (rc) {
			badmads++;
			continue;
		}
		received++;
		if (len < 256 || buf[1] != 0x03 || (buf[3] & 0x80)) {
			badmads++;
			continue;
		}
		uint8_t ans[256];
		memcpy(ans, buf, 256);
		ans[3] = (uint8_t)(buf[3] == 0x06 ? 0x86 : buf[3] | 0x80);
		ans[4] = 0x03;             /* status NO_RECORDS */
		ans[5] = 0x00;
		memset(ans + 24, 0, 12);   /* no RMPP */
		memset(ans + 56, 0, 200);
		if (sm_gsi_send(g, ans, sizeof(ans), &from) == 0)
			answered++;
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("sa received %llu answered %llu bad %llu smp sent %llu answered %llu lost %llu alien %llu\n",
	       (unsigned long long)received, (unsigned long long)answered, (unsigned long long)badmads,
	       (unsigned long long)smp_sent, (unsigned long long)smp_answered, (unsigned long long)smp_lost,
	       (unsigned long long)smp_alien);
	sm_gsi_close(g);
	sm_plane_port_close(&pp);
	return smp_lost || smp_alien || !smp_sent ? 1 : 0;
}
