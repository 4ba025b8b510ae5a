/* SPDX-License-Identifier: MIT */
/*
 * DOC: a stand-in for systemd's notification socket (tests only)
 *
 *   notify_recv SOCKET LOG [TIMEOUT_S]
 *
 * Binds an AF_UNIX datagram socket at SOCKET (the path to put in
 * NOTIFY_SOCKET for the program under test) and appends every datagram to
 * LOG: a line "-- MS" (CLOCK_MONOTONIC milliseconds when it arrived), then
 * the datagram's fields one per line as sent (READY=1, STATUS=..., ...),
 * flushed at once so a test can poll LOG. Exits 0 after a datagram holding
 * STOPPING=1 (the last thing smd sends), 1 on an error, 2 when TIMEOUT_S
 * (default 120) passes with no datagram. SOCKET is removed on exit.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char buf[65536];
	FILE *log;
	int fd, timeout_s = 120, status = 1;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: notify_recv SOCKET LOG [TIMEOUT_S]\n");
		return 1;
	}
	if (argc == 4)
		timeout_s = atoi(argv[3]);
	if (strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "notify_recv: %s: path too long\n", argv[1]);
		return 1;
	}
	strcpy(sa.sun_path, argv[1]);
	log = fopen(argv[2], "a");
	if (!log) {
		fprintf(stderr, "notify_recv: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "notify_recv: %s: %s\n", argv[1], strerror(errno));
		fclose(log);
		return 1;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int rc = poll(&p, 1, timeout_s * 1000);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			fprintf(stderr, "notify_recv: poll: %s\n", strerror(errno));
			break;
		}
		if (rc == 0) {
			fprintf(stderr, "notify_recv: nothing for %d s\n", timeout_s);
			status = 2;
			break;
		}
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "notify_recv: recv: %s\n", strerror(errno));
			break;
		}
		buf[n] = '\0';
		fprintf(log, "-- %lld\n%s%s", now_ms(), buf, n && buf[n - 1] == '\n' ? "" : "\n");
		fflush(log);
		/* a field is a whole line: STOPPING=1 at the start or after a newline */
		if (!strncmp(buf, "STOPPING=1", 10) || strstr(buf, "\nSTOPPING=1")) {
			status = 0;
			break;
		}
	}
	close(fd);
	unlink(argv[1]);
	fclose(log);
	return status;
}
