/* SPDX-License-Identifier: MIT */
#ifndef SMD_TESTS_MOCK_FABRIC_H
#define SMD_TESTS_MOCK_FABRIC_H
/*
 * Small hand-built fabrics for the MAD-layer tests (header-only, static).
 *
 * two_switch(): S1 and S2 (8 ports each) joined by two parallel links
 * (S1[1]-S2[1], S1[2]-S2[2]); hosts H1,H2 on S1[3],S1[4], H3,H4 on
 * S2[3],S2[4] (HCA port 1); H4 also has an unconnected port 2.
 * Node indices: S1=0, S2=1, H1=2, H2=3, H3=4, H4=5.
 */
#include <stdio.h>

#include "model/fabric.h"

enum { TF_S1, TF_S2, TF_H1, TF_H2, TF_H3, TF_H4, TF_NODES };

static inline struct sm_fabric *two_switch(void)
{
	struct sm_fabric *f = sm_fabric_new();
	int ok = f != NULL;

	if (!ok)
		return NULL;
	ok &= sm_fabric_add_node(f, SM_NODE_SWITCH, 0x1000, 8, 0, 0) == TF_S1;
	ok &= sm_fabric_add_node(f, SM_NODE_SWITCH, 0x2000, 8, 0, 0) == TF_S2;
	for (unsigned h = 0; h < 4; h++) {
		char d[32];
		ok &= sm_fabric_add_node(f, SM_NODE_CA, 0x3000 + h * 0x10, h == 3 ? 2 : 1, 0, 0) ==
		      TF_H1 + h;
		ok &= sm_fabric_set_port_guid(f, TF_H1 + h, 1, 0x3001 + h * 0x10) == 0;
		if (h == 3)
			ok &= sm_fabric_set_port_guid(f, TF_H4, 2, 0x3002 + h * 0x10) == 0;
		snprintf(d, sizeof(d), "h%u HCA-1", h + 1);
		sm_fabric_set_desc(f, TF_H1 + h, d);
		f->nodes[TF_H1 + h].sysimg_guid = 0x3000 + h * 0x10;
	}
	sm_fabric_set_desc(f, TF_S1, "S1 switch");
	sm_fabric_set_desc(f, TF_S2, "S2 switch");
	ok &= sm_fabric_link(f, TF_S1, 1, TF_S2, 1) == 0;
	ok &= sm_fabric_link(f, TF_S1, 2, TF_S2, 2) == 0;
	ok &= sm_fabric_link(f, TF_S1, 3, TF_H1, 1) == 0;
	ok &= sm_fabric_link(f, TF_S1, 4, TF_H2, 1) == 0;
	ok &= sm_fabric_link(f, TF_S2, 3, TF_H3, 1) == 0;
	ok &= sm_fabric_link(f, TF_S2, 4, TF_H4, 1) == 0;
	if (!ok) {
		sm_fabric_free(f);
		return NULL;
	}
	return f;
}

#endif
