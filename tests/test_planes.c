/* SPDX-License-Identifier: MIT */
/*
 * Multi-plane: host grouping across planes, plane health / asymmetry, and
 * the "planes" engine (decorrelation keeps ftree's quality; pairs ride
 * different spine indices in different planes; degraded planes still route).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>
#include <yaml.h>

#include "model/fabric.h"
#include "model/gen.h"
#include "model/hosts.h"
#include "routing/registry.h"
#include "routing/metrics.h"
#include "routing/validate.h"
#include "fixture/fixture.h"

static struct sm_fabric *gen(unsigned hosts, unsigned radix, unsigned planes, double remove,
			     int fault_plane)
{
	struct sm_gen_params p;
	fx_gen_params(&p, hosts, radix, 0, planes);
	p.remove_links = remove;
	p.fault_plane = fault_plane;
	p.seed = 11;
	return fx_gen(&p);
}

static void test_hosts_grouping(void **state)
{
	(void)state;
	struct sm_fabric *f = gen(32, 8, 4, 0, -1);
	struct sm_hosts *h = NULL;
	assert_int_equal(sm_hosts_build(f, &h), 0);
	assert_int_equal(h->n, 32);
	assert_int_equal(h->uneven, 0);
	assert_int_equal(h->common_nics, 4);
	for (unsigned p = 0; p < 4; p++)
		assert_int_equal(h->nics_per_plane[p], 32);
	for (uint32_t i = 0; i < h->n; i++) {
		assert_int_equal(h->h[i].n_nics, 4);
		for (unsigned p = 0; p < 4; p++) {
			uint32_t port = h->h[i].nic[p];
			assert_int_not_equal(port, SM_NONE);
			assert_int_equal(f->nodes[f->ports[port].node].plane, p);
			/* all NICs of a host share its system image GUID */
			assert_int_equal(f->nodes[f->ports[port].node].sysimg_guid, h->h[i].sysimg);
		}
	}
	struct sm_planes_health ph;
	assert_int_equal(sm_planes_health(f, h, &ph), 0);
	assert_int_equal(ph.asymmetric, 0);
	for (unsigned p = 0; p < 4; p++) {
		assert_int_equal(ph.p[p].missing_links, 0);
		assert_int_equal(ph.p[p].hosts_without_nic, 0);
		assert_true(ph.p[p].share_min > 0.2499 && ph.p[p].share_min < 0.2501);
	}
	sm_hosts_free(h);

	/* cut one host's NIC in plane 2: the host is uneven, plane 2 misses a NIC */
	uint32_t nic = SM_NONE;
	for (uint32_t n = 0; n < f->n_nodes && nic == SM_NONE; n++)
		if (f->nodes[n].type == SM_NODE_CA && f->nodes[n].plane == 2)
			nic = n;
	sm_fabric_unlink(f, nic, 1);
	assert_int_equal(sm_hosts_build(f, &h), 0);
	assert_int_equal(h->uneven, 1);
	assert_int_equal(sm_planes_health(f, h, &ph), 0);
	assert_int_equal(ph.asymmetric, 1);
	assert_int_equal(ph.p[2].hosts_without_nic, 1);
	assert_int_equal(ph.p[2].missing_links, 0);
	assert_true(ph.p[2].share_min < 0.01);
	/* the host's remaining three planes now carry a third each */
	assert_true(ph.p[0].share_min > 0.2499);
	sm_hosts_free(h);
	sm_fabric_free(f);
}

static void test_health_degraded_plane(void **state)
{
	(void)state;
	struct sm_fabric *f = gen(128, 16, 2, 0.10, 1);
	struct sm_planes_health ph;
	assert_int_equal(sm_planes_health(f, NULL, &ph), 0);
	assert_int_equal(ph.asymmetric, 1);
	assert_int_equal(ph.p[0].missing_links, 0);
	assert_true(ph.p[1].missing_links > 0);
	assert_true(ph.p[1].hosts_below > 0);
	assert_true(ph.p[1].share_min < 0.5);
	assert_true(ph.p[0].share_min > 0.4999);
	sm_fabric_free(f);
}

struct routed {
	struct sm_registry *r;
	struct sm_chain *c;
	struct sm_lfts *l[SM_MAX_PLANES];
	struct sm_plane_result res[SM_MAX_PLANES];
};

static void route_all(struct sm_fabric *f, const char *engine, struct routed *o)
{
	char err[256];
	unsigned planes[SM_MAX_PLANES];
	memset(o, 0, sizeof(*o));
	o->r = sm_registry_new("/nonexistent-smd-plugins");
	assert_non_null(o->r);
	assert_int_equal(sm_chain_new(o->r, engine, NULL, NULL, &o->c, err, sizeof(err)), 0);
	for (unsigned p = 0; p < f->n_planes; p++)
		planes[p] = p;
	assert_int_equal(sm_route_chain_planes(o->c, f, planes, f->n_planes, NULL, o->l, o->res), 0);
	for (unsigned p = 0; p < f->n_planes; p++) {
		assert_string_equal(o->res[p].engine, engine);
		assert_non_null(o->l[p]);
	}
}

static void routed_free(struct sm_fabric *f, struct routed *o)
{
	for (unsigned p = 0; p < f->n_planes; p++)
		sm_lfts_free(o->l[p]);
	sm_chain_free(o->c);
	sm_registry_free(o->r);
}

/*
 * Upper-switch index (position among the plane's non-leaf switches in
 * fabric order) that the route from host a's leaf to host b goes up to.
 */
static int spine_index(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t a, uint32_t b)
{
	uint32_t leaf = f->ports[a].peer_node;
	uint8_t p = sm_lfts_get(l, leaf, f->ports[b].lid);
	if (p == SM_LFT_NONE)
		return -1;
	uint32_t up = sm_port(f, leaf, p)->peer_node;
	int idx = 0;
	for (uint32_t n = 0; n < up; n++)
		if (f->nodes[n].type == SM_NODE_SWITCH && f->nodes[n].plane == f->nodes[up].plane) {
			/* count only switches without CAs (the upper level) */
			int has_ca = 0;
			for (unsigned q = 1; q <= f->nodes[n].nports; q++) {
				uint32_t peer = sm_port(f, n, q)->peer_node;
				if (peer != SM_NONE && f->nodes[peer].type == SM_NODE_CA)
					has_ca = 1;
			}
			idx += !has_ca;
		}
	return idx;
}

/* share of cross-leaf host pairs that go up to the same spine index in every plane */
static double same_spine_share(const struct sm_fabric *f, const struct sm_hosts *h, struct sm_lfts **l)
{
	uint64_t same = 0, total = 0;
	for (uint32_t i = 0; i < h->n; i++)
		for (uint32_t j = 0; j < h->n; j++) {
			if (i == j)
				continue;
			if (f->ports[h->h[i].nic[0]].peer_node == f->ports[h->h[j].nic[0]].peer_node)
				continue;
			int first = -2, all = 1;
			for (unsigned p = 0; p < f->n_planes; p++) {
				int s = spine_index(f, l[p], h->h[i].nic[p], h->h[j].nic[p]);
				assert_true(s >= 0);
				if (first == -2)
					first = s;
				else if (s != first)
					all = 0;
			}
			total++;
			same += all;
		}
	return total ? (double)same / total : 0;
}

static void test_planes_decorrelate_full(void **state)
{
	(void)state;
	struct sm_fabric *f = gen(128, 16, 4, 0, -1);
	struct sm_hosts *h = NULL;
	struct routed ft, pl;
	assert_int_equal(sm_hosts_build(f, &h), 0);
	route_all(f, "ftree", &ft);
	route_all(f, "planes", &pl);
	/* ftree routes every plane alike; planes never puts a pair on the same spine index everywhere */
	assert_true(same_spine_share(f, h, ft.l) > 0.999);
	assert_true(same_spine_share(f, h, pl.l) < 0.001);
	/* quality is ftree's: shift congestion 1, same EBB, valid, no credit loop */
	for (unsigned p = 0; p < f->n_planes; p++) {
		struct sm_metrics_opts mo = { .n_random = 20, .seed = 5 };
		struct sm_route_metrics a, b;
		assert_int_equal(sm_metrics_compute(f, p, ft.l[p], &mo, &a), 0);
		assert_int_equal(sm_metrics_compute(f, p, pl.l[p], &mo, &b), 0);
		assert_int_equal(b.unreachable, 0);
		assert_int_equal(b.loops, 0);
		assert_int_equal(b.shift_max_congestion, 1);
		assert_int_equal(b.shift_max_congestion, a.shift_max_congestion);
		assert_true(b.ebb > a.ebb - 0.02);
		assert_int_equal(b.credit_loop, 0);
		assert_int_equal(b.efi_max, a.efi_max);
	}
	routed_free(f, &ft);
	routed_free(f, &pl);
	sm_hosts_free(h);
	sm_fabric_free(f);
}

static void test_planes_degraded(void **state)
{
	(void)state;
	/* 5% of switch links gone in plane 1 only: every plane still routes and validates */
	struct sm_fabric *f = gen(128, 16, 2, 0.05, 1);
	struct routed pl;
	route_all(f, "planes", &pl);
	for (unsigned p = 0; p < f->n_planes; p++) {
		assert_int_equal(pl.res[p].val.unreachable, 0);
		struct sm_metrics_opts mo = { .n_random = 10, .seed = 3 };
		struct sm_route_metrics m;
		assert_int_equal(sm_metrics_compute(f, p, pl.l[p], &mo, &m), 0);
		assert_int_equal(m.unreachable, 0);
		assert_int_equal(m.loops, 0);
		assert_int_equal(m.credit_loop, 0);
		assert_true(m.shift_max_congestion <= 3);
	}
	routed_free(f, &pl);
	sm_fabric_free(f);
}

static void test_planes_bad_config(void **state)
{
	(void)state;
	const struct sm_engine_ops *e = sm_engine_builtin("planes");
	assert_non_null(e);
	yaml_parser_t parser;
	yaml_document_t doc;
	const char *bad = "decorrelate: maybe\n";
	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)bad, strlen(bad));
	assert_true(yaml_parser_load(&parser, &doc));
	void *st = NULL;
	char err[256] = "";
	assert_int_equal(e->init(&st, &doc, yaml_document_get_root_node(&doc), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1"));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hosts_grouping),
		cmocka_unit_test(test_health_degraded_plane),
		cmocka_unit_test(test_planes_decorrelate_full),
		cmocka_unit_test(test_planes_degraded),
		cmocka_unit_test(test_planes_bad_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
