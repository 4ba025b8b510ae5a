/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric from a dump
 *
 * sm_mock_load(): a topology dump read with sm_topo_load() into a
 * temporary model, then sm_mock_new(). Kept in its own unit so that
 * programs that build mocks from generated fabrics do not pull in the
 * dump readers.
 */
#include <errno.h>
#include <stdio.h>

#include "mock/mock.h"
#include "lib/err.h"
#include "model/topo.h"

int sm_mock_load(const char *path, const struct sm_mock_cfg *cfg, struct sm_mock **out,
		 char *err, size_t errlen)
{
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err te = { { 0 }, 0 };
	int rc;

	*out = NULL;
	if (!f) {
		sm_errf(err, errlen, "%s", "mock: out of memory");
		return -ENOMEM;
	}
	rc = sm_topo_load(f, path, SM_TOPO_AUTO, 0, &te);
	if (rc < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s", te.msg[0] ? te.msg : "mock: cannot load topology");
		sm_fabric_free(f);
		return rc;
	}
	rc = sm_mock_new(f, cfg, out, err, errlen);
	sm_fabric_free(f);
	return rc;
}

