/* SPDX-License-Identifier: MIT */
#ifndef SMD_DAEMON_RELOAD_H
#define SMD_DAEMON_RELOAD_H
/*
 * DOC: the configuration file read and parsed off the loop (SIGHUP, smctl reload)
 *
 * Issue 18: "no file is opened or parsed on the loop". A reload asks for a
 * load (smd_reload_start); one thread opens the file (O_NONBLOCK, regular
 * files only), reads at most SMD_CONF_MAX_BYTES, parses it (depth at most
 * SMD_CONF_MAX_DEPTH) and lays the command line over it, then wakes the
 * loop through a pipe; on the loop's thread `done` gets the new config (or
 * the error) and applies it. Meanwhile the loop answers status and
 * everything else.
 *
 * One load at a time: a reload asked while one runs is remembered and run
 * once that one ends (several such requests make one more load, which reads
 * the file as it is by then). smd_reload_busy() is 0 once every load asked
 * for has been handed to `done`: a request that waits for "not busy" gets
 * the outcome of a load that started after it.
 */
#include "config/options.h"
#include "config/smdconf.h"
#include "lib/loop.h"

struct smd_reload;

/* On the loop's thread: conf (owned by the callee from now on) or rc < 0 with the reason in err. */
typedef void smd_reload_done_fn(void *arg, struct smd_conf *conf, int rc, const char *err);

int smd_reload_new(struct sm_loop *loop, const struct smd_opts *o, smd_reload_done_fn *done, void *arg,
		   struct smd_reload **out);
/* Waits for a load in progress (its config is freed, `done` not called). Accepts NULL. */
void smd_reload_free(struct smd_reload *r);
/* Ask for a load of the config file (o->config) and the command line. 0, or -errno (no thread). */
int smd_reload_start(struct smd_reload *r);
/* A load is running or asked for and not yet handed to done. */
int smd_reload_busy(const struct smd_reload *r);

#endif
