/* SPDX-License-Identifier: MIT */
/*
 * DOC: port configuration settings: defaults and opensm.conf's QoS syntax (portcfg.h)
 *
 * Pure functions: no I/O. The config parser (smd/config) hands the QoS
 * strings of smd.yaml here, so a site's qos_sl2vl / qos_vlarb_* lines
 * carry over from opensm.conf as they are; a bad one is refused with a
 * message the parser prefixes with FILE:LINE.
 */
#include "sm/portcfg.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One decimal number 0..max at *s (leading spaces allowed); *s moves past it. */
static int number(const char **s, unsigned max, unsigned *out)
{
	const char *p = *s;
	unsigned long v;
	char *end;

	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (errno || v > max)
		return -ERANGE;
	while (*end == ' ')
		end++;
	*s = end;
	*out = (unsigned)v;
	return 0;
}

int sm_qos_parse_sl2vl(const char *s, uint8_t sl2vl[16], char *msg, size_t msglen)
{
	const char *p = s;
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned v;
		int rc = number(&p, 15, &v);
		if (rc) {
			snprintf(msg, msglen, "SL %u: %s (expected 16 VLs 0-15, comma-separated)", sl,
				 rc == -ERANGE ? "VL out of range 0-15" : "not a number");
			return -EINVAL;
		}
		sl2vl[sl] = (uint8_t)v;
		if (sl < 15 && *p++ != ',') {
			snprintf(msg, msglen, "%u VLs given, expected 16 (comma-separated)", sl + 1);
			return -EINVAL;
		}
	}
	if (*p) {
		snprintf(msg, msglen, "more than 16 VLs, or garbage after the 16th: '%.20s'", p);
		return -EINVAL;
	}
	return 0;
}

int sm_qos_parse_vlarb(const char *s, uint8_t vl[SM_QOS_VLARB_MAX], uint8_t w[SM_QOS_VLARB_MAX], char *msg,
		       size_t msglen)
{
	const char *p = s;
	unsigned i = 0;

	memset(vl, 0, SM_QOS_VLARB_MAX);
	memset(w, 0, SM_QOS_VLARB_MAX);
	for (;;) {
		unsigned v, wt;
		if (i == SM_QOS_VLARB_MAX) {
			snprintf(msg, msglen, "more than %d entries", SM_QOS_VLARB_MAX);
			return -EINVAL;
		}
		if (number(&p, 14, &v)) {
			snprintf(msg, msglen, "entry %u: expected VL:WEIGHT with VL 0-14", i + 1);
			return -EINVAL;
		}
		if (*p++ != ':' || number(&p, 255, &wt)) {
			snprintf(msg, msglen, "entry %u: expected VL:WEIGHT with WEIGHT 0-255", i + 1);
			return -EINVAL;
		}
		vl[i] = (uint8_t)v;
		w[i++] = (uint8_t)wt;
		if (!*p)
			return 0;
		if (*p++ != ',') {
			snprintf(msg, msglen, "entry %u: expected ',' between entries", i);
			return -EINVAL;
		}
	}
}

static const char *const enforce_names[] = { "both", "in", "out", "off" };

int sm_part_enforce_parse(const char *s)
{
	for (unsigned i = 0; i < 4; i++)
		if (!strcmp(s, enforce_names[i]))
			return (int)i;
	return -1;
}

const char *sm_part_enforce_name(unsigned v)
{
	return v < 4 ? enforce_names[v] : "?";
}

void sm_portcfg_default(struct sm_portcfg *pc)
{
	char msg[128];
	memset(pc, 0, sizeof(*pc));
	pc->max_op_vls = 5;
	pc->hoq_life = 18;
	pc->leaf_hoq_life = 16;
	pc->vl_stall = 7;
	pc->leaf_vl_stall = 7;
	pc->part_enforce = SM_PART_ENF_BOTH;
	pc->qos = 1;
	for (unsigned k = 0; k < SM_QOS_CLASSES; k++) {
		struct sm_qos_level *l = &pc->level[k];
		/* constant strings: these cannot fail */
		(void)sm_qos_parse_sl2vl(SM_QOS_DEFAULT_SL2VL, l->sl2vl, msg, sizeof(msg));
		(void)sm_qos_parse_vlarb(SM_QOS_DEFAULT_VLARB_HIGH, l->high_vl, l->high_w, msg, sizeof(msg));
		(void)sm_qos_parse_vlarb(SM_QOS_DEFAULT_VLARB_LOW, l->low_vl, l->low_w, msg, sizeof(msg));
	}
}
