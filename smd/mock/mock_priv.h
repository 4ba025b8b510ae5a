/* SPDX-License-Identifier: MIT */
#ifndef SMD_MOCK_PRIV_H
#define SMD_MOCK_PRIV_H
/*
 * DOC: mock fabric, private
 *
 * The state shared by the mock's files (see the file map in mock.h):
 * struct sm_mock and its per-port (struct mport), per-node (struct mnode)
 * and per-attachment (struct attach) parts, and the calls one file makes
 * into another. Nothing here is for use outside smd/mock/.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/codec.h"
#include "mock/mock.h"

#define PHYS_POLLING 2
#define PHYS_LINKUP 5

struct mport {
	uint64_t gid_prefix;
	uint64_t mkey;
	uint32_t sets;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t state;
	uint8_t phys;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t link_event_down;   /* taken down by sm_mock_link_down */
	/* M_Key state (switches: port 0's; CAs: per port), see the M_Key block */
	uint8_t mkey_prot;         /* M_KeyProtectBits */
	uint16_t mkey_lease;       /* M_KeyLeasePeriod, seconds */
	uint16_t mkey_violations;  /* M_KeyViolations (saturates) */
	uint64_t lease_end;        /* lease timer deadline (mock time), 0 = not running */
};

struct mnode {
	uint8_t *lft;              /* lft_len entries, grown on Set; switches: in the mock's LFT arena */
	uint32_t lft_len;
	uint32_t blocks_set;
	uint16_t lft_cap;
	uint16_t lft_top;
	uint8_t psc;               /* SwitchInfo.PortStateChange */
	uint8_t life;              /* SwitchInfo.LifeTimeValue */
	uint8_t hostile;           /* enum sm_mock_hostile */
	uint32_t hostile_arg;
	uint32_t hostile_n;        /* answers given while hostile */
	uint32_t flip_n;           /* NodeInfo answers given while TYPE_FLIP */
	uint16_t *mft;             /* mock_mft.c: [mlid offset * 16 + position] port masks, grown on Set */
	uint32_t mft_mlids, mft_blocks_set;
	uint16_t mft_top;
};

struct qent {
	uint64_t release;
	uint16_t len;
	uint16_t slid;
	uint8_t mad[SM_MAD_SIZE];
};

struct mqueue {
	struct qent *e;
	uint32_t head, len, cap;   /* ring */
};

struct attach {
	struct sm_transport t;     /* first: the transport handed out */
	struct sm_mock *m;
	uint32_t port;             /* port index */
	uint32_t node;
	struct mqueue ready;
	struct mqueue delayed;
	uint64_t seen_us;          /* mock time at this attachment's last clock read (recv) */
	int open;
};

struct sm_mock {
	struct sm_fabric *f;
	struct mport *ports;
	struct mnode *nodes;
	struct attach **att;
	uint32_t n_att, cap_att;
	struct sm_mock_cfg cfg;
	uint64_t rng;
	uint64_t vnow;             /* virtual time, us */
	uint64_t real0;            /* CLOCK_MONOTONIC at creation (real_time mode) */
	uint64_t trap_tid;
	int lose_answer;           /* the drop fault hit the answer of the request being handled */
	struct sm_mock_stats st;
	pthread_mutex_t gsi_mu;    /* gsi[] (gsi.c): the only state other threads touch */
	struct mock_gsi *gsi[SM_MOCK_GSI_MAX];
	uint16_t **pkeys;          /* per port index, P_Key table (mock_pkey.c); NULL until used */
	struct mock_qos *qos;      /* mock_qos.c, NULL until a port is configured */
	/*
	 * The emulated switches' LFTs, one mapping of its own (mock.c
	 * "LFT arena"): lft_cap bytes reserved per switch, pages touched as
	 * the tables grow, so their memory is apart from the SM's.
	 */
	uint8_t *arena;
	size_t arena_len;
};

#define SMA_DROP 0xFFFFu        /* mock_sma(): no answer at all */

enum { MKEY_PASS, MKEY_HIDE, MKEY_FAIL };

/* The attachment (open transport) at port index pi, or NULL. */
static inline struct attach *attachment_at(const struct sm_mock *m, uint32_t pi)
{
	for (uint32_t i = 0; i < m->n_att; i++)
		if (m->att[i] && m->att[i]->open && m->att[i]->port == pi)
			return m->att[i];
	return NULL;
}

/* LID (base) and LMC a port answers for: switch external ports use port 0's. */
static inline const struct mport *lid_port(const struct sm_mock *m, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &m->f->nodes[n];

	return &m->ports[nd->port0 + (nd->type == SM_NODE_SWITCH ? 0 : p)];
}

static inline int port_has_lid(const struct sm_mock *m, uint32_t n, unsigned p, uint16_t lid)
{
	const struct mport *mp = lid_port(m, n, p);

	return mp->lid && lid >= mp->lid && lid < mp->lid + (1u << mp->lmc);
}

/* mock.c: grow a switch's LFT to len entries (<= its lft_cap; new ones SM_LFT_NO_PORT);
 * copy the SM port's state into its transport's info. */
int mock_lft_grow(struct mnode *mn, uint32_t len);
int mock_refresh(struct sm_transport *t);

/* mock_mkey.c: check s's M_Key at the SMA of node n (arrival port inp). */
int mock_mkey_check(struct sm_mock *m, uint32_t n, unsigned inp, const struct sm_smp *s);

/* mock_sma.c: compute node n's answer to s in place (status or SMA_DROP);
 * spoil it as a hostile node's mode says (*len may be cut). */
uint16_t mock_sma(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s);
void mock_hostile_apply(struct sm_mock *m, uint32_t n, struct sm_smp *s, size_t *len);

/* mock_fwd.c: deliver a request from attachment a (DR walk or LID walk)
 * to its SMA and queue the answer; LID routing over the emulated LFTs. */
void mock_handle_dr(struct sm_mock *m, struct attach *a, struct sm_smp *s);
void mock_handle_lid(struct sm_mock *m, struct attach *a, struct sm_smp *s, uint16_t dlid);
int mock_route_lid(const struct sm_mock *m, uint32_t n, unsigned outp, uint16_t dlid,
		   uint32_t *dn, unsigned *dp);
struct attach *mock_attachment_with_lid(const struct sm_mock *m, uint16_t lid);

/* mock_pkey.c: P_KeyTable Get/Set at node n (arrival port inp); free the tables. */
uint16_t mock_pkey(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s);
void mock_pkey_free(struct sm_mock *m);

/* mock_ops.c: queue an answer at a (faults: apply corrupt/delay/lost
 * answer), send a switch's Trap 128. */
void mock_deliver(struct sm_mock *m, struct attach *a, const struct sm_smp *resp, uint16_t slid,
		  int faults, size_t len);
void mock_send_trap128(struct sm_mock *m, uint32_t sw);

/* mock_mft.c: MulticastForwardingTable Get/Set; SwitchInfo's MulticastFDBCap/Top. */
uint16_t mock_mft(struct sm_mock *m, uint32_t n, struct sm_smp *s);
void mock_mft_switch_info(struct sm_mock *m, uint32_t n, const struct sm_switch_info *set, struct sm_switch_info *si);

/* admin.c: (re)start the fault RNG from a seed. */
void mock_rng_seed(struct sm_mock *m, uint64_t seed);
/* mock_qos.c: port configuration fields and QoS tables (fill and Set PortInfo, SwitchInfo caps,
 * answer SLtoVLMappingTable / VLArbitrationTable), freed with the mock. */
void mock_qos_fill_pi(const struct sm_mock *m, uint32_t idx, struct sm_port_info *pi);
uint16_t mock_qos_set_pi(struct sm_mock *m, uint32_t n, unsigned p, const struct sm_port_info *req);
void mock_qos_fill_si(const struct sm_mock *m, struct sm_switch_info *si);
uint16_t mock_qos_sma(struct sm_mock *m, uint32_t n, unsigned inp, struct sm_smp *s);
void mock_qos_free(struct sm_mock *m);

/* gsi.c: the transport's gsi_open; detach the endpoints a freed mock leaves open. */
struct sm_gsi;
int mock_gsi_open(struct sm_transport *t, uint8_t mgmt_class, struct sm_gsi **out, char *err, size_t errlen);
void mock_gsi_detach_all(struct sm_mock *m);

#endif
