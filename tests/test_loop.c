/* SPDX-License-Identifier: MIT */
/*
 * The event loop (smd/lib/loop.h): an fd watch fires when the fd is
 * readable and not after removal; timers fire once at their time, can be
 * rearmed from their own callback and disarmed; a blocked signal arrives
 * through the loop; an fd epoll refuses (a regular file) is watched by the
 * bounded poll; a source removed by an earlier callback of the same round
 * is not called; quit ends run; the loop fd polls readable when a timer is due.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/loop.h"

struct counts {
	int io, timer, sig;
	struct sm_loop_src *other;   /* removed by the callback */
	struct sm_loop *l;
	int rearm;
};

static void on_io(struct sm_loop_src *s, int fd, unsigned revents, void *arg)
{
	struct counts *c = arg;
	char b[16];
	(void)s;
	(void)revents;
	(void)!read(fd, b, sizeof(b));
	c->io++;
	if (c->other) {
		sm_loop_remove(c->other);
		c->other = NULL;
	}
}

static void on_timer(struct sm_loop_src *s, void *arg)
{
	struct counts *c = arg;
	c->timer++;
	if (c->rearm-- > 0)
		sm_loop_timer_set(s, sm_mono_us() + 1000);
	else if (c->l)
		sm_loop_quit(c->l);
}

static void on_sig(struct sm_loop_src *s, int signo, void *arg)
{
	struct counts *c = arg;
	(void)s;
	assert_int_equal(signo, SIGUSR1);
	c->sig++;
}

static void io_and_remove(void **unused)
{
	(void)unused;
	struct sm_loop *l;
	struct sm_loop_src *a, *b;
	struct counts ca = { 0 }, cb = { 0 };
	int p1[2], p2[2];

	assert_int_equal(sm_loop_new(&l), 0);
	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	assert_int_equal(sm_loop_io_add(l, p1[0], on_io, &ca, &a), 0);
	assert_int_equal(sm_loop_io_add(l, p2[0], on_io, &cb, &b), 0);
	assert_false(sm_loop_io_polled(a));
	assert_int_equal(sm_loop_dispatch(l, 0), 0);
	assert_int_equal(write(p1[1], "x", 1), 1);
	assert_int_equal(sm_loop_dispatch(l, 1000), 1);
	assert_int_equal(ca.io, 1);
	/* both readable; whichever runs first removes the other, which is then not called */
	ca.other = b;
	cb.other = a;
	assert_int_equal(write(p1[1], "x", 1), 1);
	assert_int_equal(write(p2[1], "x", 1), 1);
	assert_int_equal(sm_loop_dispatch(l, 1000), 1);
	assert_int_equal(ca.io + cb.io, 2);
	sm_loop_free(l);
	for (int i = 0; i < 2; i++) {
		close(p1[i]);
		close(p2[i]);
	}
}

static void timers(void **unused)
{
	(void)unused;
	struct sm_loop *l;
	struct sm_loop_src *t, *t2;
	struct counts c = { 0 }, c2 = { 0 };

	assert_int_equal(sm_loop_new(&l), 0);
	c.l = l;
	c.rearm = 3;
	assert_int_equal(sm_loop_timer_add(l, on_timer, &c, &t), 0);
	assert_int_equal(sm_loop_timer_add(l, on_timer, &c2, &t2), 0);
	uint64_t t0 = sm_mono_us();
	sm_loop_timer_set(t, t0 + 20000);
	sm_loop_timer_set(t2, t0 + 10000);
	sm_loop_timer_set(t2, 0);   /* disarmed: never fires */
	/* the loop fd is what an outer poll waits on */
	struct pollfd pf = { .fd = sm_loop_fd(l), .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 1000), 1);
	assert_true(sm_mono_us() - t0 >= 19000);
	assert_int_equal(sm_loop_run(l), 0);
	assert_int_equal(c.timer, 4);      /* once, then rearmed three times */
	assert_int_equal(c2.timer, 0);
	assert_int_equal(sm_loop_timer_due(t), 0);
	sm_loop_remove(t2);
	sm_loop_free(l);
}

static void signals(void **unused)
{
	(void)unused;
	struct sm_loop *l;
	struct sm_loop_src *s;
	struct counts c = { 0 };
	sigset_t m, old;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &m, &old);
	assert_int_equal(sm_loop_new(&l), 0);
	assert_int_equal(sm_loop_signal_add(l, SIGUSR1, on_sig, &c, &s), 0);
	kill(getpid(), SIGUSR1);
	assert_int_equal(sm_loop_dispatch(l, 1000), 1);
	assert_int_equal(c.sig, 1);
	sm_loop_free(l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A regular file: epoll_ctl says EPERM, so the loop polls it every SM_LOOP_POLL_MS. */
static void polled_fd(void **unused)
{
	(void)unused;
	struct sm_loop *l;
	struct sm_loop_src *s;
	struct counts c = { 0 };
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(sm_loop_new(&l), 0);
	assert_int_equal(sm_loop_io_add(l, fileno(f), on_io, &c, &s), 0);
	assert_true(sm_loop_io_polled(s));
	uint64_t t0 = sm_mono_us();
	while (c.io < 6 && sm_mono_us() - t0 < 2000000)
		assert_true(sm_loop_dispatch(l, 1000) >= 0);
	assert_int_equal(c.io, 6);
	/* checked at the start, then every SM_LOOP_POLL_MS: never a busy loop (1 ms of timer slack) */
	assert_true(sm_mono_us() - t0 + 1000u >= 5u * SM_LOOP_POLL_MS * 1000u);
	sm_loop_remove(s);
	sm_loop_free(l);
	fclose(f);
}

/*
 * A character device epoll refuses (/dev/null: EPERM, no poll support, poll()
 * says readable at once), as umad2sim's fds are refused (EBADF): a watcher
 * thread waits on it and wakes the loop through an eventfd, so dispatch
 * with a long timeout returns at once; removing the source (from its own
 * callback too) joins the thread, and the loop is freed with one still
 * watching.
 */
static void watched_fd(void **unused)
{
	(void)unused;
	struct sm_loop *l;
	struct sm_loop_src *s, *s2;
	struct counts c = { 0 }, c2 = { 0 };
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), fd2 = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0 && fd2 >= 0);
	assert_int_equal(sm_loop_new(&l), 0);
	assert_int_equal(sm_loop_io_add(l, fd, on_io, &c, &s), 0);
	assert_true(sm_loop_io_polled(s));
	uint64_t t0 = sm_mono_us();
	while (c.io < 50 && sm_mono_us() - t0 < 2000000)
		assert_true(sm_loop_dispatch(l, 5000) >= 0);
	assert_int_equal(c.io, 50);
	/* (how much sooner than a 2 ms check the watcher wakes the loop is measured in
	 * bench/sa_ibsim.sh, under umad2sim, not timed here) */
	sm_loop_remove(s);
	unsigned after = c.io;
	assert_true(sm_loop_dispatch(l, 50) >= 0);
	assert_int_equal(c.io, after);   /* removed: no callback once its watcher is joined */
	/* a source still watched when the loop is freed: its thread is stopped and joined */
	assert_int_equal(sm_loop_io_add(l, fd2, on_io, &c2, &s2), 0);
	assert_true(sm_loop_dispatch(l, 5000) >= 0);
	assert_true(c2.io >= 1);
	sm_loop_free(l);
	close(fd);
	close(fd2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(io_and_remove),
		cmocka_unit_test(timers),
		cmocka_unit_test(signals),
		cmocka_unit_test(polled_fd),
		cmocka_unit_test(watched_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
