/* SPDX-License-Identifier: MIT */
/*
 * DOC: the mock as a backend of sm_transport_open_spec() (mad/open.h)
 *
 * "mock:DUMP": the dump loaded into a fresh mock (all LIDs 0, as before
 * any SM ran), the SM attached at the first CA port with its link up. The
 * mock is the port's owner, freed after its transport is closed. Here and
 * not in mad/: the mock includes mad/, never the reverse.
 */
#include "mock/open.h"
#include "mock/mock.h"
#include "lib/err.h"

#include <errno.h>
#include <string.h>

static int mock_open(const char *dump, struct sm_transport **t, void **owner, char *err, size_t errlen)
{
	struct sm_mock *m = NULL;
	int rc = sm_mock_load(dump, NULL, &m, err, errlen);

	if (rc)
		return rc;
	*owner = m;
	uint32_t port = sm_mock_default_port(m, 0);
	if (port == SM_NONE)
		return sm_errf_rc(-ENODEV, err, errlen, "%s: no CA port with its link up to attach the SM to", dump);
	rc = sm_mock_attach(m, port, t);
	if (rc)
		return sm_errf_rc(rc, err, errlen, "cannot attach to the mock fabric: %s", strerror(-rc));
	return 0;
}

static void mock_release(void *owner)
{
	sm_mock_free(owner);
}

const struct sm_transport_backend sm_mock_backend = {
	.name = "mock",
	.arg = "a dump file",
	.open = mock_open,
	.release = mock_release,
	.keep_open = true,
};

const struct sm_transport_backend *const sm_backends[] = { &sm_mock_backend, NULL };

int sm_mock_port_faults(const struct sm_plane_port *p, uint32_t loss_ppm, uint32_t corrupt_ppm,
			uint32_t delay_ppm, uint32_t delay_us, uint64_t seed)
{
	if (p->be != &sm_mock_backend || !p->owner)
		return 0;
	sm_mock_set_faults(p->owner, loss_ppm, corrupt_ppm, delay_ppm, delay_us);
	sm_mock_set_seed(p->owner, seed);
	return 1;
}
