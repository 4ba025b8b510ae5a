/* SPDX-License-Identifier: MIT */
/*
 * bench/sa_echo: the floor of an SM's CPU per SA answer under ibsim.
 *
 *   sa_echo -n NODE [-S SOCKNAME] [-m batch|single] [-d SECONDS]
 *
 * Attaches to ibsim at NODE as that port's SM (smd's ibsim client,
 * mad/ibsim_client.h, the same socket pattern as `smd --plane ibsim:NODE`)
 * and answers every SA request (class 0x03, not a response) at once with a
 * GetResp of status 0 that echoes the request's record: no decoding, no
 * query, no event loop, no threads. What it costs per answer is what the
 * transport costs: the simulator's unix datagram socket (a datagram in, a
 * datagram out, the wake-ups) plus the copies in and out of the client.
 *
 *   batch   (default) epoll_wait on the socket, then recvmmsg up to 32
 *           packets at a time until none is waiting, every answer of the
 *           batch in one sendmmsg: as smd's SA under ibsim does.
 *   single  poll, one recv and one send per packet.
 *
 * The fabric must be configured first (LIDs, SM LID: e.g. one OpenSM or
 * smd sweep at NODE, which then exits). Runs until SECONDS (default: until
 * SIGTERM/SIGINT), then prints one line:
 *   sa_echo: mode batch answers N wakes W cpu_us C us_per_answer X
 * (cpu = this process's utime+stime, getrusage). bench/sa_ibsim.sh runs
 * it as the SM "echo" beside OpenSM and smd.
 */
#include "mad/ibsim_client.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

/* The answer to request k in place: GetResp, status 0, the record as it came. 1 if k was an SA request. */
static int make_answer(const struct sm_ibsim_pkt *k, struct sm_ibsim_out *o)
{
	if (k->status || k->mad[1] != 0x03 || (k->mad[3] & 0x80))
		return 0;
	memcpy(o->mad, k->mad, SM_IBSIM_MAD_SIZE);
	o->mad[3] = (uint8_t)(k->mad[3] | 0x80);   /* the method's response (GetResp for a Get) */
	o->mad[4] = o->mad[5] = 0;   /* status */
	o->len = SM_IBSIM_MAD_SIZE;
	o->dlid = k->slid;
	o->dqp = k->sqp;
	o->sqp = 1;
	return 1;
}

static double cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
	const char *node = NULL, *sock = NULL, *mode = "batch";
	double secs = 0;
	char err[256];
	struct sm_ibsim *c;
	int opt, ep = -1;

	while ((opt = getopt(argc, argv, "n:S:m:d:")) != -1) {
		switch (opt) {
		case 'n': node = optarg; break;
		case 'S': sock = optarg; break;
		case 'm': mode = optarg; break;
		case 'd': secs = atof(optarg); break;
		default:
			fprintf(stderr, "usage: sa_echo -n NODE [-S SOCKNAME] [-m batch|single] [-d SECONDS]\n");
			return 2;
		}
	}
	int batch = !strcmp(mode, "batch");
	if (!batch && strcmp(mode, "single")) {
		fprintf(stderr, "sa_echo: mode is batch or single\n");
		return 2;
	}
	if (sm_ibsim_open(sock, node, 1, 5000, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "sa_echo: %s\n", err);
		return 1;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	int fd = sm_ibsim_fd(c);
	if (batch) {
		struct epoll_event ev = { .events = EPOLLIN };
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			perror("sa_echo: epoll");
			return 1;
		}
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double c0 = cpu_us();
	unsigned long long answers = 0, wakes = 0;
	static struct sm_ibsim_pkt in[SM_IBSIM_RECV_BATCH * 8];
	static struct sm_ibsim_out out[SM_IBSIM_RECV_BATCH * 8];

	while (!stop) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		double el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
		if (secs > 0 && el >= secs)
			break;
		if (batch) {
			struct epoll_event ev;
			if (epoll_wait(ep, &ev, 1, 200) <= 0)
				continue;
			wakes++;
			unsigned n = 0, k = 0;
			for (;;) {
				int got = sm_ibsim_recv_pkts(c, in + k, SM_IBSIM_RECV_BATCH);
				if (got <= 0)
					break;
				k += (unsigned)got;
				if (k + SM_IBSIM_RECV_BATCH > sizeof(in) / sizeof(in[0]))
					break;
			}
			for (unsigned i = 0; i < k; i++)
				n += (unsigned)make_answer(&in[i], &out[n]);
			if (n && sm_ibsim_send_pkts(c, out, n) > 0)
				answers += n;
		} else {
			struct pollfd pf = { .fd = fd, .events = POLLIN };
			if (poll(&pf, 1, 200) <= 0)
				continue;
			wakes++;
			while (sm_ibsim_recv_pkt(c, &in[0]) == 0)
				if (make_answer(&in[0], &out[0]) &&
				    !sm_ibsim_send_pkt(c, out[0].mad, out[0].len, out[0].dlid, out[0].dqp, 1))
					answers++;
		}
	}
	double used = cpu_us() - c0;
	printf("sa_echo: mode %s answers %llu wakes %llu cpu_us %.0f us_per_answer %.2f\n", mode, answers, wakes,
	       used, answers ? used / (double)answers : 0.0);
	sm_ibsim_close(c);
	if (ep >= 0)
		close(ep);
	return 0;
}
