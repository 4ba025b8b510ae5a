/* SPDX-License-Identifier: MIT */
/*
 * DOC: ibsim transport
 *
 * struct sm_transport over ibsim's own client protocol (ibsim_client.c).
 * One instance per plane; several may attach to one simulator. Packets the
 * simulator marks as dropped are not delivered: the transaction engine's
 * timeout and retry handle them exactly like a MAD lost on a real wire.
 */
#include "mad/ibsim_client.h"
#include "mad/transport.h"
#include "mad/codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sm_ibsim *sim_of(struct sm_transport *t)
{
	return t->priv;
}

static int ibsim_t_send(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
			unsigned resp_timeout_ms)
{
	uint8_t buf[SM_IBSIM_MAD_SIZE];

	(void)resp_timeout_ms;
	if (len > sizeof(buf))
		return -EINVAL;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, mad, len);
	return sm_ibsim_send(sim_of(t), buf, dlid, 0);
}

static int ibsim_t_recv(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
			struct sm_mad_addr *from, int timeout_ms)
{
	uint8_t mad[SM_IBSIM_MAD_SIZE];
	uint16_t slid = 0;
	uint32_t status = 0;
	int rc;

	if (cap < SM_IBSIM_MAD_SIZE)
		return -EINVAL;
	for (;;) {
		rc = sm_ibsim_recv(sim_of(t), mad, timeout_ms, &slid, &status);
		if (rc == -EIO)          /* dropped by the simulator: like a lost MAD */
			continue;
		if (rc)
			return rc;
		break;
	}
	memcpy(buf, mad, SM_IBSIM_MAD_SIZE);
	*len = SM_IBSIM_MAD_SIZE;
	if (from) {
		from->slid = slid;
		from->sl = 0;
	}
	return 0;
}

static int ibsim_t_fd(struct sm_transport *t)
{
	return sm_ibsim_fd(sim_of(t));
}

static void ibsim_t_close(struct sm_transport *t)
{
	if (!t)
		return;
	sm_ibsim_close(sim_of(t));
	free(t);
}

static const struct sm_transport_ops ibsim_ops = {
	.size = sizeof(struct sm_transport_ops),
	.version = SM_TRANSPORT_OPS_VERSION,
	.name = "ibsim",
	.send = ibsim_t_send,
	.recv = ibsim_t_recv,
	.fd = ibsim_t_fd,
	.close = ibsim_t_close,
};

int sm_ibsim_transport_open(const char *sockname, const char *node, struct sm_transport **out,
			    char *err, size_t errlen)
{
	struct sm_ibsim *c = NULL;
	struct sm_transport *t;
	int rc;

	*out = NULL;
	rc = sm_ibsim_open(sockname, node && *node ? node : NULL, 1, 5000, &c, err, errlen);
	if (rc)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t) {
		sm_ibsim_close(c);
		return -ENOMEM;
	}
	const struct sm_ibsim_info *in = sm_ibsim_info(c);
	t->ops = &ibsim_ops;
	t->priv = c;
	snprintf(t->info.ca_name, sizeof(t->info.ca_name), "ibsim:%s", in->nodeid);
	t->info.port_num = in->node_type == 2 ? 0 : in->local_port;
	t->info.port_guid = in->port_guid;
	t->info.node_guid = in->node_guid;
	t->info.lid = in->lid;
	t->info.state = in->state;
	t->info.phys_state = 5;
	t->info.gid_prefix = 0xfe80000000000000ULL;
	*out = t;
	return 0;
}
