/* SPDX-License-Identifier: MIT */
#ifndef SMD_LIB_LOOP_H
#define SMD_LIB_LOOP_H
/*
 * DOC: the event loop (one per thread that owns fds and timers)
 *
 * In smd the main thread of the daemon owns the one loop: signals, the
 * control socket, the MAD fds of idle planes, the sweep interval, the trap
 * hold-off, the systemd watchdog. Work that takes long (a sweep cycle) runs
 * on a worker thread and reports back through an fd the loop watches.
 *
 * Sources, all called back from sm_loop_dispatch() on the loop's thread:
 *   io      an fd readable (POLLIN; POLLERR/POLLHUP are reported too).
 *   timer   one-shot at an absolute sm_mono_us() time (lib/clock.h);
 *           rearmable: set it again, from its callback or anywhere on the
 *           loop's thread; 0 disarms it.
 *   signal  a signal number, read from one signalfd. The caller blocks the
 *           signal in every thread first (pthread_sigmask before any thread
 *           exists), as signalfd(2) requires.
 * sm_loop_remove() takes any source out (also from inside a callback,
 * its own included); sm_loop_free() removes what is left.
 *
 * Running it: sm_loop_run() dispatches until sm_loop_quit(). A loop can
 * also be embedded in another poll()-based wait: sm_loop_fd() is readable
 * whenever something is due (an epoll fd with every source and one timerfd
 * in it), and sm_loop_dispatch(l, 0) runs what is due without waiting. The
 * daemon embeds it that way in the control socket server's poll (ctl.h
 * exposes a poll call, not its fds).
 *
 * Fds that epoll refuses: epoll_ctl() fails with EPERM for files that
 * cannot be polled that way and with EBADF for an fd number that is not a
 * kernel fd at all, which is what ibsim's umad2sim (LD_PRELOAD) hands out
 * for umad devices: its fds are numbers >= 1024 served by its own
 * poll()/read() interposers; it interposes neither epoll nor select. Such
 * an fd is still accepted. A regular file is checked with poll(fd, 0)
 * every SM_LOOP_POLL_MS. Any other (umad2sim's, a character device without
 * poll support) gets a watcher thread of its own that waits in poll() on
 * that one fd (umad2sim's poll() looks only at the first umad fd of a set)
 * while the loop is not reading it, and wakes the loop through an eventfd:
 * a MAD is seen as it arrives. Until session 4 those fds were checked every
 * 2 ms too, which put 2 ms on every SA answer under umad2sim (p50 2.0 ms,
 * about 480 answers/s to a client with one query in flight) and cost 1-2%
 * of a core while idle. Its poll has a timeout (WATCH_POLL_MS, 20 ms), so
 * sm_loop_remove() of such a source waits at most that long for its
 * thread. Real umad devices are epoll'ed and need neither.
 * sm_loop_io_polled() tells whether epoll refused an fd. A refused fd that
 * poll() calls invalid (POLLNVAL) is reported once with POLLNVAL and then
 * no longer checked.
 *
 * Why our own epoll+timerfd+signalfd loop and not libsystemd's sd-event
 * (already linked, systemd 252 on Debian 12): both are epoll underneath, so
 * sd-event refuses umad2sim's fds just the same (sd_event_add_io ->
 * -EBADF) and the bounded poll above would be a second mechanism next to
 * it; here it is one kind of io source, so the daemon has one code path for
 * every transport. Embedding in the control server's poll is a readable fd
 * plus dispatch(0) here, where sd-event needs its prepare/wait/dispatch
 * state machine; and we need four source kinds, not sd-event's refcounted
 * floating sources, priorities and exit/defer/child/inotify sources. The
 * whole loop is under 400 lines of libc, unit-tested in tests/test_loop.c.
 * It lives in smd/lib because nothing in it is InfiniBand-specific.
 *
 * Not thread-safe: one thread adds, removes and dispatches. Another thread
 * talks to the loop by writing to an fd it watches (a pipe or eventfd).
 * Functions return 0 or -errno; nothing is logged.
 */
#include <stdint.h>

#define SM_LOOP_POLL_MS 2     /* period of the bounded check of regular files epoll refuses */

struct sm_loop;
struct sm_loop_src;

typedef void sm_loop_io_fn(struct sm_loop_src *s, int fd, unsigned revents, void *arg);
typedef void sm_loop_timer_fn(struct sm_loop_src *s, void *arg);
typedef void sm_loop_signal_fn(struct sm_loop_src *s, int signo, void *arg);

int sm_loop_new(struct sm_loop **out);
void sm_loop_free(struct sm_loop *l);   /* removes every source; accepts NULL */

/* Watch fd for reading (see above for fds epoll refuses). */
int sm_loop_io_add(struct sm_loop *l, int fd, sm_loop_io_fn *fn, void *arg, struct sm_loop_src **out);
int sm_loop_io_polled(const struct sm_loop_src *s);   /* 1: epoll refused it (poll()ed, see above) */

/* A timer, disarmed until sm_loop_timer_set(). */
int sm_loop_timer_add(struct sm_loop *l, sm_loop_timer_fn *fn, void *arg, struct sm_loop_src **out);
void sm_loop_timer_set(struct sm_loop_src *s, uint64_t due_us);   /* sm_mono_us() time; 0 disarms */
uint64_t sm_loop_timer_due(const struct sm_loop_src *s);          /* 0: disarmed */

/* Deliver signo (blocked by the caller in every thread) to fn. */
int sm_loop_signal_add(struct sm_loop *l, int signo, sm_loop_signal_fn *fn, void *arg,
		       struct sm_loop_src **out);

void sm_loop_remove(struct sm_loop_src *s);   /* accepts NULL */

int sm_loop_fd(const struct sm_loop *l);
/*
 * Wait up to timeout_ms (0: not at all; < 0: until something is due) and
 * run what is due. Returns the number of callbacks run, or -errno.
 */
int sm_loop_dispatch(struct sm_loop *l, int timeout_ms);
/* Dispatch until sm_loop_quit(); 0, or -errno if waiting failed. */
int sm_loop_run(struct sm_loop *l);
void sm_loop_quit(struct sm_loop *l);
int sm_loop_quitting(const struct sm_loop *l);

#endif
