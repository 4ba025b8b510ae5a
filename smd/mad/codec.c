/* SPDX-License-Identifier: MIT */
/*
 * DOC: SMP codecs (implementation)
 *
 * Owns nothing: pure functions between host-order structs (mad.h) and wire
 * bytes. Byte offsets are written out here as constants and checked at
 * compile time against the layouts of the installed headers (opensm's
 * iba/ib_types.h and rdma-core's infiniband/umad_sm.h), so a typo in an
 * offset fails the build instead of a sweep. Multi-byte fields are big
 * endian on the wire; sub-byte fields are packed high bits first.
 *
 * Decoders validate what the SM would otherwise trust (type ranges, port
 * counts, GUIDs, states) and name the field in the error.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iba/ib_types.h>
#include <infiniband/umad_sm.h>

#include "mad/codec.h"
#include "lib/be.h"

/* ---- compile-time layout checks against the installed headers ---- */
static_assert(sizeof(ib_smp_t) == SM_MAD_SIZE, "ib_smp_t is one MAD");
static_assert(sizeof(struct umad_smp) == SM_MAD_SIZE, "umad_smp is one MAD");
static_assert(offsetof(ib_smp_t, status) == 4, "SMP status");
static_assert(offsetof(ib_smp_t, hop_ptr) == 6, "SMP hop pointer");
static_assert(offsetof(ib_smp_t, hop_count) == 7, "SMP hop count");
static_assert(offsetof(ib_smp_t, trans_id) == 8, "SMP TID");
static_assert(offsetof(ib_smp_t, attr_id) == 16, "SMP attribute id");
static_assert(offsetof(ib_smp_t, attr_mod) == 20, "SMP attribute modifier");
static_assert(offsetof(ib_smp_t, m_key) == 24, "SMP M_Key");
static_assert(offsetof(ib_smp_t, dr_slid) == 32, "SMP DrSLID");
static_assert(offsetof(ib_smp_t, dr_dlid) == 34, "SMP DrDLID");
static_assert(offsetof(ib_smp_t, data) == SM_SMP_DATA_OFF, "SMP data");
static_assert(offsetof(ib_smp_t, initial_path) == 128, "SMP initial path");
static_assert(offsetof(ib_smp_t, return_path) == 192, "SMP return path");
static_assert(offsetof(struct umad_smp, data) == SM_SMP_DATA_OFF, "umad_smp data");
static_assert(IB_SMP_DATA_SIZE == SM_SMP_DATA_SIZE, "SMP data size");
static_assert(IB_SUBNET_PATH_HOPS_MAX == SM_DR_MAX_HOPS + 1, "DR path array size");

static_assert(sizeof(ib_node_info_t) == 40, "NodeInfo");
static_assert(offsetof(ib_node_info_t, sys_guid) == 4, "NodeInfo.SystemImageGUID");
static_assert(offsetof(ib_node_info_t, node_guid) == 12, "NodeInfo.NodeGUID");
static_assert(offsetof(ib_node_info_t, port_guid) == 20, "NodeInfo.PortGUID");
static_assert(offsetof(ib_node_info_t, partition_cap) == 28, "NodeInfo.PartitionCap");
static_assert(offsetof(ib_node_info_t, device_id) == 30, "NodeInfo.DeviceID");
static_assert(offsetof(ib_node_info_t, revision) == 32, "NodeInfo.Revision");
static_assert(offsetof(ib_node_info_t, port_num_vendor_id) == 36, "NodeInfo.LocalPortNum");

static_assert(sizeof(ib_port_info_t) == 64, "PortInfo");
static_assert(offsetof(ib_port_info_t, subnet_prefix) == 8, "PortInfo.GidPrefix");
static_assert(offsetof(ib_port_info_t, base_lid) == 16, "PortInfo.LID");
static_assert(offsetof(ib_port_info_t, master_sm_base_lid) == 18, "PortInfo.MasterSMLID");
static_assert(offsetof(ib_port_info_t, capability_mask) == 20, "PortInfo.CapabilityMask");
static_assert(offsetof(ib_port_info_t, local_port_num) == 28, "PortInfo.LocalPortNum");
static_assert(offsetof(ib_port_info_t, state_info1) == 32, "PortInfo.PortState");
static_assert(offsetof(ib_port_info_t, mkey_lmc) == 34, "PortInfo.LMC");
static_assert(offsetof(ib_port_info_t, link_speed) == 35, "PortInfo.LinkSpeed");
static_assert(offsetof(ib_port_info_t, mtu_cap) == 41, "PortInfo.MTUCap");
static_assert(offsetof(ib_port_info_t, vl_enforce) == 43, "PortInfo.OperationalVLs");
static_assert(offsetof(ib_port_info_t, m_key_violations) == 44, "PortInfo.M_KeyViolations");
static_assert(offsetof(ib_port_info_t, guid_cap) == 50, "PortInfo.GUIDCap");
static_assert(offsetof(ib_port_info_t, max_credit_hint) == 54, "PortInfo.MaxCreditHint");
static_assert(offsetof(ib_port_info_t, link_rt_latency) == 56, "PortInfo.LinkRoundTripLatency");
static_assert(offsetof(ib_port_info_t, capability_mask2) == 60, "PortInfo.CapabilityMask2");
static_assert(offsetof(ib_port_info_t, link_speed_ext_enabled) == 63, "PortInfo.LinkSpeedExtEnabled");

static_assert(sizeof(ib_switch_info_t) == 20, "SwitchInfo");
static_assert(offsetof(ib_switch_info_t, lin_top) == 6, "SwitchInfo.LinearFDBTop");
static_assert(offsetof(ib_switch_info_t, life_state) == 11, "SwitchInfo.LifeTimeValue");
static_assert(offsetof(ib_switch_info_t, lids_per_port) == 12, "SwitchInfo.LIDsPerPort");
static_assert(offsetof(ib_switch_info_t, flags) == 16, "SwitchInfo.EnhancedPort0");
static_assert(offsetof(ib_switch_info_t, mcast_top) == 18, "SwitchInfo.MulticastFDBTop");

static_assert(sizeof(ib_sm_info_t) == 21, "SMInfo");
static_assert(offsetof(ib_sm_info_t, sm_key) == 8, "SMInfo.SM_Key");
static_assert(offsetof(ib_sm_info_t, act_count) == 16, "SMInfo.ActCount");
static_assert(offsetof(ib_sm_info_t, pri_state) == 20, "SMInfo.Priority");

static_assert(sizeof(ib_mad_notice_attr_t) == 80, "Notice");
static_assert(offsetof(ib_mad_notice_attr_t, issuer_lid) == 6, "Notice.IssuerLID");
static_assert(offsetof(ib_mad_notice_attr_t, toggle_count) == 8, "Notice.NoticeToggle");
static_assert(offsetof(ib_mad_notice_attr_t, data_details) == 10, "Notice.DataDetails");
static_assert(sizeof(((ib_mad_notice_attr_t *)0)->data_details) == SM_NOTICE_DETAILS,
	      "Notice.DataDetails size");
static_assert(offsetof(ib_mad_notice_attr_t, data_details.ntc_128.sw_lid) == 10,
	      "Notice trap 128 LIDADDR");
static_assert(offsetof(ib_mad_notice_attr_t, data_details.ntc_144.lid) == 12,
	      "Notice trap 144 LIDADDR");
static_assert(offsetof(ib_mad_notice_attr_t, data_details.ntc_144.local_changes) == 15,
	      "Notice trap 144 OtherLocalChanges");
static_assert(offsetof(ib_mad_notice_attr_t, data_details.ntc_144.new_cap_mask) == 16,
	      "Notice trap 144 CapabilityMask");
static_assert(offsetof(ib_mad_notice_attr_t, data_details.ntc_144.change_flgs) == 20,
	      "Notice trap 144 ChangeFlags");
static_assert(offsetof(ib_mad_notice_attr_t, data_details.ntc_144.cap_mask2) == 22,
	      "Notice trap 144 CapabilityMask2");

#define SAME_ID(a, b) ((int)(a) == (int)(b))
static_assert(SAME_ID(UMAD_SM_ATTR_NODE_INFO, SM_ATTR_NODE_INFO) &&
	      SAME_ID(UMAD_SM_ATTR_PORT_INFO, SM_ATTR_PORT_INFO) &&
	      SAME_ID(UMAD_SM_ATTR_SWITCH_INFO, SM_ATTR_SWITCH_INFO) &&
	      SAME_ID(UMAD_SM_ATTR_LINEAR_FT, SM_ATTR_LFT) &&
	      SAME_ID(UMAD_SM_ATTR_NODE_DESC, SM_ATTR_NODE_DESC) &&
	      SAME_ID(UMAD_SM_ATTR_SM_INFO, SM_ATTR_SM_INFO),
	      "attribute ids");
static_assert(SAME_ID(UMAD_SMP_DIRECTION, SM_SMP_DIRECTION), "D bit");

/* ---- byte helpers (lib/be.h) ---- */
#define get16 sm_be_get16
#define get32 sm_be_get32
#define get64 sm_be_get64
#define put16 sm_be_put16
#define put32 sm_be_put32
#define put64 sm_be_put64

/* Fill err (if any) with "field: message" and return rc. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail_rc(int rc, struct sm_mad_err *err, const char *field, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		int n = snprintf(err->msg, sizeof(err->msg), "%s: ", field);
		if (n < 0 || (size_t)n >= sizeof(err->msg))
			n = 0;
		va_start(ap, fmt);
		vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
		va_end(ap);
		err->field = field;
	}
	return rc;
}

#define mad_fail(err, field, ...) fail_rc(-EBADMSG, err, field, __VA_ARGS__)
#define proto_fail(err, field, ...) fail_rc(-EPROTO, err, field, __VA_ARGS__)

/* ---- whole MAD ---- */

void sm_smp_init_dr(struct sm_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod,
		    const struct sm_dr_path *path)
{
	memset(smp, 0, sizeof(*smp));
	smp->base_version = 1;
	smp->mgmt_class = SM_CLASS_SMI_DR;
	smp->class_version = 1;
	smp->method = method;
	smp->attr_id = attr_id;
	smp->attr_mod = attr_mod;
	smp->dr_slid = SM_PERMISSIVE_LID;
	smp->dr_dlid = SM_PERMISSIVE_LID;
	if (path) {
		unsigned cnt = path->cnt > SM_DR_MAX_HOPS ? SM_DR_MAX_HOPS : path->cnt;
		smp->hop_cnt = (uint8_t)cnt;
		memcpy(smp->initial_path + 1, path->hops + 1, cnt);
	}
}

void sm_smp_init_lid(struct sm_smp *smp, uint8_t method, uint16_t attr_id, uint32_t attr_mod)
{
	memset(smp, 0, sizeof(*smp));
	smp->base_version = 1;
	smp->mgmt_class = SM_CLASS_SMI;
	smp->class_version = 1;
	smp->method = method;
	smp->attr_id = attr_id;
	smp->attr_mod = attr_mod;
}

int sm_smp_encode(const struct sm_smp *smp, uint8_t mad[SM_MAD_SIZE])
{
	bool dr = smp->mgmt_class == SM_CLASS_SMI_DR;

	if (smp->mgmt_class != SM_CLASS_SMI && !dr)
		return -EINVAL;
	if (dr && (smp->hop_cnt > SM_DR_MAX_HOPS || smp->hop_ptr > smp->hop_cnt + 1))
		return -EINVAL;
	/* the header only: the rest is copied whole (a 256-byte memset was a tenth of the SM's send CPU) */
	memset(mad, 0, SM_SMP_DATA_OFF);
	mad[0] = smp->base_version;
	mad[1] = smp->mgmt_class;
	mad[2] = smp->class_version;
	mad[3] = smp->method;
	put16(mad + 4, (uint16_t)((smp->status & 0x7FFF) | (dr && smp->direction ? SM_SMP_DIRECTION : 0)));
	if (dr) {
		mad[6] = smp->hop_ptr;
		mad[7] = smp->hop_cnt;
	}
	put64(mad + 8, smp->tid);
	put16(mad + 16, smp->attr_id);
	put32(mad + 20, smp->attr_mod);
	put64(mad + 24, smp->mkey);
	if (dr) {
		put16(mad + 32, smp->dr_slid);
		put16(mad + 34, smp->dr_dlid);
	}
	memcpy(mad + SM_SMP_DATA_OFF, smp->data, SM_SMP_DATA_SIZE);
	if (dr) {
		memcpy(mad + 128, smp->initial_path, SM_DR_MAX_HOPS + 1);
		memcpy(mad + 192, smp->return_path, SM_DR_MAX_HOPS + 1);
	} else {
		memset(mad + 128, 0, SM_MAD_SIZE - 128);
	}
	return 0;
}

int sm_smp_decode(const uint8_t *buf, size_t len, struct sm_smp *smp, struct sm_mad_err *err)
{
	uint16_t st;
	bool dr;

	if (!buf || len < SM_MAD_SIZE)
		return mad_fail(err, "MAD.length", "%zu bytes, an SMP is %d", buf ? len : 0,
				SM_MAD_SIZE);
	memset(smp, 0, sizeof(*smp));
	if (buf[0] != 1)
		return mad_fail(err, "MAD.BaseVersion", "%u, expected 1", buf[0]);
	if (buf[1] != SM_CLASS_SMI && buf[1] != SM_CLASS_SMI_DR)
		return mad_fail(err, "MAD.MgmtClass", "0x%02x is not an SMP class", buf[1]);
	if (buf[2] != 1)
		return mad_fail(err, "MAD.ClassVersion", "%u, expected 1", buf[2]);
	dr = buf[1] == SM_CLASS_SMI_DR;
	smp->base_version = buf[0];
	smp->mgmt_class = buf[1];
	smp->class_version = buf[2];
	smp->method = buf[3];
	st = get16(buf + 4);
	smp->status = st & 0x7FFF;
	if (dr) {
		smp->direction = (st & SM_SMP_DIRECTION) != 0;
		smp->hop_ptr = buf[6];
		smp->hop_cnt = buf[7];
		if (smp->hop_cnt > SM_DR_MAX_HOPS)
			return mad_fail(err, "SMP.HopCount", "%u exceeds %d", smp->hop_cnt,
					SM_DR_MAX_HOPS);
		if (smp->hop_ptr > smp->hop_cnt + 1)
			return mad_fail(err, "SMP.HopPointer", "%u beyond hop count %u + 1",
					smp->hop_ptr, smp->hop_cnt);
		smp->dr_slid = get16(buf + 32);
		smp->dr_dlid = get16(buf + 34);
		memcpy(smp->initial_path, buf + 128, SM_DR_MAX_HOPS + 1);
		memcpy(smp->return_path, buf + 192, SM_DR_MAX_HOPS + 1);
	} else {
		smp->status = st;
	}
	smp->tid = get64(buf + 8);
	smp->attr_id = get16(buf + 16);
	smp->attr_mod = get32(buf + 20);
	smp->mkey = get64(buf + 24);
	memcpy(smp->data, buf + SM_SMP_DATA_OFF, SM_SMP_DATA_SIZE);
	return 0;
}

int sm_smp_check_response(const struct sm_smp *req, const struct sm_smp *resp,
			  struct sm_mad_err *err)
{
	if (resp->method != SM_METHOD_GET_RESP)
		return proto_fail(err, "MAD.Method", "0x%02x is not GetResp", resp->method);
	if (resp->mgmt_class != req->mgmt_class)
		return proto_fail(err, "MAD.MgmtClass", "0x%02x, request was 0x%02x",
				  resp->mgmt_class, req->mgmt_class);
	if (resp->attr_id != req->attr_id)
		return proto_fail(err, "MAD.AttributeID", "0x%04x, request was 0x%04x",
				  resp->attr_id, req->attr_id);
	if (resp->attr_mod != req->attr_mod)
		return proto_fail(err, "MAD.AttributeModifier", "0x%08x, request was 0x%08x",
				  resp->attr_mod, req->attr_mod);
	if (req->mgmt_class == SM_CLASS_SMI_DR) {
		if (!resp->direction)
			return proto_fail(err, "SMP.D", "response without the direction bit");
		if (resp->hop_cnt != req->hop_cnt)
			return proto_fail(err, "SMP.HopCount", "%u, request was %u", resp->hop_cnt,
					  req->hop_cnt);
		if (memcmp(resp->initial_path + 1, req->initial_path + 1, req->hop_cnt) != 0)
			return proto_fail(err, "SMP.InitialPath", "differs from the request's");
	}
	return 0;
}

void sm_smp_make_response(const struct sm_smp *req, struct sm_smp *resp, uint16_t status)
{
	if (resp != req)
		*resp = *req;
	resp->method = SM_METHOD_GET_RESP;
	resp->status = status & 0x7FFF;
	if (req->mgmt_class == SM_CLASS_SMI_DR) {
		resp->direction = true;
		resp->hop_ptr = req->hop_cnt;
	}
}

int sm_dr_path_push(struct sm_dr_path *p, uint8_t port)
{
	if (p->cnt >= SM_DR_MAX_HOPS)
		return -E2BIG;
	p->hops[++p->cnt] = port;
	return 0;
}

bool sm_dr_path_equal(const struct sm_dr_path *a, const struct sm_dr_path *b)
{
	return a->cnt == b->cnt && memcmp(a->hops + 1, b->hops + 1, a->cnt) == 0;
}

int sm_dr_path_str(const struct sm_dr_path *p, char *buf, size_t len)
{
	size_t off = 0;
	int n = snprintf(buf, len, "0");

	if (n < 0)
		return n;
	off = (size_t)n;
	for (unsigned i = 1; i <= p->cnt && i <= SM_DR_MAX_HOPS; i++) {
		n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, ",%u",
			     p->hops[i]);
		if (n < 0)
			return n;
		off += (size_t)n;
	}
	return (int)off;
}

int sm_dr_path_parse(const char *s, struct sm_dr_path *p)
{
	const char *c = s;
	bool first = true;

	memset(p, 0, sizeof(*p));
	if (!s || !*s)
		return -EINVAL;
	while (*c) {
		char *end;
		unsigned long v;

		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = strtoul(c, &end, 10);
		if (end == c)
			return -EINVAL;
		if (first && v == 0) {
			/* leading "0" names the SM node itself */
		} else {
			if (v < 1 || v > 254)
				return -EINVAL;
			if (sm_dr_path_push(p, (uint8_t)v) < 0)
				return -E2BIG;
		}
		first = false;
		c = end;
		if (*c == ',') {
			c++;
			if (!*c)
				return -EINVAL;
		} else if (*c) {
			return -EINVAL;
		}
	}
	return 0;
}

const char *sm_attr_name(uint16_t attr_id)
{
	switch (attr_id) {
	case SM_ATTR_NOTICE: return "Notice";
	case SM_ATTR_NODE_DESC: return "NodeDescription";
	case SM_ATTR_NODE_INFO: return "NodeInfo";
	case SM_ATTR_SWITCH_INFO: return "SwitchInfo";
	case SM_ATTR_PORT_INFO: return "PortInfo";
	case SM_ATTR_PKEY_TABLE: return "P_KeyTable";
	case SM_ATTR_SL2VL: return "SLtoVLMappingTable";
	case SM_ATTR_VLARB: return "VLArbitrationTable";
	case SM_ATTR_LFT: return "LinearForwardingTable";
	case SM_ATTR_MFT: return "MulticastForwardingTable";
	case SM_ATTR_SM_INFO: return "SMInfo";
	default: return "Unknown";
	}
}

const char *sm_method_name(uint8_t method)
{
	switch (method) {
	case SM_METHOD_GET: return "Get";
	case SM_METHOD_SET: return "Set";
	case SM_METHOD_TRAP: return "Trap";
	case SM_METHOD_TRAP_REPRESS: return "TrapRepress";
	case SM_METHOD_GET_RESP: return "GetResp";
	default: return "Unknown";
	}
}

/* ---- NodeInfo ---- */

int sm_node_info_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_node_info *ni,
			struct sm_mad_err *err)
{
	memset(ni, 0, sizeof(*ni));
	ni->base_version = d[0];
	ni->class_version = d[1];
	ni->node_type = d[2];
	ni->num_ports = d[3];
	ni->sys_guid = get64(d + 4);
	ni->node_guid = get64(d + 12);
	ni->port_guid = get64(d + 20);
	ni->partition_cap = get16(d + 28);
	ni->device_id = get16(d + 30);
	ni->revision = get32(d + 32);
	ni->local_port_num = d[36];
	ni->vendor_id = get32(d + 36) & 0xFFFFFF;
	if (ni->node_type < 1 || ni->node_type > 3)
		return mad_fail(err, "NodeInfo.NodeType", "%u is not CA(1), switch(2) or router(3)",
				ni->node_type);
	if (ni->num_ports < 1 || ni->num_ports > 254)
		return mad_fail(err, "NodeInfo.NumPorts", "%u out of range 1..254", ni->num_ports);
	if (ni->node_guid == 0)
		return mad_fail(err, "NodeInfo.NodeGUID", "is 0");
	if (ni->port_guid == 0)
		return mad_fail(err, "NodeInfo.PortGUID", "is 0");
	if (ni->local_port_num > ni->num_ports)
		return mad_fail(err, "NodeInfo.LocalPortNum", "%u beyond NumPorts %u",
				ni->local_port_num, ni->num_ports);
	return 0;
}

void sm_node_info_encode(const struct sm_node_info *ni, uint8_t d[SM_SMP_DATA_SIZE])
{
	memset(d, 0, SM_SMP_DATA_SIZE);
	d[0] = ni->base_version;
	d[1] = ni->class_version;
	d[2] = ni->node_type;
	d[3] = ni->num_ports;
	put64(d + 4, ni->sys_guid);
	put64(d + 12, ni->node_guid);
	put64(d + 20, ni->port_guid);
	put16(d + 28, ni->partition_cap);
	put16(d + 30, ni->device_id);
	put32(d + 32, ni->revision);
	put32(d + 36, (uint32_t)ni->local_port_num << 24 | (ni->vendor_id & 0xFFFFFF));
}

/* ---- NodeDescription ---- */

int sm_node_desc_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_node_desc *nd,
			struct sm_mad_err *err)
{
	unsigned i;

	(void)err;
	for (i = 0; i < SM_SMP_DATA_SIZE && d[i]; i++)
		nd->desc[i] = (d[i] < 0x20 || d[i] == 0x7F) ? '?' : (char)d[i];
	memset(nd->desc + i, 0, sizeof(nd->desc) - i);
	return 0;
}

void sm_node_desc_encode(const struct sm_node_desc *nd, uint8_t d[SM_SMP_DATA_SIZE])
{
	size_t n = strnlen(nd->desc, SM_SMP_DATA_SIZE);

	memset(d, 0, SM_SMP_DATA_SIZE);
	memcpy(d, nd->desc, n);
}

/* ---- PortInfo ---- */

int sm_port_info_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_port_info *pi,
			struct sm_mad_err *err)
{
	memset(pi, 0, sizeof(*pi));
	pi->mkey = get64(d + 0);
	pi->gid_prefix = get64(d + 8);
	pi->lid = get16(d + 16);
	pi->master_sm_lid = get16(d + 18);
	pi->cap_mask = get32(d + 20);
	pi->diag_code = get16(d + 24);
	pi->mkey_lease_period = get16(d + 26);
	pi->local_port_num = d[28];
	pi->link_width_enabled = d[29];
	pi->link_width_supported = d[30];
	pi->link_width_active = d[31];
	pi->link_speed_supported = d[32] >> 4;
	pi->port_state = d[32] & 0x0F;
	pi->phys_state = d[33] >> 4;
	pi->link_down_def_state = d[33] & 0x0F;
	pi->mkey_prot_bits = d[34] >> 6;
	pi->lmc = d[34] & 0x07;
	pi->link_speed_active = d[35] >> 4;
	pi->link_speed_enabled = d[35] & 0x0F;
	pi->neighbor_mtu = d[36] >> 4;
	pi->master_sm_sl = d[36] & 0x0F;
	pi->vl_cap = d[37] >> 4;
	pi->init_type = d[37] & 0x0F;
	pi->vl_high_limit = d[38];
	pi->vl_arb_high_cap = d[39];
	pi->vl_arb_low_cap = d[40];
	pi->init_type_reply = d[41] >> 4;
	pi->mtu_cap = d[41] & 0x0F;
	pi->vl_stall_count = d[42] >> 5;
	pi->hoq_life = d[42] & 0x1F;
	pi->operational_vls = d[43] >> 4;
	pi->part_enf_in = (d[43] >> 3) & 1;
	pi->part_enf_out = (d[43] >> 2) & 1;
	pi->filter_raw_in = (d[43] >> 1) & 1;
	pi->filter_raw_out = d[43] & 1;
	pi->mkey_violations = get16(d + 44);
	pi->pkey_violations = get16(d + 46);
	pi->qkey_violations = get16(d + 48);
	pi->guid_cap = d[50];
	pi->client_reregister = d[51] >> 7;
	pi->mcast_pkey_trap_suppr = (d[51] >> 5) & 0x03;
	pi->subnet_timeout = d[51] & 0x1F;
	pi->resp_time_value = d[52] & 0x1F;
	pi->local_phy_errors = d[53] >> 4;
	pi->overrun_errors = d[53] & 0x0F;
	pi->max_credit_hint = get16(d + 54);
	pi->link_rt_latency = get32(d + 56) & 0xFFFFFF;
	pi->cap_mask2 = get16(d + 60);
	pi->link_speed_ext_active = d[62] >> 4;
	pi->link_speed_ext_supported = d[62] & 0x0F;
	pi->link_speed_ext_enabled = d[63] & 0x1F;
	if (pi->port_state > SM_PORT_ACTIVE)
		return mad_fail(err, "PortInfo.PortState", "%u is reserved (0..4 valid)",
				pi->port_state);
	if (pi->phys_state > 7)
		return mad_fail(err, "PortInfo.PortPhysicalState", "%u is reserved (0..7 valid)",
				pi->phys_state);
	return 0;
}

void sm_port_info_encode(const struct sm_port_info *pi, uint8_t d[SM_SMP_DATA_SIZE])
{
	memset(d, 0, SM_SMP_DATA_SIZE);
	put64(d + 0, pi->mkey);
	put64(d + 8, pi->gid_prefix);
	put16(d + 16, pi->lid);
	put16(d + 18, pi->master_sm_lid);
	put32(d + 20, pi->cap_mask);
	put16(d + 24, pi->diag_code);
	put16(d + 26, pi->mkey_lease_period);
	d[28] = pi->local_port_num;
	d[29] = pi->link_width_enabled;
	d[30] = pi->link_width_supported;
	d[31] = pi->link_width_active;
	d[32] = (uint8_t)((pi->link_speed_supported & 0x0F) << 4 | (pi->port_state & 0x0F));
	d[33] = (uint8_t)((pi->phys_state & 0x0F) << 4 | (pi->link_down_def_state & 0x0F));
	d[34] = (uint8_t)((pi->mkey_prot_bits & 0x03) << 6 | (pi->lmc & 0x07));
	d[35] = (uint8_t)((pi->link_speed_active & 0x0F) << 4 | (pi->link_speed_enabled & 0x0F));
	d[36] = (uint8_t)((pi->neighbor_mtu & 0x0F) << 4 | (pi->master_sm_sl & 0x0F));
	d[37] = (uint8_t)((pi->vl_cap & 0x0F) << 4 | (pi->init_type & 0x0F));
	d[38] = pi->vl_high_limit;
	d[39] = pi->vl_arb_high_cap;
	d[40] = pi->vl_arb_low_cap;
	d[41] = (uint8_t)((pi->init_type_reply & 0x0F) << 4 | (pi->mtu_cap & 0x0F));
	d[42] = (uint8_t)((pi->vl_stall_count & 0x07) << 5 | (pi->hoq_life & 0x1F));
	d[43] = (uint8_t)((pi->operational_vls & 0x0F) << 4 | (pi->part_enf_in & 1) << 3 |
			  (pi->part_enf_out & 1) << 2 | (pi->filter_raw_in & 1) << 1 |
			  (pi->filter_raw_out & 1));
	put16(d + 44, pi->mkey_violations);
	put16(d + 46, pi->pkey_violations);
	put16(d + 48, pi->qkey_violations);
	d[50] = pi->guid_cap;
	d[51] = (uint8_t)((pi->client_reregister & 1) << 7 | (pi->mcast_pkey_trap_suppr & 0x03) << 5 |
			  (pi->subnet_timeout & 0x1F));
	d[52] = pi->resp_time_value & 0x1F;
	d[53] = (uint8_t)((pi->local_phy_errors & 0x0F) << 4 | (pi->overrun_errors & 0x0F));
	put16(d + 54, pi->max_credit_hint);
	put32(d + 56, pi->link_rt_latency & 0xFFFFFF);
	put16(d + 60, pi->cap_mask2);
	d[62] = (uint8_t)((pi->link_speed_ext_active & 0x0F) << 4 | (pi->link_speed_ext_supported & 0x0F));
	d[63] = pi->link_speed_ext_enabled & 0x1F;
}

void sm_port_info_prepare_set(struct sm_port_info *out, const struct sm_port_info *cur,
			      const struct sm_port_info_set *s)
{
	if (cur)
		*out = *cur;
	else
		memset(out, 0, sizeof(*out));
	out->mkey = s->mkey;
	out->mkey_prot_bits = s->mkey_prot_bits & 0x03;
	out->mkey_lease_period = s->mkey_lease_period;
	out->lid = s->lid;
	out->lmc = s->lmc & 0x07;
	out->master_sm_lid = s->sm_lid;
	out->master_sm_sl = s->sm_sl & 0x0F;
	out->gid_prefix = s->gid_prefix;
	out->port_state = s->port_state & 0x0F;
	out->subnet_timeout = s->subnet_timeout & 0x1F;
	out->client_reregister = s->client_reregister & 1;
	/* read-only on the wire or "no change" when written as 0 */
	out->link_width_enabled = out->link_speed_enabled = out->link_speed_ext_enabled = 0;
	out->phys_state = out->link_down_def_state = 0;
}

/* ---- SwitchInfo ---- */

int sm_switch_info_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_switch_info *si,
			  struct sm_mad_err *err)
{
	memset(si, 0, sizeof(*si));
	si->lft_cap = get16(d + 0);
	si->rft_cap = get16(d + 2);
	si->mft_cap = get16(d + 4);
	si->lft_top = get16(d + 6);
	si->default_port = d[8];
	si->default_mcast_primary_port = d[9];
	si->default_mcast_not_primary_port = d[10];
	si->lifetime_value = d[11] >> 3;
	si->port_state_change = (d[11] >> 2) & 1;
	si->opt_sl2vl = d[11] & 0x03;
	si->lids_per_port = get16(d + 12);
	si->part_enf_cap = get16(d + 14);
	si->inbound_enf_cap = d[16] >> 7;
	si->outbound_enf_cap = (d[16] >> 6) & 1;
	si->filter_raw_in_cap = (d[16] >> 5) & 1;
	si->filter_raw_out_cap = (d[16] >> 4) & 1;
	si->enhanced_port0 = (d[16] >> 3) & 1;
	si->mft_top = get16(d + 18);
	if (si->lft_cap > SM_LID_SPACE)
		return mad_fail(err, "SwitchInfo.LinearFDBCap", "%u exceeds %u", si->lft_cap,
				SM_LID_SPACE);
	return 0;
}

void sm_switch_info_encode(const struct sm_switch_info *si, uint8_t d[SM_SMP_DATA_SIZE])
{
	memset(d, 0, SM_SMP_DATA_SIZE);
	put16(d + 0, si->lft_cap);
	put16(d + 2, si->rft_cap);
	put16(d + 4, si->mft_cap);
	put16(d + 6, si->lft_top);
	d[8] = si->default_port;
	d[9] = si->default_mcast_primary_port;
	d[10] = si->default_mcast_not_primary_port;
	d[11] = (uint8_t)((si->lifetime_value & 0x1F) << 3 | (si->port_state_change & 1) << 2 |
			  (si->opt_sl2vl & 0x03));
	put16(d + 12, si->lids_per_port);
	put16(d + 14, si->part_enf_cap);
	d[16] = (uint8_t)((si->inbound_enf_cap & 1) << 7 | (si->outbound_enf_cap & 1) << 6 |
			  (si->filter_raw_in_cap & 1) << 5 | (si->filter_raw_out_cap & 1) << 4 |
			  (si->enhanced_port0 & 1) << 3);
	put16(d + 18, si->mft_top);
}

/* ---- LinearForwardingTable ---- */

int sm_lft_block_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_lft_block *b,
			struct sm_mad_err *err)
{
	(void)err;
	memcpy(b->port, d, SM_LFT_BLOCK);
	return 0;
}

void sm_lft_block_encode(const struct sm_lft_block *b, uint8_t d[SM_SMP_DATA_SIZE])
{
	memcpy(d, b->port, SM_LFT_BLOCK);
}

/* ---- SMInfo ---- */

int sm_sm_info_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_sm_info *si,
		      struct sm_mad_err *err)
{
	memset(si, 0, sizeof(*si));
	si->guid = get64(d + 0);
	si->sm_key = get64(d + 8);
	si->act_count = get32(d + 16);
	si->priority = d[20] >> 4;
	si->state = d[20] & 0x0F;
	if (si->state > SM_SMSTATE_MASTER)
		return mad_fail(err, "SMInfo.SMState", "%u is reserved (0..3 valid)", si->state);
	return 0;
}

void sm_sm_info_encode(const struct sm_sm_info *si, uint8_t d[SM_SMP_DATA_SIZE])
{
	memset(d, 0, SM_SMP_DATA_SIZE);
	put64(d + 0, si->guid);
	put64(d + 8, si->sm_key);
	put32(d + 16, si->act_count);
	d[20] = (uint8_t)((si->priority & 0x0F) << 4 | (si->state & 0x0F));
}

/* ---- Notice ---- */

static bool notice_has_lid_addr(const struct sm_notice *n)
{
	return n->is_generic &&
	       (n->trap_num == SM_TRAP_LINK_STATE_CHANGE || n->trap_num == SM_TRAP_LOCAL_CHANGES);
}

/* LIDADDR within DataDetails: trap 128 starts with it, trap 144 has 16
 * reserved bits first (ib_types.h: ntc_128.sw_lid, ntc_144.lid). */
static unsigned lid_addr_off(const struct sm_notice *n)
{
	return n->trap_num == SM_TRAP_LOCAL_CHANGES ? 2 : 0;
}

int sm_notice_decode(const uint8_t d[SM_SMP_DATA_SIZE], struct sm_notice *n,
		     struct sm_mad_err *err)
{
	memset(n, 0, sizeof(*n));
	n->is_generic = d[0] >> 7;
	n->type = d[0] & 0x7F;
	n->producer_type = get32(d) & 0xFFFFFF;
	n->trap_num = get16(d + 4);
	n->issuer_lid = get16(d + 6);
	n->toggle = d[8] >> 7;
	n->count = get16(d + 8) & 0x7FFF;
	memcpy(n->details, d + 10, SM_NOTICE_DETAILS);
	if (notice_has_lid_addr(n))
		n->lid_addr = get16(d + 10 + lid_addr_off(n));
	if (n->is_generic && n->trap_num == SM_TRAP_LOCAL_CHANGES) {
		n->other_local_changes = d[15] & 1;
		n->new_cap_mask = get32(d + 16);
		n->change_flags = get16(d + 20) & 0x3F;
		n->new_cap_mask2 = get16(d + 22);
	}
	if (n->is_generic && n->type > 4 && n->type != 0x7F)
		return mad_fail(err, "Notice.Type", "%u is reserved", n->type);
	return 0;
}

void sm_notice_encode(const struct sm_notice *n, uint8_t d[SM_SMP_DATA_SIZE])
{
	memset(d, 0, SM_SMP_DATA_SIZE);
	put32(d, (uint32_t)((n->is_generic & 1) << 7 | (n->type & 0x7F)) << 24 |
			 (n->producer_type & 0xFFFFFF));
	put16(d + 4, n->trap_num);
	put16(d + 6, n->issuer_lid);
	put16(d + 8, (uint16_t)((n->toggle & 1) << 15 | (n->count & 0x7FFF)));
	memcpy(d + 10, n->details, SM_NOTICE_DETAILS);
	if (notice_has_lid_addr(n))
		put16(d + 10 + lid_addr_off(n), n->lid_addr);
	if (n->is_generic && n->trap_num == SM_TRAP_LOCAL_CHANGES) {
		d[15] = (uint8_t)((d[15] & 0xFE) | (n->other_local_changes & 1));
		put32(d + 16, n->new_cap_mask);
		put16(d + 20, n->change_flags & 0x3F);
		put16(d + 22, n->new_cap_mask2);
	}
}

void sm_notice_trap128(struct sm_notice *n, uint16_t sw_lid)
{
	memset(n, 0, sizeof(*n));
	n->is_generic = 1;
	n->type = 1;             /* urgent */
	n->producer_type = 2;    /* switch */
	n->trap_num = SM_TRAP_LINK_STATE_CHANGE;
	n->issuer_lid = sw_lid;
	n->lid_addr = sw_lid;
	n->details[0] = (uint8_t)(sw_lid >> 8);
	n->details[1] = (uint8_t)sw_lid;
}

void sm_smp_make_trap_repress(const struct sm_smp *trap, struct sm_smp *repress)
{
	if (repress != trap)
		*repress = *trap;
	repress->method = SM_METHOD_TRAP_REPRESS;
	repress->status = 0;
}
