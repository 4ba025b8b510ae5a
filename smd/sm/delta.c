/* SPDX-License-Identifier: MIT */
/*
 * DOC: incremental sweep (sm_sweep_delta(), phases.h)
 *
 * Starts from the state's fabric and sweep tables (a copy: the state stays
 * as it was until the bring-up ends) and asks, level by level of DR hop
 * count, SwitchInfo of every known switch; the ports of a switch that flags
 * PortStateChange are read (after clearing the flag). A link that went down
 * is removed and the paths that crossed it replaced; a switch that every
 * link to it was read down from is left out (with what hangs only from
 * it). A port that came up (DOWN in the state, up now, no peer) or bounced
 * (ACTIVE in the state, INIT now: it went down and up since) is explored
 * once every level is asked, as the heavy sweep explores (sweep.c): the
 * node behind it is linked if known, else added and read with whatever is
 * behind its own ports (a host, a switch and its hosts that come back);
 * the far end of a link to a known node is read too, so both ends are
 * activated. Anything else (a switch silent along a path that holds or
 * reset, a port in another state, an answer lost or a contradiction while
 * exploring) makes the caller run the full sweep instead.
 *
 * Cost: one SwitchInfo per known switch and the ports of the switches that
 * flag a change; for what came up, what the heavy sweep sends for it alone
 * (NodeInfo behind the port; for a new node its NodeDescription, SwitchInfo
 * and every PortInfo) and one PortInfo for a known far end.
 */
#include "sm/phases.h"
#include "sm/state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void on_delta_pi(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r);

/* c->delta_port flags: the port was read by this sweep; it came up (or bounced) and is explored */
enum { DELTA_READ = 1, DELTA_UP = 2 };
/* c->delta_lost values besides 1 (SwitchInfo lost): every link to the switch was read down */
enum { DELTA_GONE = 2 };

static void delta_fallback(struct sm_core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void delta_fallback(struct sm_core *c, const char *fmt, ...)
{
	va_list ap;
	if (c->delta_fallback++)
		return;
	va_start(ap, fmt);
	vsnprintf(c->delta_why, sizeof(c->delta_why), fmt, ap);
	va_end(ap);
}

static void on_delta_si(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	const struct sm_node *nd = &c->f->nodes[rq->node];
	struct sm_switch_info si;
	struct sm_mad_err me;
	int rc = 0;

	if (r->status || r->mad_status) {
		c->delta_lost[rq->node] = 1;   /* its path may cross the link that went down: see sm_sweep_repath() */
		return;
	}
	if (sm_switch_info_decode(r->resp->data, &si, &me)) {
		delta_fallback(c, "switch 0x%016" PRIx64 ": malformed SwitchInfo: %s", nd->guid, me.msg);
		return;
	}
	if (si.lft_top != c->tab.si[rq->node].lft_top) {
		delta_fallback(c, "switch 0x%016" PRIx64 " LinearFDBTop %u, was %u (reset?)", nd->guid, si.lft_top,
			       c->tab.si[rq->node].lft_top);
		return;
	}
	const struct sm_switch_info *was = &c->tab.si[rq->node];
	if (si.part_enf_cap != was->part_enf_cap || si.inbound_enf_cap != was->inbound_enf_cap ||
	    si.outbound_enf_cap != was->outbound_enf_cap || si.enhanced_port0 != was->enhanced_port0) {
		/* what its ports' PortInfo is configured from (portcfg.c): only the full sweep configures all */
		delta_fallback(c, "switch 0x%016" PRIx64 ": SwitchInfo capabilities changed", nd->guid);
		return;
	}
	c->tab.si[rq->node] = si;
	if (!si.port_state_change)
		return;
	/* something moved at this switch: clear the flag first, then look at every port */
	c->delta_switches_read++;
	rc = sm_core_clear_psc(c, rq->node, &si);
	/* port 0 too: its LID (and so the switch's) is compared by the LID phase */
	for (unsigned p = 0; !rc && p <= nd->nports; p++)
		rc = sm_core_get(c, SM_ATTR_PORT_INFO, p, &c->tab.path[rq->node], SM_RQ_DELTA_PI, rq->node, (uint16_t)p,
				 on_delta_pi);
	if (rc)
		sm_core_fail(c, rc);
}

/*
 * A port of a switch that flagged a change. A link that went away is
 * removed; a port that came up or bounced (INIT where it was ACTIVE) is
 * queued to be explored (a bounced one unlinked first: what is behind it
 * now may be another node); any other change needs the full sweep.
 */
static void on_delta_pi(struct sm_core *c, const struct sm_req *rq, const struct sm_txn_result *r)
{
	struct sm_fabric *f = c->f;
	const struct sm_node *nd = &f->nodes[rq->node];
	struct sm_port_info pi;
	struct sm_mad_err me;

	if (r->status || r->mad_status || sm_port_info_decode(r->resp->data, &pi, &me)) {
		delta_fallback(c, "no PortInfo from switch 0x%016" PRIx64 " port %u", nd->guid, rq->port);
		return;
	}
	uint32_t idx = sm_port_index(f, rq->node, rq->port);
	struct sm_port *pt = &f->ports[idx];
	const struct sm_port_info *old = &c->tab.pi[idx];
	int was_up = c->tab.pi_ok[idx] && sm_port_up(old), up = sm_port_up(&pi);

	if (rq->port == 0) {
		c->tab.pi[idx] = pi;
		c->tab.pi_ok[idx] = 1;
		return;
	}
	if (idx < c->delta_ports)
		c->delta_port[idx] |= DELTA_READ;
	int came_up = up && !was_up && pt->peer_node == SM_NONE;
	int bounced = up && was_up && old->port_state == SM_PORT_ACTIVE && pi.port_state == SM_PORT_INIT;
	if ((came_up || bounced) && idx < c->delta_ports) {
		if (bounced) {
			sm_fabric_unlink(f, rq->node, rq->port);
			c->delta_unlinks++;
		}
		c->delta_port[idx] |= DELTA_UP;
		sm_sweep_take_pi(c, rq->node, rq->port, &pi);   /* queued: explored after every level is asked */
		return;
	}
	if (up && (!was_up || pi.port_state != old->port_state)) {
		delta_fallback(c, "switch 0x%016" PRIx64 " port %u is %s (was %s)", nd->guid, rq->port,
			       sm_port_state_str(pi.port_state),
			       c->tab.pi_ok[idx] ? sm_port_state_str(old->port_state) : "unknown");
		return;
	}
	c->tab.pi[idx] = pi;
	c->tab.pi_ok[idx] = 1;
	pt->state = pi.port_state;
	pt->phys_state = pi.phys_state;
	if (!up && pt->peer_node != SM_NONE) {
		uint32_t pn = pt->peer_node;
		struct sm_port *pp = sm_port(f, pn, pt->peer_port);
		/* the far end is down too (a CA's port is not read: it falls out below) */
		pp->state = SM_PORT_DOWN;
		c->tab.pi[pp - f->ports].port_state = SM_PORT_DOWN;
		sm_fabric_unlink(f, rq->node, rq->port);
		c->delta_links_down++;
		c->delta_unlinks++;
	}
}

/* A contradiction or a lost answer while exploring: only the full sweep can tell. */
static int explore_failed(struct sm_core *c)
{
	if (c->lost)
		delta_fallback(c, "exploring what came up: %s", c->lost_why);
	else if (c->changed)
		delta_fallback(c, "exploring what came up: %s", c->why);
	return c->delta_fallback != 0;
}

/* A port of c->f that came up: one that did, or one of a node found behind one. */
static int fresh_port(const struct sm_core *c, uint32_t known, uint32_t i)
{
	const struct sm_port *pt = &c->f->ports[i];
	if (pt->node >= known)
		return 1;
	if (i < c->delta_ports && (c->delta_port[i] & DELTA_UP))
		return 1;
	if (pt->peer_node == SM_NONE)
		return 0;
	uint32_t j = sm_port_index(c->f, pt->peer_node, pt->peer_port);
	return pt->peer_node >= known || (j < c->delta_ports && (c->delta_port[j] & DELTA_UP));
}

/*
 * Explore the ports that came up (queued in c->next), then read the known
 * ends of the links found there that this sweep did not read (a host's
 * port, a switch that did not flag the change). known: nodes of the
 * state's fabric (the first ones of c->f). 0 or -errno; a fallback in
 * c->delta_why.
 */
static int explore_new(struct sm_core *c, uint32_t known)
{
	struct sm_fabric *f = c->f;
	int rc = sm_sweep_explore(c);
	if (rc || explore_failed(c))
		return rc;
	for (uint32_t i = 0; i < c->delta_ports && !rc; i++) {
		const struct sm_port *pt = &f->ports[i];
		if (!pt->num || pt->peer_node == SM_NONE || !fresh_port(c, known, i))
			continue;
		if (c->delta_lost[pt->node] == DELTA_GONE) {
			delta_fallback(c, "switch 0x%016" PRIx64 " came back while its links were read down",
				       f->nodes[pt->node].guid);
			return 0;
		}
		if (c->delta_port[i] & DELTA_READ)
			continue;
		c->delta_port[i] |= DELTA_READ;
		rc = sm_sweep_get_pi(c, pt->node, pt->num);
	}
	if (!rc)
		rc = sm_core_run(c);
	if (!rc)
		explore_failed(c);
	return rc;
}

struct fresh {
	uint64_t guid;
	unsigned port;
};

/* Fresh after the sweep: an end of a link that came up, or any port of a node found behind one. */
static int fresh_end(const struct sm_core *c, uint32_t known, uint32_t i)
{
	const struct sm_port *pt = &c->f->ports[i];
	return pt->node >= known || (pt->num && pt->peer_node != SM_NONE && fresh_port(c, known, i));
}

/*
 * The fresh ports by node GUID (c->f is renumbered after this), and how
 * many links and nodes came: *out (caller frees), *n.
 */
static int fresh_collect(struct sm_core *c, uint32_t known, struct fresh **out, uint32_t *n)
{
	const struct sm_fabric *f = c->f;
	uint32_t cnt = 0;
	*out = NULL;
	*n = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		cnt += (uint32_t)fresh_end(c, known, i);
	if (!cnt)
		return 0;
	struct fresh *v = malloc(cnt * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct sm_port *pt = &f->ports[i];
		if (!fresh_end(c, known, i))
			continue;
		v[(*n)++] = (struct fresh){ .guid = f->nodes[pt->node].guid, .port = pt->num };
		/* each link once */
		if (pt->num && pt->peer_node != SM_NONE)
			c->delta_links_up += i < sm_port_index(f, pt->peer_node, pt->peer_port);
	}
	c->delta_nodes_new = f->n_nodes - known;
	*out = v;
	return 0;
}

/* c->delta_fresh over the renumbered c->f. */
static int fresh_mark(struct sm_core *c, const struct fresh *v, uint32_t n)
{
	const struct sm_fabric *f = c->f;
	if (!n)
		return 0;
	c->delta_fresh = calloc((size_t)f->n_ports + 1, 1);
	if (!c->delta_fresh)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t nd = sm_fabric_find_node(f, v[k].guid);
		if (nd != SM_NONE && v[k].port <= f->nodes[nd].nports)
			c->delta_fresh[f->nodes[nd].port0 + v[k].port] = 1;
	}
	return 0;
}

/* The nodes a port of which this sweep read, or that it added, by GUID (c->f is renumbered after this). */
static int dirty_collect(const struct sm_core *c, uint32_t known, uint64_t **out, uint32_t *n)
{
	const struct sm_fabric *f = c->f;
	uint32_t cnt = f->n_nodes - known;
	*n = 0;
	for (uint32_t i = 0; i < c->delta_ports; i++)
		cnt += (c->delta_port[i] & DELTA_READ) != 0;
	*out = malloc(((size_t)cnt + 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->delta_ports; i++)
		if ((c->delta_port[i] & DELTA_READ) && (!*n || (*out)[*n - 1] != f->nodes[f->ports[i].node].guid))
			(*out)[(*n)++] = f->nodes[f->ports[i].node].guid;
	for (uint32_t m = known; m < f->n_nodes; m++)
		(*out)[(*n)++] = f->nodes[m].guid;
	return 0;
}

/* c->delta_dirty over the renumbered c->f. */
static int dirty_mark(struct sm_core *c, const uint64_t *v, uint32_t n)
{
	c->delta_dirty = calloc((size_t)c->f->n_nodes + 1, 1);
	if (!c->delta_dirty)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t nd = sm_fabric_find_node(c->f, v[k]);
		if (nd != SM_NONE)
			c->delta_dirty[nd] = 1;
	}
	return 0;
}

int sm_sweep_delta(struct sm_core *c, char *err, size_t errlen)
{
	const struct sm_state *st = c->state;
	const struct sm_fabric *sf = sm_state_fabric(st);
	uint8_t *keep = NULL, *reached = NULL, *asked = NULL;
	uint32_t *queue = NULL, *sw = NULL;
	struct fresh *fresh = NULL;
	uint64_t *dirty = NULL;
	uint32_t n_fresh = 0, n_dirty = 0;
	int rc;

	c->delta_fallback = 0;
	c->delta_why[0] = '\0';
	c->f = sm_fabric_new();
	if (!c->f || sm_fabric_append(c->f, sf, NULL)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* an append into an empty fabric keeps node and port indices: the side tables line up */
	if (c->f->n_nodes != sf->n_nodes || c->f->n_ports != sf->n_ports || st->tab.cap_nodes < sf->n_nodes ||
	    st->tab.cap_ports < sf->n_ports || !st->snap->pi || st->snap->attr_nodes < sf->n_nodes ||
	    st->snap->attr_ports < sf->n_ports) {
		snprintf(c->delta_why, sizeof(c->delta_why), "the state does not match its fabric");
		return 1;
	}
	/*
	 * The state's paths and the snapshot's NodeInfo, SwitchInfo and
	 * PortInfo, in tables as large as the state's (renumbered:
	 * sm_sweep_tables_cap), so that their arrays are the spare ones (spare.h).
	 */
	struct sm_sweep_tables src;
	sm_sweep_tables_init(&src);
	src.path = st->tab.path;
	src.sm_node = st->tab.sm_node;
	src.sm_portnum = st->tab.sm_portnum;
	sm_snapshot_attrs_view(st->snap, &src, sf->n_nodes, sf->n_ports);
	if (sm_sweep_tables_start(&c->tab, &src, sf->n_nodes, sf->n_ports,
				  sm_sweep_tables_cap(sf->n_nodes, SM_TABLES_NODE_STEP),
				  sm_sweep_tables_cap(sf->n_ports, SM_TABLES_PORT_STEP)) ||
	    (rc = sm_core_grow(c))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}

	const uint32_t known = sf->n_nodes;
	c->n_next = 0;
	c->delta_lost = calloc((size_t)known + 1, 1);
	c->delta_port = calloc((size_t)sf->n_ports + 1, 1);
	c->delta_ports = sf->n_ports;
	asked = calloc((size_t)known + 1, 1);
	reached = malloc((size_t)known + 1);
	sw = malloc(((size_t)known + 1) * sizeof(*sw));
	if (!c->delta_lost || !c->delta_port || !asked || !reached || !sw) {
		rc = -ENOMEM;
		goto out;
	}
	memset(reached, 1, (size_t)known + 1);
	/* the switches (only they are asked, and only they can be lost), in index order */
	uint32_t n_sw = 0;
	for (uint32_t n = 0; n < known; n++)
		if (c->f->nodes[n].type == SM_NODE_SWITCH)
			sw[n_sw++] = n;
	uint32_t left = n_sw;   /* not asked yet: once none is, the levels left ask nothing */
	/*
	 * Level by level (DR hop count from the SM): a link that went down is
	 * found at its nearer end's level (that switch flags PortStateChange,
	 * its ports are read, the link removed) and the paths crossing it are
	 * replaced before the next level is asked, so no SMP is sent into a
	 * dead link. A switch that no path of the model reaches any more
	 * (every link to it was read down) is gone and not asked; one still
	 * silent along a path that holds is sick: the full sweep finds out.
	 */
	rc = 0;
	c->delta_unlinks = 0;
	uint32_t unlinks_seen = 0;
	int repathed = 0;
	for (unsigned level = 0; level <= SM_DR_MAX_HOPS && left && !rc && !c->delta_fallback; level++) {
		unsigned n_asked = 0;
		/* a switch given a shorter path after its level was asked is asked at this one */
		for (uint32_t i = 0; i < n_sw && !rc; i++) {
			uint32_t n = sw[i];
			if (asked[n] || c->tab.path[n].cnt > level)
				continue;
			asked[n] = 1;
			left--;
			if (!reached[n]) {
				c->delta_lost[n] = DELTA_GONE;
				c->delta_switches_gone++;
				continue;
			}
			n_asked++;
			rc = sm_core_get(c, SM_ATTR_SWITCH_INFO, 0, &c->tab.path[n], SM_RQ_DELTA_SI, n, 0, on_delta_si);
		}
		if (!n_asked || rc)
			continue;
		rc = sm_core_run(c);
		if (rc || c->delta_fallback)
			break;
		/* silent along a path every link of which the model still holds: sick */
		int silent = 0;
		for (uint32_t i = 0; i < n_sw && !c->delta_fallback; i++) {
			uint32_t n = sw[i];
			if (c->delta_lost[n] != 1)
				continue;
			silent = 1;
			if (sm_sweep_path_holds(c, &c->tab.path[n], n))
				delta_fallback(c, "switch 0x%016" PRIx64 " did not answer SwitchInfo", c->f->nodes[n].guid);
		}
		if (c->delta_fallback)
			break;
		/*
		 * Re-pathing a model that lost no link since the last time moves
		 * nothing and reaches what it reached (one BFS over 44k nodes per
		 * level saved at 40k hosts): only after a link went or a switch
		 * stayed silent.
		 */
		if (repathed && !silent && c->delta_unlinks == unlinks_seen)
			continue;
		repathed = 1;
		unlinks_seen = c->delta_unlinks;
		int moved = sm_sweep_repath(c, c->delta_lost, reached);
		if (moved < 0) {
			rc = moved;
			break;
		}
		for (uint32_t i = 0; i < n_sw; i++) {
			uint32_t n = sw[i];
			if (c->delta_lost[n] != 1)
				continue;
			if (!reached[n]) {
				c->delta_lost[n] = DELTA_GONE;   /* lost behind links read down: gone */
				c->delta_switches_gone++;
				continue;
			}
			/* lost on a path that crossed a dead link: asked again along its new one */
			c->delta_lost[n] = 0;
			asked[n] = 0;
			left++;
		}
	}
	for (uint32_t i = 0; i < n_sw && !rc && !c->delta_fallback; i++)
		if (!asked[sw[i]])
			delta_fallback(c, "switch 0x%016" PRIx64 " is no longer reachable", c->f->nodes[sw[i]].guid);
	/* what came up; then the shortest paths, as a heavy sweep finds them (the next sweep's levels) */
	int explored = !rc && !c->delta_fallback && c->n_next;
	if (explored)
		rc = explore_new(c, known);
	if (!rc && !c->delta_fallback && explored) {
		int moved = sm_sweep_shorten_paths(c);
		rc = moved < 0 ? moved : 0;
	}
	if (rc || c->delta_fallback)
		goto out;

	/* what the SM still reaches */
	const struct sm_fabric *f = c->f;
	keep = calloc((size_t)f->n_nodes + 1, 1);
	queue = malloc(((size_t)f->n_nodes + 1) * sizeof(*queue));
	if (!keep || !queue) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t head = 0, tail = 0;
	if (c->tab.sm_node < f->n_nodes) {
		keep[c->tab.sm_node] = 1;
		queue[tail++] = c->tab.sm_node;
	}
	while (head < tail) {
		uint32_t n = queue[head++];
		for (unsigned p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t pn = sm_port(f, n, p)->peer_node;
			if (pn != SM_NONE && !keep[pn]) {
				keep[pn] = 1;
				queue[tail++] = pn;
			}
		}
	}
	rc = fresh_collect(c, known, &fresh, &n_fresh);
	if (!rc)
		rc = dirty_collect(c, known, &dirty, &n_dirty);
	if (!rc)
		rc = sm_sweep_tables_canonicalize(&c->f, c->plane, &c->tab, keep);
	if (!rc)
		rc = fresh_mark(c, fresh, n_fresh);
	if (!rc)
		rc = dirty_mark(c, dirty, n_dirty);
out:
	free(keep);
	free(queue);
	free(asked);
	free(reached);
	free(sw);
	free(fresh);
	free(dirty);
	if (rc) {
		snprintf(err, errlen, "incremental sweep failed: %s", strerror(-rc));
		return rc;
	}
	return c->delta_fallback ? 1 : 0;
}
