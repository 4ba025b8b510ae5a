/* SPDX-License-Identifier: MIT */
/*
 * DOC: live traffic profile (`smctl profile load FILE`, `smctl profile clear`)
 *
 * Request: {"version":1,"cmd":"profile","name":"/where/it/was","content":"..."}
 * (what smctl sends): the daemon need not see the client's file (the unit's
 * PrivateTmp and ProtectHome hide /tmp and /home); the content, at most
 * SMD_CTL_MAX_CONTENT bytes, is checked as a file would be (messages name
 * "name") and kept as STATE_DIR/profile (written atomically), which the
 * cycles then read. {"path":""} clears the profile.
 * The older {"path":"/abs/file"} is served only to root and smd's own user
 * (the daemon would read it with its own rights: a socket_group member
 * could otherwise read any file smd can, and see it quoted in the error):
 * the file must be regular (opened O_NONBLOCK and fstat'ed, so a FIFO or a
 * device never blocks the loop) and at most SMD_CTL_MAX_CONTENT bytes; its
 * content is then treated as sent, and an error never quotes it.
 *
 * Nothing is read or parsed on the loop: the handler hands the text (or the
 * opened file) to one checker thread and parks the request; resume() sees
 * the result (polled every SMD_CTL_RECHECK_MS): refused (syntax error with
 * FILE:LINE, the running profile stays), or kept as STATE_DIR/profile by
 * the thread, then applied and a sweep requested; the reply is that sweep's
 * result. One check at a time: another request meanwhile gets "busy". A
 * request whose client left is dropped when the next one comes.
 * Endpoints are resolved later, against each plane's swept fabric in every
 * cycle, so a profile stays valid across sweeps; a plane none of whose
 * endpoints is in the profile routes without it. The engines that use
 * profiles (hotpath, planes) pin the hot flows, and since only LFT blocks
 * that differ are written, a profile change rewrites only the blocks of the
 * entries that moved.
 */
#include "daemon/daemon_priv.h"
#include "ctl/ctl.h"
#include "lib/statefile.h"
#include "model/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { JOB_IDLE = 0, JOB_RUNNING, JOB_DONE, JOB_SWEEP };

/* The one check in progress (the daemon has one loop thread; the checker only touches this). */
static struct profile_job {
	pthread_mutex_t mu;
	int phase;                  /* JOB_*; RUNNING and DONE under mu */
	pthread_t th;
	const struct smd_jv *req;   /* the parked request this job answers */
	int fd;                     /* path form: the opened file, else -1 */
	int quiet;                  /* path form: never quote the file in a message */
	char *buf;                  /* content form: the text (the thread reads fd into it) */
	size_t len;
	char name[4096], path[4096];   /* messages name "name"; kept as "path" */
	int rc;
	char err[768];
	uint64_t target;            /* JOB_SWEEP: the sweep that answers */
} job = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* Syntax check against an empty fabric: nothing resolves, but every line is parsed and a bad one reported. */
static int profile_check(const char *name, const char *buf, size_t len, char *err, size_t errlen)
{
	struct sm_fabric *f = sm_fabric_new();
	struct sm_profile *p = NULL;
	char perr[512] = "";
	int rc;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = sm_profile_parse(f, name, buf, len, NULL, &p, perr, sizeof(perr));
	sm_profile_free(p);
	sm_fabric_free(f);
	/* -ENOENT is "no flow resolved" here (the fabric is empty) */
	if (rc && !(rc == -ENOENT && strstr(perr, "resolved"))) {
		snprintf(err, errlen, "profile refused, the running one is kept: %s", perr[0] ? perr : strerror(-rc));
		return rc;
	}
	return 0;
}

/* Every 'quoted' part of msg (text from the file) replaced by '...'. */
static void withhold_quotes(char *msg)
{
	char *q = msg, *o = msg;
	int in = 0;

	for (; *q; q++) {
		if (*q == '\'') {
			if (!in) {
				memcpy(o, "'...", 4);   /* never longer: a quote pair holds at least 0 bytes */
				o += 4;
				q++;
				if (!*q)
					break;
				if (*q == '\'') {
					*o++ = '\'';
					continue;
				}
				in = 1;
			} else {
				continue;
			}
		}
		if (in) {
			if (*q == '\'') {
				*o++ = '\'';
				in = 0;
			}
			continue;
		}
		*o++ = *q;
	}
	*o = '\0';
}

static int read_fd(int fd, char **out, size_t *len, char *err, size_t errlen)
{
	size_t cap = SMD_CTL_MAX_CONTENT + 1, n = 0;
	char *b = malloc(cap + 1);
	ssize_t r;

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (n < cap && (r = read(fd, b + n, cap - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			snprintf(err, errlen, "profile refused, the running one is kept: read: %s", strerror(e));
			free(b);
			return -e;
		}
		n += (size_t)r;
	}
	if (n > SMD_CTL_MAX_CONTENT) {
		snprintf(err, errlen, "profile refused: larger than the limit of %u bytes", SMD_CTL_MAX_CONTENT);
		free(b);
		return -E2BIG;
	}
	b[n] = '\0';
	*out = b;
	*len = n;
	return 0;
}

/* The checker thread: read (path form), parse, keep as STATE_DIR/profile. */
static void *check_main(void *arg)
{
	char err[768] = "", serr[512] = "";
	int rc = 0;
	(void)arg;

	if (job.fd >= 0) {
		rc = read_fd(job.fd, &job.buf, &job.len, err, sizeof(err));
		close(job.fd);
		job.fd = -1;
	}
	if (!rc)
		rc = profile_check(job.name, job.buf, job.len, err, sizeof(err));
	if (!rc && (rc = sm_state_write(job.path, job.buf, job.len, 0640, serr, sizeof(serr))))
		snprintf(err, sizeof(err), "profile refused, the running one is kept: cannot keep it: %s", serr);
	if (rc && job.quiet)
		withhold_quotes(err);
	free(job.buf);
	job.buf = NULL;
	pthread_mutex_lock(&job.mu);
	job.rc = rc;
	snprintf(job.err, sizeof(job.err), "%s", err);
	job.phase = JOB_DONE;
	pthread_mutex_unlock(&job.mu);
	return NULL;
}

/* A finished job nobody waits for any more (its client left): forget it. 0, or -EBUSY while one runs. */
static int job_reset(void)
{
	pthread_mutex_lock(&job.mu);
	int phase = job.phase;
	pthread_mutex_unlock(&job.mu);
	if (phase == JOB_RUNNING)
		return -EBUSY;
	if (phase == JOB_DONE)
		pthread_join(job.th, NULL);
	job.phase = JOB_IDLE;
	job.req = NULL;
	return 0;
}

/* The older "path" form: root and smd's user only; a regular file, opened without blocking. */
static int open_path(const char *path, uid_t peer, int *fd, char *err, size_t errlen)
{
	struct stat st;

	if (peer != 0 && peer != geteuid()) {
		snprintf(err, errlen, "profile: only root and smd's user may name a file for smd to read; "
			 "send its \"content\" (smctl profile load does)");
		return -EPERM;
	}
	if (path[0] != '/') {
		snprintf(err, errlen, "profile: the path must be absolute (the daemon's working directory is not yours)");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(job.name)) {
		snprintf(err, errlen, "profile: path too long");
		return -EINVAL;
	}
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*fd < 0) {
		int e = errno;
		snprintf(err, errlen, "profile refused, the running one is kept: %s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (off_t)SMD_CTL_MAX_CONTENT) {
		int reg = S_ISREG(st.st_mode);
		snprintf(err, errlen, "profile refused, the running one is kept: %s: %s", path,
			 reg ? "larger than the limit of a profile" : "not a regular file");
		close(*fd);
		*fd = -1;
		return reg ? -E2BIG : -EINVAL;
	}
	return 0;
}

int smd_dmn_profile_request(struct smd_dmn *d, const struct smd_jv *req, uid_t peer, struct sm_json *j,
			    uint64_t *wait_for, char *err, size_t errlen)
{
	const struct smd_jv *c = smd_jv_get(req, "content");
	const char *path = smd_jv_str(req, "path", NULL);
	int fd = -1, rc;
	(void)j;

	if (!c && !path) {
		snprintf(err, errlen, "profile: \"content\" or \"path\" (a string) is required; \"path\":\"\" clears the profile");
		return -EINVAL;
	}
	if (!c && !path[0]) {   /* clear */
		if (job_reset()) {
			snprintf(err, errlen, "profile: busy: another profile is being checked");
			return -EBUSY;
		}
		smd_dmn_set_profile(d, "");
		*wait_for = smd_dmn_request_sweep(d);
		return SMD_CTL_WAIT;
	}
	if (c && c->type != SMD_J_STR) {
		snprintf(err, errlen, "profile: \"content\" must be a string (the profile\'s text)");
		return -EINVAL;
	}
	if (c && strlen(c->str) > SMD_CTL_MAX_CONTENT) {
		snprintf(err, errlen, "profile: content of %zu bytes is larger than the limit of %u bytes", strlen(c->str),
			 SMD_CTL_MAX_CONTENT);
		return -E2BIG;
	}
	if (job_reset()) {
		snprintf(err, errlen, "profile: busy: another profile is being checked");
		return -EBUSY;
	}
	if (!c && (rc = open_path(path, peer, &fd, err, errlen)))
		return rc;
	job.fd = fd;
	job.quiet = !c;
	job.len = c ? strlen(c->str) : 0;
	job.buf = c ? malloc(job.len + 1) : NULL;
	if (c && !job.buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (c)
		memcpy(job.buf, c->str, job.len + 1);
	snprintf(job.name, sizeof(job.name), "%s", c ? smd_jv_str(req, "name", "(profile)") : path);
	/* state_dir needs a restart to change: the current generation's is the one */
	pthread_mutex_lock(&d->mu);
	snprintf(job.path, sizeof(job.path), "%s/profile", d->cur->conf->state_dir);
	pthread_mutex_unlock(&d->mu);
	job.req = req;
	job.phase = JOB_RUNNING;
	if ((rc = pthread_create(&job.th, NULL, check_main, NULL))) {
		job.phase = JOB_IDLE;
		job.req = NULL;
		free(job.buf);
		job.buf = NULL;
		if (fd >= 0)
			close(fd);
		job.fd = -1;
		snprintf(err, errlen, "profile: cannot start the check: %s", strerror(rc));
		return -rc;
	}
	*wait_for = 0;   /* resume at once: it says "not yet" until the check is done */
	return SMD_CTL_WAIT;
}

int smd_dmn_profile_resume(struct smd_dmn *d, const struct smd_jv *req, char *err, size_t errlen)
{
	if (job.req != req)   /* a clear, or a job already answered: the sweep has been waited for */
		return 0;
	pthread_mutex_lock(&job.mu);
	int phase = job.phase;
	pthread_mutex_unlock(&job.mu);
	if (phase == JOB_RUNNING)
		return SMD_CTL_WAIT;
	if (phase == JOB_DONE) {
		pthread_join(job.th, NULL);
		if (job.rc) {
			snprintf(err, errlen, "%s", job.err);
			job.phase = JOB_IDLE;
			job.req = NULL;
			return job.rc < 0 ? job.rc : -EINVAL;
		}
		smd_dmn_set_profile(d, job.path);
		job.target = smd_dmn_request_sweep(d);
		job.phase = JOB_SWEEP;
	}
	pthread_mutex_lock(&d->mu);
	int swept = d->st.cycles >= job.target;
	pthread_mutex_unlock(&d->mu);
	if (!swept)
		return SMD_CTL_WAIT;
	job.phase = JOB_IDLE;
	job.req = NULL;
	return 0;
}
