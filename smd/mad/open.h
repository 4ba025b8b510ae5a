/* SPDX-License-Identifier: MIT */
#ifndef SMD_MAD_OPEN_H
#define SMD_MAD_OPEN_H
/*
 * DOC: one transport from a plane spec
 *
 * sm_transport_open_spec() opens the transport a plane spec names:
 *   umad | umad:CA | umad:CA:PORT   libibumad (transport.h sm_transport_open)
 *   ibsim | ibsim:NODE              ibsim's own protocol (ibsim_client.h)
 *   NAME:ARG                        a backend from the caller's table
 * The table is how transports built above mad/ plug in: the mock
 * (mock/open.c, sm_mock_backend: "mock:DUMP") includes mad/, so mad/
 * cannot include it; the programs pass { &sm_mock_backend, NULL }.
 *
 * What is opened is a struct sm_plane_port: the transport, and what its backend
 * keeps behind it (the mock fabric), released by sm_plane_port_close() after the
 * transport is closed. 0 or -errno with a message in err; nothing logged.
 */
#include <stdbool.h>
#include <stddef.h>

#include "mad/transport.h"

struct sm_transport_backend {
	const char *name;   /* the spec's NAME before ':' */
	const char *arg;    /* what ARG is, for messages: "a dump file" */
	/* open ARG (the text after "NAME:"); *owner: released by release() after the transport closes */
	int (*open)(const char *arg, struct sm_transport **out, void **owner, char *err, size_t errlen);
	void (*release)(void *owner);   /* may be NULL */
	/* the transport is its fabric (a mock): reopening would forget the emulated state */
	bool keep_open;
};

struct sm_plane_port {
	struct sm_transport *t;                  /* NULL: not open */
	const struct sm_transport_backend *be;   /* NULL: umad or ibsim */
	void *owner;
};

int sm_transport_open_spec(const char *spec, const struct sm_transport_backend *const *backends,
			   struct sm_plane_port *out, char *err, size_t errlen);
/* Close the transport, release its owner, zero *p. Accepts a closed port. */
void sm_plane_port_close(struct sm_plane_port *p);
/* Whether a failed plane's port should stay open (see keep_open). */
static inline bool sm_plane_port_keep_open(const struct sm_plane_port *p)
{
	return p->be && p->be->keep_open;
}

#endif
