/* SPDX-License-Identifier: MIT */
/*
 * DOC: traffic profiles, counter snapshots
 *
 * Two readings of PortXmitData/PortRcvData per port, in smd's `counters v1`
 * form or as concatenated perfquery output, become link heat (every port)
 * and, for CA ports, flows by the gravity model described in profile.h.
 */
#include "model/profile_priv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- counters ---- */

struct reading {
	double v[2][2];  /* [reading][xmit, rcv] */
	uint8_t have;    /* bit 0: reading 1, bit 1: reading 2 */
};

static int counter_port(struct pctx *c, unsigned line, const char *id, unsigned plane, unsigned long port,
			uint32_t *pi)
{
	const struct sm_fabric *f = c->f;
	uint32_t node = SM_NONE;
	uint64_t g;
	unsigned long lid;
	*pi = SM_NONE;
	if (id[0] == '0' && (id[1] == 'x' || id[1] == 'X')) {
		if (!pf_parse_guid(id, &g))
			return pf_err(c, -EINVAL, line, "bad GUID '%.40s'", id);
		uint32_t x = sm_fabric_find_port(f, g);
		node = x != SM_NONE ? f->ports[x].node : sm_fabric_find_node(f, g);
	} else {
		if (!pf_parse_uint(id, SM_UNICAST_LID_MAX, &lid) || !lid)
			return pf_err(c, -EINVAL, line, "bad port id '%.40s' (GUID 0x... or LID)", id);
		uint32_t x = plane < f->n_planes ? sm_fabric_find_lid(f, plane, (uint16_t)lid) : SM_NONE;
		if (x != SM_NONE)
			node = f->ports[x].node;
	}
	if (node == SM_NONE) {
		pf_note_unknown(c, line, id, 0);
		return 0;
	}
	if (port < 1 || port > f->nodes[node].nports)
		return pf_err(c, -EINVAL, line, "port %lu out of range for '%.40s' (1..%u)", port, id,
			    f->nodes[node].nports);
	*pi = sm_port_index(f, node, (unsigned)port);
	return 0;
}

static int store_reading(struct pctx *c, unsigned line, struct reading *r, uint32_t pi, int which,
			 double x, double rv)
{
	if (pi == SM_NONE)
		return 0;
	if (which < 0)
		which = (r[pi].have & 1) ? 1 : 0;
	if (r[pi].have & (1u << which))
		return pf_err(c, -EINVAL, line, "port counted twice in reading %d", which + 1);
	r[pi].have |= (uint8_t)(1u << which);
	r[pi].v[which][0] = x;
	r[pi].v[which][1] = rv;
	return 0;
}

static bool parse_counter(const char *s, double *v)
{
	if (!pf_all_digits(s) || strlen(s) > 20)
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, NULL, 10);
	if (errno)
		return false;
	*v = (double)x;
	return true;
}

static int parse_counters_simple(struct pctx *c, const char *buf, size_t len, struct reading *r)
{
	struct lines l = { buf, buf + len, 0 };
	const char *s;
	size_t n;
	int which = -1;
	unsigned plane = 0;
	bool magic = false;
	while (next_line(&l, &s, &n)) {
		int k = pf_split(c, l.no, s, n, 4);
		if (k == 4) {
			if (!magic)
				return pf_err(c, -EINVAL, l.no, "expected 'counters v1'");
			if (which < 0)
				return pf_err(c, -EINVAL, l.no, "counter line before 'reading 1'");
			unsigned long port;
			double x, rv;
			if (!pf_parse_uint(c->tok[1], 255, &port))
				return pf_err(c, -EINVAL, l.no, "bad port '%.20s'", c->tok[1]);
			if (!parse_counter(c->tok[2], &x) || !parse_counter(c->tok[3], &rv))
				return pf_err(c, -EINVAL, l.no, "bad counter value (unsigned decimal)");
			uint32_t pi;
			int rc = counter_port(c, l.no, c->tok[0], plane, port, &pi);
			if (rc || (rc = store_reading(c, l.no, r, pi, which, x, rv)))
				return rc;
			continue;
		}
		if (k < 0)
			return k;
		if (k == 0)
			continue;
		if (!magic) {
			if (k != 2 || strcmp(c->tok[0], "counters") || strcmp(c->tok[1], "v1"))
				return pf_err(c, -EINVAL, l.no, "expected 'counters v1'");
			magic = true;
			continue;
		}
		unsigned long v;
		if (k == 2 && !strcmp(c->tok[0], "reading")) {
			if (!pf_parse_uint(c->tok[1], 2, &v) || v < 1)
				return pf_err(c, -EINVAL, l.no, "expected 'reading 1' or 'reading 2'");
			which = (int)v - 1;
		} else if (k == 2 && !strcmp(c->tok[0], "plane")) {
			if (!pf_parse_uint(c->tok[1], SM_MAX_PLANES - 1, &v))
				return pf_err(c, -EINVAL, l.no, "bad plane '%.20s'", c->tok[1]);
			plane = (unsigned)v;
		} else if (k == 2 && !strcmp(c->tok[0], "interval")) {
			char *e;
			double sec = strtod(c->tok[1], &e);
			if (*e || !isfinite(sec) || sec <= 0)
				return pf_err(c, -EINVAL, l.no, "bad interval '%.20s'", c->tok[1]);
			c->p->window_seconds = sec;
		} else {
			return pf_err(c, -EINVAL, l.no, "expected GUID|LID PORT XMIT RCV, 'reading N', 'plane N' or 'interval S'");
		}
	}
	c->p->stats.lines = l.no;
	return 0;
}

/* "PortXmitData:........1234" -> value; returns true if the key matched */
static bool pq_field(const char *s, size_t n, const char *key, const char **val)
{
	size_t kl = strlen(key);
	if (n <= kl || strncmp(s, key, kl) || s[kl] != ':')
		return false;
	size_t i = kl + 1;
	while (i < n && s[i] == '.')
		i++;
	*val = s + i;
	return true;
}

static int parse_perfquery(struct pctx *c, const char *buf, size_t len, struct reading *r)
{
	struct lines l = { buf, buf + len, 0 };
	const char *s;
	size_t n;
	unsigned plane = 0;
	uint32_t cur = SM_NONE;
	bool in_block = false, have_x = false, have_r = false;
	unsigned block_line = 0;
	double x = 0, rv = 0;
	char tmp[64];
#define FLUSH()                                                                                   \
	do {                                                                                      \
		if (in_block) {                                                                   \
			if (!have_x || !have_r)                                                   \
				return pf_err(c, -EINVAL, block_line,                               \
					    "perfquery block without PortXmitData/PortRcvData");      \
			int frc = store_reading(c, block_line, r, cur, -1, x, rv);               \
			if (frc)                                                                  \
				return frc;                                                       \
		}                                                                                 \
		in_block = have_x = have_r = false;                                               \
	} while (0)
	while (next_line(&l, &s, &n)) {
		const char *v;
		unsigned lid, port;
		if (n >= sizeof(tmp) * 4)
			return pf_err(c, -EINVAL, l.no, "unexpected long line in perfquery output");
		char line[SM_PROFILE_MAX_LINE + 1];
		memcpy(line, s, n);
		line[n] = 0;
		if (sscanf(line, "# Port counters: Lid %u port %u", &lid, &port) == 2 ||
		    sscanf(line, "# Port extended counters: Lid %u port %u", &lid, &port) == 2) {
			FLUSH();
			in_block = true;
			block_line = l.no;
			if (port == 255)
				return pf_err(c, -EINVAL, l.no, "aggregated counters (port 255) cannot be used: query each port");
			snprintf(tmp, sizeof(tmp), "%u", lid);
			int rc = counter_port(c, l.no, tmp, plane, port, &cur);
			if (rc)
				return rc;
		} else if (pq_field(s, n, "PortXmitData", &v)) {
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(s + n - v), v);
			if (!in_block || !parse_counter(tmp, &x))
				return pf_err(c, -EINVAL, l.no, "bad PortXmitData line");
			have_x = true;
		} else if (pq_field(s, n, "PortRcvData", &v)) {
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(s + n - v), v);
			if (!in_block || !parse_counter(tmp, &rv))
				return pf_err(c, -EINVAL, l.no, "bad PortRcvData line");
			have_r = true;
		} else if (sscanf(line, "plane %u", &lid) == 1) {
			FLUSH();
			if (lid >= SM_MAX_PLANES)
				return pf_err(c, -EINVAL, l.no, "bad plane %u", lid);
			plane = lid;
		} else {
			/* other perfquery fields "Name:....value", comments and blanks */
			size_t i = 0;
			while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
				i++;
			bool field = i > 0 && i < n && s[i] == ':';
			size_t b = strspn(line, " \t");
			if (!field && b < n && line[b] != '#')
				return pf_err(c, -EINVAL, l.no, "not perfquery output: '%.40s'", line);
		}
	}
	FLUSH();
#undef FLUSH
	c->p->stats.lines = l.no;
	return 0;
}

struct host_vol {
	uint32_t port;
	double v;
};

static int cmp_vol_desc(const void *a, const void *b)
{
	const struct host_vol *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* Turn readings into heat and gravity-model flows. */
static int counters_finish(struct pctx *c, struct reading *r)
{
	const struct sm_fabric *f = c->f;
	struct sm_profile *p = c->p;
	struct sm_profile_stats *st = &p->stats;
	size_t nh = 0;
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (r[i].have == 3)
			nh++;
		else if (r[i].have)
			st->counter_single++;
	p->heat = calloc(nh + 1, sizeof(*p->heat));
	struct host_vol *snd = calloc(nh + 1, sizeof(*snd)), *rcv = calloc(nh + 1, sizeof(*rcv));
	double *own_rcv = calloc((size_t)f->n_ports + 1, sizeof(double));
	int rc = 0;
	if (!p->heat || !snd || !rcv || !own_rcv) {
		rc = pf_err(c, -ENOMEM, 0, "out of memory");
		goto out;
	}
	for (unsigned pl = 0; pl < f->n_planes; pl++) {
		size_t ns = 0, nr = 0;
		double rsum = 0;
		for (uint32_t i = 0; i < f->n_ports; i++) {
			if (r[i].have != 3 || f->nodes[f->ports[i].node].plane != pl)
				continue;
			double dx = r[i].v[1][0] - r[i].v[0][0], dr = r[i].v[1][1] - r[i].v[0][1];
			if (dx < 0 || dr < 0) {
				st->counter_reset++;
				continue;
			}
			st->counter_ports++;
			p->heat[p->n_heat++] = (struct sm_profile_heat){ i, dx * 4, dr * 4 };
			const struct sm_port *pt = &f->ports[i];
			if (f->nodes[pt->node].type != SM_NODE_CA || !pt->lid)
				continue;
			if (dx > 0) {
				snd[ns++] = (struct host_vol){ i, dx * 4 };
				st->total_weight += dx * 4;
			}
			if (dr > 0) {
				rcv[nr++] = (struct host_vol){ i, dr * 4 };
				rsum += dr * 4;
			}
		}
		if (!ns)
			continue;
		qsort(snd, ns, sizeof(*snd), cmp_vol_desc);
		qsort(rcv, nr, sizeof(*rcv), cmp_vol_desc);
		/* cap senders x receivers at max_flows, keeping the heaviest of each */
		size_t ks = ns, kr = nr;
		if (nr && (double)ns * (double)nr > (double)c->max_flows) {
			double scale = sqrt((double)c->max_flows / ((double)ns * (double)nr));
			ks = (size_t)((double)ns * scale);
			ks = ks ? ks : 1;
			kr = c->max_flows / ks;
			kr = kr ? (kr > nr ? nr : kr) : 1;
		}
		for (size_t i = 0; i < nr; i++)
			own_rcv[rcv[i].port] = rcv[i].v;
		for (size_t a = 0; a < ns; a++) {
			double produced = 0;
			/* the sender's own receive volume is excluded from the denominator */
			double own = own_rcv[snd[a].port];
			for (size_t b = 0; a < ks && b < kr; b++) {
				if (rcv[b].port == snd[a].port)
					continue;
				double w = snd[a].v * rcv[b].v / (rsum - own);
				if (!(w > 0))
					continue;
				if (pf_push_flow(c, snd[a].port, rcv[b].port, w)) {
					rc = pf_err(c, -ENOMEM, 0, "out of memory");
					goto out;
				}
				produced += w;
			}
			if (snd[a].v - produced > snd[a].v * 1e-9) {
				st->gravity_capped += a < ks ? (nr - kr) : nr;
				st->gravity_capped_weight += snd[a].v - produced;
			}
		}
	}
out:
	free(snd);
	free(rcv);
	free(own_rcv);
	return rc;
}

int pf_parse_counters(struct pctx *c, const char *buf, size_t len)
{
	struct reading *r = calloc((size_t)c->f->n_ports + 1, sizeof(*r));
	int rc;

	if (!r)
		return pf_err(c, -ENOMEM, 0, "out of memory");
	rc = c->p->format == SM_PROFILE_FMT_COUNTERS ? parse_counters_simple(c, buf, len, r)
						      : parse_perfquery(c, buf, len, r);
	if (!rc)
		rc = counters_finish(c, r);
	free(r);
	return rc;
}
