/* SPDX-License-Identifier: MIT */
/*
 * DOC: one transport from a plane spec (see open.h)
 */
#include "mad/open.h"
#include "mad/ibsim_client.h"
#include "lib/err.h"

#include <errno.h>
#include <string.h>

int sm_transport_open_spec(const char *spec, const struct sm_transport_backend *const *backends,
			   struct sm_plane_port *out, char *err, size_t errlen)
{
	const char *colon = spec ? strchr(spec, ':') : NULL;
	size_t nlen = colon ? (size_t)(colon - spec) : (spec ? strlen(spec) : 0);

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; colon && backends && backends[i]; i++) {
		const struct sm_transport_backend *be = backends[i];
		if (strlen(be->name) != nlen || strncmp(spec, be->name, nlen))
			continue;
		if (!colon[1]) {
			sm_errf(err, errlen, "'%s': missing %s after the colon", spec, be->arg);
			return -EINVAL;
		}
		int rc = be->open(colon + 1, &out->t, &out->owner, err, errlen);
		if (rc) {
			if (be->release && out->owner)
				be->release(out->owner);
			memset(out, 0, sizeof(*out));
			return rc;
		}
		out->be = be;
		return 0;
	}
	if (spec && nlen == 5 && !strncmp(spec, "ibsim", 5))
		return sm_ibsim_transport_open(NULL, colon && colon[1] ? colon + 1 : NULL, &out->t, err, errlen);
	return sm_transport_open(spec, &out->t, err, errlen);   /* umad[:CA[:PORT]], or a clear error */
}

void sm_plane_port_close(struct sm_plane_port *p)
{
	sm_transport_close(p->t);
	if (p->be && p->be->release && p->owner)
		p->be->release(p->owner);
	memset(p, 0, sizeof(*p));
}
