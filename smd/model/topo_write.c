/* SPDX-License-Identifier: MIT */
/*
 * DOC: topology dump writers
 *
 * sm_topo_write_ibnd() prints a plane the way ibnetdiscover does (same
 * block order: switches, then CAs, then routers; same line layout, tabs
 * and comments), so anything that reads ibnetdiscover output (our reader,
 * ibsim, the diags-era scripts) reads ours. Node ids are "S-", "H-", "R-"
 * plus the 16-digit node GUID, as ibnetdiscover makes them. The output is
 * deterministic (no timestamp) so dumps can be diffed.
 *
 * sm_topo_write_ibsim() writes an ibsim net file that starts the simulated
 * fabric unconfigured (no LIDs, as before any SM ran) but otherwise the
 * same: GUIDs via switchguid=/caguid= lines, vendor/device/system image
 * ids, descriptions, enhanced port 0, and each link's width and speed as
 * "# lid 0 4xHDR" text that ibsim turns into enabled rates. ibsim derives a
 * CA's port GUIDs as caguid + port number and a switch's port GUID from its
 * node GUID; nodes that do not follow that rule get a comment saying so.
 * Lines stay under ibsim's 256-byte line buffer.
 *
 * Both return 0 or -EIO (stream error); neither changes the fabric.
 */
#include "config.h"
#include "model/topo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

static char id_letter(uint8_t type)
{
	return type == SM_NODE_SWITCH ? 'S' : type == SM_NODE_CA ? 'H' : 'R';
}

/* ibnetdiscover's clean_nodedesc(): control characters become spaces. */
static void clean_desc(const char *in, char *out)
{
	size_t i;
	for (i = 0; in[i] && i < SM_DESC_MAX; i++) {
		unsigned char c = (unsigned char)in[i];
		out[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	out[i] = '\0';
}

static bool in_plane(const struct sm_node *nd, int plane)
{
	return plane < 0 || nd->plane == (unsigned)plane;
}

static void write_ids(const struct sm_node *nd, FILE *out)
{
	fprintf(out, "\nvendid=0x%x\ndevid=0x%x\n", nd->vendor_id, nd->device_id);
	if (nd->sysimg_guid)
		fprintf(out, "sysimgguid=0x%" PRIx64 "\n", nd->sysimg_guid);
}

/* caguid=/rtguid= line and the Ca|Rt header; `gap` separates id and comment. */
static void write_ca_header(const struct sm_node *nd, const char *desc, const char *gap, FILE *out)
{
	fprintf(out, "%sguid=0x%" PRIx64 "\n", nd->type == SM_NODE_CA ? "ca" : "rt", nd->guid);
	fprintf(out, "%s\t%u \"%c-%016" PRIx64 "\"%s# \"%s\"\n", nd->type == SM_NODE_CA ? "Ca" : "Rt",
		nd->nports, id_letter(nd->type), nd->guid, gap, desc);
}

static void write_ibnd_node(const struct sm_fabric *f, uint32_t n, FILE *out)
{
	const struct sm_node *nd = sm_node(f, n);
	char desc[SM_DESC_MAX + 1], pdesc[SM_DESC_MAX + 1];

	clean_desc(nd->desc, desc);
	write_ids(nd, out);
	if (nd->type == SM_NODE_SWITCH) {
		const struct sm_port *p0 = sm_port(f, n, 0);
		fprintf(out, "switchguid=0x%" PRIx64 "(%" PRIx64 ")\n", nd->guid, p0->guid);
		fprintf(out, "Switch\t%u \"S-%016" PRIx64 "\"\t\t# \"%s\" %s port 0 lid %u lmc %u\n",
			nd->nports, nd->guid, desc,
			(nd->flags & SM_NODE_F_ENHANCED_SP0) ? "enhanced" : "base", p0->lid, p0->lmc);
	} else {
		write_ca_header(nd, desc, "\t\t", out);
	}
	for (unsigned p = 1; p <= nd->nports; p++) {
		const struct sm_port *pt = sm_port(f, n, p);
		if (pt->peer_node == SM_NONE)
			continue;
		const struct sm_node *pn = sm_node(f, pt->peer_node);
		const struct sm_port *pp = sm_port(f, pt->peer_node, pt->peer_port);
		clean_desc(pn->desc, pdesc);
		if (nd->type == SM_NODE_SWITCH)
			fprintf(out, "[%u]", p);
		else
			fprintf(out, "[%u](%" PRIx64 ") ", p, pt->guid);
		fprintf(out, "\t\"%c-%016" PRIx64 "\"[%u]", id_letter(pn->type), pn->guid, pt->peer_port);
		if (pn->type != SM_NODE_SWITCH)
			fprintf(out, nd->type == SM_NODE_SWITCH ? "(%" PRIx64 ") " : " (%" PRIx64 ") ",
				pp->guid);
		if (nd->type == SM_NODE_SWITCH)
			fprintf(out, "\t\t# \"%s\"", pdesc);
		else
			fprintf(out, "\t\t# lid %u lmc %u \"%s\"", pt->lid, pt->lmc, pdesc);
		fprintf(out, " lid %u %s%s\n", sm_node_lid(f, pt->peer_node, pt->peer_port),
			sm_topo_width_str(pt->width), sm_topo_speed_str(pt->speed, pt->flags));
	}
}

static int each_type(const struct sm_fabric *f, int plane, FILE *out,
		     void (*fn)(const struct sm_fabric *, uint32_t, FILE *))
{
	static const uint8_t order[] = { SM_NODE_SWITCH, SM_NODE_CA, SM_NODE_ROUTER };

	for (size_t t = 0; t < sizeof(order); t++)
		for (uint32_t n = 0; n < f->n_nodes; n++)
			if (f->nodes[n].type == order[t] && in_plane(&f->nodes[n], plane))
				fn(f, n, out);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

int sm_topo_write_ibnd(const struct sm_fabric *f, int plane, FILE *out)
{
	fprintf(out, "#\n# Topology file: written by smd");
	if (plane >= 0 && plane < SM_MAX_PLANES)
		fprintf(out, " (plane %d \"%s\")", plane, f->planes[plane].name);
	fprintf(out, "\n#\n");
	if (plane >= 0 && plane < SM_MAX_PLANES && f->planes[plane].sm_port != SM_NONE &&
	    f->planes[plane].sm_port < f->n_ports) {
		const struct sm_port *sp = &f->ports[f->planes[plane].sm_port];
		fprintf(out, "# Initiated from node %016" PRIx64 " port %016" PRIx64 "\n",
			f->nodes[sp->node].guid, sp->guid);
	}
	return each_type(f, plane, out, write_ibnd_node);
}

static void write_ibsim_node(const struct sm_fabric *f, uint32_t n, FILE *out)
{
	const struct sm_node *nd = sm_node(f, n);
	char desc[SM_DESC_MAX + 1];
	bool odd_guids = false;

	clean_desc(nd->desc, desc);
	/* ibsim ends a quoted description at its first quote */
	for (char *q = desc; (q = strchr(q, '"')); )
		*q = '\'';
	if (nd->type == SM_NODE_SWITCH) {
		odd_guids = sm_port(f, n, 0)->guid != nd->guid;
	} else {
		for (unsigned p = 1; p <= nd->nports; p++) {
			uint64_t g = sm_port(f, n, p)->guid;
			if (g && g != nd->guid + p)
				odd_guids = true;
		}
	}
	fprintf(out, "\nvendid=0x%x\ndevid=0x%x\n", nd->vendor_id, nd->device_id);
	/* ibsim would use the node GUID for a missing system image GUID */
	fprintf(out, "sysimgguid=0x%" PRIx64 "\n", nd->sysimg_guid ? nd->sysimg_guid : nd->guid);
	if (odd_guids)
		fprintf(out, "# port GUIDs differ from what ibsim derives from the node GUID\n");
	if (nd->type == SM_NODE_SWITCH) {
		fprintf(out, "switchguid=0x%" PRIx64 "\n", nd->guid);
		fprintf(out, "Switch\t%u \"S-%016" PRIx64 "\"\t# \"%s\" %s port 0\n", nd->nports,
			nd->guid, desc, (nd->flags & SM_NODE_F_ENHANCED_SP0) ? "enhanced" : "base");
	} else {
		write_ca_header(nd, desc, "\t", out);
	}
	for (unsigned p = 1; p <= nd->nports; p++) {
		const struct sm_port *pt = sm_port(f, n, p);
		if (pt->peer_node == SM_NONE)
			continue;
		const struct sm_node *pn = sm_node(f, pt->peer_node);
		fprintf(out, "[%u]\t\"%c-%016" PRIx64 "\"[%u]", p, id_letter(pn->type), pn->guid,
			pt->peer_port);
		/* "lid 0": ibsim reads a CA port's LID from the first "lid" of the line */
		if (pt->width && (pt->speed || (pt->flags & SM_PORT_F_FDR10)))
			fprintf(out, "\t# lid 0 %s%s", sm_topo_width_str(pt->width),
				sm_topo_speed_str(pt->speed, pt->flags));
		fputc('\n', out);
	}
}

int sm_topo_write_ibsim(const struct sm_fabric *f, int plane, FILE *out)
{
	struct sm_fabric_counts c;
	uint32_t ports = 0;

	sm_fabric_count(f, plane, &c);
	for (uint32_t n = 0; n < f->n_nodes; n++)
		if (in_plane(&f->nodes[n], plane))
			ports += f->nodes[n].nports + 1u;
	fprintf(out, "# ibsim net file written by smd: %u switches, %u CAs, %u routers, %u links\n",
		c.switches, c.cas, c.routers, c.links);
	fprintf(out, "# No LIDs: the simulated fabric starts unconfigured, as before any SM ran.\n");
	/* ibsim's compiled-in limits are 2048 nodes, 256 switches, 13312 ports */
	if (c.nodes > 2048 || c.switches > 256 || ports > 13312)
		fprintf(out, "# Too big for ibsim's defaults: run ibsim -N %u -S %u -P %u\n",
			c.nodes, c.switches, ports);
	return each_type(f, plane, out, write_ibsim_node);
}
