/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_MAD_H
#define SMD_SA_MAD_H
/*
 * DOC: the SA MAD (class 0x03, class version 2), IBA vol. 1, 15.2
 *
 * Byte layout of one 256-byte SA MAD (every multi-byte field big-endian):
 *     0  common MAD header (24): base version 1, class 0x03, class version 2,
 *        method, status (16), class specific (16), TID (64), attribute ID
 *        (16), reserved (16), attribute modifier (32)
 *    24  RMPP header (12): version, type, RRespTime(5)|flags(3), status,
 *        segment number / data1 (32), payload length / new window / data2 (32)
 *    36  SM_Key (64)
 *    44  attribute offset (16, in 8-byte words: the record size of a
 *        GetTable answer, 0 otherwise), reserved (16)
 *    48  component mask (64)
 *    56  SA data (200 bytes; in an RMPP message each segment carries 200
 *        bytes of the records, header repeated)
 *
 * struct sm_sa_hdr is that header in host order. Decoding is strict about
 * what it can check without knowing the attribute (lengths, versions);
 * the attribute's own decoder (records.h) checks the rest. Nothing
 * allocates.
 */
#include <stddef.h>
#include <stdint.h>

#define SM_CLASS_SA 0x03
#define SM_SA_CLASS_VERSION 2
#define SM_SA_HDR_SIZE 56
#define SM_SA_DATA_SIZE 200             /* SA data per MAD / per RMPP segment */
#define SM_SA_MAD_SIZE 256
#define SM_SA_QKEY 0x80010000u

enum sm_sa_method {
	SM_SA_GET = 0x01,
	SM_SA_SET = 0x02,
	SM_SA_SEND = 0x03,
	SM_SA_REPORT = 0x06,
	SM_SA_GET_TABLE = 0x12,
	SM_SA_GET_TRACE_TABLE = 0x13,
	SM_SA_GET_MULTI = 0x14,
	SM_SA_DELETE = 0x15,
	SM_SA_RESP = 0x80,                 /* OR'ed into the request method */
	SM_SA_GET_RESP = 0x81,
	SM_SA_REPORT_RESP = 0x86,
	SM_SA_GET_TABLE_RESP = 0x92,
	SM_SA_GET_MULTI_RESP = 0x94,
	SM_SA_DELETE_RESP = 0x95,
};

enum sm_sa_attr {
	SM_SA_ATTR_CLASS_PORT_INFO = 0x0001,
	SM_SA_ATTR_NOTICE = 0x0002,
	SM_SA_ATTR_INFORM_INFO = 0x0003,
	SM_SA_ATTR_NODE_RECORD = 0x0011,
	SM_SA_ATTR_PORTINFO_RECORD = 0x0012,
	SM_SA_ATTR_SL2VL_RECORD = 0x0013,
	SM_SA_ATTR_SWITCHINFO_RECORD = 0x0014,
	SM_SA_ATTR_LFT_RECORD = 0x0015,
	SM_SA_ATTR_RFT_RECORD = 0x0016,
	SM_SA_ATTR_MFT_RECORD = 0x0017,
	SM_SA_ATTR_SMINFO_RECORD = 0x0018,
	SM_SA_ATTR_LINK_RECORD = 0x0020,
	SM_SA_ATTR_GUIDINFO_RECORD = 0x0030,
	SM_SA_ATTR_SERVICE_RECORD = 0x0031,
	SM_SA_ATTR_PKEY_TABLE_RECORD = 0x0033,
	SM_SA_ATTR_PATH_RECORD = 0x0035,
	SM_SA_ATTR_VLARB_RECORD = 0x0036,
	SM_SA_ATTR_MCMEMBER_RECORD = 0x0038,
	SM_SA_ATTR_TRACE_RECORD = 0x0039,
	SM_SA_ATTR_MULTIPATH_RECORD = 0x003A,
	SM_SA_ATTR_SERVICE_ASSOC_RECORD = 0x003B,
	SM_SA_ATTR_INFORM_INFO_RECORD = 0x00F3,
};

/* MAD status: common codes in bits 2-4, SA class codes in bits 8-15 (IBA 15.2.1.1). */
#define SM_SA_STATUS_OK 0x0000
#define SM_SA_STATUS_BUSY 0x0001
#define SM_SA_STATUS_BAD_VERSION 0x0004
#define SM_SA_STATUS_METHOD_UNSUPP 0x0008
#define SM_SA_STATUS_METHOD_ATTR_UNSUPP 0x000C
#define SM_SA_STATUS_INVALID_FIELD 0x001C
#define SM_SA_STATUS_NO_RESOURCES 0x0100
#define SM_SA_STATUS_REQ_INVALID 0x0200
#define SM_SA_STATUS_NO_RECORDS 0x0300
#define SM_SA_STATUS_TOO_MANY_RECORDS 0x0400
#define SM_SA_STATUS_INVALID_GID 0x0500
#define SM_SA_STATUS_INSUFFICIENT_COMPONENTS 0x0600
#define SM_SA_STATUS_DENIED 0x0700

/* RMPP (IBA 13.6.2) */
enum sm_rmpp_type {
	SM_RMPP_TYPE_NONE = 0,
	SM_RMPP_TYPE_DATA = 1,
	SM_RMPP_TYPE_ACK = 2,
	SM_RMPP_TYPE_STOP = 3,
	SM_RMPP_TYPE_ABORT = 4,
};
#define SM_RMPP_FLAG_ACTIVE 0x01
#define SM_RMPP_FLAG_FIRST 0x02
#define SM_RMPP_FLAG_LAST 0x04

struct sm_sa_hdr {
	uint8_t base_version;      /* 1 */
	uint8_t mgmt_class;        /* 0x03 */
	uint8_t class_version;     /* 2 */
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
	/* RMPP */
	uint8_t rmpp_version;
	uint8_t rmpp_type;
	uint8_t rmpp_resp_time;    /* 5 bits */
	uint8_t rmpp_flags;        /* SM_RMPP_FLAG_* */
	uint8_t rmpp_status;
	uint32_t rmpp_data1;       /* segment number */
	uint32_t rmpp_data2;       /* payload length (first/last DATA) or new window last (ACK) */
	/* SA */
	uint64_t sm_key;
	uint16_t attr_offset;      /* 8-byte words */
	uint64_t comp_mask;
};

/*
 * Decode the 56-byte header of buf (len bytes). -EBADMSG when len <
 * SM_SA_HDR_SIZE or base version/class are not 1/0x03 (the class version
 * is returned as it is: the caller answers BAD_VERSION).
 */
int sm_sa_hdr_decode(const uint8_t *buf, size_t len, struct sm_sa_hdr *h);
/* Encode h into the first 56 bytes of buf. */
void sm_sa_hdr_encode(const struct sm_sa_hdr *h, uint8_t buf[SM_SA_HDR_SIZE]);
/* The response header to a request: same TID/attr/mod, method | 0x80 (Report -> ReportResp), status. */
void sm_sa_hdr_response(const struct sm_sa_hdr *req, struct sm_sa_hdr *resp, uint16_t status);

const char *sm_sa_attr_name(uint16_t attr_id);    /* "PathRecord", ..., "Unknown" */
const char *sm_sa_method_name(uint8_t method);
const char *sm_sa_status_name(uint16_t status);   /* "NO_RECORDS", ... */

#endif
