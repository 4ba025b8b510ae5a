/* SPDX-License-Identifier: MIT */
/*
 * DOC: the event loop (see loop.h)
 *
 * One epoll fd holds every io source that epoll accepts, one signalfd (all
 * signal sources share it) and one timerfd armed at the earliest due time:
 * that of the first timer, or the next bounded check of the regular files
 * epoll refused. Other fds epoll refuses (umad2sim's) each get a watcher
 * thread that waits in poll() and reports through an eventfd in the epoll
 * set (see loop.h). Sources sit on one list; a removed source is unlinked
 * at once but freed only after the dispatch that may still hold events
 * naming it.
 */
#include "lib/loop.h"
#include "lib/clock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

enum src_kind { SRC_IO, SRC_TIMER, SRC_SIGNAL };

/*
 * A thread that waits on an fd epoll refused and is not a regular file
 * (umad2sim's fake umad fds; character devices without poll support). It
 * polls only while armed; once the fd is readable it disarms, stores the
 * events and writes efd, which is in the epoll set; the loop runs the
 * callback and arms it again. So the fd is never read and polled at once,
 * and a MAD is seen as soon as it arrives, not at the next 2 ms check.
 */
#define WATCH_POLL_MS 20   /* bounds how long sm_loop_remove() waits for the thread */
struct watch {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int efd;
	int armed, stop;
	unsigned revents;
};

struct sm_loop_src {
	struct sm_loop *l;
	enum src_kind kind;
	int fd;                     /* io */
	int polled;                 /* io: epoll refused the fd, checked by poll() */
	struct watch *w;            /* polled io that is not a regular file: its watcher thread */
	int signo;                  /* signal */
	uint64_t due_us;            /* timer: 0 disarmed; polled io: next check */
	unsigned ran;               /* timer, polled io: dispatch round it last ran in */
	int dead;
	union {
		sm_loop_io_fn *io;
		sm_loop_timer_fn *timer;
		sm_loop_signal_fn *sig;
	} fn;
	void *arg;
	struct sm_loop_src *next;   /* l->srcs, or l->graveyard once removed */
};

struct sm_loop {
	int ep, tfd, sfd;
	sigset_t sigs;
	struct sm_loop_src *srcs, *graveyard;
	unsigned dispatching;
	uint64_t armed_us;          /* what tfd is armed for, 0 none */
	unsigned round;             /* dispatch rounds, for src->ran */
	int quit;
};

/* tags for the two internal fds in epoll_event.data.ptr */
static char tag_timer, tag_signal;

int sm_loop_new(struct sm_loop **out)
{
	struct sm_loop *l = calloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN };
	int rc;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	l->sfd = -1;
	sigemptyset(&l->sigs);
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (l->ep < 0 || l->tfd < 0)
		goto fail;
	ev.data.ptr = &tag_timer;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->tfd, &ev) < 0)
		goto fail;
	*out = l;
	return 0;
fail:
	rc = -errno;
	sm_loop_free(l);
	return rc;
}

static void watch_stop(struct sm_loop *l, struct sm_loop_src *s);

static void src_free_list(struct sm_loop_src *s)
{
	while (s) {
		struct sm_loop_src *n = s->next;
		watch_stop(NULL, s);
		free(s);
		s = n;
	}
}

void sm_loop_free(struct sm_loop *l)
{
	if (!l)
		return;
	src_free_list(l->srcs);
	src_free_list(l->graveyard);
	if (l->ep >= 0)
		close(l->ep);
	if (l->tfd >= 0)
		close(l->tfd);
	if (l->sfd >= 0)
		close(l->sfd);
	free(l);
}

static struct sm_loop_src *src_new(struct sm_loop *l, enum src_kind kind, void *arg)
{
	struct sm_loop_src *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->l = l;
	s->kind = kind;
	s->fd = -1;
	s->arg = arg;
	s->next = l->srcs;
	l->srcs = s;
	return s;
}

/* Arm the timerfd for the earliest due time (timers, polled fds). */
static void rearm(struct sm_loop *l)
{
	uint64_t due = 0;

	for (struct sm_loop_src *s = l->srcs; s; s = s->next)
		if ((s->kind == SRC_TIMER || (s->kind == SRC_IO && s->polled)) && s->due_us &&
		    (!due || s->due_us < due))
			due = s->due_us;
	if (due == l->armed_us)
		return;
	struct itimerspec its = { 0 };
	if (due) {
		its.it_value.tv_sec = (time_t)(due / 1000000u);
		its.it_value.tv_nsec = (long)(due % 1000000u) * 1000;
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;   /* zero would disarm */
	}
	if (timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		l->armed_us = due;
}

static void *watch_main(void *arg)
{
	struct sm_loop_src *s = arg;
	struct watch *w = s->w;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->armed && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->mu);
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };
		int r = poll(&pf, 1, WATCH_POLL_MS);
		pthread_mutex_lock(&w->mu);
		if (r > 0 && pf.revents && !w->stop) {
			uint64_t one = 1;
			w->armed = 0;
			w->revents = (unsigned)pf.revents;
			(void)!write(w->efd, &one, sizeof(one));
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Free s's watcher once its thread is gone (or never ran); l NULL: the loop is going too. */
static void watch_free(struct sm_loop *l, struct sm_loop_src *s)
{
	struct watch *w = s->w;

	if (l)
		(void)epoll_ctl(l->ep, EPOLL_CTL_DEL, w->efd, NULL);
	close(w->efd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
	s->w = NULL;
}

/* Start s's watcher (s->fd epoll refused, not a regular file). 0 or -errno. */
static int watch_start(struct sm_loop *l, struct sm_loop_src *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };
	struct watch *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int rc;

	if (!w)
		return -ENOMEM;
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, w->efd, &ev) < 0) {
		rc = -errno;
		if (w->efd >= 0)
			close(w->efd);
		free(w);
		return rc;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->armed = 1;
	s->w = w;
	/* signals stay with the loop's signalfd: the thread takes none */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&w->th, NULL, watch_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		watch_free(l, s);
	return rc;
}

static void watch_stop(struct sm_loop *l, struct sm_loop_src *s)
{
	struct watch *w = s->w;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);   /* at most WATCH_POLL_MS: the thread's poll is bounded */
	watch_free(l, s);
}

/* The watcher said s->fd is readable: run the callback, then arm it again. */
static void watch_fire(struct sm_loop_src *s)
{
	struct watch *w = s->w;
	uint64_t v;
	unsigned revents;

	(void)!read(w->efd, &v, sizeof(v));
	pthread_mutex_lock(&w->mu);
	revents = w->revents;
	pthread_mutex_unlock(&w->mu);
	if (!revents)
		return;
	s->fn.io(s, s->fd, revents, s->arg);
	/* the callback may have removed s (its watcher is gone then) */
	if (s->dead || !s->w || (revents & POLLNVAL))
		return;   /* not an fd after all: reported once, then left */
	pthread_mutex_lock(&w->mu);
	w->revents = 0;
	w->armed = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

int sm_loop_io_add(struct sm_loop *l, int fd, sm_loop_io_fn *fn, void *arg, struct sm_loop_src **out)
{
	struct sm_loop_src *s;
	struct epoll_event ev = { .events = EPOLLIN };

	*out = NULL;
	if (fd < 0 || !fn)
		return -EINVAL;
	s = src_new(l, SRC_IO, arg);
	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->fn.io = fn;
	ev.data.ptr = s;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		if (errno != EPERM && errno != EBADF) {
			int rc = -errno;
			sm_loop_remove(s);
			return rc;
		}
		/* see loop.h: regular files, umad2sim's fake umad fds */
		struct stat st;
		s->polled = 1;
		if ((fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) && watch_start(l, s) == 0) {
			*out = s;
			return 0;
		}
		s->due_us = sm_mono_us();
		rearm(l);
	}
	*out = s;
	return 0;
}

int sm_loop_io_polled(const struct sm_loop_src *s)
{
	return s && s->polled;
}

int sm_loop_timer_add(struct sm_loop *l, sm_loop_timer_fn *fn, void *arg, struct sm_loop_src **out)
{
	struct sm_loop_src *s;

	*out = NULL;
	if (!fn)
		return -EINVAL;
	s = src_new(l, SRC_TIMER, arg);
	if (!s)
		return -ENOMEM;
	s->fn.timer = fn;
	*out = s;
	return 0;
}

void sm_loop_timer_set(struct sm_loop_src *s, uint64_t due_us)
{
	if (!s || s->kind != SRC_TIMER || s->dead)
		return;
	s->due_us = due_us;
	rearm(s->l);
}

uint64_t sm_loop_timer_due(const struct sm_loop_src *s)
{
	return s && s->kind == SRC_TIMER ? s->due_us : 0;
}

int sm_loop_signal_add(struct sm_loop *l, int signo, sm_loop_signal_fn *fn, void *arg,
		       struct sm_loop_src **out)
{
	struct sm_loop_src *s;
	sigset_t set = l->sigs;
	int fd;

	*out = NULL;
	if (!fn || sigaddset(&set, signo) < 0)
		return -EINVAL;
	fd = signalfd(l->sfd, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (l->sfd < 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_signal };
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			int rc = -errno;
			close(fd);
			return rc;
		}
		l->sfd = fd;
	}
	l->sigs = set;
	s = src_new(l, SRC_SIGNAL, arg);
	if (!s)
		return -ENOMEM;   /* the signal stays in the set: read and dropped */
	s->signo = signo;
	s->fn.sig = fn;
	*out = s;
	return 0;
}

void sm_loop_remove(struct sm_loop_src *s)
{
	struct sm_loop *l;
	struct sm_loop_src **pp;

	if (!s || s->dead)
		return;
	l = s->l;
	for (pp = &l->srcs; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = s->next;
	s->dead = 1;
	watch_stop(l, s);
	if (s->kind == SRC_IO && !s->polled)
		(void)epoll_ctl(l->ep, EPOLL_CTL_DEL, s->fd, NULL);
	if (s->kind == SRC_TIMER || s->polled)
		rearm(l);
	/* a signal stays in the signalfd's set: it is read and dropped, never delivered the default way */
	if (l->dispatching) {
		s->next = l->graveyard;
		l->graveyard = s;
	} else {
		free(s);
	}
}

int sm_loop_fd(const struct sm_loop *l)
{
	return l->ep;
}

static int run_signals(struct sm_loop *l)
{
	struct signalfd_siginfo si;
	int n = 0;

	while (read(l->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		for (struct sm_loop_src *s = l->srcs, *next; s; s = next) {
			next = s->next;
			if (s->kind == SRC_SIGNAL && !s->dead && s->signo == (int)si.ssi_signo) {
				s->fn.sig(s, s->signo, s->arg);
				n++;
				break;   /* one source per signal number is the use; the first gets it */
			}
		}
	}
	return n;
}

/*
 * Timers and polled fds that are due. Callbacks may add and remove sources
 * (the list changes under us): restart the walk after each call, and never
 * call one source twice in a round (a timer rearmed into the past waits for
 * the next dispatch).
 */
static int run_due(struct sm_loop *l, int fired)
{
	uint64_t now = sm_mono_us(), expirations;
	int n = 0;
	struct sm_loop_src *s;

	/* only when epoll said so: a read per dispatch was a system call per wake-up for nothing */
	if (fired) {
		(void)!read(l->tfd, &expirations, sizeof(expirations));
		l->armed_us = 0;   /* fired: rearmed below */
	}
again:
	for (s = l->srcs; s; s = s->next) {
		if (s->dead || !s->due_us || s->due_us > now || s->ran == l->round ||
		    (s->kind != SRC_TIMER && (!s->polled || s->w)))
			continue;
		s->ran = l->round;
		if (s->kind == SRC_TIMER) {
			s->due_us = 0;
			s->fn.timer(s, s->arg);
			n++;
			goto again;
		}
		/* a polled fd: one per poll() call (umad2sim, see loop.h) */
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };
		s->due_us = now + SM_LOOP_POLL_MS * 1000u;
		if (poll(&pf, 1, 0) > 0 && pf.revents) {
			if (pf.revents & POLLNVAL)
				s->due_us = 0;   /* not an fd after all: report once, then leave it */
			s->fn.io(s, s->fd, (unsigned)pf.revents, s->arg);
			n++;
			goto again;
		}
	}
	rearm(l);
	return n;
}

int sm_loop_dispatch(struct sm_loop *l, int timeout_ms)
{
	struct epoll_event ev[32];
	int k, n = 0, fired = 0;

	k = epoll_wait(l->ep, ev, 32, timeout_ms);
	if (k < 0)
		return errno == EINTR ? 0 : -errno;
	l->dispatching++;
	if (!++l->round)
		l->round = 1;   /* src->ran 0 means "never" */
	for (int i = 0; i < k; i++) {
		void *p = ev[i].data.ptr;
		if (p == &tag_timer) {
			fired = 1;
			continue;   /* run_due below looks at the clock, whatever woke us */
		} else if (p == &tag_signal) {
			n += run_signals(l);
		} else {
			struct sm_loop_src *s = p;
			/* a source removed by an earlier callback of this round is in the graveyard */
			if (s->dead)
				continue;
			if (s->w)
				watch_fire(s);
			else
				s->fn.io(s, s->fd, ev[i].events, s->arg);
			n++;
		}
	}
	n += run_due(l, fired);
	if (!--l->dispatching) {
		src_free_list(l->graveyard);
		l->graveyard = NULL;
	}
	return n;
}

int sm_loop_run(struct sm_loop *l)
{
	while (!l->quit) {
		int rc = sm_loop_dispatch(l, -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void sm_loop_quit(struct sm_loop *l)
{
	l->quit = 1;
}

int sm_loop_quitting(const struct sm_loop *l)
{
	return l->quit;
}
