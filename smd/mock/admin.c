/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric, rehearsal controls (see mock.h, "rehearsal")
 *
 * What an admin rehearsing failures changes on a running mock: the fault
 * RNG's seed, the fault shares read back, a switch taken down and up as a
 * whole (every cable pulled, then plugged back). A switch goes down link
 * by link through sm_mock_link_down(), so each link raises the Trap 128 a
 * real fabric sends (its neighbours report it; the switch itself while it
 * still has a path to the SM), and comes back the same way: only the links
 * this switch's down took down, not those another event took.
 */
#include <errno.h>

#include "mock/mock_priv.h"

void mock_rng_seed(struct sm_mock *m, uint64_t seed)
{
	m->cfg.seed = seed;
	m->rng = seed ? seed * 0x9E3779B97F4A7C15ULL : 0x9E3779B97F4A7C15ULL;
}

void sm_mock_set_seed(struct sm_mock *m, uint64_t seed)
{
	mock_rng_seed(m, seed);
}

void sm_mock_get_cfg(const struct sm_mock *m, struct sm_mock_cfg *cfg)
{
	*cfg = m->cfg;
}

static int switch_links(struct sm_mock *m, uint32_t n, int up, unsigned *links)
{
	const struct sm_node *nd;
	unsigned done = 0;

	*links = 0;
	if (n >= m->f->n_nodes || m->f->nodes[n].type != SM_NODE_SWITCH)
		return -EINVAL;
	nd = &m->f->nodes[n];
	for (unsigned p = 1; p <= nd->nports; p++) {
		const struct mport *mp = &m->ports[nd->port0 + p];
		if (m->f->ports[nd->port0 + p].peer_node == SM_NONE)
			continue;
		if (up ? !mp->link_event_down : mp->phys != PHYS_LINKUP)
			continue;
		if (!(up ? sm_mock_link_up(m, n, p) : sm_mock_link_down(m, n, p)))
			done++;
	}
	*links = done;
	return done ? 0 : up ? -ENOENT : -ENOTCONN;
}

int sm_mock_switch_down(struct sm_mock *m, uint32_t node, unsigned *links)
{
	return switch_links(m, node, 0, links);
}

int sm_mock_switch_up(struct sm_mock *m, uint32_t node, unsigned *links)
{
	return switch_links(m, node, 1, links);
}
