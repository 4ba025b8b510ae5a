/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_lftfile - LFT files in dump_lfts / ibroute text (smd --lfts-in)
 *
 * Input: an LFT file. Checks: an error carries "fuzz.in:LINE: text"; a
 * success holds switches whose [first-top] ranges are ordered and whose
 * GUID index finds each of them; applied to the small fat tree of
 * tests/data/dryrun/ft8.ibnd it either fails with a message or yields
 * entries that are ports of the switch (or "none"); those LFTs written
 * back out read and apply again to the same tables.
 */
#include <errno.h>

#include "routing/engine.h"
#include "fuzz_common.h"
#include "model/lft_file.h"
#include "model/topo.h"

#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

static struct sm_fabric *fab;

static void setup(void)
{
	struct sm_topo_err e;

	fab = sm_fabric_new();
	if (!fab || sm_topo_load(fab, FUZZ_SRCDIR "/tests/data/dryrun/ft8.ibnd", SM_TOPO_AUTO, 0, &e))
		fuzz_fail("cannot load the test fabric", e.msg);
}

static void check_lfts(const struct sm_lfts *l)
{
	for (uint32_t s = 0; s < l->n_switches; s++) {
		const struct sm_node *nd = &fab->nodes[l->sw_node[s]];
		const uint8_t *row = sm_lfts_row(l, s);

		for (uint32_t lid = 0; lid <= l->top_lid; lid++)
			FUZZ_CHECK(row[lid] == SM_LFT_NONE || row[lid] <= nd->nports, "entry names a port the switch lacks");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sm_lftfile *lf = NULL, *lf2 = NULL;
	struct sm_lfts *l = NULL, *l2 = NULL;
	char err[512] = "", *copy, *text = NULL;
	size_t tlen = 0;
	uint32_t i, matched = 0, matched2 = 0;
	FILE *in, *mem;
	int rc;

	if (!fab)
		setup();
	in = fuzz_stream(data, size, &copy);
	FUZZ_CHECK(in != NULL, "fmemopen");
	rc = sm_lftfile_read(in, FUZZ_NAME, &lf, err, sizeof(err));
	fclose(in);
	free(copy);
	if (rc < 0) {
		FUZZ_CHECK(lf == NULL, "error but a file");
		FUZZ_CHECK(rc == -EINVAL, err);
		fuzz_check_errmsg(err, FUZZ_NAME, 1);
		return 0;
	}
	FUZZ_CHECK(lf != NULL, "success without a file");
	for (i = 0; i < lf->n_sw; i++) {
		const struct sm_lftfile_sw *sw = &lf->sw[i];

		FUZZ_CHECK(sw->first <= sw->top, "range first > top");
		FUZZ_CHECK(sw->top <= SM_UNICAST_LID_MAX, "range above the unicast LIDs");
		FUZZ_CHECK(sm_lftfile_find(lf, sw->guid) != NULL, "GUID index misses a switch");
		FUZZ_CHECK(sm_lftfile_find(lf, sw->guid)->guid == sw->guid, "GUID index finds another switch");
		FUZZ_CHECK(memchr(sw->desc, '\0', sizeof(sw->desc)) != NULL, "desc not terminated");
	}

	l = sm_lfts_new(fab, 0);
	FUZZ_CHECK(l != NULL, "ENOMEM");
	err[0] = '\0';
	rc = sm_lftfile_apply(lf, fab, l, &matched, err, sizeof(err));
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL, err);
		FUZZ_CHECK(err[0] != '\0', "apply error without a message");
		goto out;
	}
	FUZZ_CHECK(matched <= l->n_switches, "more switches matched than the plane has");
	check_lfts(l);

	mem = open_memstream(&text, &tlen);
	FUZZ_CHECK(mem != NULL, "open_memstream");
	FUZZ_CHECK(sm_lftfile_write(mem, fab, l, "fuzz") == 0, "writer failed");
	fclose(mem);
	in = fmemopen(text, tlen ? tlen : 1, "r");
	FUZZ_CHECK(in != NULL, "fmemopen");
	err[0] = '\0';
	rc = sm_lftfile_read(in, "roundtrip", &lf2, err, sizeof(err));
	fclose(in);
	if (rc < 0)
		fuzz_fail("our own LFT file does not read", err);
	l2 = sm_lfts_new(fab, 0);
	FUZZ_CHECK(l2 != NULL, "ENOMEM");
	rc = sm_lftfile_apply(lf2, fab, l2, &matched2, err, sizeof(err));
	if (rc < 0)
		fuzz_fail("our own LFT file does not apply", err);
	FUZZ_CHECK(l->top_lid == l2->top_lid && l->n_switches == l2->n_switches, "round trip changed the shape");
	for (uint32_t s = 0; s < l->n_switches; s++)
		FUZZ_CHECK(memcmp(sm_lfts_row(l, s), sm_lfts_row(l2, s), (size_t)l->top_lid + 1) == 0,
			   "round trip changed an LFT");
	/* the compact form holds the same tables */
	sm_lftfile_free(lf2);
	lf2 = NULL;
	free(text);
	text = NULL;
	mem = open_memstream(&text, &tlen);
	FUZZ_CHECK(mem != NULL, "open_memstream");
	FUZZ_CHECK(sm_lftfile_write_compact(mem, fab, l, "fuzz", NULL) == 0, "compact writer failed");
	fclose(mem);
	in = fmemopen(text, tlen ? tlen : 1, "r");
	FUZZ_CHECK(in != NULL, "fmemopen");
	rc = sm_lftfile_read(in, "compact", &lf2, err, sizeof(err));
	fclose(in);
	if (rc < 0)
		fuzz_fail("our own compact LFT file does not read", err);
	for (uint32_t s = 0; s < l->n_switches; s++) {
		const struct sm_lftfile_sw *sw = sm_lftfile_find(lf2, fab->nodes[l->sw_node[s]].guid);
		FUZZ_CHECK(sw != NULL && sw->top == l->top_lid, "compact form lost a switch");
		FUZZ_CHECK(memcmp(sw->ports, sm_lfts_row(l, s), (size_t)l->top_lid + 1) == 0, "compact form changed an LFT");
	}
out:
	sm_lfts_free(l);
	sm_lfts_free(l2);
	sm_lftfile_free(lf);
	sm_lftfile_free(lf2);
	free(text);
	return 0;
}
