/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric, P_KeyTable (issue 14)
 *
 * Each port's P_Key table as an SMA holds it, as ibsim does: PartitionCap
 * entries (NodeInfo: 8 for a switch's port 0, 128 for a CA port; a switch
 * external port the SwitchInfo PartitionEnforcementCap, 32), index 0 holding
 * 0xFFFF after reset, the rest 0. A switch answers for the port in the
 * modifier's upper 16 bits, a CA for the port the SMP arrived on. A block at
 * or past the capacity is refused (invalid field). Tables are allocated on
 * first use, so a large mock that is never asked costs nothing.
 */
#include "mock/mock_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CAP_SW0 8
#define CAP_CA 128
#define CAP_SW_EXT 32

static unsigned cap_of(const struct sm_mock *m, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &m->f->nodes[n];
	return nd->type == SM_NODE_SWITCH ? (p ? CAP_SW_EXT : CAP_SW0) : CAP_CA;
}

/* Port index pi's table (cap entries), allocated on first use; NULL on ENOMEM. */
static uint16_t *table(struct sm_mock *m, uint32_t pi, unsigned cap)
{
	if (!m->pkeys) {
		m->pkeys = calloc(m->f->n_ports, sizeof(*m->pkeys));
		if (!m->pkeys)
			return NULL;
	}
	if (!m->pkeys[pi]) {
		m->pkeys[pi] = calloc(cap, sizeof(uint16_t));
		if (!m->pkeys[pi])
			return NULL;
		m->pkeys[pi][0] = 0xFFFF;
	}
	return m->pkeys[pi];
}

uint16_t mock_pkey(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s)
{
	const struct sm_node *nd = &m->f->nodes[n];
	unsigned block = s->attr_mod & 0xFFFF, p = nd->type == SM_NODE_SWITCH ? s->attr_mod >> 16 : inp;

	if (p > nd->nports || (nd->type != SM_NODE_SWITCH && !p))
		return SM_MAD_STATUS_INVALID_FIELD;
	unsigned cap = cap_of(m, n, p);
	if (block * 32 >= cap)
		return SM_MAD_STATUS_INVALID_FIELD;
	uint16_t *t = table(m, nd->port0 + p, cap);
	if (!t)
		return SM_MAD_STATUS_BUSY;
	unsigned k = cap - block * 32 < 32 ? cap - block * 32 : 32;
	if (s->method == SM_METHOD_SET) {
		for (unsigned i = 0; i < k; i++)
			t[block * 32 + i] = (uint16_t)(s->data[2 * i] << 8 | s->data[2 * i + 1]);
		m->st.sets++;
		m->st.pkey_sets++;
	} else {
		m->st.gets++;
	}
	memset(s->data, 0, SM_SMP_DATA_SIZE);
	for (unsigned i = 0; i < k; i++) {
		s->data[2 * i] = (uint8_t)(t[block * 32 + i] >> 8);
		s->data[2 * i + 1] = (uint8_t)t[block * 32 + i];
	}
	return 0;
}

int sm_mock_pkeys(struct sm_mock *m, uint32_t port_index, uint16_t *out, unsigned max)
{
	if (port_index >= m->f->n_ports)
		return -EINVAL;
	const struct sm_port *pt = &m->f->ports[port_index];
	unsigned cap = cap_of(m, pt->node, pt->num);
	uint16_t *t = table(m, port_index, cap);
	if (!t)
		return -ENOMEM;
	unsigned n = cap < max ? cap : max;
	memcpy(out, t, n * sizeof(*out));
	return (int)cap;
}

void mock_pkey_free(struct sm_mock *m)
{
	if (!m->pkeys)
		return;
	for (uint32_t i = 0; i < m->f->n_ports; i++)
		free(m->pkeys[i]);
	free(m->pkeys);
	m->pkeys = NULL;
}
