/* SPDX-License-Identifier: MIT */
/*
 * DOC: live traffic profile (`smctl profile load FILE`, `smctl profile clear`)
 *
 * Request: {"version":1,"cmd":"profile","path":"/abs/file"}; "path":"" clears.
 * Or {"version":1,"cmd":"profile","name":"/where/it/was","content":"..."}
 * (what smctl sends): the daemon need not see the client's file (the unit's
 * PrivateTmp and ProtectHome hide /tmp and /home); the content, at most
 * SMD_CTL_MAX_CONTENT bytes, is checked as a file would be (messages name
 * "name") and kept as STATE_DIR/profile (written atomically), which the
 * cycles then read as they read a path.
 * The file is checked before anything changes: it must be an absolute path
 * and parse (a syntax error is refused with its FILE:LINE and the running
 * profile stays). Endpoints are resolved later, against each plane's swept
 * fabric in every cycle, so a profile stays valid across sweeps; a plane
 * none of whose endpoints is in the profile routes without it. Accepting a
 * profile runs a sweep and the reply is that sweep's result: the engines
 * that use profiles (hotpath, planes) pin the hot flows, and since only LFT
 * blocks that differ are written, a profile change rewrites only the blocks
 * of the entries that moved.
 */
#include "daemon/daemon_priv.h"
#include "ctl/ctl.h"
#include "lib/statefile.h"
#include "model/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Syntax check against an empty fabric: nothing resolves, but every line is parsed and a bad one reported. */
static int profile_check(const char *path, const char *name, const char *buf, size_t len, char *err, size_t errlen)
{
	struct sm_fabric *f = sm_fabric_new();
	struct sm_profile *p = NULL;
	char perr[512] = "";
	int rc;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = path ? sm_profile_load(f, path, NULL, &p, perr, sizeof(perr)) :
		    sm_profile_parse(f, name, buf, len, NULL, &p, perr, sizeof(perr));
	sm_profile_free(p);
	sm_fabric_free(f);
	/* -ENOENT is "no flow resolved" here (the fabric is empty) unless the file is missing */
	if (rc && !(rc == -ENOENT && strstr(perr, "resolved"))) {
		snprintf(err, errlen, "profile refused, the running one is kept: %s", perr[0] ? perr : strerror(-rc));
		return rc;
	}
	return 0;
}

/* "content": check it, keep it as STATE_DIR/profile; that path into path. */
static int profile_content(struct smd_dmn *d, const struct smd_jv *req, char *path, size_t pathlen, char *err,
			   size_t errlen)
{
	const struct smd_jv *c = smd_jv_get(req, "content");
	const char *name = smd_jv_str(req, "name", "(profile)");
	char serr[512] = "";
	int rc;

	if (c->type != SMD_J_STR) {
		snprintf(err, errlen, "profile: \"content\" must be a string (the profile\'s text)");
		return -EINVAL;
	}
	if (strlen(c->str) > SMD_CTL_MAX_CONTENT) {
		snprintf(err, errlen, "profile: content of %zu bytes is larger than the limit of %u bytes", strlen(c->str),
			 SMD_CTL_MAX_CONTENT);
		return -E2BIG;
	}
	if ((rc = profile_check(NULL, name, c->str, strlen(c->str), err, errlen)))
		return rc;
	/* state_dir needs a restart to change: the current generation's is the one */
	pthread_mutex_lock(&d->mu);
	snprintf(path, pathlen, "%s/profile", d->cur->conf->state_dir);
	pthread_mutex_unlock(&d->mu);
	rc = sm_state_write(path, c->str, strlen(c->str), 0640, serr, sizeof(serr));
	if (rc)
		snprintf(err, errlen, "profile refused, the running one is kept: cannot keep it: %s", serr);
	return rc;
}

int smd_dmn_profile_request(struct smd_dmn *d, const struct smd_jv *req, struct sm_json *j,
			    uint64_t *wait_for, char *err, size_t errlen)
{
	const char *path = smd_jv_str(req, "path", NULL);
	char kept[4096];
	int rc;
	(void)j;

	if (smd_jv_get(req, "content")) {
		if ((rc = profile_content(d, req, kept, sizeof(kept), err, errlen)))
			return rc;
		path = kept;
	} else if (!path) {
		snprintf(err, errlen, "profile: \"content\" or \"path\" (a string) is required; \"path\":\"\" clears the profile");
		return -EINVAL;
	} else if (path[0] && path[0] != '/') {
		snprintf(err, errlen, "profile: the path must be absolute (the daemon's working directory is not yours)");
		return -EINVAL;
	} else if (strlen(path) >= 4096) {
		snprintf(err, errlen, "profile: path too long");
		return -EINVAL;
	} else if (path[0] && (rc = profile_check(path, NULL, NULL, 0, err, errlen))) {
		return rc;
	}
	smd_dmn_set_profile(d, path);
	*wait_for = smd_dmn_request_sweep(d);
	return SMD_CTL_WAIT;
}
