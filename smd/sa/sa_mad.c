/* SPDX-License-Identifier: MIT */
/*
 * DOC: the SA MAD header codec and the names of methods, attributes and
 * statuses (sa_mad.h). Offsets are those of IBA vol. 1 table 185 (common
 * MAD header, RMPP header, SA header); nothing allocates.
 */
#include "sa/sa_mad.h"
#include "sa/records.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

int sm_sa_hdr_decode(const uint8_t *buf, size_t len, struct sm_sa_hdr *h)
{
	if (!buf || len < SM_SA_HDR_SIZE)
		return -EBADMSG;
	memset(h, 0, sizeof(*h));
	h->base_version = buf[0];
	h->mgmt_class = buf[1];
	h->class_version = buf[2];
	h->method = buf[3];
	h->status = sm_sa_get16(buf + 4);
	h->class_specific = sm_sa_get16(buf + 6);
	h->tid = sm_sa_get64(buf + 8);
	h->attr_id = sm_sa_get16(buf + 16);
	h->attr_mod = sm_sa_get32(buf + 20);
	h->rmpp_version = buf[24];
	h->rmpp_type = buf[25];
	h->rmpp_resp_time = buf[26] >> 3;
	h->rmpp_flags = buf[26] & 0x07;
	h->rmpp_status = buf[27];
	h->rmpp_data1 = sm_sa_get32(buf + 28);
	h->rmpp_data2 = sm_sa_get32(buf + 32);
	h->sm_key = sm_sa_get64(buf + 36);
	h->attr_offset = sm_sa_get16(buf + 44);
	h->comp_mask = sm_sa_get64(buf + 48);
	if (h->base_version != 1 || h->mgmt_class != SM_CLASS_SA)
		return -EBADMSG;
	return 0;
}

void sm_sa_hdr_encode(const struct sm_sa_hdr *h, uint8_t buf[SM_SA_HDR_SIZE])
{
	memset(buf, 0, SM_SA_HDR_SIZE);
	buf[0] = h->base_version;
	buf[1] = h->mgmt_class;
	buf[2] = h->class_version;
	buf[3] = h->method;
	sm_sa_put16(buf + 4, h->status);
	sm_sa_put16(buf + 6, h->class_specific);
	sm_sa_put64(buf + 8, h->tid);
	sm_sa_put16(buf + 16, h->attr_id);
	sm_sa_put32(buf + 20, h->attr_mod);
	buf[24] = h->rmpp_version;
	buf[25] = h->rmpp_type;
	buf[26] = (uint8_t)((h->rmpp_resp_time & 0x1f) << 3 | (h->rmpp_flags & 0x07));
	buf[27] = h->rmpp_status;
	sm_sa_put32(buf + 28, h->rmpp_data1);
	sm_sa_put32(buf + 32, h->rmpp_data2);
	sm_sa_put64(buf + 36, h->sm_key);
	sm_sa_put16(buf + 44, h->attr_offset);
	sm_sa_put64(buf + 48, h->comp_mask);
}

/*
 * IBA 15.2.2: SubnAdmSet is answered by SubnAdmGetResp; every other request
 * by its method with the R bit. The SM_Key of a response is always 0
 * (C15-0.1.5), and the RMPP header is the server's to fill.
 */
void sm_sa_hdr_response(const struct sm_sa_hdr *req, struct sm_sa_hdr *resp, uint16_t status)
{
	struct sm_sa_hdr r = {
		.base_version = 1,
		.mgmt_class = SM_CLASS_SA,
		.class_version = SM_SA_CLASS_VERSION,
		.method = (uint8_t)((req->method == SM_SA_SET ? SM_SA_GET : req->method) | SM_SA_RESP),
		.status = status,
		.tid = req->tid,
		.attr_id = req->attr_id,
		.attr_mod = req->attr_mod,
		.comp_mask = req->comp_mask,
	};
	*resp = r;
}

const char *sm_sa_attr_name(uint16_t attr_id)
{
	switch (attr_id) {
	case SM_SA_ATTR_CLASS_PORT_INFO: return "ClassPortInfo";
	case SM_SA_ATTR_NOTICE: return "Notice";
	case SM_SA_ATTR_INFORM_INFO: return "InformInfo";
	case SM_SA_ATTR_NODE_RECORD: return "NodeRecord";
	case SM_SA_ATTR_PORTINFO_RECORD: return "PortInfoRecord";
	case SM_SA_ATTR_SL2VL_RECORD: return "SL2VLTableRecord";
	case SM_SA_ATTR_SWITCHINFO_RECORD: return "SwitchInfoRecord";
	case SM_SA_ATTR_LFT_RECORD: return "LinearForwardingTableRecord";
	case SM_SA_ATTR_RFT_RECORD: return "RandomForwardingTableRecord";
	case SM_SA_ATTR_MFT_RECORD: return "MulticastForwardingTableRecord";
	case SM_SA_ATTR_SMINFO_RECORD: return "SMInfoRecord";
	case SM_SA_ATTR_LINK_RECORD: return "LinkRecord";
	case SM_SA_ATTR_GUIDINFO_RECORD: return "GuidInfoRecord";
	case SM_SA_ATTR_SERVICE_RECORD: return "ServiceRecord";
	case SM_SA_ATTR_PKEY_TABLE_RECORD: return "P_KeyTableRecord";
	case SM_SA_ATTR_PATH_RECORD: return "PathRecord";
	case SM_SA_ATTR_VLARB_RECORD: return "VLArbitrationTableRecord";
	case SM_SA_ATTR_MCMEMBER_RECORD: return "MCMemberRecord";
	case SM_SA_ATTR_TRACE_RECORD: return "TraceRecord";
	case SM_SA_ATTR_MULTIPATH_RECORD: return "MultiPathRecord";
	case SM_SA_ATTR_SERVICE_ASSOC_RECORD: return "ServiceAssociationRecord";
	case SM_SA_ATTR_INFORM_INFO_RECORD: return "InformInfoRecord";
	default: return "Unknown";
	}
}

const char *sm_sa_method_name(uint8_t method)
{
	switch (method) {
	case SM_SA_GET: return "Get";
	case SM_SA_SET: return "Set";
	case SM_SA_SEND: return "Send";
	case SM_SA_REPORT: return "Report";
	case SM_SA_GET_TABLE: return "GetTable";
	case SM_SA_GET_TRACE_TABLE: return "GetTraceTable";
	case SM_SA_GET_MULTI: return "GetMulti";
	case SM_SA_DELETE: return "Delete";
	case SM_SA_GET_RESP: return "GetResp";
	case SM_SA_REPORT_RESP: return "ReportResp";
	case SM_SA_GET_TABLE_RESP: return "GetTableResp";
	case SM_SA_GET_MULTI_RESP: return "GetMultiResp";
	case SM_SA_DELETE_RESP: return "DeleteResp";
	default: return "Unknown";
	}
}

const char *sm_sa_status_name(uint16_t status)
{
	switch (status) {
	case SM_SA_STATUS_OK: return "OK";
	case SM_SA_STATUS_BUSY: return "BUSY";
	case SM_SA_STATUS_BAD_VERSION: return "BAD_VERSION";
	case SM_SA_STATUS_METHOD_UNSUPP: return "METHOD_UNSUPP";
	case SM_SA_STATUS_METHOD_ATTR_UNSUPP: return "METHOD_ATTR_UNSUPP";
	case SM_SA_STATUS_INVALID_FIELD: return "INVALID_FIELD";
	case SM_SA_STATUS_NO_RESOURCES: return "NO_RESOURCES";
	case SM_SA_STATUS_REQ_INVALID: return "REQ_INVALID";
	case SM_SA_STATUS_NO_RECORDS: return "NO_RECORDS";
	case SM_SA_STATUS_TOO_MANY_RECORDS: return "TOO_MANY_RECORDS";
	case SM_SA_STATUS_INVALID_GID: return "INVALID_GID";
	case SM_SA_STATUS_INSUFFICIENT_COMPONENTS: return "INSUFFICIENT_COMPONENTS";
	case SM_SA_STATUS_DENIED: return "DENIED";
	default: return "Unknown";
	}
}
