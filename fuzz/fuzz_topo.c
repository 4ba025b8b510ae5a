/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_topo - the ibnetdiscover and ibsim net dump readers
 *
 * Input: a dump (format sniffed, as smd -t does). Checks: an error names
 * "fuzz.in:LINE:" and leaves the fabric exactly as it was (empty); a
 * success yields a fabric passing fuzz_check_fabric(), which writes back
 * out in ibnetdiscover format, reloads to the same counts, and which a
 * second load of the same dump into it is refused (GUID clash) without
 * changing it.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "model/topo.h"

static void same_counts(const struct sm_fabric *a, const struct sm_fabric *b)
{
	struct sm_fabric_counts ca, cb;

	sm_fabric_count(a, -1, &ca);
	sm_fabric_count(b, -1, &cb);
	FUZZ_CHECK(ca.nodes == cb.nodes && ca.switches == cb.switches && ca.cas == cb.cas &&
		   ca.routers == cb.routers, "round trip changed the node counts");
	FUZZ_CHECK(ca.links == cb.links, "round trip changed the link count");
	FUZZ_CHECK(ca.lids == cb.lids, "round trip changed the LID count");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sm_topo_err err;
	struct sm_fabric *f = sm_fabric_new(), *g = NULL;
	char *copy = NULL, *out = NULL;
	size_t outlen = 0;
	FILE *in, *mem;
	int rc;

	FUZZ_CHECK(f != NULL, "ENOMEM");
	in = fuzz_stream(data, size, &copy);
	FUZZ_CHECK(in != NULL, "fmemopen");
	memset(&err, 0, sizeof(err));
	rc = sm_topo_load_stream(f, in, FUZZ_NAME, SM_TOPO_AUTO, 0, &err);
	fclose(in);
	if (rc < 0) {
		FUZZ_CHECK(rc != -ENOMEM, "ENOMEM on a small input");
		fuzz_check_errmsg(err.msg, FUZZ_NAME, 1);
		FUZZ_CHECK(f->n_nodes == 0 && f->n_ports == 0, "failed load changed the fabric");
		goto out;
	}
	fuzz_check_fabric(f);

	/* Written back out, the fabric reads in again the same. */
	mem = open_memstream(&out, &outlen);
	FUZZ_CHECK(mem != NULL, "open_memstream");
	FUZZ_CHECK(sm_topo_write_ibnd(f, -1, mem) == 0, "writer failed");
	fclose(mem);
	g = sm_fabric_new();
	FUZZ_CHECK(g != NULL, "ENOMEM");
	in = fmemopen(out, outlen ? outlen : 1, "r");
	FUZZ_CHECK(in != NULL, "fmemopen");
	memset(&err, 0, sizeof(err));
	rc = sm_topo_load_stream(g, in, "roundtrip", SM_TOPO_IBND, 0, &err);
	fclose(in);
	if (rc < 0 && f->n_nodes > 0)
		fuzz_fail("our own ibnetdiscover output does not load", err.msg);
	if (rc == 0) {
		fuzz_check_fabric(g);
		same_counts(f, g);
	}

	/* The same dump again into the same fabric: every GUID clashes. */
	if (f->n_nodes > 0) {
		uint32_t nn = f->n_nodes, np = f->n_ports;

		in = fmemopen(copy, size, "r");
		FUZZ_CHECK(in != NULL, "fmemopen");
		memset(&err, 0, sizeof(err));
		rc = sm_topo_load_stream(f, in, FUZZ_NAME, SM_TOPO_AUTO, 0, &err);
		fclose(in);
		FUZZ_CHECK(rc < 0, "a dump loaded twice into one fabric was accepted");
		fuzz_check_errmsg(err.msg, FUZZ_NAME, 1);
		FUZZ_CHECK(f->n_nodes == nn && f->n_ports == np, "failed load changed the fabric");
		fuzz_check_fabric(f);
	}
out:
	sm_fabric_free(f);
	sm_fabric_free(g);
	free(copy);
	free(out);
	return 0;
}
