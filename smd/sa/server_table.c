/* SPDX-License-Identifier: MIT */
/*
 * DOC: large SA tables off the loop (server_priv.h)
 *
 * Every PathRecord of a 2,048-host plane is 4.6 M records; the server stops
 * at MAX_RECORDS (1 M, about 0.18 s of CPU). Built on the loop's thread,
 * such a table held every other SA answer, and the control socket's
 * status, for that long. So the loop tries each GetTable/GetMulti itself
 * up to SM_SA_LOOP_RECORDS (under a millisecond) and hands one that goes
 * beyond to the SA's table thread (started at the first such table, one
 * per SA): a job with a copy of the request and of self and a reference to
 * the snapshot. The thread runs sm_sa_query() with its own rate/MTU table
 * and no mutable tables (ctx.dyn NULL): the attributes that read them
 * (ServiceRecord, InformInfoRecord, MCMemberRecord) are answered on the
 * loop as before, and a PathRecord to a multicast group, the only path
 * that reads them, is one record and never comes here. A finished job
 * goes on the done list and the thread writes the SA's wake eventfd; the
 * loop sends it (RMPP state is the loop's) and adds the thread's CPU time
 * to cpu_ns. Where the kernel segments (SM_GSI_KERNEL_RMPP) the thread
 * also builds the whole message (a 50 MB copy), so the loop only hands it
 * to send(). At most SM_SA_MAX_TABLES jobs wait, run or wait to be sent;
 * one more is answered BUSY at once (a client backs off, IBA 13.4.7).
 * Jobs are FIFO: answers leave in the order their requests were taken.
 */
#include "sa/server_priv.h"
#include "sa/path.h"
#include "sm/snapshot.h"
#include "lib/clock.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tjob {
	struct tjob *next;
	struct sm_sa_req req;
	uint8_t *data;                   /* req.data, owned */
	const struct sm_snapshot *snap;  /* a reference */
	struct sm_sa_self self;
	struct sm_sa_ans ans;
	int rc;
	bool kernel_rmpp;                /* the endpoint takes whole messages: built here too */
	uint8_t *whole;                  /* that message, or NULL */
	size_t whole_len;
	uint64_t cpu_ns;
};

struct sa_tables {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	struct tjob *todo, *todo_tail;   /* mu */
	struct tjob *done, *done_tail;   /* mu */
	unsigned n;                      /* jobs taken and not yet sent (loop thread) */
	int wake_fd;                     /* the SA's eventfd */
};

static void job_free(struct tjob *j)
{
	if (!j)
		return;
	sm_sa_ans_free(&j->ans);
	free(j->whole);
	sm_snapshot_unref(j->snap);
	free(j->data);
	free(j);
}

static void job_run(struct tjob *j)
{
	uint64_t c0 = sm_sa_thread_cpu_ns();
	uint16_t *rm = sm_sa_port_rm_build(j->snap);   /* NULL: computed per record, slower, same answer */
	struct sm_sa_ctx ctx = { .snap = j->snap, .self = &j->self, .now_us = sm_mono_us(), .port_rm = rm };

	j->ans.max_records = MAX_RECORDS;
	j->rc = sm_sa_query(&ctx, &j->req, &j->ans);
	free(rm);
	/* copying 50 MB into one message is also work the loop should not wait for */
	if (!j->rc && j->kernel_rmpp && j->ans.status == SM_SA_STATUS_OK &&
	    (j->whole = sm_sa_whole_msg(&j->req, &j->ans, &j->whole_len)))
		sm_sa_ans_free(&j->ans);
	j->cpu_ns = sm_sa_thread_cpu_ns() - c0;
}

static void *table_main(void *arg)
{
	struct sa_tables *t = arg;

	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (!t->todo && !t->stop)
			pthread_cond_wait(&t->cv, &t->mu);
		if (t->stop)
			break;
		struct tjob *j = t->todo;

		t->todo = j->next;
		if (!t->todo)
			t->todo_tail = NULL;
		pthread_mutex_unlock(&t->mu);
		job_run(j);
		pthread_mutex_lock(&t->mu);
		j->next = NULL;
		if (t->done_tail)
			t->done_tail->next = j;
		else
			t->done = j;
		t->done_tail = j;
		uint64_t one = 1;
		(void)!write(t->wake_fd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

static struct sa_tables *tables_start(struct sm_sa *sa)
{
	struct sa_tables *t = calloc(1, sizeof(*t));
	sigset_t all, old;
	int rc;

	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	t->wake_fd = sa->wake_fd;
	/* signals stay with the loop's signalfd: the thread takes none */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->th, NULL, table_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return NULL;
	}
	sa->tables = t;
	return t;
}

bool sm_sa_table_offload(struct sm_sa *sa, const struct sm_sa_req *req)
{
	struct sa_tables *t = sa->tables;
	struct tjob *j;

	switch (req->hdr.attr_id) {
	case SM_SA_ATTR_SERVICE_RECORD:
	case SM_SA_ATTR_INFORM_INFO_RECORD:
	case SM_SA_ATTR_MCMEMBER_RECORD:
		return false;   /* they read the SA's mutable tables: the loop's */
	default:
		break;
	}
	if (!sa->snap || (!t && !(t = tables_start(sa))))
		return false;
	if (t->n >= SM_SA_MAX_TABLES) {
		struct sm_sa_ans busy = { .status = SM_SA_STATUS_BUSY };

		sa->st.over_share++;
		sm_sa_send_answer(sa, req, &busy);
		return true;
	}
	j = calloc(1, sizeof(*j));
	if (j && req->len && !(j->data = malloc(req->len))) {
		free(j);
		j = NULL;
	}
	if (!j)
		return false;
	if (req->len)
		memcpy(j->data, req->data, req->len);
	j->req = *req;
	j->req.data = j->data;
	j->snap = sm_snapshot_ref(sa->snap);
	j->self = sa->self;
	j->kernel_rmpp = sa->gsi->flags & SM_GSI_KERNEL_RMPP;
	t->n++;
	pthread_mutex_lock(&t->mu);
	if (t->todo_tail)
		t->todo_tail->next = j;
	else
		t->todo = j;
	t->todo_tail = j;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	return true;
}

void sm_sa_table_done(struct sm_sa *sa)
{
	struct sa_tables *t = sa->tables;
	struct tjob *j, *next;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	j = t->done;
	t->done = t->done_tail = NULL;
	pthread_mutex_unlock(&t->mu);
	for (; j; j = next) {
		next = j->next;
		if (j->rc < 0) {
			j->ans.status = SM_SA_STATUS_NO_RESOURCES;
			j->ans.n = 0;
		}
		if (j->whole)
			sm_sa_send_whole(sa, &j->req, j->whole, j->whole_len);
		else
			sm_sa_send_answer(sa, &j->req, &j->ans);
		sa->st.cpu_ns += j->cpu_ns;
		t->n--;
		job_free(j);
	}
}

void sm_sa_table_free(struct sm_sa *sa)
{
	struct sa_tables *t = sa->tables;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);   /* after the table it is building, if any */
	for (struct tjob *j = t->todo, *nx; j; j = nx) {
		nx = j->next;
		job_free(j);
	}
	for (struct tjob *j = t->done, *nx; j; j = nx) {
		nx = j->next;
		job_free(j);
	}
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
	sa->tables = NULL;
}
