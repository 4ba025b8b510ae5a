/* SPDX-License-Identifier: MIT */
/*
 * DOC: topology dump readers (ibnetdiscover text and ibsim net files)
 *
 * Both formats share one grammar, because ibsim's net format is a loose
 * superset of what ibnetdiscover prints:
 *
 *   vendid=0x2c9 / devid=0xcf08 / sysimgguid=0x... / switchguid=0xG(P) |
 *   caguid=0xG | rtguid=0xG                       attributes of the next node
 *   Switch 36 "S-<guid>"  # "desc" enhanced port 0 lid 5 lmc 0
 *   Ca|Hca 2 "H-<guid>"   # "desc"                node header (Rt = router)
 *   [p](portguid) "peer"[q](peerguid)  # ...     one line per linked port
 *
 * What differs is how the gaps are filled, and that is what `mode` selects:
 *  - IBND (real ibnetdiscover output): every node has its GUID line, every
 *    port line its "# ... lid N 4xHDR" comment (a missing one means a
 *    truncated file); port GUIDs come from the "(hex)" fields; width and
 *    speed are the active values printed.
 *  - IBSIM: what ibsim (ibsim/sim_net.c) would simulate from the same file:
 *    GUIDs are allocated from per-type bases (switches from 0x200000 in
 *    steps of 1, CAs from 0x100000 in steps of nports+1, "switchguid=" etc.
 *    move the base), CA port GUIDs are node GUID + port number, the system
 *    image GUID defaults to the node GUID, vendid= applies to one node but
 *    devid= sticks; widths and speeds are enabled masks (defaults, width=/
 *    speed=/extspeed= lines, w=/s=/e= port options, "4xQDR" text) and the
 *    active value of a link is the best rate both ends enable.
 * SM_TOPO_AUTO looks at the first 64 KiB: ibnetdiscover's signatures are a
 * switch header ending in "port 0 lid N lmc M" and a CA port line starting
 * "[p](portguid)"; with either the file is IBND, else IBSIM (ibsim net
 * files, including ours, may carry GUID lines but never those).
 *
 * Data flow: lines come from a fixed 64 KiB block reader (no line may
 * exceed SM_TOPO_MAX_LINE; NUL and control bytes mean "binary"). Nodes go
 * straight into a private scratch fabric as their headers are read (so
 * duplicate GUIDs and LIDs are caught on their own line); port lines are
 * kept as records naming their peer by id. At EOF the peers are resolved,
 * each link must be listed identically by both ends, links are made, and
 * the scratch fabric is appended to the caller's in one all-or-nothing step
 * (sm_fabric_append). Any error frees the scratch state: the caller's
 * fabric never sees a partial load. sm_topo_parse() stops before the
 * append and sm_topo_commit() does it, so several dumps can be read in
 * parallel threads (each parse owns all its state) and appended in order.
 *
 * Files: this one drives a parse and makes the links; the grammar is in
 * topo_read_parse.c, the line reader and storage in topo_read_lex.c, the
 * state they share in topo_read_priv.h.
 *
 * A dump carries no port state: linked ports and switch port 0 are loaded
 * ACTIVE with physical state LinkUp, unlinked ones stay DOWN.
 */
#include "config.h"
#include "model/topo_read_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

/* ---- links ---- */

static unsigned best_bit(unsigned mask, const unsigned *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mask & order[i])
			return order[i];
	return 0;
}

static int make_links(struct rd *r)
{
	struct sm_fabric *f = r->fab;
	static const unsigned worder[] = { 8, 4, 2, 16, 1 };
	static const unsigned sorder[] = { 4, 2, 1 };
	static const unsigned eorder[] = { 8, 4, 2, 1 };
	int rc;

	for (uint32_t i = 0; i < r->n_ports; i++) {
		struct rd_port *p = &r->ports[i];
		const char *pn = r->arena + p->peer_name;
		uint32_t m = rd_name_find(r, pn, strlen(pn));

		if (m == SM_NONE)
			return rd_fail(r, p->line, -EINVAL, "peer \"%s\" is not a node of this file", pn);
		p->peer_node = m;
		if (p->peer_port > f->nodes[m].nports)
			return rd_fail(r, p->line, -EINVAL, "peer port %u out of range 1..%u of \"%s\"",
				    p->peer_port, f->nodes[m].nports, pn);
	}
	for (uint32_t i = 0; i < r->n_ports; i++) {
		struct rd_port *p = &r->ports[i];
		const char *me = node_name(r, p->node), *pn = node_name(r, p->peer_node);
		uint32_t qi = r->portmap[sm_port_index(f, p->peer_node, p->peer_port)];

		if (p->peer_node == p->node && p->peer_port == p->num)
			return rd_fail(r, p->line, -EINVAL, "port %u of \"%s\" is linked to itself", p->num, me);
		if (qi == SM_NONE)
			return rd_fail(r, p->line, -EINVAL,
				    "link \"%s\"[%u] -> \"%s\"[%u] is not confirmed: \"%s\" (line %u) does not list port %u",
				    me, p->num, pn, p->peer_port, pn, r->nodes[p->peer_node].line, p->peer_port);
		struct rd_port *q = &r->ports[qi];
		if (q->peer_node != p->node || q->peer_port != p->num)
			return rd_fail(r, p->line, -EINVAL,
				    "link \"%s\"[%u] -> \"%s\"[%u] contradicts line %u, which links it to \"%s\"[%u]",
				    me, p->num, pn, p->peer_port, q->line, node_name(r, q->peer_node), q->peer_port);
		if (qi < i)
			continue; /* the pair was done from the other end */
		if (r->mode == MODE_IBND) {
			/* the "(guid)" printed after a CA peer must be that port's GUID */
			const struct sm_port *pp = sm_port(f, q->node, q->num), *qp = sm_port(f, p->node, p->num);
			if (p->peer_guid && f->nodes[q->node].type != SM_NODE_SWITCH && pp->guid != p->peer_guid)
				return rd_fail(r, p->line, -EINVAL,
					    "peer port GUID 0x%llx does not match \"%s\"[%u] (0x%llx, line %u)",
					    (unsigned long long)p->peer_guid, pn, q->num,
					    (unsigned long long)pp->guid, q->line);
			if (q->peer_guid && f->nodes[p->node].type != SM_NODE_SWITCH && qp->guid != q->peer_guid)
				return rd_fail(r, q->line, -EINVAL,
					    "peer port GUID 0x%llx does not match \"%s\"[%u] (0x%llx, line %u)",
					    (unsigned long long)q->peer_guid, me, p->num,
					    (unsigned long long)qp->guid, p->line);
		}
		rc = sm_fabric_link(f, p->node, p->num, q->node, q->num);
		if (rc)
			return rd_fail(r, p->line, rc, "cannot link \"%s\"[%u] to \"%s\"[%u]", me, p->num, pn, q->num);
		struct sm_port *a = sm_port(f, p->node, p->num), *b = sm_port(f, q->node, q->num);
		if (r->mode == MODE_IBND) {
			a->width = p->width, a->speed = p->speed, a->flags = p->flags;
			b->width = q->width, b->speed = q->speed, b->flags = q->flags;
		} else {
			unsigned w = best_bit(p->wena & q->wena, worder, 5);
			unsigned sp = best_bit(p->sena & q->sena, sorder, 3);
			unsigned e = best_bit(p->eena & q->eena, eorder, 4);
			if (!w || !sp)
				return rd_fail(r, p->line, -EINVAL,
					    "\"%s\"[%u] and \"%s\"[%u] enable no common link %s",
					    me, p->num, pn, q->num, !w ? "width" : "speed");
			uint8_t fl = 0, speed = (uint8_t)sp;
			if (e)
				speed = (uint8_t)e, fl = SM_PORT_F_EXT_SPEED;
			else if ((p->mena & q->mena & 1) && sp == 4)
				fl = SM_PORT_F_FDR10;
			a->width = b->width = (uint8_t)w;
			a->speed = b->speed = speed;
			a->flags = b->flags = fl;
		}
		a->state = b->state = SM_PORT_ACTIVE;
		a->phys_state = b->phys_state = 5; /* LinkUp */
	}
	return 0;
}

static void rd_free(struct rd *r)
{
	free(r->spare_lid_map);
	sm_fabric_free(r->fab);
	free(r->buf);
	free(r->nodes);
	free(r->ports);
	free(r->portmap);
	free(r->arena);
	free(r->ht);
}

/*
 * Size the scratch arrays from the file size, so that they are not grown
 * (and copied, and their pages touched twice) dozens of times on a big
 * dump. Estimates err high (untouched capacity costs no memory) and are
 * capped; a failure here only means growing as needed.
 */
static void reserve(struct rd *r)
{
	struct stat st;

	if (fstat(fileno(r->in), &st) || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return;
	uint64_t size = (uint64_t)st.st_size > (1u << 30) ? (1u << 30) : (uint64_t)st.st_size;
	uint32_t nodes = (uint32_t)(size / 128 + 16), ports = (uint32_t)(size / 32 + 64);
	uint32_t lines = (uint32_t)(size / 40 + 16);

	if (sm_fabric_reserve(r->fab, nodes, ports))
		return;
	if (rd_grow((void **)&r->nodes, &r->cap_nodes, nodes, sizeof(*r->nodes)) ||
	    rd_grow((void **)&r->portmap, &r->cap_portmap, ports, sizeof(*r->portmap)) ||
	    rd_grow((void **)&r->ports, &r->cap_ports, lines, sizeof(*r->ports)))
		return;
	char *a = r->arena_cap ? NULL : malloc(size / 2 + 64);
	if (a) {
		r->arena = a;
		r->arena_cap = size / 2 + 64;
	}
}

/*
 * Empty r for another dump but keep its memory: a fresh scratch fabric and
 * arrays would fault their pages in again for every dump, which costs
 * more than parsing when several threads do it at once. The fabric is
 * reset field by field to what sm_fabric_new() gives, its arrays, GUID
 * maps (emptied) and one LID table kept.
 */
static void rd_recycle(struct rd *r)
{
	struct rd k = *r;
	struct sm_fabric *f = k.fab;

	memset(r, 0, sizeof(*r));
	if (!f)
		return;
	for (unsigned i = 0; i < SM_MAX_PLANES; i++) {
		if (f->planes[i].lid_map && !k.spare_lid_map)
			k.spare_lid_map = f->planes[i].lid_map;
		else
			free(f->planes[i].lid_map);
		memset(&f->planes[i], 0, sizeof(f->planes[i]));
		snprintf(f->planes[i].name, sizeof(f->planes[i].name), "plane%u", i);
		f->planes[i].sm_port = SM_NONE;
		f->planes[i].subnet_prefix = 0xfe80000000000000ULL;
	}
	struct sm_guid_map *maps[2] = { &f->node_by_guid, &f->port_by_guid };
	for (unsigned i = 0; i < 2; i++) {
		if (maps[i]->cap)
			memset(maps[i]->keys, 0, (size_t)maps[i]->cap * sizeof(*maps[i]->keys));
		maps[i]->count = 0;
	}
	f->n_nodes = 0;
	f->n_ports = 0;
	f->n_planes = 1;
	r->fab = f;
	r->buf = k.buf;
	r->nodes = k.nodes;
	r->cap_nodes = k.cap_nodes;
	r->ports = k.ports;
	r->cap_ports = k.cap_ports;
	r->portmap = k.portmap;
	r->cap_portmap = k.cap_portmap;
	r->arena = k.arena;
	r->arena_cap = k.arena_cap;
	r->ht = k.ht;
	r->ht_cap = k.ht_cap;
	if (r->ht_cap)
		memset(r->ht, 0xff, (size_t)r->ht_cap * sizeof(*r->ht));
	r->spare_lid_map = k.spare_lid_map;
}

/*
 * Read and check a whole dump into r's scratch fabric; no caller fabric is
 * touched, so several dumps can be parsed at once in different threads.
 */
static int rd_parse(struct rd *r, FILE *in, const char *name, enum sm_topo_format fmt,
		    unsigned plane, struct sm_topo_err *err)
{
	char *line = NULL;
	size_t len = 0;
	int rc;

	rd_recycle(r);  /* r: zeroed, or what an earlier parse left */
	r->name = name ? name : "<stream>";
	r->in = in;
	r->err = err;
	r->mode = fmt;
	r->plane = plane;
	r->cur = -1;
	r->guid_base[SM_NODE_CA] = r->abs_base[SM_NODE_CA] = 0x100000; /* ibsim's defaults */
	r->guid_base[SM_NODE_SWITCH] = r->abs_base[SM_NODE_SWITCH] = 0x200000;
	r->netwidth = 2;                          /* 4x */
	r->netspeed = 1;                          /* SDR */
	if (err) {
		err->msg[0] = '\0';
		err->line = 0;
	}
	if (fmt != SM_TOPO_AUTO && fmt != SM_TOPO_IBND && fmt != SM_TOPO_IBSIM)
		return rd_fail(r, 0, -EINVAL, "unknown dump format %d", (int)fmt);
	if (plane >= SM_MAX_PLANES)
		return rd_fail(r, 0, -EINVAL, "plane %u out of range 0..%d", plane, SM_MAX_PLANES - 1);
	if (!r->buf)
		r->buf = malloc(RD_BLOCK);
	if (!r->fab)
		r->fab = sm_fabric_new();
	if (!r->buf || !r->fab)
		return rd_fail(r, 0, -ENOMEM, "out of memory");
	if (r->spare_lid_map) {
		/* what sm_fabric_set_lid() would allocate for the first LID */
		memset(r->spare_lid_map, 0xff, SM_LID_SPACE * sizeof(*r->spare_lid_map));
		r->fab->planes[plane].lid_map = r->spare_lid_map;
		r->spare_lid_map = NULL;
	}
	reserve(r);
	if (r->mode == MODE_AUTO && (rc = rd_sniff(r)))
		return rc;
	while ((rc = rd_next_line(r, &line, &len)) > 0) {
		if ((rc = rd_parse_line(r, line, len)))
			return rc;
	}
	if (rc < 0)
		return rc;
	if (r->line == 0)
		return rd_fail(r, 1, -ENODATA, "empty file");
	if (r->mode == MODE_IBND && r->pend)
		return rd_fail(r, r->pend_line, -EINVAL,
			    "truncated block: no node header follows (end of file at line %u)", r->line);
	if (r->mode == MODE_IBND && r->unterminated)
		return rd_fail(r, r->line, -EINVAL, "last line has no newline (truncated file?)");
	if (!r->fab->n_nodes)
		return rd_fail(r, r->line, -ENODATA, "no nodes in file");
	if (!r->fab->planes[plane].max_lid && r->fab->planes[plane].lid_map) {
		/* no LID in the dump: leave the plane without a table, as a fresh fabric would */
		r->spare_lid_map = r->fab->planes[plane].lid_map;
		r->fab->planes[plane].lid_map = NULL;
	}
	return make_links(r);
}

/* Append r's scratch fabric to f, all or nothing. */
static int rd_commit(struct rd *r, struct sm_fabric *f, struct sm_topo_err *err)
{
	uint32_t conflict = 0;
	int rc;

	r->err = err;
	if (err) {
		err->msg[0] = '\0';
		err->line = 0;
	}
	rc = sm_fabric_append(f, r->fab, &conflict);
	if (rc == -EEXIST)
		rc = rd_fail(r, r->nodes[conflict].line, rc,
			  "GUID of \"%s\" (0x%016llx or one of its ports) is already in the fabric",
			  node_name(r, conflict), (unsigned long long)r->fab->nodes[conflict].guid);
	else if (rc == -EADDRINUSE)
		rc = rd_fail(r, r->nodes[conflict].line, rc,
			  "a LID of \"%s\" is already used in plane %u of the fabric",
			  node_name(r, conflict), r->plane);
	else if (rc)
		rc = rd_fail(r, 0, rc, "cannot add to the fabric: %s", strerror(-rc));
	return rc;
}

int sm_topo_load_stream(struct sm_fabric *f, FILE *in, const char *name,
			enum sm_topo_format fmt, unsigned plane, struct sm_topo_err *err)
{
	struct rd r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = rd_parse(&r, in, name, fmt, plane, err);

	if (!rc)
		rc = rd_commit(&r, f, err);
	rd_free(&r);
	return rc;
}

struct sm_topo_parsed {
	struct rd r;
	char *name;
};

int sm_topo_parse(const char *path, enum sm_topo_format fmt, unsigned plane,
		  struct sm_topo_parsed **out, struct sm_topo_err *err)
{
	struct sm_topo_parsed *p = *out;
	FILE *in;
	int rc;

	*out = NULL;
	in = fopen(path, "r");
	if (!in) {
		rc = -errno;
		if (err) {
			err->line = 0;
			snprintf(err->msg, sizeof(err->msg), "%s:0: cannot open: %s", path, strerror(-rc));
		}
		sm_topo_parsed_free(p);
		return rc;
	}
	if (!p)
		p = calloc(1, sizeof(*p));
	if (p) {
		free(p->name);
		p->name = strdup(path);
	}
	if (!p || !p->name) {
		fclose(in);
		sm_topo_parsed_free(p);
		if (err) {
			err->line = 0;
			snprintf(err->msg, sizeof(err->msg), "%s:0: out of memory", path);
		}
		return -ENOMEM;
	}
	rc = rd_parse(&p->r, in, p->name, fmt, plane, err);
	fclose(in);
	p->r.in = NULL;
	if (rc) {
		sm_topo_parsed_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int sm_topo_commit(struct sm_fabric *f, struct sm_topo_parsed *p, struct sm_topo_err *err)
{
	return rd_commit(&p->r, f, err);
}

void sm_topo_parsed_free(struct sm_topo_parsed *p)
{
	if (!p)
		return;
	rd_free(&p->r);
	free(p->name);
	free(p);
}

int sm_topo_load(struct sm_fabric *f, const char *path, enum sm_topo_format fmt,
		 unsigned plane, struct sm_topo_err *err)
{
	struct sm_topo_parsed *p = NULL;
	int rc = sm_topo_parse(path, fmt, plane, &p, err);

	if (!rc)
		rc = sm_topo_commit(f, p, err);
	sm_topo_parsed_free(p);
	return rc;
}
