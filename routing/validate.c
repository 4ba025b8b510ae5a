/* SPDX-License-Identifier: MIT */
/*
 * DOC: route validation (see validate.h for what is checked)
 *
 * Per destination LID: resolve every switch's route once (state machine
 * UNKNOWN -> ON_STACK -> OK/HOLE/LOOP, iterative with an explicit stack),
 * then count pairs per switch (hosts attached to it) instead of per host,
 * mark the switches that carry endpoint traffic to the LID, and add the
 * link-to-link dependencies of those switches to the CDG bitsets.
 * Cost: O(LIDs x switches) time, O(links x radix) bits for the CDG.
 */
#include "config.h"
#include "lib/clock.h"
#include "routing/validate.h"
#include "routing/graph.h"
#include "routing/validate_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ST_UNKNOWN = 0, ST_ON_STACK, ST_OK, ST_HOLE, ST_LOOP };

#define NXT_HOLE UINT32_MAX        /* no port, no cable, or a cable back to the same switch */
#define NXT_ENDPOINT (UINT32_MAX - 1)

struct vctx {
	const struct sm_fabric *f;
	const struct sm_lfts *l;
	const struct sm_graph *g;
	uint32_t *link_of;       /* [n_sw * (max_ports+1)] adj index of (slot, port) or SM_NONE */
	uint32_t *nxt;           /* [n_sw * (max_ports+1)] slot across (slot, port), or NXT_* */
	uint8_t *tr;             /* [TR_CHUNK * n_sw] LFTs transposed, TR_CHUNK LIDs: one LID's entries together */
	const uint8_t *cur;      /* tr row of the destination being resolved */
	unsigned stride;         /* max_ports + 1 */
	/* per LID scratch */
	uint8_t *st;
	uint16_t *hops;
	uint32_t *next;          /* next slot, SM_NONE at the end of the walk */
	uint8_t *entry;          /* LFT entry used at each slot */
	uint32_t *fail_at;       /* slot where a failing walk stopped */
	uint32_t *stack;
	uint8_t *used;
	uint8_t *hostful;        /* [n_sw] 1 if endpoints are cabled to the switch */
	/* CDG */
	uint64_t *bits;
	uint64_t *bit_off;       /* [n_links + 1] */
	uint32_t *indeg;         /* [n_links + 1] CDG in-degree, counted as edges are added */
	int example_from_switch; /* v->example has a switch as source */
};

static void vctx_free(struct vctx *c)
{
	free(c->link_of);
	free(c->nxt);
	free(c->tr);
	free(c->st);
	free(c->hops);
	free(c->next);
	free(c->entry);
	free(c->fail_at);
	free(c->stack);
	free(c->used);
	free(c->hostful);
	free(c->bits);
	free(c->bit_off);
	free(c->indeg);
}

/*
 * The walk reads one LID's entry at every switch; rows are per switch, so
 * reading them in place strides by a whole row per switch (a cache miss
 * each). Transposing TR_CHUNK destination LIDs at a time (all switches x
 * 64 destinations: 229 KB at 3,584 switches, in cache) makes those reads
 * sequential; only LIDs in use are copied, so a sparse LID space costs
 * nothing. (A transposed copy of every LID was as big as the LFTs: 160 MB
 * at 40k hosts.)
 */
#define TR_CHUNK 64

static void transpose(struct vctx *c, const uint32_t *sel, size_t n_sel, size_t i0)
{
	const struct sm_lfts *l = c->l;
	const struct sm_graph *g = c->g;
	size_t n_sw = g->n_sw;
	size_t i1 = i0 + TR_CHUNK < n_sel ? i0 + TR_CHUNK : n_sel;
	for (size_t s = 0; s < n_sw; s++) {
		const uint8_t *row = sm_lfts_row(l, (uint32_t)s);
		for (size_t i = i0; i < i1; i++) {
			uint16_t lid = g->dests[sel ? sel[i] : i].lid;
			c->tr[(i - i0) * n_sw + s] = lid <= l->top_lid ? row[lid] : SM_LFT_NONE;
		}
	}
}

static int vctx_init(struct vctx *c, const struct sm_fabric *f, const struct sm_lfts *l,
		     const struct sm_graph *g)
{
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->l = l;
	c->g = g;
	c->stride = (unsigned)g->max_ports + 1;
	size_t n = (size_t)g->n_sw + 1, nl = (size_t)g->adj_off[g->n_sw];
	c->link_of = malloc(n * c->stride * sizeof(*c->link_of));
	c->nxt = malloc(n * c->stride * sizeof(*c->nxt));
	c->st = malloc(n);
	c->hops = malloc(n * sizeof(*c->hops));
	c->next = malloc(n * sizeof(*c->next));
	c->entry = malloc(n);
	c->fail_at = malloc(n * sizeof(*c->fail_at));
	c->stack = malloc(n * sizeof(*c->stack));
	c->used = malloc(n);
	c->hostful = malloc(n);
	c->bit_off = malloc((nl + 1) * sizeof(*c->bit_off));
	c->tr = malloc((size_t)TR_CHUNK * n + 1);
	if (!c->link_of || !c->nxt || !c->tr || !c->st || !c->hops || !c->next || !c->entry || !c->fail_at || !c->stack ||
	    !c->used || !c->hostful || !c->bit_off)
		return -ENOMEM;
	for (uint32_t s = 0; s < g->n_sw; s++)
		c->hostful[s] = g->host_off[s + 1] > g->host_off[s];
	for (size_t i = 0; i < n * c->stride; i++) {
		c->link_of[i] = SM_NONE;
		c->nxt[i] = NXT_HOLE;
	}
	for (uint32_t s = 0; s < g->n_sw; s++) {
		const struct sm_node *nd = &f->nodes[g->sw_node[s]];
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct sm_port *pp = &f->ports[nd->port0 + p];
			if (pp->peer_node == SM_NONE)
				continue;
			uint32_t t = g->slot_of_node[pp->peer_node];
			c->nxt[(size_t)s * c->stride + p] = t == SM_NONE ? NXT_ENDPOINT : t == s ? NXT_HOLE : t;
		}
	}
	uint64_t bits = 0;
	for (uint32_t s = 0; s < g->n_sw; s++)
		for (uint32_t i = g->adj_off[s]; i < g->adj_off[s + 1]; i++) {
			c->link_of[(size_t)s * c->stride + g->adj[i].port] = i;
			c->bit_off[i] = bits;
			bits += (uint64_t)f->nodes[g->sw_node[g->adj[i].peer]].nports + 1;
		}
	c->bit_off[nl] = bits;
	c->bits = calloc(bits / 64 + 1, sizeof(uint64_t));
	c->indeg = calloc(nl + 1, sizeof(*c->indeg));
	return c->bits && c->indeg ? 0 : -ENOMEM;
}

/*
 * One step of the route to dest d at slot s: returns ST_OK (delivered),
 * ST_HOLE, or ST_UNKNOWN with c->next[s] set to the next switch.
 */
static int step(struct vctx *c, const struct sm_graph_dest *d, uint32_t s)
{
	uint8_t e = c->cur[s];
	c->entry[s] = e;
	c->next[s] = SM_NONE;
	if (e == 0)
		return d->is_switch && d->sw == s ? ST_OK : ST_HOLE;
	if (e >= c->stride)
		return ST_HOLE;  /* SM_LFT_NONE is always beyond the largest switch */
	uint32_t t = c->nxt[(size_t)s * c->stride + e];
	if (t < NXT_ENDPOINT) {
		c->next[s] = t;
		return ST_UNKNOWN;
	}
	if (t == NXT_HOLE)
		return ST_HOLE;
	/* cabled to an endpoint: right only if it is the destination port */
	return !d->is_switch && d->sw == s && d->out_port == e ? ST_OK : ST_HOLE;
}

/*
 * Resolve every switch's route to d (memoised, iterative). Returns 1 when
 * every switch delivers (then *maxh is the longest walk from a switch with
 * endpoints), else 0.
 */
static int resolve(struct vctx *c, const struct sm_graph_dest *d, uint16_t *maxh)
{
	const struct sm_graph *g = c->g;
	const unsigned stride = c->stride;
	int all_ok = 1, dres;
	uint16_t mh = 0;

	/*
	 * Every switch's step at once: away from d's switch a step either
	 * goes on to another switch or ends in a hole (delivering happens
	 * only at d's switch), so one table lookup decides it; d's switch
	 * takes the full step().
	 */
	for (uint32_t s = 0; s < g->n_sw; s++) {
		uint8_t e = c->cur[s];
		uint32_t t = (unsigned)e - 1u < stride - 1u ? c->nxt[(size_t)s * stride + e] : NXT_HOLE;
		c->entry[s] = e;
		c->next[s] = t < NXT_ENDPOINT ? t : SM_NONE;
	}
	dres = step(c, d, d->sw);
	memset(c->st, ST_UNKNOWN, g->n_sw);
	for (uint32_t s0 = 0; s0 < g->n_sw; s0++) {
		if (c->st[s0] != ST_UNKNOWN)
			continue;
		uint32_t nx0 = c->next[s0];
		if (nx0 != SM_NONE && c->st[nx0] != ST_UNKNOWN && c->st[nx0] != ST_ON_STACK) {
			/* the common case: the next switch is resolved (the loop below, one step) */
			int r0 = c->st[nx0];
			uint16_t h0 = r0 == ST_OK ? (uint16_t)(c->hops[nx0] + 1) : 0;
			c->st[s0] = (uint8_t)r0;
			c->fail_at[s0] = c->fail_at[nx0];
			c->hops[s0] = h0;
			if (r0 != ST_OK)
				all_ok = 0;
			else if (h0 > mh && c->hostful[s0])
				mh = h0;
			continue;
		}
		uint32_t top = 0, cur = s0, at = s0;
		int res;
		uint16_t h = 0;
		for (;;) {
			c->st[cur] = ST_ON_STACK;
			c->stack[top++] = cur;
			res = c->next[cur] != SM_NONE ? ST_UNKNOWN : cur == d->sw ? dres : ST_HOLE;
			if (res != ST_UNKNOWN) {
				at = cur;
				h = 0;
				c->st[cur] = (uint8_t)res;
				c->hops[cur] = 0;
				c->fail_at[cur] = cur;
				top--;
				break;
			}
			uint32_t nx = c->next[cur];
			if (c->st[nx] == ST_ON_STACK) {
				res = ST_LOOP;
				at = nx;
				break;
			}
			if (c->st[nx] != ST_UNKNOWN) {
				res = c->st[nx];
				at = c->fail_at[nx];
				h = c->hops[nx];
				break;
			}
			cur = nx;
		}
		if (res != ST_OK)
			all_ok = 0;
		while (top) {
			uint32_t u = c->stack[--top];
			c->st[u] = (uint8_t)res;
			c->fail_at[u] = at;
			h = res == ST_OK ? (uint16_t)(h + 1) : 0;
			c->hops[u] = h;
			if (h > mh && c->hostful[u])
				mh = h;
		}
	}
	*maxh = mh;
	return all_ok;
}

/* The first failure; an endpoint failure replaces a switch-sourced one (it matters more). */
static void note_example(struct sm_validation *v, int st, uint32_t src_port, const struct sm_graph_dest *d,
			 struct vctx *c, uint32_t at, int from_switch)
{
	if (v->example.kind != SM_FAULT_NONE && (from_switch || !c->example_from_switch))
		return;
	c->example_from_switch = from_switch;
	v->example.kind = st == ST_LOOP ? SM_FAULT_LOOP : SM_FAULT_BLACK_HOLE;
	v->example.src_port = src_port;
	v->example.dlid = d->lid;
	v->example.at_node = c->g->sw_node[at];
	v->example.at_port = c->entry[at];
}

/* Mark the switches that carry endpoint traffic to d, and add their dependencies. */
static void add_dependencies(struct vctx *c, const struct sm_graph_dest *d)
{
	const struct sm_graph *g = c->g;
	memset(c->used, 0, g->n_sw);
	for (uint32_t s = 0; s < g->n_sw; s++) {
		uint32_t nh = g->host_off[s + 1] - g->host_off[s];
		if (!nh || (nh == 1 && g->hosts[g->host_idx[g->host_off[s]]].port == d->port))
			continue;
		/* each switch once: its dependency is set when the walk first reaches it */
		for (uint32_t u = s; u != SM_NONE && !c->used[u]; u = c->next[u]) {
			uint32_t t = c->next[u];
			c->used[u] = 1;
			if (t == SM_NONE || c->next[t] == SM_NONE)
				continue;
			uint32_t a = c->link_of[(size_t)u * c->stride + c->entry[u]];
			if (a == SM_NONE)
				continue;
			uint64_t bit = c->bit_off[a] + c->entry[t], m = 1ull << (bit % 64);
			if (c->bits[bit / 64] & m)
				continue;
			/* a new CDG edge a -> (t, entry[t]): count it for Kahn now */
			c->bits[bit / 64] |= m;
			uint32_t b = c->link_of[(size_t)t * c->stride + c->entry[t]];
			if (b != SM_NONE)
				c->indeg[b]++;
		}
	}
}

static int has_bit(const struct vctx *c, uint32_t a, unsigned q)
{
	uint64_t bit = c->bit_off[a] + q;
	return (c->bits[bit / 64] >> (bit % 64)) & 1;
}

/*
 * The set ports q (1..np) of link a's row, ascending, into out; returns
 * how many. A word at a time: rows are sparse (a few turns per link).
 */
static unsigned row_bits(const struct vctx *c, uint32_t a, unsigned np, uint8_t *out)
{
	uint64_t lo = c->bit_off[a] + 1, hi = c->bit_off[a] + np + 1;  /* [lo, hi) */
	unsigned n = 0;

	for (uint64_t w = lo / 64; w * 64 < hi; w++) {
		uint64_t m = c->bits[w];
		if (w == lo / 64)
			m &= ~0ull << (lo % 64);
		if ((w + 1) * 64 > hi)
			m &= (1ull << (hi % 64)) - 1;
		while (m) {
			out[n++] = (uint8_t)(w * 64 + (uint64_t)__builtin_ctzll(m) - c->bit_off[a]);
			m &= m - 1;
		}
	}
	return n;
}

/* Kahn over the CDG; returns 1 and fills v->cycle on a cycle, 0 if acyclic. */
static int cdg_cycle(struct vctx *c, struct sm_validation *v)
{
	const struct sm_graph *g = c->g;
	const struct sm_fabric *f = c->f;
	uint32_t nl = g->adj_off[g->n_sw];
	uint32_t *indeg = c->indeg;  /* counted by add_dependencies(); consumed here */
	uint32_t *queue = malloc(((size_t)nl + 1) * sizeof(*queue));
	if (!queue)
		return -ENOMEM;
	uint8_t qs[SM_MAX_PORTS + 1];
	uint32_t head = 0, tail = 0;
	for (uint32_t a = 0; a < nl; a++)
		if (!indeg[a])
			queue[tail++] = a;
	while (head < tail) {
		uint32_t a = queue[head++];
		uint32_t t = g->adj[a].peer;
		unsigned nq = row_bits(c, a, f->nodes[g->sw_node[t]].nports, qs);
		for (unsigned k = 0; k < nq; k++) {
			uint32_t b = c->link_of[(size_t)t * c->stride + qs[k]];
			if (b != SM_NONE && !--indeg[b])
				queue[tail++] = b;
		}
	}
	int cyclic = tail < nl;
	if (cyclic && v) {
		/*
		 * Every vertex left has a predecessor that is also left: walk
		 * backwards until a vertex repeats; the repeat closes a cycle.
		 * queue[] is reused as the visit order, indeg[] as position+1.
		 */
		uint32_t cur = SM_NONE;
		for (uint32_t a = 0; a < nl && cur == SM_NONE; a++)
			if (indeg[a])
				cur = a;
		uint32_t *pos = calloc((size_t)nl + 1, sizeof(*pos));
		if (!pos) {
			free(queue);
			return -ENOMEM;
		}
		uint32_t len = 0;
		while (cur != SM_NONE && !pos[cur]) {
			pos[cur] = ++len;
			queue[len - 1] = cur;
			/* predecessors of cur = links s->t that feed port (t, adj[cur].port) */
			uint32_t t = 0, prev = SM_NONE;
			/* owner slot of link cur: the peer of its reverse link */
			const struct sm_graph_link *lk = &g->adj[cur];
			uint32_t rev = c->link_of[(size_t)lk->peer * c->stride + lk->peer_port];
			t = rev != SM_NONE ? g->adj[rev].peer : SM_NONE;
			for (uint32_t i = t == SM_NONE ? 0 : g->adj_off[t]; t != SM_NONE && i < g->adj_off[t + 1]; i++) {
				uint32_t s = g->adj[i].peer;
				uint32_t a = c->link_of[(size_t)s * c->stride + g->adj[i].peer_port];
				if (a != SM_NONE && indeg[a] && has_bit(c, a, lk->port)) {
					prev = a;
					break;
				}
			}
			cur = prev;
		}
		if (cur != SM_NONE) {
			/* cycle = queue[pos[cur]-1 .. len-1], in backward order */
			uint32_t start = pos[cur] - 1, clen = len - start;
			v->cycle_len = 0;
			for (uint32_t k = 0; k < clen && v->cycle_len < SM_VALIDATE_CYCLE_MAX; k++) {
				uint32_t a = queue[len - 1 - k];
				uint32_t rev = c->link_of[(size_t)g->adj[a].peer * c->stride + g->adj[a].peer_port];
				uint32_t s = g->adj[rev].peer;
				v->cycle[v->cycle_len++] = sm_port_index(f, g->sw_node[s], g->adj[a].port);
			}
		}
		free(pos);
	}
	free(queue);
	return cyclic;
}

static const char *node_name(const struct sm_fabric *f, uint32_t n, char *buf, size_t len)
{
	const struct sm_node *nd = &f->nodes[n];
	if (nd->desc[0])
		snprintf(buf, len, "'%s'", nd->desc);
	else
		snprintf(buf, len, "0x%016llx", (unsigned long long)nd->guid);
	return buf;
}

void sm_validate_format_cycle(const struct sm_fabric *f, const struct sm_validation *v,
			      char *buf, size_t len)
{
	size_t off = 0;
	if (!len)
		return;
	buf[0] = 0;
	for (unsigned i = 0; i < v->cycle_len && off < len; i++) {
		const struct sm_port *p = &f->ports[v->cycle[i]];
		char nb[80];
		int n = snprintf(buf + off, len - off, "%s%s[%u]", i ? " -> " : "",
				 node_name(f, p->node, nb, sizeof(nb)), p->num);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

static void summarize(const struct sm_fabric *f, struct sm_validation *v, unsigned flags)
{
	char a[80], b[80], cyc[300];
	if (v->example.kind != SM_FAULT_NONE &&
	    (v->unreachable || v->sw_loops || (flags & SM_VALIDATE_STRICT_SWITCHES))) {
		const struct sm_port *sp = &f->ports[v->example.src_port];
		const char *what = v->example.kind == SM_FAULT_LOOP ? "loops through" : "black hole at";
		snprintf(v->msg, sizeof(v->msg),
			 "%llu of %llu endpoint pairs unreachable (%llu loops, %llu black holes), "
			 "%llu of %llu pairs to switch LIDs (%llu loops); e.g. LID %u from %s[%u]: %s %s "
			 "(LFT entry %u)",
			 (unsigned long long)v->unreachable, (unsigned long long)v->pairs,
			 (unsigned long long)v->loops, (unsigned long long)v->black_holes,
			 (unsigned long long)v->sw_unreachable, (unsigned long long)v->sw_pairs,
			 (unsigned long long)v->sw_loops, v->example.dlid,
			 node_name(f, sp->node, a, sizeof(a)), sp->num, what,
			 node_name(f, v->example.at_node, b, sizeof(b)), v->example.at_port);
		return;
	}
	if (v->credit_loop == 1) {
		sm_validate_format_cycle(f, v, cyc, sizeof(cyc));
		snprintf(v->msg, sizeof(v->msg), "credit loop%s: %s%s",
			 flags & SM_VALIDATE_ALLOW_CREDIT_LOOP ? " (allowed)" : "", cyc,
			 v->cycle_len == SM_VALIDATE_CYCLE_MAX ? " ..." : "");
		return;
	}
	if (v->pairs && !v->reachable) {
		snprintf(v->msg, sizeof(v->msg), "nothing reachable: %llu endpoint pairs, all disconnected",
			 (unsigned long long)v->pairs);
		return;
	}
	snprintf(v->msg, sizeof(v->msg),
		 "ok: %llu endpoint pairs reachable, %llu disconnected, longest route %u switch-to-switch links, %s; "
		 "%llu of %llu pairs to switch LIDs unrouted",
		 (unsigned long long)v->reachable, (unsigned long long)v->disconnected, v->max_hops,
		 v->credit_loop < 0 ? "credit loops not checked" : "no credit loop",
		 (unsigned long long)v->sw_unreachable, (unsigned long long)v->sw_pairs);
}

int sm_validate_ok(const struct sm_validation *v, unsigned flags)
{
	if (v->unreachable || v->sw_loops || ((flags & SM_VALIDATE_STRICT_SWITCHES) && v->sw_unreachable))
		return 0;
	if (v->credit_loop == 1 && !(flags & SM_VALIDATE_ALLOW_CREDIT_LOOP))
		return 0;
	if (v->pairs && !v->reachable)
		return 0;
	return 1;
}

/* An endpoint port at switch s other than the destination's, SM_NONE if none (for examples). */
static uint32_t first_source(const struct sm_graph *g, uint32_t s, const struct sm_graph_dest *d)
{
	for (uint32_t k = g->host_off[s]; k < g->host_off[s + 1]; k++)
		if (g->hosts[g->host_idx[k]].port != d->port)
			return g->hosts[g->host_idx[k]].port;
	return SM_NONE;
}

static int check_lfts(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		      const struct sm_graph *g)
{
	if (!l || l->plane != plane || l->n_nodes != f->n_nodes || l->n_switches != g->n_sw)
		return -EINVAL;
	for (uint32_t s = 0; s < g->n_sw; s++)
		if (l->sw_node[s] != g->sw_node[s])
			return -EINVAL;
	return 0;
}

/*
 * The whole check, or (lid_mask not NULL) only the destinations whose LID
 * is set in lid_mask (indexed by LID, 65,536 entries): then
 * the counts cover those destinations only, v->rechecked says how many,
 * and the CDG is not built (it needs every destination's routes).
 */
int sm_validate_run(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l, unsigned flags,
		    struct sm_validation *v, int cdg_only, const uint8_t *lid_mask)
{
	double t0 = sm_mono_sec();
	struct sm_graph *g = NULL;
	struct vctx c;
	uint32_t *sel = NULL;
	int rc = sm_graph_build(f, plane, &g);
	if (rc)
		return rc;
	rc = check_lfts(f, plane, l, g);
	if (rc) {
		sm_graph_free(g);
		return rc;
	}
	rc = vctx_init(&c, f, l, g);
	if (rc)
		goto out;
	v->hosts = g->n_hosts;
	v->switches = g->n_sw;
	size_t n_sel = g->n_dests;
	if (lid_mask) {
		flags |= SM_VALIDATE_NO_CDG;
		sel = malloc(((size_t)g->n_dests + 1) * sizeof(*sel));
		if (!sel) {
			rc = -ENOMEM;
			goto out;
		}
		n_sel = 0;
		for (uint32_t i = 0; i < g->n_dests; i++)
			if (lid_mask[g->dests[i].lid])
				sel[n_sel++] = i;
		v->rechecked = (uint32_t)n_sel;
	}
	for (size_t k = 0; k < n_sel; k++) {
		const struct sm_graph_dest *d = &g->dests[sel ? sel[k] : k];
		uint32_t i = (uint32_t)k;
		if (i % TR_CHUNK == 0)
			transpose(&c, sel, n_sel, i);
		v->lids++;
		if (d->sw == SM_NONE) {
			/* LID owner not cabled to a switch: every pair is disconnected */
			for (uint32_t h = 0; h < g->n_hosts; h++)
				if (g->hosts[h].port != d->port) {
					v->pairs++;
					v->disconnected++;
				}
			continue;
		}
		if (d->is_switch)
			v->sw_lids++;
		c.cur = &c.tr[(size_t)(i % TR_CHUNK) * g->n_sw];
		uint16_t maxh;
		int all_ok = resolve(&c, d, &maxh);
		uint32_t dcomp = g->comp[d->sw];
		if (all_ok && !cdg_only) {
			/*
			 * The loop below in closed form: a switch that delivers is
			 * cabled to d's part, so every pair counts as reachable
			 * (d's own port excluded; its switch is 0 hops away).
			 */
			uint32_t nh_all = g->host_off[g->n_sw];
			if (d->is_switch) {
				v->sw_pairs += (uint64_t)nh_all + g->n_sw - 1;
			} else {
				uint64_t n = nh_all - (g->host_off[d->sw + 1] > g->host_off[d->sw] ? 1 : 0);
				v->pairs += n;
				v->reachable += n;
				if (n && maxh > v->max_hops)
					v->max_hops = maxh;
			}
		}
		for (uint32_t s = 0; s < g->n_sw && !cdg_only && !all_ok; s++) {
			/* hosts at s, minus the destination port itself */
			uint32_t nh = g->host_off[s + 1] - g->host_off[s];
			if (nh && d->sw == s && !d->is_switch)
				nh--;
			int st = c.st[s], same = g->comp[s] == dcomp;
			if (d->is_switch) {
				/* management destinations: from the hosts of s and from s itself */
				uint64_t n = nh + (s != d->sw);
				v->sw_pairs += n;
				if (same && st != ST_OK) {
					v->sw_unreachable += n;
					if (st == ST_LOOP)
						v->sw_loops += n;
					uint32_t src = first_source(g, s, d);
					note_example(v, st, src != SM_NONE ? src : sm_port_index(f, g->sw_node[s], 0), d,
						     &c, c.fail_at[s], 1);
				}
				continue;
			}
			if (!nh)
				continue;
			v->pairs += nh;
			if (!same) {
				v->disconnected += nh;
			} else if (st == ST_OK) {
				v->reachable += nh;
				if (c.hops[s] > v->max_hops)
					v->max_hops = c.hops[s];
			} else {
				v->unreachable += nh;
				if (st == ST_LOOP)
					v->loops += nh;
				else
					v->black_holes += nh;
				note_example(v, st, first_source(g, s, d), d, &c, c.fail_at[s], 0);
			}
		}
		if (!(flags & SM_VALIDATE_NO_CDG) && (!d->is_switch || (flags & SM_VALIDATE_CDG_SWITCH_LIDS)))
			add_dependencies(&c, d);
	}
	v->credit_loop = -1;
	if (!(flags & SM_VALIDATE_NO_CDG)) {
		rc = cdg_cycle(&c, v);
		if (rc < 0)
			goto out;
		v->credit_loop = rc;
		rc = 0;
	}
	if (!cdg_only)
		summarize(f, v, flags);
out:
	free(sel);
	vctx_free(&c);
	sm_graph_free(g);
	v->seconds = sm_mono_sec() - t0;
	return rc;
}

int sm_validate(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		unsigned flags, struct sm_validation *v)
{
	memset(v, 0, sizeof(*v));
	v->credit_loop = -1;
	return sm_validate_run(f, plane, l, flags, v, 0, NULL);
}

int sm_cdg_check(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		 struct sm_validation *v)
{
	struct sm_validation tmp;
	memset(&tmp, 0, sizeof(tmp));
	int rc = sm_validate_run(f, plane, l, 0, &tmp, 1, NULL);
	if (rc)
		return rc;
	if (v) {
		v->credit_loop = tmp.credit_loop;
		v->cycle_len = tmp.cycle_len;
		memcpy(v->cycle, tmp.cycle, sizeof(v->cycle));
	}
	return tmp.credit_loop;
}
