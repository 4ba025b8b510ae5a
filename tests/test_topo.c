/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the topology dump readers and writers (smd/topo_*.c).
 *
 * Fixtures live in $top_srcdir/tests/data: net4*.ibnd and ft-small.ibnd
 * were printed by real ibnetdiscover against ibsim (after opensm --once),
 * handmade.ibnd imitates real hardware output (rates, LMC, a router).
 *
 * Also a helper for shell tests: `test_topo --canon [--no-lids] [--linked]
 * [--from auto|ibnd|ibsim] FILE` prints every field the model holds, one
 * node per line sorted by GUID, so two loads can be compared with cmp.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/topo.h"

/* ---- canonical dump ---- */

#define CANON_NO_LIDS 1
#define CANON_LINKED 2

static const struct sm_fabric *sort_fab; /* qsort has no context argument */
static int cmp_guid_q(const void *a, const void *b)
{
	uint64_t x = sort_fab->nodes[*(const uint32_t *)a].guid;
	uint64_t y = sort_fab->nodes[*(const uint32_t *)b].guid;
	return x < y ? -1 : x > y;
}

static void canon(const struct sm_fabric *f, unsigned opts, FILE *o)
{
	uint32_t *idx = malloc(sizeof(*idx) * (f->n_nodes ? f->n_nodes : 1));
	assert_non_null(idx);
	for (uint32_t i = 0; i < f->n_nodes; i++)
		idx[i] = i;
	sort_fab = f;
	qsort(idx, f->n_nodes, sizeof(*idx), cmp_guid_q);
	for (uint32_t k = 0; k < f->n_nodes; k++) {
		const struct sm_node *nd = &f->nodes[idx[k]];
		fprintf(o, "node %016" PRIx64 " %s plane=%u nports=%u sysimg=%" PRIx64
			" vendor=%x device=%x rev=%x lftcap=%u flags=%x desc=\"%s\"\n",
			nd->guid, sm_node_type_str(nd->type), nd->plane, nd->nports, nd->sysimg_guid,
			nd->vendor_id, nd->device_id, nd->revision, nd->lft_cap, nd->flags, nd->desc);
		for (unsigned p = 0; p <= nd->nports; p++) {
			const struct sm_port *pt = sm_port(f, idx[k], p);
			if (p == 0 && nd->type != SM_NODE_SWITCH)
				continue;
			if ((opts & CANON_LINKED) && p > 0 && pt->peer_node == SM_NONE)
				continue;
			fprintf(o, "  port %u guid=%" PRIx64, p, pt->guid);
			if (!(opts & CANON_NO_LIDS))
				fprintf(o, " lid=%u lmc=%u", pt->lid, pt->lmc);
			fprintf(o, " state=%u phys=%u rate=%s%s flags=%x", pt->state, pt->phys_state,
				sm_topo_width_str(pt->width), sm_topo_speed_str(pt->speed, pt->flags),
				pt->flags);
			if (pt->peer_node != SM_NONE)
				fprintf(o, " peer=%016" PRIx64 "[%u]", f->nodes[pt->peer_node].guid,
					pt->peer_port);
			fputc('\n', o);
		}
	}
	for (unsigned i = 0; i < f->n_planes && !(opts & CANON_NO_LIDS); i++)
		fprintf(o, "plane %u max_lid=%u\n", i, f->planes[i].max_lid);
	free(idx);
}

static char *canon_str(const struct sm_fabric *f, unsigned opts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	assert_non_null(o);
	canon(f, opts, o);
	fclose(o);
	return buf;
}

/* ---- helpers ---- */

static char *data_path(const char *name)
{
	const char *top = getenv("top_srcdir");
	static char path[4096];
	snprintf(path, sizeof(path), "%s/tests/data/%s", top ? top : "..", name);
	return path;
}

static char *slurp(const char *name, size_t *len)
{
	FILE *in = fopen(data_path(name), "rb");
	assert_non_null(in);
	char *buf = NULL;
	size_t cap = 0, n = 0, got;
	do {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, cap - n - 1, in);
		n += got;
	} while (got);
	fclose(in);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static int load_buf(struct sm_fabric *f, const char *buf, size_t len, const char *name,
		    enum sm_topo_format fmt, unsigned plane, struct sm_topo_err *err)
{
	FILE *in = len ? fmemopen((void *)buf, len, "r") : fopen("/dev/null", "r");
	assert_non_null(in);
	int rc = sm_topo_load_stream(f, in, name, fmt, plane, err);
	fclose(in);
	return rc;
}

/* A fixture with the first occurrence of `from` replaced by `to`. */
static char *edit(const char *fixture, const char *from, const char *to, size_t *len)
{
	char *src = slurp(fixture, NULL);
	char *at = strstr(src, from);
	assert_non_null(at);
	size_t fl = strlen(from), tl = strlen(to), sl = strlen(src);
	char *out = malloc(sl - fl + tl + 1);
	assert_non_null(out);
	memcpy(out, src, (size_t)(at - src));
	memcpy(out + (at - src), to, tl);
	memcpy(out + (at - src) + tl, at + fl, sl - (size_t)(at - src) - fl + 1);
	free(src);
	*len = strlen(out);
	return out;
}

/*
 * Load `buf` into a fabric already holding net4.ibnd in plane 0 (into plane 1,
 * so only the bad input decides); check the error code, that the message is
 * "bad.ibnd:LINE: ..." containing `want`, and that the fabric is unchanged.
 */
static void expect_bad(const char *buf, size_t len, enum sm_topo_format fmt, int want_rc,
		       unsigned want_line, const char *want)
{
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err err;
	assert_int_equal(sm_topo_load(f, data_path("net4.ibnd"), SM_TOPO_AUTO, 0, &err), 0);
	char *before = canon_str(f, 0);
	uint32_t nn = f->n_nodes, np = f->n_ports;
	uint8_t npl = f->n_planes;

	int rc = load_buf(f, buf, len, "bad.ibnd", fmt, 1, &err);
	if (rc != want_rc || !strstr(err.msg, want))
		print_message("got rc %d msg '%s'\n", rc, err.msg);
	assert_int_equal(rc, want_rc);
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "bad.ibnd:%u: ", want_line);
	if (strncmp(err.msg, prefix, strlen(prefix)))
		print_message("msg '%s' lacks prefix '%s'\n", err.msg, prefix);
	assert_int_equal(strncmp(err.msg, prefix, strlen(prefix)), 0);
	assert_int_equal(err.line, want_line);
	assert_non_null(strstr(err.msg, want));

	char *after = canon_str(f, 0);
	assert_string_equal(before, after);
	assert_int_equal(f->n_nodes, nn);
	assert_int_equal(f->n_ports, np);
	assert_int_equal(f->n_planes, npl);
	assert_null(f->planes[1].lid_map);
	free(before);
	free(after);
	sm_fabric_free(f);
}

static void expect_bad_edit(const char *fixture, const char *from, const char *to, int rc,
			    unsigned line, const char *want)
{
	size_t len;
	char *buf = edit(fixture, from, to, &len);
	expect_bad(buf, len, SM_TOPO_AUTO, rc, line, want);
	free(buf);
}

/* ---- good input ---- */

static void test_load_real_dump(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err err;
	struct sm_fabric_counts c;

	assert_int_equal(sm_topo_load(f, data_path("net4.ibnd"), SM_TOPO_AUTO, 0, &err), 0);
	sm_fabric_count(f, 0, &c);
	assert_int_equal(c.nodes, 6);
	assert_int_equal(c.switches, 2);
	assert_int_equal(c.cas, 4);
	assert_int_equal(c.links, 6);
	assert_int_equal(c.sw_links, 2);
	assert_int_equal(c.lids, 6);

	uint32_t sw = sm_fabric_find_node(f, 0x200001);
	assert_int_not_equal(sw, SM_NONE);
	assert_int_equal(f->nodes[sw].type, SM_NODE_SWITCH);
	assert_int_equal(f->nodes[sw].nports, 8);
	assert_string_equal(f->nodes[sw].desc, "Switch2");
	assert_int_equal(f->nodes[sw].sysimg_guid, 0x200001);
	assert_int_equal(f->nodes[sw].flags & SM_NODE_F_ENHANCED_SP0, 0);
	assert_int_equal(sm_port(f, sw, 0)->lid, 3);
	assert_int_equal(sm_fabric_find_lid(f, 0, 3), sm_port_index(f, sw, 0));

	uint32_t ca = sm_fabric_find_node(f, 0x100009);
	assert_int_not_equal(ca, SM_NONE);
	const struct sm_port *p = sm_port(f, ca, 1);
	assert_int_equal(p->guid, 0x10000a);
	assert_int_equal(p->lid, 6);
	assert_int_equal(p->peer_node, sw);
	assert_int_equal(p->peer_port, 2);
	assert_int_equal(p->width, 2);
	assert_int_equal(p->speed, 1);
	assert_int_equal(p->state, SM_PORT_ACTIVE);
	assert_int_equal(sm_fabric_find_port(f, 0x10000a), sm_port_index(f, ca, 1));
	assert_int_equal(sm_port(f, ca, 2)->peer_node, SM_NONE);
	assert_int_equal(sm_port(f, ca, 2)->state, SM_PORT_DOWN);
	sm_fabric_free(f);
}

static void test_load_handmade(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err err;

	assert_int_equal(sm_topo_load(f, data_path("handmade.ibnd"), SM_TOPO_IBND, 2, &err), 0);
	assert_int_equal(f->n_planes, 3);
	uint32_t leaf = sm_fabric_find_node(f, 0xb8599f0300fc0a00ULL);
	uint32_t spine = sm_fabric_find_node(f, 0xb8599f0300fc0b00ULL);
	uint32_t gpu1 = sm_fabric_find_node(f, 0x2c90300a1b2c0ULL);
	uint32_t gpu2 = sm_fabric_find_node(f, 0x2c90300a1b2d0ULL);
	uint32_t rt = sm_fabric_find_node(f, 0x2c90300a1b2e0ULL);
	assert_true(leaf != SM_NONE && spine != SM_NONE && gpu1 != SM_NONE && gpu2 != SM_NONE && rt != SM_NONE);
	assert_int_equal(f->nodes[leaf].plane, 2);
	assert_int_equal(f->nodes[leaf].vendor_id, 0x2c9);
	assert_int_equal(f->nodes[leaf].device_id, 0xcf08);
	assert_true(f->nodes[leaf].flags & SM_NODE_F_ENHANCED_SP0);
	assert_string_equal(f->nodes[leaf].desc, "MF0;sw-leaf-01:MQM8700/U1");
	/* switchguid=G(P): port 0 GUID differs from the node GUID */
	assert_int_equal(sm_port(f, spine, 0)->guid, 0xb8599f0300fc0b01ULL);
	assert_int_equal(sm_fabric_find_port(f, 0xb8599f0300fc0b01ULL), sm_port_index(f, spine, 0));
	assert_int_equal(sm_port(f, spine, 0)->lmc, 1);
	assert_int_equal(sm_fabric_find_lid(f, 2, 3), sm_port_index(f, spine, 0));
	/* LMC 2: four LIDs */
	for (uint16_t l = 8; l < 12; l++)
		assert_int_equal(sm_fabric_find_lid(f, 2, l), sm_port_index(f, gpu1, 1));
	assert_int_equal(f->nodes[gpu1].sysimg_guid, f->nodes[gpu2].sysimg_guid);
	assert_string_equal(f->nodes[gpu2].desc, "gpu02 \"quoted\" mlx5_1");
	assert_int_equal(sm_port(f, gpu2, 1)->guid, 0);
	assert_int_equal(sm_port(f, gpu2, 2)->guid, 0x2c90300a1b2d2ULL);
	/* rates */
	const struct sm_port *p = sm_port(f, leaf, 1);
	assert_int_equal(p->width, 2);
	assert_int_equal(p->speed, 4);
	assert_int_equal(p->flags, SM_PORT_F_EXT_SPEED);
	assert_string_equal(sm_topo_speed_str(p->speed, p->flags), "HDR");
	p = sm_port(f, leaf, 2);
	assert_string_equal(sm_topo_speed_str(p->speed, p->flags), "EDR");
	p = sm_port(f, leaf, 3);
	assert_string_equal(sm_topo_speed_str(p->speed, p->flags), "FDR10");
	p = sm_port(f, leaf, 39);
	assert_int_equal(p->width, 8);
	assert_string_equal(sm_topo_speed_str(p->speed, p->flags), "QDR");
	p = sm_port(f, leaf, 40);
	assert_int_equal(p->width, 0);
	assert_int_equal(p->speed, 0);
	assert_int_equal(f->nodes[rt].type, SM_NODE_ROUTER);
	assert_int_equal(sm_port(f, rt, 1)->lid, 20);
	sm_fabric_free(f);
}

/* Read -> write -> read must give the same model; writing again, the same text. */
static void roundtrip(const char *fixture, enum sm_topo_format wfmt, unsigned opts)
{
	struct sm_fabric *a = sm_fabric_new(), *b = sm_fabric_new();
	struct sm_topo_err err;
	char *t1 = NULL, *t2 = NULL;
	size_t l1 = 0, l2 = 0;

	assert_int_equal(sm_topo_load(a, data_path(fixture), SM_TOPO_AUTO, 0, &err), 0);
	FILE *o = open_memstream(&t1, &l1);
	assert_int_equal(wfmt == SM_TOPO_IBSIM ? sm_topo_write_ibsim(a, 0, o) : sm_topo_write_ibnd(a, 0, o), 0);
	fclose(o);
	int rc = load_buf(b, t1, l1, "written", wfmt, 0, &err);
	if (rc)
		print_message("%s\n", err.msg);
	assert_int_equal(rc, 0);
	char *ca = canon_str(a, opts), *cb = canon_str(b, opts);
	assert_string_equal(ca, cb);
	o = open_memstream(&t2, &l2);
	assert_int_equal(wfmt == SM_TOPO_IBSIM ? sm_topo_write_ibsim(b, 0, o) : sm_topo_write_ibnd(b, 0, o), 0);
	fclose(o);
	assert_string_equal(t1, t2);
	free(ca);
	free(cb);
	free(t1);
	free(t2);
	sm_fabric_free(a);
	sm_fabric_free(b);
}

static void test_roundtrip_ibnd(void **state)
{
	(void)state;
	roundtrip("net4.ibnd", SM_TOPO_IBND, 0);
	roundtrip("net4-nolids.ibnd", SM_TOPO_IBND, 0);
	roundtrip("ft-small.ibnd", SM_TOPO_IBND, 0);
	roundtrip("handmade.ibnd", SM_TOPO_IBND, 0);
}

static void test_roundtrip_ibsim(void **state)
{
	(void)state;
	/* the ibsim writer drops LIDs; ibsim derives port GUIDs, which these follow */
	roundtrip("net4.ibnd", SM_TOPO_IBSIM, CANON_NO_LIDS | CANON_LINKED);
	roundtrip("ft-small.ibnd", SM_TOPO_IBSIM, CANON_NO_LIDS | CANON_LINKED);
}

/* -g and -f output carry the same topology as the plain dump. */
static void test_grouped_and_full(void **state)
{
	(void)state;
	const char *v[] = { "net4-grouped.ibnd", "net4-full.ibnd" };
	struct sm_topo_err err;
	struct sm_fabric *a = sm_fabric_new();
	assert_int_equal(sm_topo_load(a, data_path("net4.ibnd"), SM_TOPO_AUTO, 0, &err), 0);
	char *ca = canon_str(a, 0);
	for (int i = 0; i < 2; i++) {
		struct sm_fabric *b = sm_fabric_new();
		assert_int_equal(sm_topo_load(b, data_path(v[i]), SM_TOPO_AUTO, 0, &err), 0);
		char *cb = canon_str(b, 0);
		assert_string_equal(ca, cb);
		free(cb);
		sm_fabric_free(b);
	}
	free(ca);
	sm_fabric_free(a);
}

/* ibnetdiscover -g on real chassis hardware: chassis lines, [ext N], slot/scp notes */
static void test_grouped_chassis(void **state)
{
	(void)state;
	const char *g =
		"#\n# Topology file: generated on Mon Jan  1 00:00:00 2024\n#\n"
		"# Initiated from node 0002c90300000001 port 0002c90300000002\n"
		"\nChassis 1 (guid 0x5ad00000000001)\n"
		"\n# Spine Nodes\n"
		"vendid=0x5ad\ndevid=0xb924\n"
		"sysimgguid=0x5ad00000000001\t\t# Chassis 1 (ISR9288)\n"
		"switchguid=0x5ad00000000101(5ad00000000101)\t# ISR9288 Spine 1 Chip 1\n"
		"Switch\t24 \"S-0005ad00000000101\"\t\t# \"ISR9288 Voltaire sFB-12\" base port 0 lid 2 lmc 0\n"
		"[1][ext 1]\t\"S-0005ad00000000201\"[13][ext 2]\t\t# \"ISR9288/ISR9096 Voltaire sLB-24\" lid 3 4xDDR\n"
		"\n# Line Nodes\n"
		"vendid=0x5ad\ndevid=0xb924\n"
		"sysimgguid=0x5ad00000000001\t\t# Chassis 1 (ISR9288)\n"
		"switchguid=0x5ad00000000201(5ad00000000201)\t# ISR9288 Line 1 Chip 1\n"
		"Switch\t24 \"S-0005ad00000000201\"\t\t# \"ISR9288/ISR9096 Voltaire sLB-24\" base port 0 lid 3 lmc 0\n"
		"[13][ext 2]\t\"S-0005ad00000000101\"[1][ext 1]\t\t# \"ISR9288 Voltaire sFB-12\" lid 2 4xDDR\n"
		"[1]\t\"H-0002c90300000001\"[1](2c90300000002) \t\t# \"node1 HCA-1\" lid 4 4xDDR slot 1\n"
		"\nNon-Chassis Nodes\n"
		"\nvendid=0x2c9\ndevid=0x6274\nsysimgguid=0x2c90300000003\ncaguid=0x2c90300000001\n"
		"Ca\t2 \"H-0002c90300000001\"\t\t# \"node1 HCA-1\" (scp)\n"
		"[1](2c90300000002) \t\"S-0005ad00000000201\"[1]\t\t# lid 4 lmc 0 \"ISR9288/ISR9096 Voltaire sLB-24\" lid 3 4xDDR\n"
		"[2](2c90300000004) \t\"H-0002c90300000010\"[1] (2c90300000011) \t\t# lid 5 lmc 0 \"peer ca\" lid 6 1xSDR\n"
		"\nvendid=0x2c9\ndevid=0x6274\ncaguid=0x2c90300000010\n"
		"Ca\t1 \"H-0002c90300000010\"\t\t# \"peer ca\"\n"
		"[1](2c90300000011) \t\"H-0002c90300000001\"[2] (2c90300000004) \t\t# lid 6 lmc 0 \"node1 HCA-1\" lid 5 1xSDR\n";
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err err;
	int rc = load_buf(f, g, strlen(g), "g.ibnd", SM_TOPO_AUTO, 0, &err);
	if (rc)
		print_message("%s\n", err.msg);
	assert_int_equal(rc, 0);
	struct sm_fabric_counts c;
	sm_fabric_count(f, 0, &c);
	assert_int_equal(c.nodes, 4);
	assert_int_equal(c.links, 3);
	assert_int_equal(c.sw_links, 1);
	uint32_t ca = sm_fabric_find_node(f, 0x2c90300000001ULL), ca2 = sm_fabric_find_node(f, 0x2c90300000010ULL);
	assert_string_equal(f->nodes[ca].desc, "node1 HCA-1");
	assert_int_equal(f->nodes[ca].sysimg_guid, 0x2c90300000003ULL);
	assert_int_equal(f->nodes[ca2].sysimg_guid, 0);
	assert_int_equal(sm_port(f, ca, 2)->peer_node, ca2);
	assert_int_equal(sm_port(f, ca2, 1)->width, 1);
	assert_int_equal(sm_port(f, ca, 1)->speed, 2);
	uint32_t sp = sm_fabric_find_node(f, 0x5ad00000000101ULL);
	assert_int_equal(f->nodes[sp].vendor_id, 0x5ad);
	assert_int_equal(sm_port(f, sp, 1)->peer_port, 13);
	/* the ids are not "S-" + 16 digits here (one digit too many): they are only ids */
	char *t = NULL;
	size_t l = 0;
	FILE *o = open_memstream(&t, &l);
	assert_int_equal(sm_topo_write_ibnd(f, 0, o), 0);
	fclose(o);
	struct sm_fabric *b = sm_fabric_new();
	assert_int_equal(load_buf(b, t, l, "w", SM_TOPO_AUTO, 0, &err), 0);
	char *ca_ = canon_str(f, 0), *cb = canon_str(b, 0);
	assert_string_equal(ca_, cb);
	free(ca_);
	free(cb);
	free(t);
	sm_fabric_free(b);
	sm_fabric_free(f);
}

/* The ibsim reader gives the fabric ibsim simulates: compare with what
 * ibnetdiscover saw in ibsim running that very net file. */
static void test_ibsim_net_matches_simulation(void **state)
{
	(void)state;
	struct sm_fabric *a = sm_fabric_new(), *b = sm_fabric_new();
	struct sm_topo_err err;

	assert_int_equal(sm_topo_load(a, data_path("ft-small.net"), SM_TOPO_AUTO, 0, &err), 0);
	assert_int_equal(sm_topo_load(b, data_path("ft-small.ibnd"), SM_TOPO_AUTO, 0, &err), 0);
	char *ca = canon_str(a, CANON_NO_LIDS | CANON_LINKED), *cb = canon_str(b, CANON_NO_LIDS | CANON_LINKED);
	assert_string_equal(ca, cb);
	free(ca);
	free(cb);
	sm_fabric_free(a);
	sm_fabric_free(b);
}

static void test_ibsim_defaults(void **state)
{
	(void)state;
	/* ibsim's own example: no GUID lines, no descriptions, w= option */
	const char *net =
		"# comment\n"
		"Switch\t8 \"Switch1\"\n"
		"[1]\t\"Hca1\"[1]\n"
		"[2]\t\"Hca2\"[2] w=8\n"
		"[3]\t\"Switch2\"[3] w=3\n"
		"\n"
		"width=1\n"
		"Switch 8 \"Switch2\"\n"
		"[3]\t\"Switch1\"[3]\n"
		"\n"
		"width=2\n"
		"Hca\t2 \"Hca1\"\n"
		"[1]\t\"Switch1\"[1]\n"
		"\n"
		"Hca\t2 \"Hca2\"\n"
		"[2]\t\"Switch1\"[2] w=15\n";
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err err;
	int rc = load_buf(f, net, strlen(net), "net", SM_TOPO_AUTO, 0, &err);
	if (rc)
		print_message("%s\n", err.msg);
	assert_int_equal(rc, 0);
	uint32_t s1 = sm_fabric_find_node(f, 0x200000), s2 = sm_fabric_find_node(f, 0x200001);
	uint32_t h1 = sm_fabric_find_node(f, 0x100000), h2 = sm_fabric_find_node(f, 0x100003);
	assert_true(s1 != SM_NONE && s2 != SM_NONE && h1 != SM_NONE && h2 != SM_NONE);
	assert_string_equal(f->nodes[s1].desc, "Switch1");
	assert_int_equal(f->nodes[h2].sysimg_guid, 0x100003);
	assert_int_equal(sm_port(f, h2, 1)->guid, 0x100004);
	assert_int_equal(sm_port(f, h2, 2)->guid, 0x100005);
	assert_int_equal(sm_port(f, s1, 1)->width, 2);   /* 4x default */
	assert_int_equal(sm_port(f, s1, 1)->speed, 1);   /* SDR default */
	assert_int_equal(sm_port(f, s1, 2)->width, 8);   /* 12x: w=8 & w=15 */
	assert_int_equal(sm_port(f, s1, 3)->width, 1);   /* Switch2 enables 1x only */
	assert_int_equal(sm_port(f, s1, 3)->peer_node, s2);
	sm_fabric_free(f);
}

static void test_sniff(void **state)
{
	(void)state;
	struct sm_topo_err err;
	struct sm_fabric *f = sm_fabric_new();
	/* an ibnetdiscover dump read as ibsim: ibsim's rules (node GUID + port) hold here too */
	assert_int_equal(sm_topo_load(f, data_path("net4.ibnd"), SM_TOPO_IBSIM, 0, &err), 0);
	sm_fabric_free(f);
	/* an ibsim net file without GUID lines cannot be read as ibnetdiscover output */
	f = sm_fabric_new();
	const char *net = "Switch 2 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[1]\n";
	assert_int_equal(load_buf(f, net, strlen(net), "n", SM_TOPO_IBND, 0, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "without its switchguid= line"));
	assert_int_equal(load_buf(f, net, strlen(net), "n", SM_TOPO_AUTO, 0, &err), 0);
	assert_int_equal(f->n_nodes, 2);
	sm_fabric_free(f);
}

static void test_planes(void **state)
{
	(void)state;
	struct sm_topo_err err;
	struct sm_fabric *f = sm_fabric_new();
	assert_int_equal(sm_topo_load(f, data_path("net4.ibnd"), SM_TOPO_AUTO, 0, &err), 0);
	assert_int_equal(sm_topo_load(f, data_path("ft-small.ibnd"), SM_TOPO_AUTO, 3, &err), 0);
	assert_int_equal(f->n_planes, 4);
	struct sm_fabric_counts c0, c3, call;
	sm_fabric_count(f, 0, &c0);
	sm_fabric_count(f, 3, &c3);
	sm_fabric_count(f, -1, &call);
	assert_int_equal(c0.nodes, 6);
	assert_int_equal(c3.nodes, 24);
	assert_int_equal(call.nodes, 30);
	assert_int_equal(c3.links, 32);
	/* same LIDs in another plane are fine, they are separate subnets */
	assert_int_not_equal(sm_fabric_find_lid(f, 0, 1), SM_NONE);
	assert_int_not_equal(sm_fabric_find_lid(f, 3, 1), SM_NONE);
	uint32_t n = sm_fabric_find_node(f, 0x0c42a10300001000ULL);
	assert_int_equal(f->nodes[n].plane, 3);
	/* write one plane only */
	char *t = NULL;
	size_t l = 0;
	FILE *o = open_memstream(&t, &l);
	assert_int_equal(sm_topo_write_ibnd(f, 0, o), 0);
	fclose(o);
	assert_null(strstr(t, "0c42a10300001000"));
	assert_non_null(strstr(t, "S-0000000000200000"));
	free(t);
	/* loading the same dump again: GUIDs are unique across planes */
	assert_int_equal(sm_topo_load(f, data_path("net4.ibnd"), SM_TOPO_AUTO, 1, &err), -EEXIST);
	assert_non_null(strstr(err.msg, "already in the fabric"));
	assert_int_equal(f->n_planes, 4);
	sm_fabric_count(f, -1, &c0);
	assert_int_equal(c0.nodes, 30);
	/* a LID clash inside one plane is refused: both dumps use LIDs from 1 */
	sm_fabric_free(f);
	f = sm_fabric_new();
	assert_int_equal(sm_topo_load(f, data_path("net4.ibnd"), SM_TOPO_AUTO, 0, &err), 0);
	assert_int_equal(sm_topo_load(f, data_path("ft-small.ibnd"), SM_TOPO_AUTO, 0, &err), -EADDRINUSE);
	assert_non_null(strstr(err.msg, "already used in plane 0"));
	assert_int_equal(f->n_nodes, 6);
	sm_fabric_free(f);
}

static void test_rate_names(void **state)
{
	(void)state;
	uint8_t w, s, fl;
	assert_int_equal(sm_topo_parse_rate("4xHDR", 5, &w, &s, &fl), 0);
	assert_int_equal(w, 2);
	assert_int_equal(s, 4);
	assert_int_equal(fl, SM_PORT_F_EXT_SPEED);
	assert_int_equal(sm_topo_parse_rate("12xFDR10", 8, &w, &s, &fl), 0);
	assert_int_equal(w, 8);
	assert_int_equal(fl, SM_PORT_F_FDR10);
	assert_int_equal(sm_topo_parse_rate("?????", 5, &w, &s, &fl), 0);
	assert_int_equal(w, 0);
	assert_int_equal(s, 0);
	assert_int_equal(sm_topo_parse_rate("4xZDR", 5, &w, &s, &fl), -EINVAL);
	assert_int_equal(sm_topo_parse_rate("3xSDR", 5, &w, &s, &fl), -EINVAL);
	assert_string_equal(sm_topo_width_str(16), "2x");
	assert_string_equal(sm_topo_speed_str(8, SM_PORT_F_EXT_SPEED), "NDR");
	assert_string_equal(sm_topo_speed_str(3, 0), "???");
}

/* ---- bad input: each returns an error naming FILE:LINE, f unchanged ---- */

static void test_bad_unknown_keyword(void **state)
{
	(void)state;
	expect_bad_edit("net4.ibnd", "devid=0x0\n", "devid=0x0\nfrobnicate=1\n", -EINVAL, 8,
			"unknown keyword 'frobnicate'");
	expect_bad_edit("net4.ibnd", "Switch\t8 \"S-0000000000200001\"", "Bridge\t8 \"S-0000000000200001\"",
			-EINVAL, 10, "unknown keyword 'Bridge'");
}

static void test_bad_port_range(void **state)
{
	(void)state;
	expect_bad_edit("net4.ibnd", "[5]\t\"S-0000000000200000\"[5]", "[9]\t\"S-0000000000200000\"[5]",
			-EINVAL, 14, "port 9 out of range 1..8");
	expect_bad_edit("net4.ibnd", "[5]\t\"S-0000000000200000\"[5]", "[0]\t\"S-0000000000200000\"[5]",
			-EINVAL, 14, "port 0 out of range 1..8");
	expect_bad_edit("net4.ibnd", "[5]\t\"S-0000000000200000\"[5]", "[5]\t\"S-0000000000200000\"[0]",
			-EINVAL, 14, "peer port 0 out of range");
	/* the peer is a 2-port CA */
	expect_bad_edit("net4.ibnd", "[2]\t\"H-0000000000100009\"[1]", "[2]\t\"H-0000000000100009\"[3]",
			-EINVAL, 12, "peer port 3 out of range 1..2");
	expect_bad_edit("net4.ibnd", "[1](10000a) \t\"S", "[3](10000a) \t\"S", -EINVAL, 31, "port 3 out of range 1..2");
}

static void test_bad_unconfirmed_link(void **state)
{
	(void)state;
	/* Switch2 port 5 -> Switch1 port 5, but Switch1 does not list its port 5 */
	expect_bad_edit("net4.ibnd", "[5]\t\"S-0000000000200001\"[5]\t\t# \"Switch2\" lid 3 4xSDR\n", "",
			-EINVAL, 14, "is not confirmed");
	/* contradiction: Switch2[5] says Switch1[4], Switch1's port 4 is not listed... make it listed */
	expect_bad_edit("net4.ibnd", "[3]\t\"S-0000000000200001\"[3]\t\t# \"Switch2\" lid 3 4xSDR",
			"[3]\t\"S-0000000000200001\"[5]\t\t# \"Switch2\" lid 3 4xSDR",
			-EINVAL, 13, "contradicts line 23");
	/* the CA port GUID printed at the switch end must match the CA's own line */
	expect_bad_edit("net4.ibnd", "[1](10000a)", "[1](10000b)", -EINVAL, 12, "does not match");
}

static void test_bad_duplicate_guids(void **state)
{
	(void)state;
	expect_bad_edit("net4.ibnd", "caguid=0x100003", "caguid=0x100009", -EEXIST, 37,
			"duplicate GUID 0x0000000000100009");
	expect_bad_edit("net4.ibnd", "[1](100004) \t\"S", "[1](10000a) \t\"S", -EEXIST, 38,
			"duplicate port GUID 0x000000000010000a");
	expect_bad_edit("net4.ibnd", "Ca\t2 \"H-0000000000100003\"", "Ca\t2 \"H-0000000000100009\"",
			-EEXIST, 37, "already defined at line 30");
	/* duplicate LIDs inside one dump */
	expect_bad_edit("net4.ibnd", "lid 6 lmc 0", "lid 4 lmc 0", -EEXIST, 38,
			"overlaps the LIDs of \"H-0000000000100009\" (line 30)");
}

static void test_bad_empty(void **state)
{
	(void)state;
	expect_bad("", 0, SM_TOPO_AUTO, -ENODATA, 1, "empty file");
	const char *c = "# only\n# comments\n\n";
	expect_bad(c, strlen(c), SM_TOPO_AUTO, -ENODATA, 3, "no nodes");
}

static void test_bad_binary(void **state)
{
	(void)state;
	static const char bin[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0";
	expect_bad(bin, sizeof(bin) - 1, SM_TOPO_AUTO, -EINVAL, 1, "binary data");
	size_t len;
	char *buf = edit("net4.ibnd", "Hca4", "Hc\001a4", &len);
	expect_bad(buf, len, SM_TOPO_AUTO, -EINVAL, 12, "binary data (byte 0x01");
	free(buf);
	/* a NUL in the middle of a line */
	buf = edit("net4.ibnd", "vendid=0x0", "vendid=0x0", &len);
	buf[strstr(buf, "devid") - buf + 2] = '\0';
	expect_bad(buf, len, SM_TOPO_AUTO, -EINVAL, 7, "byte 0x00");
	free(buf);
}

static void test_bad_long_line(void **state)
{
	(void)state;
	size_t n = SM_TOPO_MAX_LINE + 100;
	char *big = malloc(n + 64);
	assert_non_null(big);
	strcpy(big, "# ok\n#");
	memset(big + 6, 'x', n);
	strcpy(big + 6 + n, "\n");
	expect_bad(big, strlen(big), SM_TOPO_AUTO, -EINVAL, 2, "longer than 4096");
	/* and without any newline at all (a huge binary-ish blob) */
	memset(big, 'y', n);
	expect_bad(big, n, SM_TOPO_AUTO, -EINVAL, 1, "longer than 4096");
	/* exactly the limit is fine */
	memset(big, '#', SM_TOPO_MAX_LINE);
	strcpy(big + SM_TOPO_MAX_LINE, "\n");
	expect_bad(big, strlen(big), SM_TOPO_AUTO, -ENODATA, 1, "no nodes");
	free(big);
}

static void test_bad_missing_file(void **state)
{
	(void)state;
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err err;
	assert_int_equal(sm_topo_load(f, "/nonexistent/dir/x.ibnd", SM_TOPO_AUTO, 0, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/dir/x.ibnd:0: cannot open: No such file or directory");
	assert_int_equal(f->n_nodes, 0);
	/* a directory opens but does not read */
	assert_int_equal(sm_topo_load(f, "/", SM_TOPO_AUTO, 0, &err), -EIO);
	assert_non_null(strstr(err.msg, "/:0: read error"));
	assert_int_equal(f->n_nodes, 0);
	sm_fabric_free(f);
}

static void test_bad_truncated(void **state)
{
	(void)state;
	size_t len;
	char *buf = slurp("net4.ibnd", &len);
	/* cut after a GUID line */
	char *at = strstr(buf, "caguid=0x100006\n");
	at[16] = '\0';
	expect_bad(buf, strlen(buf), SM_TOPO_AUTO, -EINVAL, 40, "truncated block");
	free(buf);
	/* cut inside a port line */
	buf = slurp("net4.ibnd", &len);
	at = strstr(buf, "[1](100007) \t\"S-0000000000200000\"[2]");
	at[30] = '\0';
	expect_bad(buf, strlen(buf), SM_TOPO_AUTO, -EINVAL, 45, "expected the quoted id");
	free(buf);
	buf = slurp("net4.ibnd", &len);
	at = strstr(buf, "[1](100007) \t\"S-0000000000200000\"[2]");
	at[38] = '\0';
	expect_bad(buf, strlen(buf), SM_TOPO_AUTO, -EINVAL, 45, "lacks its '# ... lid N");
	free(buf);
	/* a new block starts before the previous one got its header */
	expect_bad_edit("net4.ibnd", "switchguid=0x200000(200000)\n", "", -EINVAL, 19, "truncated");
	/* whole file except the final newline */
	buf = slurp("net4.ibnd", &len);
	expect_bad(buf, len - 1, SM_TOPO_AUTO, -EINVAL, 52, "no newline");
	free(buf);
}

static void test_bad_numbers(void **state)
{
	(void)state;
	expect_bad_edit("net4.ibnd", "Switch\t8 \"S-0000000000200001\"", "Switch\t99999999999999999999999 \"S-0000000000200001\"",
			-EINVAL, 10, "number of ports out of range");
	expect_bad_edit("net4.ibnd", "Switch\t8 \"S-0000000000200001\"", "Switch\t255 \"S-0000000000200001\"",
			-EINVAL, 10, "out of range (max 254)");
	expect_bad_edit("net4.ibnd", "lid 3 lmc 0", "lid 70000 lmc 0", -EINVAL, 10, "lid out of range");
	expect_bad_edit("net4.ibnd", "lid 3 lmc 0", "lid 3 lmc 8", -EINVAL, 10, "lmc out of range");
	expect_bad_edit("net4.ibnd", "lid 6 lmc 0", "lid 49151 lmc 1", -EINVAL, 31, "out of range");
	expect_bad_edit("net4.ibnd", "sysimgguid=0x200001", "sysimgguid=0x12345678901234567", -EINVAL, 8,
			"more than 16 hex digits");
	expect_bad_edit("net4.ibnd", "vendid=0x0", "vendid=0x1000000", -EINVAL, 6, "vendor id out of range");
	expect_bad_edit("net4.ibnd", "devid=0x0", "devid=65536", -EINVAL, 7, "device id out of range");
	expect_bad_edit("net4.ibnd", "[1](10000a) \t\"S", "[18446744073709551616](10000a) \t\"S", -EINVAL, 31, "out of range");
	expect_bad_edit("net4.ibnd", "lid 6 4xSDR", "lid 6 4xZDR", -EINVAL, 12, "unknown link rate '4xZDR'");
	expect_bad_edit("net4.ibnd", "switchguid=0x200001", "switchguid=0x0", -EINVAL, 10, "GUID 0");
}

static void test_bad_unknown_peer(void **state)
{
	(void)state;
	expect_bad_edit("net4.ibnd", "[3]\t\"S-0000000000200000\"[3]", "[3]\t\"S-00000000002000ff\"[3]",
			-EINVAL, 13, "peer \"S-00000000002000ff\" is not a node of this file");
}

static void test_bad_misc(void **state)
{
	(void)state;
	expect_bad_edit("net4.ibnd", "\nvendid=0x0\ndevid=0x0\nsysimgguid=0x100009", "\n[1]\t\"x\"[1]\nvendid=0x0\ndevid=0x0\nsysimgguid=0x100009",
			-EINVAL, 26, "port line outside a node block");
	expect_bad_edit("net4.ibnd", "[3]\t\"S-0000000000200000\"[3]\t\t# \"Switch1\" lid 1 4xSDR\n",
			"[3]\t\"S-0000000000200000\"[3]\t\t# \"Switch1\" lid 1 4xSDR\n"
			"[3]\t\"S-0000000000200000\"[3]\t\t# \"Switch1\" lid 1 4xSDR\n",
			-EINVAL, 14, "listed twice");
	expect_bad_edit("net4.ibnd", "caguid=0x100009", "switchguid=0x100009", -EINVAL, 30, "Ca header without its caguid=");
	struct sm_topo_err err;
	struct sm_fabric *f = sm_fabric_new();
	size_t len;
	char *p = slurp("net4-ports.txt", &len);
	assert_int_equal(load_buf(f, p, len, "p.txt", SM_TOPO_AUTO, 0, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "ports report (-p)"));
	free(p);
	const char *alias = "Switch 2 \"a\"\n@[1] \"x\"\n";
	assert_int_equal(load_buf(f, alias, strlen(alias), "a", SM_TOPO_AUTO, 0, &err), -EINVAL);
	const char *inc = "include \"other\"\n";
	assert_int_equal(load_buf(f, inc, strlen(inc), "a", SM_TOPO_AUTO, 0, &err), -ENOTSUP);
	const char *self = "Switch 2 \"a\"\n[1] \"a\"[1]\n";
	assert_int_equal(load_buf(f, self, strlen(self), "a", SM_TOPO_AUTO, 0, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "linked to itself"));
	const char *mism = "Switch 2 \"a\"\n[1] \"b\"[1] w=1\n\nSwitch 2 \"b\"\n[1] \"a\"[1] w=2\n";
	assert_int_equal(load_buf(f, mism, strlen(mism), "m", SM_TOPO_AUTO, 0, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no common link width"));
	assert_int_equal(f->n_nodes, 0);
	assert_int_equal(sm_topo_load_stream(f, stdin, "x", (enum sm_topo_format)7, 0, &err), -EINVAL);
	assert_int_equal(sm_topo_load_stream(f, stdin, "x", SM_TOPO_AUTO, SM_MAX_PLANES, &err), -EINVAL);
	sm_fabric_free(f);
}

/* ---- main ---- */

static int canon_main(int argc, char **argv)
{
	unsigned opts = 0;
	enum sm_topo_format fmt = SM_TOPO_AUTO;
	const char *file = NULL;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--no-lids"))
			opts |= CANON_NO_LIDS;
		else if (!strcmp(argv[i], "--linked"))
			opts |= CANON_LINKED;
		else if (!strcmp(argv[i], "--from") && i + 1 < argc)
			fmt = !strcmp(argv[++i], "ibsim") ? SM_TOPO_IBSIM :
			      !strcmp(argv[i], "ibnd") ? SM_TOPO_IBND : SM_TOPO_AUTO;
		else
			file = argv[i];
	}
	if (!file) {
		fprintf(stderr, "usage: test_topo --canon [--no-lids] [--linked] [--from F] FILE\n");
		return 2;
	}
	struct sm_fabric *f = sm_fabric_new();
	struct sm_topo_err err;
	if (!f || sm_topo_load(f, file, fmt, 0, &err)) {
		fprintf(stderr, "test_topo: %s\n", f ? err.msg : "out of memory");
		sm_fabric_free(f);
		return 1;
	}
	canon(f, opts, stdout);
	sm_fabric_free(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--canon"))
		return canon_main(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_real_dump),
		cmocka_unit_test(test_load_handmade),
		cmocka_unit_test(test_roundtrip_ibnd),
		cmocka_unit_test(test_roundtrip_ibsim),
		cmocka_unit_test(test_grouped_and_full),
		cmocka_unit_test(test_grouped_chassis),
		cmocka_unit_test(test_ibsim_net_matches_simulation),
		cmocka_unit_test(test_ibsim_defaults),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_planes),
		cmocka_unit_test(test_rate_names),
		cmocka_unit_test(test_bad_unknown_keyword),
		cmocka_unit_test(test_bad_port_range),
		cmocka_unit_test(test_bad_unconfirmed_link),
		cmocka_unit_test(test_bad_duplicate_guids),
		cmocka_unit_test(test_bad_empty),
		cmocka_unit_test(test_bad_binary),
		cmocka_unit_test(test_bad_long_line),
		cmocka_unit_test(test_bad_missing_file),
		cmocka_unit_test(test_bad_truncated),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_bad_unknown_peer),
		cmocka_unit_test(test_bad_misc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
