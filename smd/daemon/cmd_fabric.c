/* SPDX-License-Identifier: MIT */
/*
 * DOC: nodes, links, route, lft and dump topology (daemon side; see
 * cmd.h and the protocol in ctl.h)
 *
 * Data flow: request -> the planes asked for ("plane" member, else every
 * plane) -> for each, take its view (refcounted, so a cycle publishing a
 * new one meanwhile is harmless), write that plane's entry into the reply,
 * put the view. A plane that has never come up is an entry with "error".
 *
 * Output order is stable, so replies can be diffed and kept as golden
 * files: nodes are listed switches first, then CAs, then routers, each by
 * GUID; a link is listed once, from its end that comes first in that order.
 * GUIDs are strings ("0x" + 16 hex digits): JSON numbers are doubles and
 * would lose a 64-bit GUID's low bits.
 *
 * Requests are untrusted: names are matched exactly, numbers are range
 * checked, a route walk is bounded by the switch count (a loop in the LFTs
 * is reported, never followed).
 */
#include "config.h"
#include "daemon/cmd.h"
#include "ctl/ctl.h"
#include "daemon/daemon.h"
#include "lib/json.h"
#include "model/lft_file.h"
#include "model/topo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* route walking                                                        */

const char *smd_route_result_name(enum smd_route_result r)
{
	switch (r) {
	case SMD_ROUTE_OK: return "ok";
	case SMD_ROUTE_NOT_LINKED: return "source not linked";
	case SMD_ROUTE_NO_LID: return "destination has no LID";
	case SMD_ROUTE_NO_ENTRY: return "no route";
	case SMD_ROUTE_BAD_PORT: return "bad port";
	case SMD_ROUTE_DEAD_END: return "dead end";
	case SMD_ROUTE_LOOP: return "loop";
	case SMD_ROUTE_WRONG_DEST: return "wrong destination";
	}
	return "?";
}

enum smd_route_result smd_route_walk(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t src,
				     uint32_t dst, struct smd_route_hop *hops, unsigned max_hops,
				     unsigned *n_hops, uint32_t *end)
{
	const struct sm_port *sp = &f->ports[src], *dp = &f->ports[dst];
	const struct sm_node *sn = &f->nodes[sp->node];
	uint16_t dlid = sm_node_lid(f, dp->node, dp->num);
	uint32_t cur;
	unsigned in;

	*n_hops = 0;
	*end = SM_NONE;
	if (!dlid)
		return SMD_ROUTE_NO_LID;
	if (src == dst) {
		*end = dst;
		return SMD_ROUTE_OK;
	}
	if (sn->type == SM_NODE_SWITCH) {
		cur = sp->node;
		in = 0;
	} else {
		if (sp->peer_node == SM_NONE)
			return SMD_ROUTE_NOT_LINKED;
		cur = sp->peer_node;
		in = sp->peer_port;
		if (f->nodes[cur].type != SM_NODE_SWITCH) {
			/* two CAs back to back: the peer is the end */
			*end = sm_port_index(f, cur, in);
			return *end == dst ? SMD_ROUTE_OK : SMD_ROUTE_WRONG_DEST;
		}
	}
	for (;;) {
		const struct sm_node *nd = &f->nodes[cur];
		uint8_t out = sm_lfts_get(l, cur, dlid);

		/* a path through more hops than there are switches has been somewhere twice */
		for (unsigned k = 0; k < *n_hops; k++)
			if (hops[k].node == cur)
				return SMD_ROUTE_LOOP;
		if (*n_hops >= max_hops)
			return SMD_ROUTE_LOOP;
		hops[*n_hops].node = cur;
		hops[*n_hops].in_port = (uint8_t)in;
		hops[*n_hops].out_port = out;
		(*n_hops)++;
		if (out == SM_LFT_NONE)
			return SMD_ROUTE_NO_ENTRY;
		if (out == 0) {
			*end = nd->port0;
			return *end == dst ? SMD_ROUTE_OK : SMD_ROUTE_WRONG_DEST;
		}
		if (out > nd->nports)
			return SMD_ROUTE_BAD_PORT;
		const struct sm_port *op = sm_port(f, cur, out);
		if (op->peer_node == SM_NONE)
			return SMD_ROUTE_DEAD_END;
		if (f->nodes[op->peer_node].type != SM_NODE_SWITCH) {
			*end = sm_port_index(f, op->peer_node, op->peer_port);
			return *end == dst ? SMD_ROUTE_OK : SMD_ROUTE_WRONG_DEST;
		}
		cur = op->peer_node;
		in = op->peer_port;
	}
}

/* ------------------------------------------------------------------ */
/* finding endpoints                                                    */

/* A node as an endpoint: a switch's port 0, a CA's first linked port with a LID (else its first with a LID). */
static uint32_t node_endpoint(const struct sm_fabric *f, uint32_t n)
{
	const struct sm_node *nd = &f->nodes[n];
	uint32_t any = SM_NONE;

	if (nd->type == SM_NODE_SWITCH)
		return nd->port0;
	for (unsigned p = 1; p <= nd->nports; p++) {
		const struct sm_port *pt = sm_port(f, n, p);
		if (!pt->lid)
			continue;
		if (pt->peer_node != SM_NONE)
			return sm_port_index(f, n, p);
		if (any == SM_NONE)
			any = sm_port_index(f, n, p);
	}
	return any != SM_NONE ? any : nd->port0 + 1;
}

static int parse_num(const char *s, uint64_t *v)
{
	char *end;
	if (!s[0] || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return -1;
	errno = 0;
	/* decimal or 0x hex; a leading 0 is not octal (LID "010" is ten) */
	*v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	return errno || *end ? -1 : 0;
}

int smd_ctl_find_port(const struct sm_fabric *f, unsigned plane, const char *what, int want_switch,
		      uint32_t *port, char *err, size_t errlen)
{
	const char *kind = want_switch ? "switch" : "node";
	int by_lid = !strncmp(what, "lid:", 4), by_guid = !strncmp(what, "guid:", 5);
	uint64_t v;

	if ((by_lid || by_guid) && parse_num(what + (by_lid ? 4 : 5), &v)) {
		snprintf(err, errlen, "'%.80s': not a number", what);
		return -EINVAL;
	}
	if (by_lid || by_guid || !parse_num(what, &v)) {
		uint32_t pi = SM_NONE;
		if (by_lid || (!by_guid && v <= SM_UNICAST_LID_MAX)) {
			if (!v || v > SM_UNICAST_LID_MAX) {
				snprintf(err, errlen, "'%.80s': a LID is 1-0x%x", what, SM_UNICAST_LID_MAX);
				return -EINVAL;
			}
			pi = sm_fabric_find_lid(f, plane, (uint16_t)v);
		} else {
			uint32_t n;
			pi = sm_fabric_find_port(f, v);
			if (pi == SM_NONE && (n = sm_fabric_find_node(f, v)) != SM_NONE)
				pi = node_endpoint(f, n);
			/* a CA port GUID equal to a switch node GUID is not ours to guess */
		}
		if (pi != SM_NONE && f->nodes[f->ports[pi].node].plane != plane)
			pi = SM_NONE;
		if (pi != SM_NONE && want_switch && f->nodes[f->ports[pi].node].type != SM_NODE_SWITCH) {
			snprintf(err, errlen, "'%.80s' is a %s, not a switch", what,
				 sm_node_type_str(f->nodes[f->ports[pi].node].type));
			return -EINVAL;
		}
		if (pi == SM_NONE) {
			snprintf(err, errlen, "no %s with %s %.80s", kind, by_lid || (!by_guid && v <= SM_UNICAST_LID_MAX) ?
				 "LID" : "GUID", what);
			return -ENOENT;
		}
		*port = pi;
		return 0;
	}
	/* an exact description first, then a host name (the first word of a CA's description) */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t found = SM_NONE, count = 0;
		size_t wl = strlen(what);
		for (uint32_t n = 0; n < f->n_nodes; n++) {
			const struct sm_node *nd = &f->nodes[n];
			if (nd->plane != plane || (want_switch && nd->type != SM_NODE_SWITCH))
				continue;
			if (pass == 0 ? strcmp(nd->desc, what) != 0 :
			    nd->type != SM_NODE_CA || strncmp(nd->desc, what, wl) || nd->desc[wl] != ' ')
				continue;
			if (!count++)
				found = n;
		}
		if (count > 1) {
			snprintf(err, errlen, "'%.80s' matches %u %ss%s; name it by GUID or LID", what, count,
				 pass ? "CA" : kind, pass ? " of that host in this plane" : " by description");
			return -EINVAL;
		}
		if (count == 1) {
			*port = node_endpoint(f, found);
			return 0;
		}
	}
	snprintf(err, errlen, "no %s named '%.80s'", kind, what);
	return -ENOENT;
}

/* ------------------------------------------------------------------ */
/* reply helpers                                                        */

static void guid_str(char *buf, size_t len, uint64_t g)
{
	snprintf(buf, len, "0x%016" PRIx64, g);
}

static void j_guid(struct sm_json *j, const char *key, uint64_t g)
{
	char b[24];
	guid_str(b, sizeof(b), g);
	sm_json_str(j, key, b);
}

static int type_rank(uint8_t t)
{
	return t == SM_NODE_SWITCH ? 0 : t == SM_NODE_CA ? 1 : t == SM_NODE_ROUTER ? 2 : 3;
}

static int by_type_guid(const void *a, const void *b, void *arg)
{
	const struct sm_fabric *f = arg;
	const struct sm_node *x = &f->nodes[*(const uint32_t *)a], *y = &f->nodes[*(const uint32_t *)b];
	int rx = type_rank(x->type), ry = type_rank(y->type);
	if (rx != ry)
		return rx - ry;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* The plane's nodes in listing order (malloc'ed). */
static uint32_t *sorted_nodes(const struct sm_fabric *f, unsigned plane, uint32_t *n_out)
{
	uint32_t *v = malloc(sizeof(*v) * (f->n_nodes ? f->n_nodes : 1)), n = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].plane == plane)
			v[n++] = i;
	qsort_r(v, n, sizeof(*v), by_type_guid, (void *)(uintptr_t)f);
	*n_out = n;
	return v;
}

/* One end of a link or route: node type/GUID/description and the port. */
static void j_end(struct sm_json *j, const char *key, const struct sm_fabric *f, uint32_t pi)
{
	const struct sm_port *p = &f->ports[pi];
	const struct sm_node *nd = &f->nodes[p->node];

	sm_json_obj_begin(j, key);
	sm_json_str(j, "type", sm_node_type_str(nd->type));
	j_guid(j, "guid", nd->guid);
	j_guid(j, "port_guid", nd->type == SM_NODE_SWITCH ? f->ports[nd->port0].guid : p->guid);
	sm_json_uint(j, "port", p->num);
	sm_json_uint(j, "lid", sm_node_lid(f, p->node, p->num));
	sm_json_str(j, "desc", nd->desc);
	sm_json_obj_end(j);
}

/* The planes a request is about: "plane" (a number) or all. */
static int req_planes(struct smd_dmn *d, const struct smd_jv *req, unsigned *first, unsigned *last,
		      char *err, size_t errlen)
{
	const struct smd_jv *pl = smd_jv_get(req, "plane");
	struct smd_dmn_status *st = malloc(sizeof(*st));
	unsigned n;

	if (!st) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	smd_dmn_status(d, st);
	n = st->n_planes;
	free(st);
	if (!pl || pl->type == SMD_J_NULL) {
		*first = 0;
		*last = n - 1;
		return 0;
	}
	if (pl->type != SMD_J_NUM || pl->num < 0 || pl->num >= n || pl->num != (double)(unsigned)pl->num) {
		snprintf(err, errlen, "\"plane\": a plane index 0-%u", n - 1);
		return -EINVAL;
	}
	*first = *last = (unsigned)pl->num;
	return 0;
}

/* Begin a plane entry; with no view, the entry says why and 0 is returned. */
static const struct smd_view *plane_begin(struct sm_json *j, struct smd_dmn *d, unsigned plane)
{
	const struct smd_view *v = NULL;

	sm_json_obj_begin(j, NULL);
	sm_json_uint(j, "plane", plane);
	if (smd_dmn_view_get(d, plane, &v)) {
		sm_json_str(j, "error", "this plane has not come up yet");
		return NULL;
	}
	sm_json_uint(j, "cycle", v->cycle);
	return v;
}

/* ------------------------------------------------------------------ */
/* commands                                                             */

static void nodes_plane(struct sm_json *j, const struct sm_fabric *f, unsigned plane)
{
	uint32_t n = 0, *order = sorted_nodes(f, plane, &n);

	if (!order) {
		j->err = -ENOMEM;
		return;
	}
	sm_json_arr_begin(j, "nodes");
	for (uint32_t k = 0; k < n; k++) {
		const struct sm_node *nd = &f->nodes[order[k]];
		unsigned links = 0;
		for (unsigned p = 1; p <= nd->nports; p++)
			links += sm_port(f, order[k], p)->peer_node != SM_NONE;
		sm_json_obj_begin(j, NULL);
		sm_json_str(j, "type", sm_node_type_str(nd->type));
		j_guid(j, "guid", nd->guid);
		j_guid(j, "sysimg_guid", nd->sysimg_guid);
		sm_json_uint(j, "lid", sm_node_lid(f, order[k], f->ports[node_endpoint(f, order[k])].num));
		sm_json_uint(j, "ports", nd->nports);
		sm_json_uint(j, "links", links);
		sm_json_str(j, "desc", nd->desc);
		if (nd->type != SM_NODE_SWITCH) {
			sm_json_arr_begin(j, "port_lids");
			for (unsigned p = 1; p <= nd->nports; p++)
				sm_json_uint(j, NULL, sm_port(f, order[k], p)->lid);
			sm_json_arr_end(j);
		}
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	free(order);
}

static void links_plane(struct sm_json *j, const struct sm_fabric *f, unsigned plane)
{
	uint32_t n = 0, *order = sorted_nodes(f, plane, &n);
	uint32_t *rank = order ? malloc(sizeof(*rank) * (f->n_nodes ? f->n_nodes : 1)) : NULL;

	if (!rank) {
		free(order);
		j->err = -ENOMEM;
		return;
	}
	for (uint32_t k = 0; k < n; k++)
		rank[order[k]] = k;
	sm_json_arr_begin(j, "links");
	for (uint32_t k = 0; k < n; k++) {
		const struct sm_node *nd = &f->nodes[order[k]];
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct sm_port *a = sm_port(f, order[k], p);
			if (a->peer_node == SM_NONE)
				continue;
			uint32_t pr = rank[a->peer_node];
			if (pr < k || (pr == k && a->peer_port < p))
				continue;   /* listed from the other end */
			const struct sm_port *b = sm_port(f, a->peer_node, a->peer_port);
			sm_json_obj_begin(j, NULL);
			j_end(j, "a", f, sm_port_index(f, order[k], p));
			j_end(j, "b", f, sm_port_index(f, a->peer_node, a->peer_port));
			sm_json_str(j, "state", sm_port_state_str(a->state));
			sm_json_str(j, "peer_state", sm_port_state_str(b->state));
			sm_json_str(j, "width", sm_topo_width_str(a->width));
			sm_json_str(j, "speed", sm_topo_speed_str(a->speed, a->flags));
			sm_json_obj_end(j);
		}
	}
	sm_json_arr_end(j);
	free(rank);
	free(order);
}

static int route_plane(struct sm_json *j, const struct smd_view *v, const char *src, const char *dst, char *err,
		       size_t errlen)
{
	const struct sm_fabric *f = v->fabric;
	uint32_t sp, dp, end = SM_NONE;
	int rc;

	if ((rc = smd_ctl_find_port(f, v->plane, src, 0, &sp, err, errlen)) ||
	    (rc = smd_ctl_find_port(f, v->plane, dst, 0, &dp, err, errlen))) {
		sm_json_str(j, "result", rc == -ENOENT ? "not in plane" : "error");
		sm_json_str(j, "error", err);
		return rc;
	}
	uint32_t nsw = 0;
	for (uint32_t n = 0; n < f->n_nodes; n++)
		nsw += f->nodes[n].type == SM_NODE_SWITCH;
	struct smd_route_hop *hops = malloc(sizeof(*hops) * (nsw + 1));
	unsigned nh = 0;
	if (!hops)
		return -ENOMEM;
	enum smd_route_result r = smd_route_walk(f, v->lfts, sp, dp, hops, nsw + 1, &nh, &end);
	const struct sm_port *dpt = &f->ports[dp];
	sm_json_str(j, "result", smd_route_result_name(r));
	sm_json_uint(j, "dlid", sm_node_lid(f, dpt->node, dpt->num));
	j_end(j, "src", f, sp);
	j_end(j, "dst", f, dp);
	sm_json_arr_begin(j, "hops");
	for (unsigned k = 0; k < nh; k++) {
		const struct sm_node *nd = &f->nodes[hops[k].node];
		sm_json_obj_begin(j, NULL);
		j_guid(j, "guid", nd->guid);
		sm_json_uint(j, "lid", f->ports[nd->port0].lid);
		sm_json_str(j, "desc", nd->desc);
		sm_json_uint(j, "in_port", hops[k].in_port);
		if (hops[k].out_port == SM_LFT_NONE)
			sm_json_null(j, "out_port");
		else
			sm_json_uint(j, "out_port", hops[k].out_port);
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	if (end != SM_NONE && end != dp)
		j_end(j, "arrived", f, end);
	free(hops);
	return r == SMD_ROUTE_OK ? 0 : 1;
}

/* What a "text" member is written from: LFTs (dump_lfts format) or, without them, a topology (ibnetdiscover). */
struct text_src {
	const struct sm_fabric *f;
	const struct sm_lfts *lfts;
	int plane;
};

static int text_member(struct sm_json *j, const struct text_src *src)
{
	char *text = NULL;
	size_t tl = 0;
	FILE *m = open_memstream(&text, &tl);
	int rc;

	if (!m)
		return -ENOMEM;
	rc = src->lfts ? sm_lftfile_write(m, src->f, src->lfts, NULL) : sm_topo_write_ibnd(src->f, src->plane, m);
	if (fclose(m) && !rc)
		rc = -EIO;
	if (!rc)
		sm_json_str(j, "text", text);
	free(text);
	return rc;
}

static int lft_plane(struct sm_json *j, const struct smd_view *v, const char *what, char *err, size_t errlen)
{
	const struct sm_fabric *f = v->fabric;
	const struct sm_lfts *l = v->lfts;
	uint32_t pi, slot;
	int rc = smd_ctl_find_port(f, v->plane, what, 1, &pi, err, errlen);

	if (rc)
		return rc;
	uint32_t node = f->ports[pi].node;
	const struct sm_node *nd = &f->nodes[node];
	slot = node < l->n_nodes ? l->slot_of_node[node] : SM_NONE;
	j_guid(j, "guid", nd->guid);
	sm_json_uint(j, "lid", f->ports[nd->port0].lid);
	sm_json_str(j, "desc", nd->desc);
	if (slot == SM_NONE) {
		snprintf(err, errlen, "switch %s has no LFT in this plane's routing", nd->desc);
		return -ENOENT;
	}
	sm_json_uint(j, "top_lid", l->top_lid);
	const uint8_t *row = sm_lfts_row(l, slot);
	sm_json_arr_begin(j, "ports");
	for (uint32_t lid = 0; lid <= l->top_lid; lid++)
		sm_json_uint(j, NULL, row[lid]);
	sm_json_arr_end(j);
	/* the dump_lfts text of this one switch: the same writer over a one-row view of the LFTs */
	struct sm_lfts one = {
		.plane = l->plane,
		.n_switches = 1,
		.top_lid = l->top_lid,
		.sw_node = &node,
		.ports = (uint8_t *)(uintptr_t)row,
	};
	struct text_src src = { .f = f, .lfts = &one };
	return text_member(j, &src);
}

static int dump_plane(struct sm_json *j, const struct smd_view *v)
{
	struct text_src src = { .f = v->fabric, .plane = (int)v->plane };
	return text_member(j, &src);
}

/* The request's string member `key`, required. */
static const char *req_str(const struct smd_jv *req, const char *cmd, const char *key, char *err, size_t errlen)
{
	const char *s = smd_jv_str(req, key, NULL);
	if (!s || !s[0] || strlen(s) > 256) {
		snprintf(err, errlen, "%s: \"%s\" (a string of 1-256 bytes) is required", cmd, key);
		return NULL;
	}
	return s;
}

int smd_ctl_fabric_request(struct smd_dmn *d, const char *cmd, const struct smd_jv *req, struct sm_json *j,
			   char *err, size_t errlen)
{
	const struct smd_ctl_cmd *c = smd_ctl_cmd_find(cmd);
	enum smd_ctl_cmd_id id = c ? (enum smd_ctl_cmd_id)(c - smd_ctl_cmds) : SMD_CMD_N;
	const char *arg[2] = { NULL, NULL };
	unsigned first, last, found = 0, routed = 0, broken = 0;
	char perr[256] = "", why[256] = "";
	int rc;

	if (!c || !(c->flags & SMD_CTL_CMD_PLANE)) {
		snprintf(err, errlen, "unknown command '%.40s'", cmd);
		return -EINVAL;
	}
	/* the request members the table names: required strings; one with a single value may be left out */
	for (unsigned k = 0; k < smd_ctl_cmd_n_args(c); k++) {
		if (c->word0 && strcmp(smd_jv_str(req, c->args[k], c->word0), c->word0)) {
			snprintf(err, errlen, "%s: \"%s\" can only be \"%s\"", cmd, c->args[k], c->word0);
			return -EINVAL;
		}
		if (!c->word0 && !(arg[k] = req_str(req, cmd, c->args[k], err, errlen)))
			return -EINVAL;
	}
	if ((rc = req_planes(d, req, &first, &last, err, errlen)))
		return rc;
	sm_json_arr_begin(j, "planes");
	for (unsigned p = first; p <= last; p++) {
		const struct smd_view *v = plane_begin(j, d, p);
		rc = 0;
		if (v) {
			if (id == SMD_CMD_NODES) {
				nodes_plane(j, v->fabric, p);
			} else if (id == SMD_CMD_LINKS) {
				links_plane(j, v->fabric, p);
			} else if (id == SMD_CMD_ROUTE) {
				perr[0] = '\0';
				rc = route_plane(j, v, arg[0], arg[1], perr, sizeof(perr));
				if (rc < 0 && !why[0])
					snprintf(why, sizeof(why), "plane %u: %s", p, perr);
				if (rc >= 0) {
					found++;
					routed += rc == 0;
					broken += rc == 1;
				}
				rc = rc == -ENOMEM ? rc : 0;
			} else if (id == SMD_CMD_LFT) {
				perr[0] = '\0';
				rc = lft_plane(j, v, arg[0], perr, sizeof(perr));
				if (!rc)
					found++;
				else if (rc == -ENOENT || rc == -EINVAL)
					sm_json_str(j, "error", perr);
				if (rc && !why[0])
					snprintf(why, sizeof(why), "plane %u: %s", p, perr);
				rc = rc == -ENOENT || rc == -EINVAL ? 0 : rc;
			} else {
				rc = dump_plane(j, v);
			}
		}
		sm_json_obj_end(j);
		smd_dmn_view_put(v);
		if (rc) {
			snprintf(err, errlen, "%s: plane %u: %s", cmd, p, strerror(-rc));
			return rc;
		}
	}
	sm_json_arr_end(j);
	if (id == SMD_CMD_ROUTE) {
		sm_json_uint(j, "routed", routed);
		sm_json_uint(j, "broken", broken);
	}
	/* nothing matched anywhere: a failed request (the per-plane reasons are in the entries too) */
	if ((id == SMD_CMD_ROUTE || id == SMD_CMD_LFT) && !found) {
		snprintf(err, errlen, "%s: %s", cmd, why[0] ? why : "no plane is up");
		return -ENOENT;
	}
	return j->err;
}
