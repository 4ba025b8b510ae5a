/* SPDX-License-Identifier: MIT */
/*
 * DOC: live traffic profile (`smctl profile load FILE`, `smctl profile clear`)
 *
 * Request: {"version":1,"cmd":"profile","path":"/abs/file"}; "path":"" clears.
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
#include "daemon/daemon.h"
#include "ctl/ctl.h"
#include "model/profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int smd_dmn_profile_request(struct smd_dmn *d, const struct smd_jv *req, struct sm_json *j,
			    uint64_t *wait_for, char *err, size_t errlen)
{
	const char *path = smd_jv_str(req, "path", NULL);
	(void)j;

	if (!path) {
		snprintf(err, errlen, "profile: \"path\" (a string) is required; \"\" clears the profile");
		return -EINVAL;
	}
	if (path[0] && path[0] != '/') {
		snprintf(err, errlen, "profile: the path must be absolute (the daemon's working directory is not yours)");
		return -EINVAL;
	}
	if (strlen(path) >= 4096) {
		snprintf(err, errlen, "profile: path too long");
		return -EINVAL;
	}
	if (path[0]) {
		/* syntax check against an empty fabric: nothing resolves, but every
		 * line is parsed and a bad one is reported with its line */
		struct sm_fabric *f = sm_fabric_new();
		struct sm_profile *p = NULL;
		char perr[512] = "";
		if (!f) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		int rc = sm_profile_load(f, path, NULL, &p, perr, sizeof(perr));
		sm_profile_free(p);
		sm_fabric_free(f);
		/* -ENOENT is "no flow resolved" here (the fabric is empty) unless the file is missing */
		if (rc && !(rc == -ENOENT && strstr(perr, "resolved"))) {
			snprintf(err, errlen, "profile refused, the running one is kept: %s",
				 perr[0] ? perr : strerror(-rc));
			return rc;
		}
	}
	smd_dmn_set_profile(d, path);
	*wait_for = smd_dmn_request_sweep(d);
	return SMD_CTL_WAIT;
}
