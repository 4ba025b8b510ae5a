/* SPDX-License-Identifier: MIT */
/*
 * DOC: the dry-run's LFT file (--lfts-out), written while planes route
 *
 * The dump_lfts text of 8 planes x 2,048 hosts is 124 MB: writing it costs
 * as much as loading and routing everything. So, when it is asked for
 * before routing (sm_dryrun_lfts_request) and planes route one by one
 * (no engine of the chain routes all planes at once, no profile),
 * sm_dryrun_route() routes the planes in order, as many at once as there
 * are CPUs, and hands each group to a writer thread as soon as it is routed
 * and validated: plane k is written while the next group routes. The file
 * is the same bytes as a write after routing (planes in order, one stream),
 * which is what sm_dryrun_write_lfts() does in the other cases.
 *
 * The compact form (version 2, a delta against the previous switch) of a
 * 40,960-host plane is ~5 MB, written in ~20 ms of CPU: the writer's cost
 * is reading the plane's 160 MB of tables once. Without a report nothing
 * needs the LFTs afterwards: the writer frees each plane's once written, so
 * the process holds a few planes' tables, not all of them.
 *
 * An existing file is rewritten in place and cut to its new length at the
 * end: truncating a 100 MB file first (fopen "w") frees its blocks only
 * for the write to allocate them again, which cost a third of the write.
 */
#include "dryrun/dryrun.h"
#include "lib/clock.h"
#include "model/lft_file.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct sm_dr_lftw {
	char path[PATH_MAX];
	bool compact;
	bool release;            /* free each plane's LFTs once written */
	FILE *out;
	struct stat stb;
	pthread_t th;
	bool started;            /* the writer thread runs */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned ready;          /* planes routed and handed over (under lock) */
	bool stop;               /* routing stopped early: write no more (under lock) */
	int rc;                  /* the writer's error */
	double busy_s;           /* the writer's time */
};

static int open_out(const char *path, FILE **out, struct stat *stb)
{
	int fd;

	*out = NULL;
	if (!strcmp(path, "-")) {
		*out = stdout;
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd >= 0 && (fstat(fd, stb) || !(*out = fdopen(fd, "w"))))
		close(fd);
	return *out ? 0 : -errno;
}

/* Flush, cut to length (regular files) and close; rc is the error so far. */
static int close_out(FILE *out, const struct stat *stb, int rc)
{
	if (out == stdout)
		return !rc && fflush(out) ? -EIO : rc;
	if (fflush(out) && !rc)
		rc = -EIO;
	if (S_ISREG(stb->st_mode)) {   /* also after an error: no stale tail of the old file */
		/* the descriptor's offset: the LFT writer writes to it directly (ftello may be stale) */
		off_t end = lseek(fileno(out), 0, SEEK_CUR);
		if ((end < 0 || ftruncate(fileno(out), end)) && !rc)
			rc = -errno;
	}
	if (fclose(out) && !rc)
		rc = -EIO;
	return rc;
}

/* Plane i; base: the compact form's delta base (NULL: the dump_lfts form). */
static int write_plane(const struct sm_dryrun *d, FILE *out, unsigned i, struct sm_lftc_base *base)
{
	const struct sm_dr_plane *p = &d->run.planes[i];
	char comment[SM_DR_NAME_MAX + 128];

	if (!p->routed) {
		if (base && !base->written) {   /* the format line first, whatever plane 0 did */
			base->written = true;
			if (fprintf(out, SM_LFTFILE_COMPACT_MAGIC " %d\n", SM_LFTFILE_COMPACT_VERSION) < 0)
				return -EIO;
		}
		return fprintf(out, "# plane %u (%s, %s): not routed, no LFTs\n", i, p->name, p->dump) < 0 ? -EIO : 0;
	}
	snprintf(comment, sizeof(comment), "plane %u (%s, %s): routed by %s", i, p->name, p->dump,
		 p->route.engine ? p->route.engine : "?");
	return base ? sm_lftfile_write_compact(out, d->f, d->lfts[i], comment, base) :
		      sm_lftfile_write(out, d->f, d->lfts[i], comment);
}

/* The compact form's delta base (NULL and 0 for the dump form), or -ENOMEM. */
static int new_base(bool compact, struct sm_lftc_base **base)
{
	*base = NULL;
	if (!compact)
		return 0;
	if (!(*base = malloc(sizeof(**base))))
		return -ENOMEM;
	sm_lftc_base_init(*base);
	return 0;
}

/*
 * After the first plane: allocate the blocks the other planes will need
 * (planes of one fabric are alike: n times the first plane's bytes) past
 * what the file already has. Writing a new 124 MB file into blocks
 * allocated in one call took 27 ms instead of 36 (ext4: no delayed
 * allocation per page). Best effort: a file system without fallocate, or
 * no space, leaves it to the writes; the file is cut to its length at the end.
 */
static void reserve_rest(FILE *out, const struct stat *stb, unsigned n_planes)
{
	off_t at, want;

	if (out == stdout || !S_ISREG(stb->st_mode) || n_planes < 2 || fflush(out))
		return;
	at = lseek(fileno(out), 0, SEEK_CUR);
	if (at <= 0 || at > INT64_MAX / n_planes)
		return;
	want = at * (off_t)n_planes;
	if (stb->st_size > at)
		at = stb->st_size;
	if (want > at)
		(void)fallocate(fileno(out), 0, at, want - at);
}

/* CPU seconds of the calling thread. */
static double thread_cpu(void)
{
	struct timespec ts;

	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ? 0 : (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *writer_main(void *arg)
{
	struct sm_dryrun *d = arg;
	struct sm_dr_lftw *w = d->lw;
	struct sm_lftc_base *base;

	w->rc = new_base(w->compact, &base);
	for (unsigned i = 0; i < d->run.n_planes && !w->rc; i++) {
		pthread_mutex_lock(&w->lock);
		while (w->ready <= i && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		bool go = w->ready > i;
		pthread_mutex_unlock(&w->lock);
		if (!go)
			break;
		double t0 = sm_mono_sec();
		w->rc = write_plane(d, w->out, i, base);
		if (i == 0 && !w->rc)
			reserve_rest(w->out, &w->stb, d->run.n_planes);
		if (w->release) {   /* the router is past plane i: it no longer touches d->lfts[i] */
			sm_lfts_free(d->lfts[i]);
			d->lfts[i] = NULL;
		}
		w->busy_s += sm_mono_sec() - t0;
	}
	free(base);
	d->lfts_cpu = thread_cpu();   /* joined before anyone reads it */
	return NULL;
}

int sm_dryrun_lfts_request(struct sm_dryrun *d, const char *path, bool compact, bool release)
{
	if (d->lw || strlen(path) >= sizeof(d->lw->path))
		return -EINVAL;
	if (!(d->lw = calloc(1, sizeof(*d->lw))))
		return -ENOMEM;
	snprintf(d->lw->path, sizeof(d->lw->path), "%s", path);
	d->lw->compact = compact;
	d->lw->release = release;
	return 0;
}

bool sm_dr_lftw_start(struct sm_dryrun *d)
{
	struct sm_dr_lftw *w = d->lw;

	if (!w || w->started || open_out(w->path, &w->out, &w->stb))
		return false;   /* an open error is reported by sm_dryrun_write_lfts() */
	if (pthread_mutex_init(&w->lock, NULL))
		goto fail;
	if (pthread_cond_init(&w->cond, NULL)) {
		pthread_mutex_destroy(&w->lock);
		goto fail;
	}
	if (pthread_create(&w->th, NULL, writer_main, d)) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		goto fail;
	}
	w->started = true;
	return true;
fail:
	/* no thread: written after routing, the file opened again then */
	(void)close_out(w->out, &w->stb, 0);
	w->out = NULL;
	return false;
}

void sm_dr_lftw_post(struct sm_dryrun *d, unsigned n_ready, bool stop)
{
	struct sm_dr_lftw *w = d->lw;

	pthread_mutex_lock(&w->lock);
	w->ready = n_ready;
	w->stop = stop;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Wait for the writer; its error, or the closing's. */
static int lftw_finish(struct sm_dryrun *d)
{
	struct sm_dr_lftw *w = d->lw;
	int rc;

	sm_dr_lftw_post(d, w->ready, true);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->started = false;
	double t0 = sm_mono_sec(), c0 = thread_cpu();
	rc = close_out(w->out, &w->stb, w->rc);
	w->out = NULL;
	w->busy_s += sm_mono_sec() - t0;
	d->lfts_cpu += thread_cpu() - c0;
	return rc;
}

void sm_dr_lftw_free(struct sm_dryrun *d)
{
	if (!d->lw)
		return;
	if (d->lw->started)
		(void)lftw_finish(d);
	free(d->lw);
	d->lw = NULL;
}

int sm_dryrun_write_lfts(struct sm_dryrun *d, const char *path, bool compact, char *err, size_t errlen)
{
	double t0 = sm_mono_sec(), c0 = thread_cpu();
	struct sm_lftc_base *base = NULL;
	struct stat stb;
	FILE *out = NULL;
	int rc;

	if (d->lw && d->lw->started && !strcmp(d->lw->path, path) && d->lw->compact == compact) {
		rc = lftw_finish(d);
		d->run.t.write = d->lw->busy_s;
	} else {
		if (!(rc = new_base(compact, &base)))
			rc = open_out(path, &out, &stb);
		for (unsigned i = 0; i < d->run.n_planes && !rc; i++)
			if (!(rc = write_plane(d, out, i, base)) && i == 0)
				reserve_rest(out, &stb, d->run.n_planes);
		if (out)
			rc = close_out(out, &stb, rc);
		free(base);
		d->run.t.write = sm_mono_sec() - t0;
		d->lfts_cpu = thread_cpu() - c0;
	}
	if (rc)
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	snprintf(d->run.lfts_out, sizeof(d->run.lfts_out), "%s", path);
	return rc;
}
