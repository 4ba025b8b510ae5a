/* SPDX-License-Identifier: MIT */
/*
 * DOC: mock fabric, M_Key checking (IBA 14.2.4)
 *
 * The SMA's key is port 0's on a switch and the arrival port's on a CA.
 * A key of 0 disables the check. An SMP whose M_Key differs:
 *   Get, protect bits 0: answered, PortInfo.M_Key shown;
 *   Get, protect bits 1: answered, PortInfo.M_Key reads 0;
 *   Get, protect bits 2 or 3, and every Set: dropped (no answer),
 *   M_KeyViolations counted, and the lease timer started if the lease
 *   period is not 0 and the timer is not running.
 * An SMP with the right key stops a running timer. When the timer runs
 * out (checked on the next SMP to the port: mock time only moves then),
 * the protect bits are cleared, so any SM can read the key (level 0) and
 * take the port over, as the lease is meant to allow. Not emulated: Trap
 * 256 (Bad M_Key) to the SM, and the difference between levels 2 and 3.
 */
#include <errno.h>

#include "mock/mock_priv.h"

static struct mport *mkey_port(struct sm_mock *m, uint32_t n, unsigned inp)
{
	const struct sm_node *nd = &m->f->nodes[n];
	return &m->ports[nd->port0 + (nd->type == SM_NODE_SWITCH ? 0 : inp)];
}

int mock_mkey_check(struct sm_mock *m, uint32_t n, unsigned inp, const struct sm_smp *s)
{
	struct mport *mp = mkey_port(m, n, inp);

	/* the clock only for a running lease: a real-time mock's clock read per SMP was a tenth of its CPU */
	if (mp->lease_end && sm_mock_now_us(m) >= mp->lease_end) {
		mp->mkey_prot = 0;
		mp->lease_end = 0;
		m->st.mkey_leases_expired++;
	}
	if (!mp->mkey || s->mkey == mp->mkey) {
		mp->lease_end = 0;
		return MKEY_PASS;
	}
	if (s->method == SM_METHOD_GET && mp->mkey_prot < 2)
		return mp->mkey_prot ? MKEY_HIDE : MKEY_PASS;
	if (mp->mkey_violations < 0xFFFF)
		mp->mkey_violations++;
	m->st.mkey_violations++;
	if (mp->mkey_lease && !mp->lease_end)
		mp->lease_end = sm_mock_now_us(m) + (uint64_t)mp->mkey_lease * 1000000u;
	return MKEY_FAIL;
}

int sm_mock_set_mkey(struct sm_mock *m, uint32_t port_index, uint64_t mkey, uint8_t prot_bits,
		     uint16_t lease_period)
{
	struct mport *mp;
	const struct sm_port *fp;

	if (port_index >= m->f->n_ports || prot_bits > 3)
		return -EINVAL;
	fp = &m->f->ports[port_index];
	if (fp->node >= m->f->n_nodes)
		return -EINVAL;
	mp = mkey_port(m, fp->node, fp->num);
	mp->mkey = mkey;
	mp->mkey_prot = prot_bits;
	mp->mkey_lease = lease_period;
	mp->lease_end = 0;
	return 0;
}
