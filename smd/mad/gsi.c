/* SPDX-License-Identifier: MIT */
/*
 * DOC: opening a GSI endpoint (see gsi.h)
 *
 * The one place that looks at the optional gsi_open op of a transport:
 * ops structs built before it existed (tests' fake transports, plugins)
 * end earlier, so ops->size says whether the field is there at all.
 */
#include "mad/gsi.h"
#include "mad/transport.h"
#include "lib/err.h"

#include <errno.h>

int sm_transport_gsi_open(struct sm_transport *t, uint8_t mgmt_class, struct sm_gsi **out, char *err,
			  size_t errlen)
{
	const struct sm_transport_ops *ops = t ? t->ops : NULL;

	*out = NULL;
	if (!ops || ops->size < offsetof(struct sm_transport_ops, gsi_open) + sizeof(ops->gsi_open) ||
	    !ops->gsi_open) {
		sm_errf(err, errlen, "transport %s has no GSI endpoints (class 0x%02x)",
			ops && ops->name ? ops->name : "(none)", mgmt_class);
		return -EOPNOTSUPP;
	}
	return ops->gsi_open(t, mgmt_class, out, err, errlen);
}
