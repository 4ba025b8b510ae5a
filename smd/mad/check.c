/* SPDX-License-Identifier: MIT */
/*
 * DOC: response validation (implementation)
 *
 * Classification only: what is wrong with an answer, most basic problem
 * first (an answer to another attribute is counted as such, not as a bad
 * payload). See sm_check.h for what is checked and why answers are dropped
 * rather than trusted.
 */
#include "mad/check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sm_check_kind_name(unsigned kind)
{
	static const char *const names[SM_CHK_COUNT] = {
		"ok", "truncated", "header", "method", "attr", "mod", "hops", "status",
		"node_type", "num_ports", "port_num", "guid_zero", "guid_dup", "payload",
	};
	return kind < SM_CHK_COUNT ? names[kind] : "?";
}

static unsigned fail(struct sm_mad_err *err, unsigned kind, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static unsigned fail(struct sm_mad_err *err, unsigned kind, const char *field, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err)
		return kind;
	err->field = field;
	n = snprintf(err->msg, sizeof(err->msg), "%s: ", field);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return kind;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return kind;
}

unsigned sm_check_decode_fail(const struct sm_mad_err *err)
{
	if (!err || !err->field)
		return SM_CHK_HEADER;
	if (!strcmp(err->field, "MAD.length"))
		return SM_CHK_TRUNCATED;
	if (!strncmp(err->field, "SMP.Hop", 7))
		return SM_CHK_HOPS;
	return SM_CHK_HEADER;
}

/* Attributes every SMA answers a Get for, modifier 0: an error status is a lie. */
static int mandatory_get(const struct sm_smp *req)
{
	return req->method == SM_METHOD_GET &&
	       (req->attr_id == SM_ATTR_NODE_INFO || req->attr_id == SM_ATTR_NODE_DESC);
}

static unsigned check_node_info(const uint8_t *d, struct sm_mad_err *err)
{
	struct sm_node_info ni;
	struct sm_mad_err me;

	/* the decoder rejects these too; classify them first, by field */
	if (d[2] < SM_NODE_CA || d[2] > SM_NODE_ROUTER)
		return fail(err, SM_CHK_NODE_TYPE, "NodeInfo.NodeType", "%u is not CA, switch or router", d[2]);
	if (d[3] == 0 || d[3] == 255)
		return fail(err, SM_CHK_NUM_PORTS, "NodeInfo.NumPorts", "%u (1..254 possible)", d[3]);
	if (sm_node_info_decode(d, &ni, &me)) {
		if (me.field && (!strcmp(me.field, "NodeInfo.NodeGUID") || !strcmp(me.field, "NodeInfo.PortGUID")))
			return fail(err, SM_CHK_GUID_ZERO, me.field, "is 0");
		if (me.field && !strcmp(me.field, "NodeInfo.LocalPortNum"))
			return fail(err, SM_CHK_PORT_NUM, me.field, "%u beyond NumPorts %u", ni.local_port_num,
				    ni.num_ports);
		return fail(err, SM_CHK_PAYLOAD, me.field ? me.field : "NodeInfo", "%s", me.msg);
	}
	if (ni.node_type != SM_NODE_SWITCH && ni.local_port_num == 0)
		return fail(err, SM_CHK_PORT_NUM, "NodeInfo.LocalPortNum",
			    "0 on a %s (only a switch has a port 0)", ni.node_type == SM_NODE_CA ? "CA" : "router");
	return SM_CHK_OK;
}

unsigned sm_check_payload(const struct sm_smp *req, const struct sm_smp *resp, struct sm_mad_err *err)
{
	struct sm_mad_err me;
	(void)req;

	switch (resp->attr_id) {
	case SM_ATTR_NODE_INFO:
		return check_node_info(resp->data, err);
	case SM_ATTR_PORT_INFO: {
		struct sm_port_info pi;
		if (sm_port_info_decode(resp->data, &pi, &me))
			return fail(err, SM_CHK_PAYLOAD, me.field ? me.field : "PortInfo", "%s", me.msg);
		return SM_CHK_OK;
	}
	case SM_ATTR_SWITCH_INFO: {
		struct sm_switch_info si;
		if (sm_switch_info_decode(resp->data, &si, &me))
			return fail(err, SM_CHK_PAYLOAD, me.field ? me.field : "SwitchInfo", "%s", me.msg);
		return SM_CHK_OK;
	}
	case SM_ATTR_LFT: {
		struct sm_lft_block b;
		if (sm_lft_block_decode(resp->data, &b, &me))
			return fail(err, SM_CHK_PAYLOAD, me.field ? me.field : "LinearForwardingTable", "%s",
				    me.msg);
		return SM_CHK_OK;
	}
	default:
		return SM_CHK_OK;
	}
}

unsigned sm_check_response(const struct sm_smp *req, const struct sm_smp *resp, struct sm_mad_err *err)
{
	if (resp->mgmt_class != req->mgmt_class)
		return fail(err, SM_CHK_HEADER, "MAD.MgmtClass", "0x%02x, request was 0x%02x", resp->mgmt_class,
			    req->mgmt_class);
	if (resp->method != SM_METHOD_GET_RESP)
		return fail(err, SM_CHK_METHOD, "MAD.Method", "0x%02x is not GetResp", resp->method);
	if (resp->attr_id != req->attr_id)
		return fail(err, SM_CHK_ATTR, "MAD.AttributeID", "0x%04x, request was 0x%04x", resp->attr_id,
			    req->attr_id);
	if (resp->attr_mod != req->attr_mod)
		return fail(err, SM_CHK_MOD, "MAD.AttributeModifier", "0x%08x, request was 0x%08x",
			    resp->attr_mod, req->attr_mod);
	if (req->mgmt_class == SM_CLASS_SMI_DR) {
		if (!resp->direction)
			return fail(err, SM_CHK_HOPS, "SMP.D", "response without the direction bit");
		if (resp->hop_cnt != req->hop_cnt)
			return fail(err, SM_CHK_HOPS, "SMP.HopCount", "%u, request was %u", resp->hop_cnt,
				    req->hop_cnt);
		/*
		 * Back at the requester the hop pointer has run down (0 from
		 * ibsim, the mock and the kernel's SMI); it can never exceed
		 * the hop count except on a local (0-hop) SMP.
		 */
		if (resp->hop_ptr > resp->hop_cnt && !(resp->hop_cnt == 0 && resp->hop_ptr == 1))
			return fail(err, SM_CHK_HOPS, "SMP.HopPointer", "%u beyond hop count %u", resp->hop_ptr,
				    resp->hop_cnt);
		if (memcmp(resp->initial_path + 1, req->initial_path + 1, req->hop_cnt) != 0)
			return fail(err, SM_CHK_HOPS, "SMP.InitialPath", "differs from the request's");
	}
	if (resp->status) {
		if (resp->status & 0x00E0)
			return fail(err, SM_CHK_STATUS, "MAD.Status", "0x%04x has reserved bits set", resp->status);
		if (resp->status & SM_MAD_STATUS_REDIRECT)
			return fail(err, SM_CHK_STATUS, "MAD.Status", "redirect (0x%04x): SMPs are never redirected",
				    resp->status);
		unsigned code = (resp->status & SM_MAD_STATUS_CODE_MASK) >> 2;
		if (code >= 4 && code <= 6)
			return fail(err, SM_CHK_STATUS, "MAD.Status", "reserved code %u (0x%04x)", code,
				    resp->status);
		if (mandatory_get(req) && !(resp->status & SM_MAD_STATUS_BUSY))
			return fail(err, SM_CHK_STATUS, "MAD.Status",
				    "0x%04x to a Get every SMA must answer", resp->status);
		return SM_CHK_OK;   /* a real error: the caller looks at the status, not the payload */
	}
	return sm_check_payload(req, resp, err);
}

/* ---- the book ---- */

void sm_check_book_init(struct sm_check_book *b)
{
	memset(b, 0, sizeof(*b));
}

void sm_check_book_clear(struct sm_check_book *b)
{
	if (!b)
		return;
	free(b->ent);
	memset(b, 0, sizeof(*b));
}

static struct sm_check_ent *book_find(const struct sm_check_book *b, uint64_t guid)
{
	/* few entries (only GUIDs that lied): a linear scan is enough */
	for (uint32_t i = 0; i < b->n; i++)
		if (b->ent[i].guid == guid)
			return &b->ent[i];
	return NULL;
}

int sm_check_book_flag(struct sm_check_book *b, uint64_t guid, unsigned kind)
{
	struct sm_check_ent *e = book_find(b, guid);

	if (e) {
		if (e->flags < UINT32_MAX)
			e->flags++;
		return (int)(e->flags > 0x7FFFFFFF ? 0x7FFFFFFF : e->flags);
	}
	if (b->n == SM_CHECK_BOOK_MAX)
		return -ENOMEM;
	if (b->n == b->cap) {
		uint32_t nc = b->cap ? b->cap * 2 : 16;
		void *p = realloc(b->ent, (size_t)nc * sizeof(*b->ent));
		if (!p)
			return -ENOMEM;
		b->ent = p;
		b->cap = nc;
	}
	b->ent[b->n++] = (struct sm_check_ent){ .guid = guid, .flags = 1, .kind = (uint8_t)kind };
	return 1;
}

unsigned sm_check_book_suspect(const struct sm_check_book *b, uint64_t guid)
{
	const struct sm_check_ent *e;

	if (!b || !guid)
		return SM_CHK_OK;
	e = book_find(b, guid);
	return e && e->flags >= SM_CHECK_SUSPECT_AFTER ? e->kind : SM_CHK_OK;
}
