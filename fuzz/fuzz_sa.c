/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_sa - the SA decoder and query (sa_mad.c, query.c and every
 * handler) and RMPP (rmpp.c); the first byte picks the target (mod 3)
 *
 *  0  the rest is one SA MAD from any host (any length): decoded by
 *     sm_sa_hdr_decode and, when it decodes, answered by sm_sa_query
 *     against a 3-host snapshot and SA tables holding a ServiceRecord, an
 *     InformInfo subscription and two multicast groups (the broadcast group
 *     and one the SA named), as trusted or not (bit 0 of byte 1).
 *     Checks: 0 or -ENOMEM; an error status carries no record; a Get
 *     answers exactly one; records are 8-byte multiples that fit the buffer;
 *     the group table stays consistent (an MLID per group, members counted,
 *     no group without a full member but a well-known one).
 *  1  the rest is a sequence of segments (a length byte, then that many
 *     bytes, at most 256) fed to an RMPP receiver (bound 2,000 bytes,
 *     window 1 + byte 1 % 8). Checks: never more than the bound held; each
 *     MAD it writes decodes as an ACK, STOP or ABORT; whole, it holds at
 *     most 200 bytes per segment received in order.
 *  2  an RMPP sender of (bytes 1-2) bytes of records, driven by the rest:
 *     ACKs with segment/window numbers from the input, STOP, ABORT and
 *     timeouts. Checks: every DATA segment is within 1..nseg and carries
 *     exactly its slice of the records; once ended it writes nothing but
 *     its one ABORT.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "sa/dyn.h"
#include "sa/query.h"
#include "sa/records.h"
#include "sa/rmpp.h"
#include "sa/sa_mad.h"
#include "sm/snapshot.h"
#include "model/partitions.h"

static const struct sm_snapshot *snap;
static struct sm_partitions *parts;   /* the default: the broadcast group */
static const struct sm_sa_self self = { .port_guid = 0x11, .sm_key = 0x5ec, .state = 3, .priority = 1 };

static void setup(void)
{
	struct sm_fabric *f = sm_fabric_new();
	int64_t sw, ca;

	if (!f)
		fuzz_fail("no memory", NULL);
	sw = sm_fabric_add_node(f, SM_NODE_SWITCH, 0x100, 8, 0, 0);
	if (sw < 0 || sm_fabric_set_lid(f, (uint32_t)sw, 0, 1, 0))
		fuzz_fail("fabric", NULL);
	for (unsigned i = 0; i < 3; i++) {
		uint64_t g = 0x10 * (i + 1);

		ca = sm_fabric_add_node(f, SM_NODE_CA, g, 1, 0, 0);
		if (ca < 0 || sm_fabric_set_port_guid(f, (uint32_t)ca, 1, g + 1) ||
		    sm_fabric_link(f, (uint32_t)sw, i + 1, (uint32_t)ca, 1) ||
		    sm_fabric_set_lid(f, (uint32_t)ca, 1, i < 2 ? (uint16_t)(5 + i) : 8, i < 2 ? 0 : 2))   /* 8-11: LMC 2 */
			fuzz_fail("fabric", NULL);
		sm_fabric_port_checked(f, (uint32_t)ca, 1)->state = SM_PORT_ACTIVE;
	}
	struct sm_snapshot *s = sm_snapshot_new(0, f, NULL);

	if (!s)
		fuzz_fail("no memory", NULL);
	s->sm_lid = 5;
	s->subnet_prefix = 0xfe80000000000000ull;
	s->up = true;
	snap = s;
	if (sm_partitions_default(&parts))
		fuzz_fail("no memory", NULL);
}

static int ask(const struct sm_sa_ctx *ctx, struct sm_sa_req *r, struct sm_sa_ans *a)
{
	int rc = sm_sa_query(ctx, r, a);

	FUZZ_CHECK(rc == 0 || rc == -ENOMEM, "sm_sa_query returned something else");
	if (rc)
		return rc;
	FUZZ_CHECK(a->status == SM_SA_STATUS_OK || a->n == 0, "an error status with records");
	if (a->status == SM_SA_STATUS_OK && r->hdr.method == SM_SA_GET)
		FUZZ_CHECK(a->n == 1, "a Get answered with other than one record");
	if (a->n) {
		FUZZ_CHECK(a->rec_size && a->rec_size % 8 == 0, "record size not a multiple of 8");
		FUZZ_CHECK(a->n <= a->cap, "more records than room");
	}
	return 0;
}

static void query(const uint8_t *d, size_t n)
{
	struct sm_sa_dyn *dyn;
	struct sm_sa_ans a = { 0 };
	struct sm_sa_ctx ctx = { .snap = snap, .self = &self, .now_us = 1000000 };
	struct sm_sa_req r = { .from = { .lid = 6, .qpn = 1, .qkey = SM_SA_QKEY } };
	uint8_t rec[SM_SA_DATA_SIZE] = { 0 };

	if (n < 1 || sm_sa_dyn_new(NULL, &dyn))
		return;
	ctx.dyn = dyn;
	/* a ServiceRecord (lease 1 s) and a subscription to every trap, from LID 6 */
	r.hdr = (struct sm_sa_hdr){ .base_version = 1, .mgmt_class = 3, .class_version = 2, .method = SM_SA_SET,
				    .attr_id = SM_SA_ATTR_SERVICE_RECORD, .comp_mask = 0x13 };
	sm_sa_put64(rec, 42);
	sm_sa_gid_make(rec + 8, snap->subnet_prefix, 0x21);
	sm_sa_put32(rec + 28, 1);
	r.data = rec;
	r.len = sizeof(rec);
	ask(&ctx, &r, &a);
	memset(rec, 0, sizeof(rec));
	r.hdr.attr_id = SM_SA_ATTR_INFORM_INFO;
	rec[22] = rec[23] = 1;
	sm_sa_put16(rec + 26, 0xFFFF);
	ask(&ctx, &r, &a);

	/* multicast: the default partition's broadcast group, 0x21 a full member of it and of a group of its own */
	if (parts && sm_sa_dyn_mc_config(dyn, parts, 18) == 0) {
		static const uint8_t bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
		memset(rec, 0, sizeof(rec));
		memcpy(rec, bcast, 16);
		sm_sa_gid_make(rec + 16, snap->subnet_prefix, 0x21);
		rec[40] = rec[41] = 0xff;
		rec[48] = 0x21;
		r.hdr.attr_id = SM_SA_ATTR_MCMEMBER_RECORD;
		r.hdr.comp_mask = 0x100C7 | 0x3000;   /* what a create needs */
		ask(&ctx, &r, &a);
		memset(rec, 0, 16);                   /* MGID 0: the SA assigns one */
		ask(&ctx, &r, &a);
	}

	r.trusted = d[0] & 1;
	if (sm_sa_hdr_decode(d + 1, n - 1, &r.hdr) == 0) {
		r.data = d + 1 + SM_SA_HDR_SIZE;
		r.len = n - 1 - SM_SA_HDR_SIZE;
		ctx.now_us = 1000000 + (uint64_t)d[0] * 10000;
		ask(&ctx, &r, &a);
	}
	/* the group table stays consistent: one MLID per group, the members counted */
	size_t members = 0;
	for (size_t i = 0; i < dyn->n_groups; i++) {
		members += dyn->groups[i].n;
		FUZZ_CHECK(dyn->groups[i].fullish || dyn->groups[i].well_known, "a group without a full member kept");
	}
	FUZZ_CHECK(members == sm_sa_dyn_mc_members(dyn), "members miscounted");
	FUZZ_CHECK(sm_sa_dyn_mlids_used(dyn) == sm_sa_dyn_groups(dyn), "MLIDs and groups differ");
	sm_sa_ans_free(&a);
	sm_sa_dyn_free(dyn);
}

static void check_control(const uint8_t out[SM_SA_MAD_SIZE])
{
	struct sm_sa_hdr h;

	FUZZ_CHECK(sm_sa_hdr_decode(out, SM_SA_MAD_SIZE, &h) == 0, "our own MAD does not decode");
	FUZZ_CHECK(h.rmpp_type == SM_RMPP_TYPE_ACK || h.rmpp_type == SM_RMPP_TYPE_STOP ||
			   h.rmpp_type == SM_RMPP_TYPE_ABORT, "the receiver wrote other than ACK/STOP/ABORT");
}

static void receive(const uint8_t *d, size_t n)
{
	struct sm_rmpp_recv r;
	uint8_t mad[SM_SA_MAD_SIZE], out[SM_SA_MAD_SIZE];
	uint64_t now = 0;
	bool sent;

	if (n < 1)
		return;
	sm_rmpp_recv_init(&r, 2000, 1 + d[0] % 8u, 1000, now);
	for (size_t i = 1; i < n;) {
		size_t len = d[i++], take = len;
		struct sm_sa_hdr h;

		if (take > n - i)
			take = n - i;
		if (take > SM_SA_MAD_SIZE)
			take = SM_SA_MAD_SIZE;
		memset(mad, 0, sizeof(mad));
		memcpy(mad, d + i, take);
		i += take;
		if (sm_sa_hdr_decode(mad, take, &h))
			continue;
		enum sm_rmpp_act a = sm_rmpp_recv_input(&r, &h, mad, take, now++, out, &sent);

		FUZZ_CHECK(r.len <= 2000, "reassembled past the bound");
		if (sent)
			check_control(out);
		if (a == SM_RMPP_DONE)
			FUZZ_CHECK(r.len <= (size_t)r.last * SM_SA_DATA_SIZE, "more data than segments");
	}
	sm_rmpp_recv_free(&r);
}

static void send_side(const uint8_t *d, size_t n)
{
	static uint8_t data[65536];
	struct sm_sa_hdr hdr = { .base_version = 1, .mgmt_class = 3, .class_version = 2,
				 .method = SM_SA_GET_TABLE_RESP, .tid = 1, .attr_id = SM_SA_ATTR_PATH_RECORD };
	struct sm_rmpp_send s;
	uint8_t mad[SM_SA_MAD_SIZE];
	uint64_t now = 0;
	size_t len;
	bool ended = false;
	unsigned aborts = 0;

	if (n < 2)
		return;
	len = (size_t)d[0] << 8 | d[1];
	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 31);
	sm_rmpp_send_init(&s, &hdr, data, len, 10, 2);
	for (size_t i = 2; i + 2 < n || i == 2; i += 3) {
		enum sm_rmpp_act a;

		while ((a = sm_rmpp_send_next(&s, now, mad)) == SM_RMPP_SEND) {
			struct sm_sa_hdr h;

			FUZZ_CHECK(sm_sa_hdr_decode(mad, sizeof(mad), &h) == 0, "our own segment does not decode");
			if (h.rmpp_type == SM_RMPP_TYPE_ABORT) {
				FUZZ_CHECK(++aborts == 1, "more than one ABORT");
				continue;
			}
			FUZZ_CHECK(!ended, "a segment after the end");
			FUZZ_CHECK(h.rmpp_data1 >= 1 && h.rmpp_data1 <= s.nseg, "segment number out of range");
			size_t off = (size_t)(h.rmpp_data1 - 1) * SM_SA_DATA_SIZE;
			size_t k = len - off < SM_SA_DATA_SIZE ? len - off : SM_SA_DATA_SIZE;

			FUZZ_CHECK(off <= len && !memcmp(mad + SM_SA_HDR_SIZE, data + off, k), "wrong slice");
		}
		if (a == SM_RMPP_DONE || a == SM_RMPP_FAILED)
			ended = true;
		if (i + 2 >= n)
			break;
		struct sm_sa_hdr c = hdr;

		c.method = SM_SA_GET_TABLE;
		c.rmpp_version = d[i] & 0x80 ? 2 : 1;
		c.rmpp_type = (uint8_t)(d[i] & 7);
		c.rmpp_data1 = d[i + 1];
		c.rmpp_data2 = d[i + 1] + d[i + 2] % 16u;
		if (c.rmpp_type == 0) {
			now += 10 + d[i + 2];
			sm_rmpp_send_timeout(&s, now);
		} else {
			sm_rmpp_send_input(&s, &c, now);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!snap)
		setup();
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		query(data + 1, size - 1);
		break;
	case 1:
		receive(data + 1, size - 1);
		break;
	default:
		send_side(data + 1, size - 1);
		break;
	}
	return 0;
}
