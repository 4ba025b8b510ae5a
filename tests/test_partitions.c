/* SPDX-License-Identifier: MIT */
/*
 * The partitions parser (smd/model/partitions.c, partitions_yaml.c):
 * OpenSM's own examples (doc/partition-config.txt) as they are, OpenSM's
 * merge/default/last-wins rules, the YAML form giving the same set, and
 * every kind of error with FILE:LINE.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/partitions.h"

static struct sm_partitions *parse_ok(const char *name, const char *text)
{
	struct sm_partitions *p = NULL;
	char err[512] = "";
	int rc = sm_partitions_parse(text, strlen(text), name, &p, err, sizeof(err));
	if (rc)
		fail_msg("%s: %s", name, err);
	assert_non_null(p);
	return p;
}

static const struct sm_partition *by_pkey(const struct sm_partitions *ps, uint16_t pkey)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].pkey == pkey)
			return &ps->v[i];
	return NULL;
}

/* OpenSM's doc/partition-config.txt "Examples", as they are. */
static const char opensm_examples[] =
	" Default=0x7fff : ALL, SELF=full ;\n"
	" Default=0x7fff : ALL, ALL_SWITCHES=full, SELF=full ;\n"
	"\n"
	" NewPartition , ipoib : 0x123456=full, 0x3456789034=limi, 0x2134af2306 ;\n"
	"\n"
	" YetAnotherOne = 0x300 : SELF=full ;\n"
	" YetAnotherOne = 0x300 : ALL=limited ;\n"
	"\n"
	" ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;\n"
	" # 0x123453, 0x123454 will be limited\n"
	" ShareIO = 0x80 : 0x123453, 0x123454, 0x123455=full;\n"
	" # 0x123456, 0x123457 will be limited\n"
	" ShareIO = 0x80 , defmember=limited : 0x123456, 0x123457, 0x123458=full;\n"
	" ShareIO = 0x80 , defmember=full : 0x123459, 0x12345a;\n"
	" ShareIO = 0x80 , defmember=full : 0x12345b, 0x12345c=limited, 0x12345d;\n"
	"\n"
	" # multicast groups added to default\n"
	" Default=0x7fff,ipoib:\n"
	"        mgid=ff12:401b::0707,sl=1 # random IPv4 group\n"
	"        mgid=ff12:601b::16    # MLDv2-capable routers\n"
	"        mgid=ff12:401b::16    # IGMP\n"
	"        mgid=ff12:601b::2     # All routers\n"
	"        mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # random group\n"
	"        ALL=full;\n";

static void t_opensm_examples(void **state)
{
	(void)state;
	struct sm_partitions *ps = parse_ok("ex.conf", opensm_examples);
	assert_int_equal(ps->n, 4);
	assert_int_equal(ps->v[0].pkey, 0x7fff);
	assert_string_equal(ps->v[0].name, "Default");
	/* NewPartition: no P_Key, gets the first free one (1), IPoIB group */
	const struct sm_partition *np = by_pkey(ps, 1);
	assert_non_null(np);
	assert_string_equal(np->name, "NewPartition");
	assert_true(np->ipoib);
	assert_int_equal(np->n_mgroups, 1);
	assert_memory_equal(np->mgroups[0].mgid,
			    ((uint8_t[16]){ 0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff }), 16);
	assert_int_equal(np->mgroups[0].qkey, 0x0B1B);
	assert_int_equal(np->mgroups[0].mtu, 4);
	assert_int_equal(np->mgroups[0].rate, 3);
	assert_int_equal(np->n_members, 3);
	assert_int_equal(np->members[0].m, SM_PART_FULL);
	assert_int_equal(np->members[1].m, SM_PART_LIMITED);   /* "limi" */
	assert_int_equal(np->members[1].guid, 0x3456789034ULL);
	assert_int_equal(np->members[2].m, SM_PART_LIMITED);
	/* ShareIO: five definitions merged, defmember per definition */
	const struct sm_partition *io = by_pkey(ps, 0x80);
	assert_non_null(io);
	assert_int_equal(io->n_members, 13);
	static const enum sm_part_membership want[13] = {
		SM_PART_FULL, SM_PART_FULL, SM_PART_LIMITED, SM_PART_LIMITED, SM_PART_FULL, SM_PART_LIMITED,
		SM_PART_LIMITED, SM_PART_FULL, SM_PART_FULL, SM_PART_FULL, SM_PART_FULL, SM_PART_LIMITED, SM_PART_FULL,
	};
	for (int i = 0; i < 13; i++)
		assert_int_equal(io->members[i].m, want[i]);
	assert_int_equal(io->members[12].line, 15);
	/* Default: the broadcast group, then the five mgid lines (IP ones carry the P_Key) */
	const struct sm_partition *d = &ps->v[0];
	assert_true(d->ipoib);
	assert_int_equal(d->n_mgroups, 6);
	assert_int_equal(d->mgroups[1].sl, 1);
	assert_int_equal(d->mgroups[1].mgid[4], 0xff);
	assert_int_equal(d->mgroups[1].mgid[5], 0xff);
	assert_int_equal(d->mgroups[1].qkey, 0x0B1B);
	assert_int_equal(d->mgroups[5].qkey, 0xDEADBEEF);
	assert_int_equal(d->mgroups[5].mtu, 2);
	assert_int_equal(d->mgroups[5].mgid[4], 0);
	assert_int_equal(d->mgroups[5].line, 23);
	sm_partitions_free(ps);
}

/* A fabric: one switch (GUID 0x100) with two CAs (ports 0x201, 0x301); SM on the first CA. */
static struct sm_fabric *tiny(uint32_t *sm_port, uint32_t *ca2)
{
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	assert_int_equal(sm_fabric_add_plane(f, 0, NULL), 0);
	int64_t sw = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100, 4, 0, 0);
	int64_t a = sm_fabric_add_node(f, SM_NODE_CA, 0x200, 1, 0, 0);
	int64_t b = sm_fabric_add_node(f, SM_NODE_CA, 0x300, 1, 0, 0);
	assert_true(sw >= 0 && a >= 0 && b >= 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)a, 1, 0x201), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, (uint32_t)b, 1, 0x301), 0);
	*sm_port = sm_port_index(f, (uint32_t)a, 1);
	*ca2 = sm_port_index(f, (uint32_t)b, 1);
	return f;
}

static void t_membership(void **state)
{
	(void)state;
	uint32_t smp, ca2;
	struct sm_fabric *f = tiny(&smp, &ca2);
	uint32_t sw0 = sm_port_index(f, 0, 0), sw1 = sm_port_index(f, 0, 1);

	/* no file: everyone full in the default partition, with its IPoIB group */
	struct sm_partitions *ps = NULL;
	assert_int_equal(sm_partitions_default(&ps), 0);
	assert_int_equal(ps->n, 1);
	assert_true(ps->v[0].ipoib && ps->v[0].n_mgroups == 1);
	assert_int_equal(sm_partition_port(&ps->v[0], f, ca2, smp), SM_PART_FULL);
	assert_int_equal(sm_partition_port(&ps->v[0], f, sw0, smp), SM_PART_FULL);
	assert_int_equal(sm_partition_port(&ps->v[0], f, sw1, smp), SM_PART_NONE);
	sm_partitions_free(ps);

	/* a file that does not name the default partition: ALL limited, SELF full, no IPoIB group */
	ps = parse_ok("a.conf", "P1=0x10: 0x301=full, ALL_SWITCHES;\nP1=0x10: 0x301=limited;\n"
			      "P2=0x20,defmember=both: SELF; P3=0x30: NONE;");
	assert_false(ps->v[0].ipoib);
	assert_int_equal(ps->v[0].n_mgroups, 0);
	assert_int_equal(sm_partition_port(&ps->v[0], f, ca2, smp), SM_PART_LIMITED);
	assert_int_equal(sm_partition_port(&ps->v[0], f, smp, smp), SM_PART_FULL);
	const struct sm_partition *p1 = by_pkey(ps, 0x10);
	assert_int_equal(sm_partition_port(p1, f, ca2, smp), SM_PART_LIMITED);   /* the last line wins */
	assert_int_equal(sm_partition_port(p1, f, smp, smp), SM_PART_NONE);
	assert_int_equal(sm_partition_port(p1, f, sw0, smp), SM_PART_LIMITED);
	assert_int_equal(sm_partition_port(by_pkey(ps, 0x20), f, smp, smp), SM_PART_BOTH);
	assert_int_equal(by_pkey(ps, 0x30)->n_members, 0);
	sm_partitions_free(ps);

	/* P_Keys: bit 15 dropped, merged by P_Key, generated ones skip those taken, names found */
	ps = parse_ok("b.conf", "A=0x8001: ALL;\nB: SELF;\nA: 0x201;\nC=0x0001: 0x301;\n0x0005: ALL;\n: ALL;");
	assert_string_equal(by_pkey(ps, 1)->name, "A");
	assert_int_equal(by_pkey(ps, 1)->n_members, 3);
	assert_string_equal(by_pkey(ps, 2)->name, "B");
	assert_string_equal(by_pkey(ps, 5)->name, "0005");
	assert_string_equal(by_pkey(ps, 3)->name, "0003");
	sm_partitions_free(ps);
	sm_fabric_free(f);
}

static void t_scopes_and_multi(void **state)
{
	(void)state;
	struct sm_partitions *ps = parse_ok("s.conf", "X=0x40,ipoib,scope=2,scope=5,mtu=5,rate=7,sl=3,Q_Key=7,"
						      "TClass=9,FlowLabel=0x12 : ALL; Y=0x41 : mgid=ff15::9 ; "
						      "Z=0x42:\n ALL\r\n;");
	const struct sm_partition *x = by_pkey(ps, 0x40);
	assert_int_equal(x->n_mgroups, 2);
	assert_int_equal(x->mgroups[0].mgid[1], 0x12);
	assert_int_equal(x->mgroups[1].mgid[1], 0x15);
	assert_int_equal(x->mgroups[1].scope, 5);
	assert_int_equal(x->mgroups[1].hop_limit, 0xFF);
	assert_int_equal(x->mgroups[0].hop_limit, 0);
	assert_int_equal(x->mgroups[0].mtu, 5);
	assert_int_equal(x->mgroups[0].rate, 7);
	assert_int_equal(x->mgroups[0].sl, 3);
	assert_int_equal(x->mgroups[0].qkey, 7);
	assert_int_equal(x->mgroups[0].tclass, 9);
	assert_int_equal(x->mgroups[0].flow_label, 0x12);
	assert_int_equal(by_pkey(ps, 0x41)->n_mgroups, 1);
	assert_int_equal(by_pkey(ps, 0x41)->mgroups[0].qkey, 0);
	sm_partitions_free(ps);
}

/* The YAML form: the same set as the text. */
static void t_yaml(void **state)
{
	(void)state;
	struct sm_partitions *t = parse_ok("t.conf", "Default=0x7fff,ipoib,mtu=5: ALL=full;\n"
					   "Storage=0x100,defmember=full: 0x201, 0x301=limited;\n"
					   "Storage=0x100: mgid=ff12::77,sl=2,scope=8\n;");
	struct sm_partitions *y = parse_ok("p.yaml", "partitions:\n"
					   "  - name: Default\n    pkey: 0x7fff\n    ipoib: true\n    mtu: 5\n"
					   "    members: [ALL=full]\n"
					   "  - name: Storage\n    pkey: 0x100\n    defmember: full\n"
					   "    members: [\"0x201\", 0x301=limited]\n"
					   "    mgroups:\n      - {mgid: \"ff12::77\", sl: 2, scope: [8]}\n");
	assert_int_equal(t->n, y->n);
	for (size_t i = 0; i < t->n; i++) {
		assert_int_equal(t->v[i].pkey, y->v[i].pkey);
		assert_string_equal(t->v[i].name, y->v[i].name);
		assert_int_equal(t->v[i].ipoib, y->v[i].ipoib);
		assert_int_equal(t->v[i].n_members, y->v[i].n_members);
		for (size_t k = 0; k < t->v[i].n_members; k++) {
			assert_int_equal(t->v[i].members[k].who, y->v[i].members[k].who);
			assert_int_equal(t->v[i].members[k].guid, y->v[i].members[k].guid);
			assert_int_equal(t->v[i].members[k].m, y->v[i].members[k].m);
		}
		assert_int_equal(t->v[i].n_mgroups, y->v[i].n_mgroups);
		for (size_t k = 0; k < t->v[i].n_mgroups; k++) {
			const struct sm_part_mgroup *a = &t->v[i].mgroups[k], *b = &y->v[i].mgroups[k];
			assert_memory_equal(a->mgid, b->mgid, 16);
			assert_true(a->mtu == b->mtu && a->rate == b->rate && a->sl == b->sl && a->qkey == b->qkey &&
				    a->scope == b->scope);
		}
	}
	/* the same file named .conf but starting with partitions: is YAML too */
	struct sm_partitions *z = parse_ok("z.conf", "# yaml\npartitions: []\n");
	assert_int_equal(z->n, 1);
	sm_partitions_free(t);
	sm_partitions_free(y);
	sm_partitions_free(z);
}

/* Every kind of error: "FILE:LINE: message". */
static void t_errors(void **state)
{
	(void)state;
	static const struct {
		const char *name, *text, *want;
	} bad[] = {
		{ "e.conf", "# c\nDefault=0x7fff ALL=full;\n", "e.conf:2: no partition definition found" },
		{ "e.conf", "A=0x1: ALL;\nB=0xzz: ALL;\n", "e.conf:2: P_Key: '0xzz' is not a number" },
		{ "e.conf", "A=0x10000: ALL;", "e.conf:1: P_Key: 0x10000 is out of range" },
		{ "e.conf", "A=: ALL;", "e.conf:1: empty P_Key" },
		{ "e.conf", "A=1,foo: ALL;", "e.conf:1: unknown partition flag 'foo'" },
		{ "e.conf", "A=1,: ALL;", "e.conf:1: empty flag" },
		{ "e.conf", "A=1,mtu=9: ALL;", "e.conf:1: mtu: 9 is out of range" },
		{ "e.conf", "A=1,mtu: ALL;", "e.conf:1: mtu needs a value" },
		{ "e.conf", "A=1,mtu=0: ALL;", "e.conf:1: mtu: 0 is not an MTU code" },
		{ "e.conf", "A=1,rate=1: ALL;", "e.conf:1: rate: 1 is not a rate code" },
		{ "e.conf", "A=1,sl=16: ALL;", "e.conf:1: sl: 16 is out of range" },
		{ "e.conf", "A=1,scope=0: ALL;", "e.conf:1: scope: 0 is reserved" },
		{ "e.conf", "A=1,Q_Key=0x100000000: ALL;", "e.conf:1: Q_Key: 0x100000000 is out of range" },
		{ "e.conf", "A=1,TClass=256: ALL;", "e.conf:1: TClass: 256 is out of range" },
		{ "e.conf", "A=1,FlowLabel=0x100000: ALL;", "e.conf:1: FlowLabel: 0x100000 is out of range" },
		{ "e.conf", "A=1,defmember=most: ALL;", "e.conf:1: unknown membership 'most'" },
		{ "e.conf", "A=1,defmember: ALL;", "e.conf:1: defmember needs a value" },
		{ "e.conf", "A=1:\n ALL,\n 0x12x;", "e.conf:3: bad port GUID '0x12x'" },
		{ "e.conf", "A=1: 0;", "e.conf:1: bad port GUID '0'" },
		{ "e.conf", "A=1: 0x10000000000000000;", "e.conf:1: bad port GUID" },
		{ "e.conf", "A=1: ALL=most;", "e.conf:1: unknown membership 'most'" },
		{ "e.conf", "A=1: ALL=;", "e.conf:1: empty membership" },
		{ "e.conf", "A=1:\n\n mgid=zz::1\n;", "e.conf:3: mgid 'zz::1' is not a GID" },
		{ "e.conf", "A=1: mgid=fe80::1;", "e.conf:1: mgid fe80::1 is not a multicast GID" },
		{ "e.conf", "A=1: mgid=ff12::1,color=red;", "e.conf:1: unknown multicast group flag 'color'" },
		{ "e.conf", "A=1: mgid=ff12:401b:8002::1;", "e.conf:1: IP group ff12:401b:8002::1: P_Key 0x8002" },
		{ "e.conf", "A=1: mgid=ff12:401b::1,mtu=5;", "e.conf:1: IP group ff12:401b::1: rate 3 and mtu 5" },
		{ "e.conf", "A=1: ALL;\nB=2: ALL;\nA\0=3: ALL;", "e.conf:3: NUL byte" },
		{ "e.yaml", "partitions:\n  - name: A\n    pkey: 1\n    color: red\n", "e.yaml:4: unknown key 'color'" },
		{ "e.yaml", "partitions:\n  - name: A\n    members: [ALL=most]\n", "e.yaml:3: unknown membership" },
		{ "e.yaml", "partitions:\n  - name: A\n    ipoib: maybe\n", "e.yaml:3: ipoib: expected true or false" },
		{ "e.yaml", "partitions:\n  - name: A\n    mgroups:\n      - {sl: 1}\n", "e.yaml:4: mgroups: entry without mgid" },
		{ "e.yaml", "partitions:\n  - name: A\n    mgroups: [{mgid: 'ff12::1', defmember: full}]\n",
		  "e.yaml:3: unknown key 'defmember'" },
		{ "e.yaml", "partitions: {a: 1}\n", "e.yaml:1: partitions: expected a list" },
		{ "e.yaml", "other: 1\n", "e.yaml:1: unknown key 'other'" },
		{ "e.yaml", "partitions:\n  - [1\n", "e.yaml:3: YAML:" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sm_partitions *p = (struct sm_partitions *)1;
		char err[512] = "";
		size_t len = strlen(bad[i].text);
		if (strstr(bad[i].want, "NUL"))
			len += 1 + strlen(bad[i].text + len + 1);
		int rc = sm_partitions_parse(bad[i].text, len, bad[i].name, &p, err, sizeof(err));
		if (rc != -EINVAL || strncmp(err, bad[i].want, strlen(bad[i].want)))
			fail_msg("case %zu: rc %d, got '%s', want '%s'", i, rc, err, bad[i].want);
		assert_ptr_equal(p, (struct sm_partitions *)1);
	}
}

static void t_load(void **state)
{
	(void)state;
	struct sm_partitions *p = NULL;
	char err[512] = "";
	assert_int_equal(sm_partitions_load("/nonexistent/partitions.conf", &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/partitions.conf"));
	assert_int_equal(sm_partitions_load("/", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	sm_partitions_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_opensm_examples), cmocka_unit_test(t_membership),
		cmocka_unit_test(t_scopes_and_multi), cmocka_unit_test(t_yaml),
		cmocka_unit_test(t_errors), cmocka_unit_test(t_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
