/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_mad - every SMP decoder of smd/mad/codec.c
 *
 * The first input byte picks the decoder (mod 9), the rest is its input:
 *   0     a whole MAD (sm_smp_decode), then the attribute decoder its
 *         attribute id names, the response an SMA would build for it and
 *         the TrapRepress for a trap;
 *   1..7  NodeInfo, NodeDescription, PortInfo, SwitchInfo, LFT block,
 *         SMInfo, Notice, on the next 64 bytes (zero-padded);
 *   8     a directed-route path in text ("0,1,3").
 * Checks: an error names its field ("Field: ..." in msg); a success
 * re-encodes to bytes that decode and re-encode to the same bytes (the
 * codec is a fixed point after one pass); a built response passes
 * sm_smp_check_response against its request.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "mad/codec.h"

static void check_err(int rc, const struct sm_mad_err *e)
{
	FUZZ_CHECK(rc == -EBADMSG || rc == -EPROTO, "decoder error is not -EBADMSG/-EPROTO");
	FUZZ_CHECK(e->field != NULL && e->field[0] != '\0', "decoder error names no field");
	FUZZ_CHECK(e->msg[0] != '\0', "decoder error without a message");
	FUZZ_CHECK(strncmp(e->msg, e->field, strlen(e->field)) == 0, e->msg);
}

/* Decode d, and if it decodes, check encode(decode(encode(decode(d)))) == encode(decode(d)). */
#define ROUND_TRIP(type, dec, enc, d)                                                     \
	do {                                                                              \
		type a_, b_;                                                              \
		uint8_t w1_[SM_SMP_DATA_SIZE], w2_[SM_SMP_DATA_SIZE];                     \
		struct sm_mad_err e_;                                                     \
		int rc_;                                                                  \
		memset(&a_, 0, sizeof(a_));                                               \
		memset(&b_, 0, sizeof(b_));                                               \
		memset(&e_, 0, sizeof(e_));                                               \
		rc_ = dec((d), &a_, &e_);                                                 \
		if (rc_ < 0) {                                                            \
			check_err(rc_, &e_);                                              \
			break;                                                            \
		}                                                                         \
		enc(&a_, w1_);                                                            \
		rc_ = dec(w1_, &b_, &e_);                                                 \
		if (rc_ < 0)                                                              \
			fuzz_fail(#dec ": its own encoding does not decode", e_.msg);     \
		enc(&b_, w2_);                                                            \
		FUZZ_CHECK(memcmp(w1_, w2_, sizeof(w1_)) == 0, #enc " is not stable");    \
		post(&a_);                                                                \
	} while (0)

static void attr(unsigned which, const uint8_t d[SM_SMP_DATA_SIZE])
{
	switch (which) {
	case 1: {
#define post(x) FUZZ_CHECK((x)->node_type >= 1 && (x)->node_type <= 3 && (x)->num_ports >= 1 && \
			   (x)->num_ports <= SM_MAX_PORTS && (x)->node_guid && (x)->port_guid &&     \
			   (x)->local_port_num <= (x)->num_ports, "NodeInfo accepted out of range")
		ROUND_TRIP(struct sm_node_info, sm_node_info_decode, sm_node_info_encode, d);
#undef post
		break;
	}
	case 2: {
#define post(x) do { size_t k_, l_ = strlen((x)->desc); FUZZ_CHECK(l_ <= SM_SMP_DATA_SIZE, "desc"); \
		for (k_ = 0; k_ < l_; k_++) FUZZ_CHECK((unsigned char)(x)->desc[k_] >= 0x20 &&           \
						     (x)->desc[k_] != 0x7f, "control char in desc"); } while (0)
		ROUND_TRIP(struct sm_node_desc, sm_node_desc_decode, sm_node_desc_encode, d);
#undef post
		break;
	}
	case 3: {
#define post(x) do { struct sm_port_info o_; struct sm_port_info_set s_ = { .lid = 1, .lmc = (x)->lmc, \
		.sm_lid = 1, .port_state = SM_PORT_ARMED, .subnet_timeout = 18 };                       \
		FUZZ_CHECK((x)->port_state <= 4 && (x)->phys_state <= 7 && (x)->lmc <= 7, "PortInfo range"); \
		sm_port_info_prepare_set(&o_, (x), &s_);                                                \
		FUZZ_CHECK(o_.mkey == 0 && o_.link_width_enabled == 0 && o_.phys_state == 0, "prepare_set"); \
		} while (0)
		ROUND_TRIP(struct sm_port_info, sm_port_info_decode, sm_port_info_encode, d);
#undef post
		break;
	}
	case 4: {
#define post(x) FUZZ_CHECK((x)->lft_cap <= SM_LID_SPACE, "SwitchInfo.LinearFDBCap accepted out of range")
		ROUND_TRIP(struct sm_switch_info, sm_switch_info_decode, sm_switch_info_encode, d);
#undef post
		break;
	}
	case 5: {
#define post(x) (void)(x)
		ROUND_TRIP(struct sm_lft_block, sm_lft_block_decode, sm_lft_block_encode, d);
		break;
	}
	case 6: {
		ROUND_TRIP(struct sm_sm_info, sm_sm_info_decode, sm_sm_info_encode, d);
		break;
	}
	case 7: {
		ROUND_TRIP(struct sm_notice, sm_notice_decode, sm_notice_encode, d);
#undef post
		break;
	}
	}
}

static unsigned attr_for(uint16_t id)
{
	switch (id) {
	case SM_ATTR_NODE_INFO: return 1;
	case SM_ATTR_NODE_DESC: return 2;
	case SM_ATTR_PORT_INFO: return 3;
	case SM_ATTR_SWITCH_INFO: return 4;
	case SM_ATTR_LFT: return 5;
	case SM_ATTR_SM_INFO: return 6;
	case SM_ATTR_NOTICE: return 7;
	}
	return 0;
}

static void whole_mad(const uint8_t *buf, size_t len)
{
	struct sm_smp a, b, resp, rep;
	uint8_t w1[SM_MAD_SIZE], w2[SM_MAD_SIZE];
	struct sm_mad_err e;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&e, 0, sizeof(e));
	rc = sm_smp_decode(buf, len, &a, &e);
	if (rc < 0) {
		check_err(rc, &e);
		return;
	}
	FUZZ_CHECK(len >= SM_MAD_SIZE, "short MAD accepted");
	FUZZ_CHECK(a.hop_cnt <= SM_DR_MAX_HOPS, "hop count accepted out of range");
	rc = sm_smp_encode(&a, w1);
	if (rc < 0)
		fuzz_fail("a decoded MAD does not encode", NULL);
	memset(&b, 0, sizeof(b));
	rc = sm_smp_decode(w1, sizeof(w1), &b, &e);
	if (rc < 0)
		fuzz_fail("sm_smp_encode output does not decode", e.msg);
	FUZZ_CHECK(sm_smp_encode(&b, w2) == 0 && memcmp(w1, w2, sizeof(w1)) == 0, "MAD codec is not stable");

	attr(attr_for(a.attr_id), a.data);

	/* What a responder would send back must be taken as the answer. */
	sm_smp_make_response(&a, &resp, 0);
	rc = sm_smp_check_response(&a, &resp, &e);
	if (rc < 0)
		fuzz_fail("a response built for a request does not match it", e.msg);
	if (a.method == SM_METHOD_TRAP) {
		sm_smp_make_trap_repress(&a, &rep);
		FUZZ_CHECK(rep.method == SM_METHOD_TRAP_REPRESS && rep.tid == a.tid && rep.attr_id == a.attr_id,
			   "TrapRepress does not echo the trap");
	}
}

static void dr_path(const uint8_t *buf, size_t len)
{
	struct sm_dr_path p, q;
	char *s = malloc(len + 1), out[4 * (SM_DR_MAX_HOPS + 2)];

	FUZZ_CHECK(s != NULL, "ENOMEM");
	memcpy(s, buf, len);
	s[len] = '\0';
	memset(&p, 0, sizeof(p));
	if (sm_dr_path_parse(s, &p) == 0) {
		FUZZ_CHECK(p.cnt <= SM_DR_MAX_HOPS, "path longer than 63 hops");
		for (unsigned i = 1; i <= p.cnt; i++)
			FUZZ_CHECK(p.hops[i] >= 1 && p.hops[i] <= 254, "path port out of range");
		FUZZ_CHECK(sm_dr_path_str(&p, out, sizeof(out)) < (int)sizeof(out), "path text truncated");
		memset(&q, 0, sizeof(q));
		FUZZ_CHECK(sm_dr_path_parse(out, &q) == 0 && sm_dr_path_equal(&p, &q), out);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t d[SM_SMP_DATA_SIZE];
	unsigned which;

	if (size < 1)
		return 0;
	which = data[0] % 9;
	data++;
	size--;
	if (which == 0) {
		/* A copy of exactly the input's size, so ASan sees any over-read. */
		uint8_t *m = malloc(size ? size : 1);

		FUZZ_CHECK(m != NULL, "ENOMEM");
		memcpy(m, data, size);
		whole_mad(m, size);
		free(m);
	} else if (which == 8) {
		dr_path(data, size);
	} else {
		memset(d, 0, sizeof(d));
		memcpy(d, data, size < sizeof(d) ? size : sizeof(d));
		attr(which, d);
	}
	return 0;
}
