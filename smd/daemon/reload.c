/* SPDX-License-Identifier: MIT */
/*
 * DOC: the configuration loaded off the loop (see reload.h)
 *
 * Threads: the loop's thread owns everything here except the three fields
 * the loader thread writes before it writes its byte to the pipe (conf, rc,
 * err); the pipe's read on the loop orders them (the thread is joined
 * before they are read). The options (struct smd_opts) are the program's,
 * never changed after start, so the loader reads them without a lock.
 */
#include "daemon/reload.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct smd_reload {
	struct sm_loop *loop;
	struct sm_loop_src *src;
	const struct smd_opts *o;
	smd_reload_done_fn *done;
	void *arg;
	int pipe[2];
	pthread_t th;
	int running;          /* a loader thread exists (not yet joined) */
	int again;            /* a load was asked for while one ran */
	/* the loader's result (written by the thread, read after the join) */
	struct smd_conf *conf;
	int rc;
	char err[1024];
};

static void *loader(void *arg)
{
	struct smd_reload *r = arg;
	struct smd_conf *conf = NULL;
	int rc;

	r->err[0] = '\0';
	if (r->o->config)
		rc = smd_conf_load(r->o->config, &conf, r->err, sizeof(r->err));
	else
		rc = (conf = smd_conf_new()) ? 0 : -ENOMEM;
	if (!rc && (rc = smd_conf_apply_opts(conf, r->o, r->err, sizeof(r->err))) == 0 &&
	    conf->keys.mkey_mode == SM_KEY_DERIVED)   /* rotation: the secrets as the file holds them now */
		rc = sm_keys_read_secret(conf->keys.secret_file, conf->mkey_secret, &conf->mkey_nsecrets, r->err,
					 sizeof(r->err));
	if (rc && conf) {
		smd_conf_free(conf);
		conf = NULL;
	}
	if (rc && !r->err[0])
		snprintf(r->err, sizeof(r->err), "%s", strerror(-rc));
	r->conf = conf;
	r->rc = rc;
	(void)!write(r->pipe[1], "d", 1);
	return NULL;
}

static int spawn(struct smd_reload *r)
{
	int rc = pthread_create(&r->th, NULL, loader, r);

	if (rc)
		return -rc;
	r->running = 1;
	return 0;
}

/* The loader finished (loop thread). */
static void on_done(struct sm_loop_src *s, int fd, unsigned revents, void *arg)
{
	struct smd_reload *r = arg;
	char buf[16];

	(void)s;
	(void)revents;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	if (!r->running)
		return;
	pthread_join(r->th, NULL);
	r->running = 0;
	struct smd_conf *conf = r->conf;
	int rc = r->rc;
	char err[sizeof(r->err)];
	snprintf(err, sizeof(err), "%s", r->err);
	r->conf = NULL;
	/* a reload asked for meanwhile reads the file again (it may have changed): the next loader
	 * may write r's result fields from now on */
	if (r->again) {
		r->again = 0;
		if (spawn(r)) {
			smd_conf_free(conf);
			conf = NULL;
			rc = -EAGAIN;
			snprintf(err, sizeof(err), "cannot start the configuration loader");
		}
	}
	r->done(r->arg, conf, rc, err);
}

int smd_reload_new(struct sm_loop *loop, const struct smd_opts *o, smd_reload_done_fn *done, void *arg,
		   struct smd_reload **out)
{
	struct smd_reload *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	r->loop = loop;
	r->o = o;
	r->done = done;
	r->arg = arg;
	if (pipe2(r->pipe, O_CLOEXEC | O_NONBLOCK)) {
		rc = -errno;
		free(r);
		return rc;
	}
	if ((rc = sm_loop_io_add(loop, r->pipe[0], on_done, r, &r->src))) {
		close(r->pipe[0]);
		close(r->pipe[1]);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void smd_reload_free(struct smd_reload *r)
{
	if (!r)
		return;
	if (r->running) {
		pthread_join(r->th, NULL);
		smd_conf_free(r->conf);
	}
	sm_loop_remove(r->src);
	close(r->pipe[0]);
	close(r->pipe[1]);
	free(r);
}

int smd_reload_start(struct smd_reload *r)
{
	if (r->running) {
		r->again = 1;
		return 0;
	}
	return spawn(r);
}

int smd_reload_busy(const struct smd_reload *r)
{
	return r->running || r->again;
}
