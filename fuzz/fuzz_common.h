/* SPDX-License-Identifier: MIT */
#ifndef SMD_FUZZ_COMMON_H
#define SMD_FUZZ_COMMON_H
/*
 * DOC: shared checks of the libFuzzer harnesses
 *
 * Every harness feeds one untrusted input to one parser of smd and then
 * checks what the parser promises, not only that it did not crash:
 *  - an error carries one message "NAME:LINE: what" (or "NAME: what" for
 *    parsers that say so) naming the input it was given;
 *  - a success yields a structure that passes the checks below (a fabric
 *    whose links are symmetric and whose GUID/LID indexes agree with its
 *    arrays, ...).
 * A broken promise calls fuzz_fail(), which prints why and aborts, so
 * libFuzzer records the input as a crash. Shared set-up: fuzz_stream()
 * (the input as a FILE), fuzz_small_fabric() (the fabric inputs are
 * resolved against).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "model/gen.h"

#define FUZZ_NAME "fuzz.in"

static inline void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "FUZZ INVARIANT BROKEN: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

#define FUZZ_CHECK(cond, detail) \
	do { if (!(cond)) fuzz_fail(#cond, (detail)); } while (0)

/*
 * msg must read "NAME:LINE: text" (need_line) or at least "NAME: text" /
 * "NAME:LINE: text". The text must be non-empty.
 */
static inline void fuzz_check_errmsg(const char *msg, const char *name, int need_line)
{
	size_t nl = strlen(name);
	const char *p;

	FUZZ_CHECK(msg != NULL && msg[0] != '\0', "error without a message");
	FUZZ_CHECK(strncmp(msg, name, nl) == 0 && msg[nl] == ':', msg);
	p = msg + nl + 1;
	if (*p >= '0' && *p <= '9') {
		while (*p >= '0' && *p <= '9')
			p++;
		FUZZ_CHECK(*p == ':', msg);
		p++;
	} else {
		FUZZ_CHECK(!need_line, msg);
	}
	FUZZ_CHECK(*p == ' ' && p[1] != '\0', msg);
}

/* A FILE over a copy of the input (fmemopen refuses size 0 on some libcs). */
static inline FILE *fuzz_stream(const uint8_t *data, size_t size, char **copy)
{
	*copy = malloc(size ? size : 1);
	if (!*copy)
		return NULL;
	if (size)
		memcpy(*copy, data, size);
	if (!size)
		return fopen("/dev/null", "r");
	return fmemopen(*copy, size, "r");
}

/* The 8-host fat tree the unit tests use: radix 4, 2 levels, 2 planes (with LIDs). */
static inline struct sm_fabric *fuzz_small_fabric(void)
{
	struct sm_gen_params gp;
	char err[256];
	struct sm_fabric *f = sm_fabric_new();

	sm_gen_params_init(&gp);
	gp.radix = 4, gp.levels = 2, gp.planes = 2;
	if (!f || sm_gen_fat_tree(&gp, f, err, sizeof(err)))
		fuzz_fail("cannot build the test fabric", err);
	return f;
}

/* The model invariants of fabric.h. */
static inline void fuzz_check_fabric(const struct sm_fabric *f)
{
	uint32_t n, i;

	FUZZ_CHECK(f->n_planes >= 1 && f->n_planes <= SM_MAX_PLANES, NULL);
	for (n = 0; n < f->n_nodes; n++) {
		const struct sm_node *nd = &f->nodes[n];

		FUZZ_CHECK(nd->type >= SM_NODE_CA && nd->type <= SM_NODE_ROUTER, nd->desc);
		FUZZ_CHECK(nd->nports >= 1 && nd->nports <= SM_MAX_PORTS, nd->desc);
		FUZZ_CHECK((uint64_t)nd->port0 + nd->nports < f->n_ports, nd->desc);
		FUZZ_CHECK(nd->plane < f->n_planes, nd->desc);
		FUZZ_CHECK(memchr(nd->desc, '\0', sizeof(nd->desc)) != NULL, NULL);
		FUZZ_CHECK(nd->guid != 0, nd->desc);
		FUZZ_CHECK(sm_fabric_find_node(f, nd->guid) == n, nd->desc);
		for (i = 0; i <= nd->nports; i++) {
			const struct sm_port *p = &f->ports[nd->port0 + i];

			FUZZ_CHECK(p->node == n && p->num == i, nd->desc);
			if (p->peer_node != SM_NONE) {
				const struct sm_node *pn;
				const struct sm_port *q;

				FUZZ_CHECK(i >= 1, "port 0 linked");
				FUZZ_CHECK(p->peer_node < f->n_nodes, nd->desc);
				pn = &f->nodes[p->peer_node];
				FUZZ_CHECK(p->peer_port >= 1 && p->peer_port <= pn->nports, nd->desc);
				q = &f->ports[pn->port0 + p->peer_port];
				FUZZ_CHECK(q->peer_node == n && q->peer_port == i, "asymmetric link");
				FUZZ_CHECK(pn->plane == nd->plane, "link across planes");
			}
			if (p->lid) {
				uint32_t k, cnt = 1u << p->lmc;

				FUZZ_CHECK(p->lmc <= 7, nd->desc);
				FUZZ_CHECK(p->lid <= SM_UNICAST_LID_MAX, nd->desc);
				for (k = 0; k < cnt && p->lid + k <= SM_UNICAST_LID_MAX; k++)
					FUZZ_CHECK(sm_fabric_find_lid(f, nd->plane, (uint16_t)(p->lid + k)) ==
						   nd->port0 + i, "LID index disagrees");
			}
			if (p->guid && (nd->type != SM_NODE_SWITCH || i == 0))
				FUZZ_CHECK(sm_fabric_find_port(f, p->guid) == nd->port0 + i, "port GUID index disagrees");
		}
	}
}

#endif
