/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_lidmgr - guid2lid files (lidmgr.c) and the plane-lids table (planelid.c)
 *
 * Input: a guid2lid file. Checks:
 *  - sm_lidmgr_load_stream: an error carries "fuzz.in:LINE: text" and
 *    leaves the table empty; a success holds aligned 2^k ranges of unicast
 *    LIDs, sorted by GUID, no GUID twice; written back out it loads to the
 *    same table; assigning LIDs to both planes of a small 2-plane fat tree
 *    from it gives every LID-bearing port a LID, no LID twice in a plane,
 *    and a fabric that passes fuzz_check_fabric();
 *  - the same bytes as STATE_DIR/plane-lids (sm_plane_lids_open): an error
 *    names the file and line; a success hands out LIDs for both planes with
 *    no LID twice within a plane.
 */
#include <errno.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "sm/lidmgr.h"
#include "sm/planelid.h"

static struct sm_fabric *fab;
static char dir[64], path[96];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void setup(void)
{
	fab = fuzz_small_fabric();
	snprintf(dir, sizeof(dir), "/tmp/smd-fuzz-lidmgr.XXXXXX");
	if (!mkdtemp(dir))
		fuzz_fail("mkdtemp", dir);
	snprintf(path, sizeof(path), "%s/plane-lids", dir);
	atexit(cleanup);
}

static void check_table(const struct sm_lidmgr *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		const struct sm_lid_entry *e = &m->e[i];
		unsigned span = (unsigned)e->last - e->first + 1u;

		FUZZ_CHECK(e->guid != 0, "GUID 0 in the table");
		FUZZ_CHECK(e->first >= 1 && e->first <= e->last && e->last <= SM_UNICAST_LID_MAX, "bad range");
		FUZZ_CHECK((span & (span - 1)) == 0 && span <= 128 && e->first % span == 0, "range not 2^k aligned");
		FUZZ_CHECK(i == 0 || m->e[i - 1].guid < e->guid, "table not sorted by GUID / GUID twice");
	}
}

/* No LID twice in one plane of `want` (indexed by port index, 0 = none). */
static void unique_lids(const uint16_t *want, unsigned plane, unsigned lmc)
{
	static uint8_t used[SM_LID_SPACE];

	memset(used, 0, sizeof(used));
	for (uint32_t n = 0; n < fab->n_nodes; n++) {
		const struct sm_node *nd = &fab->nodes[n];

		if (nd->plane != plane)
			continue;
		for (unsigned p = 0; p <= nd->nports; p++) {
			uint32_t pi = nd->port0 + p;
			unsigned cnt = nd->type == SM_NODE_SWITCH ? 1 : 1u << lmc;

			if (!want[pi])
				continue;
			FUZZ_CHECK(want[pi] <= SM_UNICAST_LID_MAX, "LID out of range");
			for (unsigned k = 0; k < cnt && want[pi] + k < SM_LID_SPACE; k++) {
				FUZZ_CHECK(!used[want[pi] + k], "LID given twice in one plane");
				used[want[pi] + k] = 1;
			}
		}
	}
}

static void lidmgr(const uint8_t *data, size_t size, unsigned lmc)
{
	struct sm_lidmgr m, m2;
	struct sm_lidmgr_stats st;
	char err[512] = "", *copy, *text = NULL;
	size_t tlen = 0;
	uint16_t *want;
	FILE *in, *mem;
	int rc;

	sm_lidmgr_init(&m);
	sm_lidmgr_init(&m2);
	in = fuzz_stream(data, size, &copy);
	FUZZ_CHECK(in != NULL, "fmemopen");
	rc = sm_lidmgr_load_stream(&m, in, FUZZ_NAME, err, sizeof(err));
	fclose(in);
	free(copy);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL, err);
		fuzz_check_errmsg(err, FUZZ_NAME, 1);
		FUZZ_CHECK(m.n == 0, "failed load left entries");
		sm_lidmgr_clear(&m);
		return;
	}
	check_table(&m);

	mem = open_memstream(&text, &tlen);
	FUZZ_CHECK(mem != NULL, "open_memstream");
	FUZZ_CHECK(sm_lidmgr_write_stream(&m, mem) == 0, "writer failed");
	fclose(mem);
	in = fmemopen(text, tlen ? tlen : 1, "r");
	FUZZ_CHECK(in != NULL, "fmemopen");
	rc = sm_lidmgr_load_stream(&m2, in, "roundtrip", err, sizeof(err));
	fclose(in);
	if (rc < 0)
		fuzz_fail("our own guid2lid file does not load", err);
	FUZZ_CHECK(m2.n == m.n, "round trip changed the table size");
	for (uint32_t i = 0; i < m.n; i++)
		FUZZ_CHECK(m.e[i].guid == m2.e[i].guid && m.e[i].first == m2.e[i].first &&
			   m.e[i].last == m2.e[i].last, "round trip changed an entry");
	sm_lidmgr_clear(&m2);
	free(text);

	want = calloc(fab->n_ports, sizeof(*want));
	FUZZ_CHECK(want != NULL, "ENOMEM");
	for (unsigned plane = 0; plane < 2; plane++) {
		rc = sm_lidmgr_assign(&m, fab, plane, lmc, NULL, NULL, &st, NULL, NULL);
		FUZZ_CHECK(rc == 0 || rc == -ENOSPC, "assign failed");
		if (rc)
			continue;
		for (uint32_t pi = 0; pi < fab->n_ports; pi++)
			want[pi] = fab->nodes[fab->ports[pi].node].plane == plane ? fab->ports[pi].lid : 0;
		unique_lids(want, plane, lmc);
		fuzz_check_fabric(fab);
	}
	free(want);
	sm_lidmgr_clear(&m);
}

static void planelids(const uint8_t *data, size_t size, unsigned lmc)
{
	struct sm_plane_lids *pl = NULL;
	char err[512] = "";
	uint16_t *want;
	FILE *out;
	int rc;

	out = fopen(path, "w");
	FUZZ_CHECK(out != NULL, path);
	FUZZ_CHECK(fwrite(data, 1, size, out) == size, "write");
	fclose(out);
	rc = sm_plane_lids_open(dir, lmc, NULL, NULL, &pl, err, sizeof(err));
	if (rc < 0) {
		FUZZ_CHECK(pl == NULL, "error but a table");
		FUZZ_CHECK(rc == -EINVAL, err);
		fuzz_check_errmsg(err, path, 1);
		return;
	}
	want = calloc(fab->n_ports, sizeof(*want));
	FUZZ_CHECK(want != NULL, "ENOMEM");
	for (unsigned plane = 0; plane < 2; plane++) {
		memset(want, 0, fab->n_ports * sizeof(*want));
		rc = sm_plane_lids_want(pl, fab, plane, NULL, want);
		FUZZ_CHECK(rc == 0 || rc == -ENOSPC, "want failed");
		if (!rc)
			unique_lids(want, plane, lmc);
	}
	free(want);
	sm_plane_lids_free(pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The LMC comes from the input's length so the seeds stay plain files. */
	unsigned lmc = (unsigned)(size % 3);

	if (!fab)
		setup();
	lidmgr(data, size, lmc);
	planelids(data, size, lmc);
	return 0;
}
