/* SPDX-License-Identifier: MIT */
/*
 * DOC: umad transport
 *
 * Owns one libibumad port handle (umad_open_port) with two registered
 * agents: SMI directed route (0x81) and SMI LID routed (0x01), both
 * receiving SubnGet/SubnSet sent to us (SMInfo), the LID-routed one also
 * unsolicited Trap and TrapRepress, the port's issm device held
 * open (IsSM capability: the port is an SM port; refused while another SM
 * holds it), plus one send and one receive buffer of umad_size() + 256
 * bytes.
 *
 * Data flow: send() copies the MAD into the umad buffer, addresses it
 * (permissive DLID for DR, QP0) and hands it to the kernel with the
 * caller's response timeout, so the kernel routes the answer back to this
 * agent; the kernel owns the high 32 bits of the TID. recv() waits with
 * umad_recv(); a returned buffer with a non-zero umad_status() is the
 * kernel reporting that one of our sends got no answer (or failed): it is
 * swallowed here, the transaction engine has its own timers.
 *
 * The same code runs on real HCAs and under ibsim's umad2sim LD_PRELOAD
 * shim, which emulates these libibumad calls.
 *
 * Port choice: before any SM ran every port is INIT, so the default port is
 * the first with physical state LinkUp, not the first ACTIVE one.
 *
 * GSI endpoints (mad/gsi.h, umad_gsi_open): a second umad_open_port handle
 * on the same port, so an SA request never waits behind a sweep's SMPs and
 * a sweep never reads an SA request. The class (0x03) is registered as a
 * server (method mask Get/Set/Send/Report/GetTable/GetTraceTable/GetMulti/
 * Delete; the ReportResps to our Reports come back by TID) with rmpp_version 1: the kernel segments our long
 * answers and reassembles long requests (SM_GSI_KERNEL_RMPP; user_mad.rst).
 * Beside it, client-only agents (no method mask: on real hardware they
 * receive nothing but answers to their own requests, which they never send)
 * for the other classes a host may send to an SM port (gsi_sink_classes):
 * umad2sim hands a
 * MAD of a class nobody registered to a NULL queue and kills the process
 * (its __receiver()); with them, such a MAD lands here and is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "mad/codec.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "mad/transport.h"
#include "mad/gsi.h"

#include <pthread.h>

#define PHYS_LINKUP 5
#define UMAD_BUF (SM_MAD_SIZE + 64)

struct umad_priv {
	struct sm_transport t;     /* first */
	int portid;
	int issm_fd;               /* held open: the port advertises IsSM */
	int agent_dr;
	int agent_lid;
	void *sbuf;
	void *rbuf;
};

static int umad_send_op(struct sm_transport *t, const uint8_t *mad, size_t len, uint16_t dlid,
			unsigned resp_timeout_ms)
{
	struct umad_priv *u = (struct umad_priv *)t;
	int agent, rc;

	if (len > SM_MAD_SIZE || len < 24)
		return -EINVAL;
	memset(u->sbuf, 0, umad_size() + SM_MAD_SIZE);
	memcpy(umad_get_mad(u->sbuf), mad, len);
	agent = mad[1] == SM_CLASS_SMI_DR ? u->agent_dr : u->agent_lid;
	/* SMPs go to QP0 with no Q_Key; DR uses the permissive LID */
	umad_set_addr(u->sbuf, mad[1] == SM_CLASS_SMI_DR ? SM_PERMISSIVE_LID : dlid, 0, 0, 0);
	rc = umad_send(u->portid, agent, u->sbuf, (int)len, (int)resp_timeout_ms, 0);
	if (rc < 0)
		return rc == -1 ? (errno ? -errno : -EIO) : rc;
	return 0;
}

static int umad_recv_op(struct sm_transport *t, uint8_t *buf, size_t cap, size_t *len,
			struct sm_mad_addr *from, int timeout_ms)
{
	struct umad_priv *u = (struct umad_priv *)t;

	for (;;) {
		int length = SM_MAD_SIZE;
		int rc = umad_recv(u->portid, u->rbuf, &length, timeout_ms);
		ib_mad_addr_t *addr;

		if (rc < 0) {
			if (rc == -ETIMEDOUT || rc == -EWOULDBLOCK || errno == ETIMEDOUT)
				return -ETIMEDOUT;
			return rc == -1 ? -EIO : rc;
		}
		if (umad_status(u->rbuf) != 0) {
			/* the kernel's notice about one of our sends: not a MAD from the fabric */
			if (timeout_ms != 0)
				timeout_ms = 0;   /* do not wait a full period again for it */
			continue;
		}
		if (length < 0)
			return -EIO;
		if ((size_t)length > cap)
			length = (int)cap;
		memcpy(buf, umad_get_mad(u->rbuf), (size_t)length);
		*len = (size_t)length;
		if (from) {
			addr = umad_get_mad_addr(u->rbuf);
			from->slid = be16toh(addr->lid);
			from->sl = addr->sl;
		}
		return 0;
	}
}

static int umad_fd_op(struct sm_transport *t)
{
	struct umad_priv *u = (struct umad_priv *)t;

	return umad_get_fd(u->portid);
}

static int umad_refresh_op(struct sm_transport *t)
{
	umad_port_t port;
	int rc;

	rc = umad_get_port(t->info.ca_name, t->info.port_num, &port);
	if (rc < 0)
		return rc;
	t->info.port_guid = be64toh(port.port_guid);
	t->info.lid = (uint16_t)port.base_lid;
	t->info.lmc = (uint8_t)port.lmc;
	t->info.sm_lid = (uint16_t)port.sm_lid;
	t->info.state = (uint8_t)port.state;
	t->info.phys_state = (uint8_t)port.phys_state;
	t->info.gid_prefix = be64toh(port.gid_prefix);
	umad_release_port(&port);
	return 0;
}

/*
 * Read what is still on its way before the port closes: answers to requests
 * a stopped sweep cancelled. The kernel would drop them, but ibsim's
 * umad2sim (how every umad test runs) dereferences a NULL queue in its
 * receiver thread for a MAD that arrives after the fd is closed, killing
 * the process on its way out. Bounded: until 10 ms pass with nothing
 * received, at most 200 ms.
 */
static void umad_drain(struct umad_priv *u)
{
	uint64_t end = sm_mono_us() + 200000u;

	while (u->portid >= 0 && sm_mono_us() < end) {
		int length = SM_MAD_SIZE;
		if (umad_recv(u->portid, u->rbuf, &length, 10) < 0)
			break;
	}
}

static void umad_close_op(struct sm_transport *t)
{
	struct umad_priv *u = (struct umad_priv *)t;

	if (u->rbuf)
		umad_drain(u);
	if (u->agent_dr >= 0)
		umad_unregister(u->portid, u->agent_dr);
	if (u->agent_lid >= 0)
		umad_unregister(u->portid, u->agent_lid);
	if (u->portid >= 0)
		umad_close_port(u->portid);
	if (u->issm_fd >= 0)
		close(u->issm_fd);
	free(u->sbuf);
	free(u->rbuf);
	free(u);
}

/* ---- GSI endpoint (see the DOC) ---- */

/*
 * Classes a host may address to an SM port besides the SA: PerfMgt, BM, DevMgt, CM, SNMP, vendor
 * range 1, 0x10, CC, and the first vendor range 2 classes (ibping 0x32, ibsysstat 0x33). 22 of
 * umad2sim's 32 agents per device; the kernel refuses range 2 without an OUI (ignored: no agent
 * is needed there).
 */
static const uint8_t gsi_sink_classes[] = { 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e,
					    0x0f, 0x10, 0x21, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37 };
#define GSI_SINKS (sizeof(gsi_sink_classes) / sizeof(gsi_sink_classes[0]))

struct umad_gsi {
	struct sm_gsi g;            /* first */
	int portid;
	int agent;
	int sink[GSI_SINKS];
	pthread_mutex_t send_mu;    /* send() from any thread */
	uint8_t *sbuf, *rbuf;       /* umad_size() + *_cap bytes */
	size_t sbuf_cap, rbuf_cap;
};

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *nb;

	if (need <= *cap)
		return 0;
	nb = realloc(*buf, umad_size() + need);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = need;
	return 0;
}

static int umad_gsi_send(struct sm_gsi *g, const uint8_t *mad, size_t len, const struct sm_gsi_addr *to)
{
	struct umad_gsi *u = (struct umad_gsi *)g;
	ib_mad_addr_t *a;
	int rc;

	if (len < SM_GSI_MIN_MSG || len > SM_GSI_MAX_MSG || !to)
		return -EINVAL;
	pthread_mutex_lock(&u->send_mu);
	rc = grow(&u->sbuf, &u->sbuf_cap, len);
	if (rc)
		goto out;
	memset(u->sbuf, 0, umad_size());
	memcpy(umad_get_mad(u->sbuf), mad, len);
	umad_set_addr(u->sbuf, to->lid, (int)to->qpn, to->sl, (int)to->qkey);
	umad_set_pkey(u->sbuf, to->pkey_index);
	if (to->grh) {
		a = umad_get_mad_addr(u->sbuf);
		a->grh_present = 1;
		a->hop_limit = 0xff;
		memcpy(a->gid, to->gid, sizeof(a->gid));
	}
	/* timeout 0: the SA keeps its own timers (Report retries, RMPP) */
	rc = umad_send(u->portid, u->agent, u->sbuf, (int)len, 0, 0);
	if (rc < 0)
		rc = rc == -1 ? (errno ? -errno : -EIO) : rc;
	else
		rc = 0;
out:
	pthread_mutex_unlock(&u->send_mu);
	return rc;
}

static int umad_gsi_recv(struct sm_gsi *g, uint8_t *buf, size_t cap, size_t *len, struct sm_gsi_addr *from)
{
	struct umad_gsi *u = (struct umad_gsi *)g;

	for (int k = 0; k < 64; k++) {   /* bounded: strays and notices are skipped, not waited for */
		int length = (int)u->rbuf_cap;
		int rc = umad_recv(u->portid, u->rbuf, &length, 0);
		ib_mad_addr_t *a;

		if (rc == -ENOSPC && length > (int)u->rbuf_cap) {
			/* a reassembled RMPP message: the kernel keeps it queued, read it with room */
			if ((size_t)length > SM_GSI_MAX_MSG + SM_GSI_MAD_SIZE ||
			    grow(&u->rbuf, &u->rbuf_cap, (size_t)length))
				return -ENOMEM;
			continue;
		}
		if (rc < 0)
			return rc == -ETIMEDOUT || rc == -EWOULDBLOCK || rc == -1 ? -EAGAIN : rc;
		if (umad_status(u->rbuf) != 0 || length < 24)
			continue;   /* the kernel's notice about one of our sends, or a runt */
		if (((const uint8_t *)umad_get_mad(u->rbuf))[1] != g->mgmt_class)
			continue;   /* a sink class (see the DOC): dropped */
		if ((size_t)length > cap)
			return -EMSGSIZE;
		memcpy(buf, umad_get_mad(u->rbuf), (size_t)length);
		*len = (size_t)length;
		if (from) {
			a = umad_get_mad_addr(u->rbuf);
			memset(from, 0, sizeof(*from));
			from->lid = be16toh(a->lid);
			from->sl = a->sl;
			from->qpn = be32toh(a->qpn);
			from->qkey = be32toh(a->qkey);
			from->pkey_index = a->pkey_index;
			from->grh = a->grh_present != 0;
			if (from->grh)
				memcpy(from->gid, a->gid, sizeof(from->gid));
		}
		return 0;
	}
	return -EAGAIN;
}

static int umad_gsi_fd(struct sm_gsi *g)
{
	return umad_get_fd(((struct umad_gsi *)g)->portid);
}

static void umad_gsi_close(struct sm_gsi *g)
{
	struct umad_gsi *u = (struct umad_gsi *)g;

	if (!u)
		return;
	if (u->portid >= 0) {
		/* as umad_drain(): what is on its way must not reach a closed fd under umad2sim */
		uint64_t end = sm_mono_us() + 50000u;
		int length = (int)u->rbuf_cap;
		while (sm_mono_us() < end && umad_recv(u->portid, u->rbuf, &length, 5) >= 0)
			length = (int)u->rbuf_cap;
		for (size_t i = 0; i < GSI_SINKS; i++)
			if (u->sink[i] >= 0)
				umad_unregister(u->portid, u->sink[i]);
		if (u->agent >= 0)
			umad_unregister(u->portid, u->agent);
		umad_close_port(u->portid);
	}
	pthread_mutex_destroy(&u->send_mu);
	free(u->sbuf);
	free(u->rbuf);
	free(u);
}

static const struct sm_gsi_ops umad_gsi_ops = {
	.size = sizeof(struct sm_gsi_ops),
	.version = SM_GSI_OPS_VERSION,
	.name = "umad",
	.send = umad_gsi_send,
	.recv = umad_gsi_recv,
	.fd = umad_gsi_fd,
	.close = umad_gsi_close,
};

static int umad_gsi_open(struct sm_transport *t, uint8_t mgmt_class, struct sm_gsi **out, char *err,
			 size_t errlen)
{
	/* requests a server of the class receives; answers (ReportResp) come back by TID */
	static const uint8_t methods[] = { 0x01, 0x02, 0x03, 0x06, 0x12, 0x13, 0x14, 0x15 };
	struct umad_gsi *u;
	long mask[16 / sizeof(long)];
	int rc;

	*out = NULL;
	if (mgmt_class == SM_CLASS_SMI || mgmt_class == SM_CLASS_SMI_DR) {
		sm_errf(err, errlen, "umad: class 0x%02x is the SM's own (QP0)", mgmt_class);
		return -EINVAL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->portid = -1;
	u->agent = -1;
	for (size_t i = 0; i < GSI_SINKS; i++)
		u->sink[i] = -1;
	pthread_mutex_init(&u->send_mu, NULL);
	u->g.ops = &umad_gsi_ops;
	u->g.flags = SM_GSI_KERNEL_RMPP;
	u->g.mgmt_class = mgmt_class;
	u->g.priv = u;
	if (grow(&u->sbuf, &u->sbuf_cap, SM_GSI_MAD_SIZE) || grow(&u->rbuf, &u->rbuf_cap, 4096)) {
		rc = -ENOMEM;
		goto fail;
	}
	u->portid = umad_open_port(t->info.ca_name, t->info.port_num);
	if (u->portid < 0) {
		rc = u->portid;
		sm_errf(err, errlen, "umad: cannot open %s:%u for class 0x%02x: %s", t->info.ca_name,
			t->info.port_num, mgmt_class, strerror(-rc));
		goto fail;
	}
	memset(mask, 0, sizeof(mask));
	for (size_t i = 0; i < sizeof(methods); i++)
		((uint8_t *)mask)[methods[i] / 8] |= (uint8_t)(1u << (methods[i] % 8));
	u->agent = umad_register(u->portid, mgmt_class, mgmt_class == 0x03 ? 2 : 1, 1, mask);
	if (u->agent < 0) {
		rc = u->agent;
		sm_errf(err, errlen, "umad: cannot register class 0x%02x on %s:%u: %s (another SA running?)",
			mgmt_class, t->info.ca_name, t->info.port_num, strerror(-rc));
		goto fail;
	}
	/* best effort: a class the kernel refuses here only loses the umad2sim guard */
	for (size_t i = 0; i < GSI_SINKS; i++)
		if (gsi_sink_classes[i] != mgmt_class)
			u->sink[i] = umad_register(u->portid, gsi_sink_classes[i],
						   gsi_sink_classes[i] == 0x07 || gsi_sink_classes[i] == 0x21 ? 2 : 1,
						   0, NULL);
	*out = &u->g;
	return 0;
fail:
	umad_gsi_close(&u->g);
	return rc < 0 ? rc : -EIO;
}

static const struct sm_transport_ops umad_ops = {
	.size = sizeof(struct sm_transport_ops),
	.version = SM_TRANSPORT_OPS_VERSION,
	.name = "umad",
	.send = umad_send_op,
	.recv = umad_recv_op,
	.fd = umad_fd_op,
	.now_us = NULL,
	.refresh = umad_refresh_op,
	.close = umad_close_op,
	.gsi_open = umad_gsi_open,
};

/* Is (ca, port) usable: physical state LinkUp. Fills *st. */
static int port_linkup(const char *ca, int port, umad_port_t *st)
{
	if (umad_get_port(ca, port, st) < 0)
		return 0;
	if (st->phys_state == PHYS_LINKUP)
		return 1;
	umad_release_port(st);
	return 0;
}

static int pick_port(const char *ca, unsigned port, char *ca_out, size_t ca_len, int *port_out,
		     umad_port_t *st, char *err, size_t errlen)
{
	char cas[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	int n;

	if (ca && *ca && port) {
		if (umad_get_port(ca, (int)port, st) < 0) {
			sm_errf(err, errlen, "umad: no port %s:%u", ca, port);
			return -ENODEV;
		}
		snprintf(ca_out, ca_len, "%.*s", (int)ca_len - 1, ca);
		*port_out = (int)port;
		return 0;
	}
	if (ca && *ca) {
		snprintf(cas[0], sizeof(cas[0]), "%.*s", (int)sizeof(cas[0]) - 1, ca);
		n = 1;
	} else {
		n = umad_get_cas_names(cas, UMAD_MAX_DEVICES);
		if (n <= 0) {
			sm_errf(err, errlen, "umad: no InfiniBand device found");
			return -ENODEV;
		}
	}
	for (int i = 0; i < n; i++) {
		umad_ca_t c;
		if (umad_get_ca(cas[i], &c) < 0)
			continue;
		/*
		 * A switch is managed through its port 0 (the SM can run on a
		 * switch): it is up whenever the switch is, so it qualifies.
		 */
		if (c.node_type == 2 && (!port || port == 0) && umad_get_port(cas[i], 0, st) == 0) {
			snprintf(ca_out, ca_len, "%.*s", (int)sizeof(cas[i]) - 1, cas[i]);
			*port_out = 0;
			umad_release_ca(&c);
			return 0;
		}
		for (int p = 1; p <= c.numports; p++) {
			if (port && (unsigned)p != port)
				continue;
			if (port_linkup(cas[i], p, st)) {
				snprintf(ca_out, ca_len, "%.*s", (int)sizeof(cas[i]) - 1, cas[i]);
				*port_out = p;
				umad_release_ca(&c);
				return 0;
			}
		}
		umad_release_ca(&c);
	}
	sm_errf(err, errlen, "umad: no port with physical state LinkUp%s%s",
		ca && *ca ? " on " : "", ca && *ca ? ca : "");
	return -ENODEV;
}

/* Method bit in a umad_register() mask (a little-endian bit string). */
static void mask_set(long *mask, unsigned method)
{
	((uint8_t *)mask)[method / 8] |= (uint8_t)(1u << (method % 8));
}

int sm_umad_open(const char *ca, unsigned port, struct sm_transport **out, char *err,
		 size_t errlen)
{
	struct umad_priv *u;
	umad_port_t st;
	char ca_name[UMAD_CA_NAME_LEN];
	char issm_path[256];
	int portnum = 0, rc;
	long mask[16 / sizeof(long)];

	*out = NULL;
	if (ca && strlen(ca) >= UMAD_CA_NAME_LEN) {
		sm_errf(err, errlen, "umad: CA name '%.40s...' longer than %d characters", ca,
			UMAD_CA_NAME_LEN - 1);
		return -EINVAL;
	}
	if (port > 254) {
		sm_errf(err, errlen, "umad: port %u out of range 1..254", port);
		return -EINVAL;
	}
	if (umad_init() < 0) {
		sm_errf(err, errlen, "umad: umad_init failed");
		return -EIO;
	}
	rc = pick_port(ca, port, ca_name, sizeof(ca_name), &portnum, &st, err, errlen);
	if (rc < 0)
		return rc;
	u = calloc(1, sizeof(*u));
	if (!u) {
		umad_release_port(&st);
		return -ENOMEM;
	}
	u->portid = -1;
	u->issm_fd = -1;
	u->agent_dr = u->agent_lid = -1;
	u->t.ops = &umad_ops;
	u->t.priv = u;
	snprintf(u->t.info.ca_name, sizeof(u->t.info.ca_name), "%s", ca_name);
	u->t.info.port_num = (uint8_t)portnum;
	u->t.info.port_guid = be64toh(st.port_guid);
	u->t.info.lid = (uint16_t)st.base_lid;
	u->t.info.lmc = (uint8_t)st.lmc;
	u->t.info.sm_lid = (uint16_t)st.sm_lid;
	u->t.info.state = (uint8_t)st.state;
	u->t.info.phys_state = (uint8_t)st.phys_state;
	u->t.info.gid_prefix = be64toh(st.gid_prefix);
	umad_release_port(&st);
	u->sbuf = calloc(1, umad_size() + UMAD_BUF);
	u->rbuf = calloc(1, umad_size() + UMAD_BUF);
	if (!u->sbuf || !u->rbuf) {
		rc = -ENOMEM;
		goto fail;
	}
	u->portid = umad_open_port(ca_name, portnum);
	if (u->portid < 0) {
		rc = u->portid;
		sm_errf(err, errlen, "umad: cannot open %s:%d: %s", ca_name, portnum, strerror(-rc));
		goto fail;
	}
	/*
	 * Both SMI classes: answers to our requests plus SubnGet/SubnSet sent
	 * to us (SMInfo from other SMs and tools, sm/sminfo.h); the LID-routed
	 * class also unsolicited Trap and TrapRepress.
	 */
	memset(mask, 0, sizeof(mask));
	mask_set(mask, SM_METHOD_GET);
	mask_set(mask, SM_METHOD_SET);
	u->agent_dr = umad_register(u->portid, SM_CLASS_SMI_DR, 1, 0, mask);
	mask_set(mask, SM_METHOD_TRAP);
	mask_set(mask, SM_METHOD_TRAP_REPRESS);
	u->agent_lid = umad_register(u->portid, SM_CLASS_SMI, 1, 0, mask);
	if (u->agent_dr < 0 || u->agent_lid < 0) {
		rc = u->agent_dr < 0 ? u->agent_dr : u->agent_lid;
		sm_errf(err, errlen, "umad: cannot register SMI agents on %s:%d: %s (another SM running?)",
			ca_name, portnum, strerror(-rc));
		goto fail;
	}
	/*
	 * Claim IsSM: the port then advertises an SM, and SMAs' traps are
	 * delivered to it (ibsim hands unsolicited MADs only to IsSM clients).
	 * Non-blocking: the kernel would otherwise wait for another SM to let go.
	 * After the agents exist: setting IsSM changes the port's capability
	 * mask, and its SMA reports that with a Trap 144 to the SM LID of a
	 * previous run, i.e. to us; umad2sim crashes (NULL agent, in its
	 * receive thread) when such a MAD arrives before the class is
	 * registered. The trap reaches the caller as an unsolicited MAD.
	 */
	if (umad_get_issm_path(ca_name, portnum, issm_path, sizeof(issm_path)) < 0) {
		rc = -ENODEV;
		sm_errf(err, errlen, "umad: no issm device for %s:%d", ca_name, portnum);
		goto fail;
	}
	u->issm_fd = open(issm_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (u->issm_fd < 0) {
		rc = -errno;
		sm_errf(err, errlen, "umad: cannot claim IsSM on %s:%d (%s): %s", ca_name, portnum,
			issm_path, errno == EAGAIN || errno == EBUSY ?
			"another SM holds this port" : strerror(errno));
		goto fail;
	}
	*out = &u->t;
	return 0;
fail:
	umad_close_op(&u->t);
	return rc < 0 ? rc : -EIO;
}

int sm_transport_open(const char *spec, struct sm_transport **out, char *err, size_t errlen)
{
	char buf[128], *ca = NULL, *port_s = NULL;
	unsigned long port = 0;

	*out = NULL;
	if (!spec || !*spec)
		spec = "umad";
	if (strlen(spec) >= sizeof(buf)) {
		if (err && errlen)
			snprintf(err, errlen, "transport spec too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	if (strncmp(buf, "umad", 4) != 0 || (buf[4] != '\0' && buf[4] != ':')) {
		if (err && errlen)
			snprintf(err, errlen, "unknown transport '%s' (expected umad[:CA[:PORT]])", spec);
		return -EINVAL;
	}
	if (buf[4] == ':') {
		ca = buf + 5;
		port_s = strchr(ca, ':');
		if (port_s) {
			char *end;
			*port_s++ = '\0';
			port = strtoul(port_s, &end, 10);
			if (!*port_s || *end || port < 1 || port > 254) {
				if (err && errlen)
					snprintf(err, errlen, "bad port '%s' in '%s' (1..254)", port_s,
						 spec);
				return -EINVAL;
			}
		}
		if (!*ca) {
			if (err && errlen)
				snprintf(err, errlen, "empty CA name in '%s'", spec);
			return -EINVAL;
		}
	}
	return sm_umad_open(ca, (unsigned)port, out, err, errlen);
}
