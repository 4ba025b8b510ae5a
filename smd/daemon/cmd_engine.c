/* SPDX-License-Identifier: MIT */
/*
 * DOC: engine set (smctl engine set NAME[,NAME...]), read off the loop
 *
 * The new chain goes through the reload path (BIRD-style: parse into a new
 * config, build every plane's chain from it, swap only on success): the
 * config file (-c) and the command line are read again as SIGHUP does, the
 * chain is replaced, smd_dmn_reconfigure() builds the chains (an unknown
 * engine or a bad engine config is refused there and the running chain
 * stays), and a sweep is requested so the next cycle reroutes with it; the
 * reply is that sweep's result. The override lasts until the next reload or
 * restart, which read routing_engine again.
 *
 * Issue 18: no file is opened or parsed on the loop. The handler hands the
 * load (file, command line, chain) to one thread and parks the request;
 * resume (polled every SMD_CTL_RECHECK_MS) applies the outcome on the loop,
 * then waits for the sweep. One at a time: another engine set meanwhile is
 * "busy". A job whose client left is forgotten when the next one comes.
 */
#include "daemon/daemon_priv.h"
#include "daemon/cmd.h"
#include "ctl/ctl.h"
#include "config/options.h"
#include "config/smdconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EJ_IDLE = 0, EJ_RUNNING, EJ_DONE, EJ_SWEEP };

static struct engine_job {
	pthread_mutex_t mu;
	int phase;                  /* EJ_*; RUNNING and DONE under mu */
	pthread_t th;
	const struct smd_jv *req;   /* the parked request this job answers */
	const struct smd_opts *o;
	char chain[260];
	struct smd_conf *conf;      /* the thread's result */
	int rc;
	char err[1024];
	uint64_t target;            /* EJ_SWEEP: the sweep that answers */
} ej = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *load_main(void *arg)
{
	struct smd_conf *conf = NULL;
	char cerr[1024] = "";
	int rc;
	(void)arg;

	if (ej.o && ej.o->config)
		rc = smd_conf_load(ej.o->config, &conf, cerr, sizeof(cerr));
	else
		rc = (conf = smd_conf_new()) ? 0 : -ENOMEM;
	if (!rc && ej.o)
		rc = smd_conf_apply_opts(conf, ej.o, cerr, sizeof(cerr));
	if (rc)
		snprintf(ej.err, sizeof(ej.err), "engine set refused, the running chain is kept: the config does not load: %s",
			 cerr[0] ? cerr : strerror(-rc));
	else if ((rc = smd_conf_set_chain(conf, ej.chain, cerr, sizeof(cerr))))
		snprintf(ej.err, sizeof(ej.err), "engine set refused, the running chain is kept: %s",
			 cerr[0] ? cerr : strerror(-rc));
	if (rc) {
		smd_conf_free(conf);
		conf = NULL;
	}
	pthread_mutex_lock(&ej.mu);
	ej.conf = conf;
	ej.rc = rc;
	ej.phase = EJ_DONE;
	pthread_mutex_unlock(&ej.mu);
	return NULL;
}

/* A finished job nobody waits for any more: forget it. 0, or -EBUSY while one runs. */
static int job_reset(void)
{
	pthread_mutex_lock(&ej.mu);
	int phase = ej.phase;
	pthread_mutex_unlock(&ej.mu);
	if (phase == EJ_RUNNING)
		return -EBUSY;
	if (phase == EJ_DONE) {
		pthread_join(ej.th, NULL);
		smd_conf_free(ej.conf);
		ej.conf = NULL;
	}
	ej.phase = EJ_IDLE;
	ej.req = NULL;
	return 0;
}

int smd_dmn_engine_request(struct smd_dmn *d, const struct smd_opts *o, const struct smd_jv *req,
			   uint64_t *wait_for, char *err, size_t errlen)
{
	const char *chain = smd_jv_str(req, "chain", NULL);
	int rc;
	(void)d;

	if (!chain || !chain[0] || strlen(chain) > 256) {
		snprintf(err, errlen, "engine: \"chain\" (\"NAME[,NAME...]\") is required");
		return -EINVAL;
	}
	if (job_reset()) {
		snprintf(err, errlen, "engine: busy: another engine set is being read");
		return -EBUSY;
	}
	snprintf(ej.chain, sizeof(ej.chain), "%s", chain);
	ej.o = o;
	ej.req = req;
	ej.err[0] = '\0';
	ej.phase = EJ_RUNNING;
	if ((rc = pthread_create(&ej.th, NULL, load_main, NULL))) {
		ej.phase = EJ_IDLE;
		ej.req = NULL;
		snprintf(err, errlen, "engine: cannot start reading the config: %s", strerror(rc));
		return -rc;
	}
	*wait_for = 0;   /* resumed at once: "not yet" until the load is done */
	return SMD_CTL_WAIT;
}

int smd_dmn_engine_resume(struct smd_dmn *d, const struct smd_jv *req, char *err, size_t errlen)
{
	char notes[256] = "", cerr[1024] = "";
	int rc;

	if (ej.req != req)   /* answered already: the sweep has been waited for */
		return 0;
	pthread_mutex_lock(&ej.mu);
	int phase = ej.phase;
	pthread_mutex_unlock(&ej.mu);
	if (phase == EJ_RUNNING)
		return SMD_CTL_WAIT;
	if (phase == EJ_DONE) {
		pthread_join(ej.th, NULL);
		struct smd_conf *conf = ej.conf;
		ej.conf = NULL;
		rc = ej.rc;
		if (!rc && (rc = smd_dmn_reconfigure(d, conf, notes, sizeof(notes), cerr, sizeof(cerr)))) {
			snprintf(ej.err, sizeof(ej.err), "engine set refused, the running chain is kept: %s",
				 cerr[0] ? cerr : strerror(-rc));
			smd_conf_free(conf);   /* the daemon owns it only on success */
		}
		if (rc) {
			snprintf(err, errlen, "%s", ej.err);
			ej.phase = EJ_IDLE;
			ej.req = NULL;
			return rc < 0 ? rc : -EINVAL;
		}
		ej.target = smd_dmn_request_sweep(d);
		ej.phase = EJ_SWEEP;
	}
	pthread_mutex_lock(&d->mu);
	int swept = d->st.cycles >= ej.target;
	pthread_mutex_unlock(&d->mu);
	if (!swept)
		return SMD_CTL_WAIT;
	ej.phase = EJ_IDLE;
	ej.req = NULL;
	return 0;
}
