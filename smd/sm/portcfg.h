/* SPDX-License-Identifier: MIT */
#ifndef SMD_SM_PORTCFG_H
#define SMD_SM_PORTCFG_H
/*
 * DOC: port configuration settings (the portcfg phase, portcfg.c)
 *
 * What the port configuration phase writes on every port it brings up or
 * finds changed, as OpenSM's link manager and QoS manager do, with
 * OpenSM's option names and defaults (opensm.conf) unless said otherwise:
 *
 *   max_op_vls            OperationalVLs cap, in the IBA encoding (1: VL0,
 *                         2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14). Default
 *                         5, as OpenSM: no cap beyond the two ends' VLCap.
 *   head_of_queue_lifetime, leaf_head_of_queue_lifetime
 *                         HOQLife of switch ports towards a switch / towards
 *                         a CA or router (and of router ports): 18 and 16.
 *   vl_stall_count, leaf_vl_stall_count
 *                         VLStallCount of those switch ports: 7 and 7.
 *   force_link_width, force_link_speed, force_link_speed_ext
 *                         LinkWidthEnabled / LinkSpeedEnabled /
 *                         LinkSpeedExtEnabled. 0 (our default): left as
 *                         the port has it. OpenSM's defaults 255 / 15 / 31
 *                         ask the port to enable everything it supports;
 *                         any other value is written as it is.
 *   part_enforce          PartitionEnforcementInbound/Outbound on switch
 *                         ports facing a CA or router: both (default), in,
 *                         out, off; only where the switch's SwitchInfo
 *                         announces the capability.
 *   qos                   SL2VL, VLArbitration tables and VLHighLimit, per
 *                         port class (CA, switch port 0, switch external
 *                         ports); levels default to OpenSM's qos_* values.
 *                         OpenSM writes none of them unless `qos TRUE`; smd
 *                         does by default (see portcfg.c).
 *
 * NeighborMTU is always the smaller MTUCap of the two ends, OperationalVLs
 * the smaller VLCap, capped by max_op_vls.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sm_part_enforce { SM_PART_ENF_BOTH, SM_PART_ENF_IN, SM_PART_ENF_OUT, SM_PART_ENF_OFF };
enum sm_qos_class { SM_QOS_CA, SM_QOS_SW0, SM_QOS_SWE, SM_QOS_CLASSES };

#define SM_QOS_VLARB_MAX 64   /* entries of one priority: two blocks of 32 */

/* One QoS level: what the ports of one class get. */
struct sm_qos_level {
	uint8_t high_limit;                 /* PortInfo.VLHighLimit */
	uint8_t sl2vl[16];                  /* VL of each SL (15: drop) */
	uint8_t high_vl[SM_QOS_VLARB_MAX], high_w[SM_QOS_VLARB_MAX];
	uint8_t low_vl[SM_QOS_VLARB_MAX], low_w[SM_QOS_VLARB_MAX];
};

struct sm_portcfg {
	uint8_t max_op_vls;                 /* 1..5 */
	uint8_t hoq_life, leaf_hoq_life;    /* 0..31 */
	uint8_t vl_stall, leaf_vl_stall;    /* 1..7 */
	uint8_t force_link_width;           /* 0: leave; 255: as supported; else written */
	uint8_t force_link_speed;           /* 0: leave; 15: as supported; else written */
	uint8_t force_link_speed_ext;       /* 0: leave; 31: as supported; else written */
	uint8_t part_enforce;               /* enum sm_part_enforce */
	int qos;                            /* 1: write SL2VL, VLArb, VLHighLimit */
	struct sm_qos_level level[SM_QOS_CLASSES];
};

/* The defaults above (OpenSM's, but for force_link_*). */
void sm_portcfg_default(struct sm_portcfg *pc);

/* OpenSM's defaults for qos_sl2vl, qos_vlarb_high, qos_vlarb_low (opensm.conf syntax). */
#define SM_QOS_DEFAULT_SL2VL "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7"
#define SM_QOS_DEFAULT_VLARB_HIGH "0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0"
#define SM_QOS_DEFAULT_VLARB_LOW "0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4"

/*
 * opensm.conf's syntax: SL2VL "V0,V1,...,V15" (exactly 16 VLs 0-15);
 * VLArb "VL:WEIGHT,..." (1 to 64 entries, VL 0-14, weight 0-255; entries
 * not given are 0:0). 0, or -EINVAL with a message in msg.
 */
int sm_qos_parse_sl2vl(const char *s, uint8_t sl2vl[16], char *msg, size_t msglen);
int sm_qos_parse_vlarb(const char *s, uint8_t vl[SM_QOS_VLARB_MAX], uint8_t w[SM_QOS_VLARB_MAX], char *msg,
		       size_t msglen);
/* "both", "in", "out", "off" <-> enum sm_part_enforce; -1 for anything else. */
int sm_part_enforce_parse(const char *s);
const char *sm_part_enforce_name(unsigned v);

#endif
