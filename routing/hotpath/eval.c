/* SPDX-License-Identifier: MIT */
/*
 * DOC: hot-path pinning: routes as walks, the evaluator, and the report output
 *
 * A flow's route is the walk of an LFT from its source CA port to its
 * destination (hp_walk); the evaluator (sm_hotpath_eval) sums weights per
 * directed link over such walks, independently of the pinning state, so
 * tests and benchmarks can check the pinning with it. Also the report's
 * formatting and the per-flow DLID list.
 */
#include "routing/hotpath/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- walking ---- */

/* Walk src -> dst with dlid through l; fills path (egress port indices). Returns length or 0. */
unsigned hp_walk(const struct sm_fabric *f, const struct sm_lfts *l, uint32_t src, uint32_t dst,
		 uint16_t dlid, uint32_t *path)
{
	const struct sm_port *sp = &f->ports[src];
	unsigned n = 0;
	if (sp->peer_node == SM_NONE)
		return 0;
	path[n++] = src;
	uint32_t node = sp->peer_node;
	uint32_t dnode = f->ports[dst].node;
	uint8_t dport = f->ports[dst].num;
	while (n < HP_MAXHOPS) {
		if (f->nodes[node].type != SM_NODE_SWITCH)
			return 0;
		uint8_t e = sm_lfts_get(l, node, dlid);
		if (e == SM_LFT_NONE || e == 0 || e > f->nodes[node].nports)
			return 0;
		uint32_t pi = sm_port_index(f, node, e);
		const struct sm_port *pt = &f->ports[pi];
		if (pt->peer_node == SM_NONE)
			return 0;
		path[n++] = pi;
		if (f->nodes[pt->peer_node].type != SM_NODE_SWITCH)
			return (pt->peer_node == dnode && pt->peer_port == dport) ? n : 0;
		node = pt->peer_node;
	}
	return 0;
}

void hp_add_path(struct hp *h, const struct hflow *fl, double sign)
{
	for (unsigned i = 0; i < fl->len; i++)
		h->load[fl->path[i]] += sign * fl->w;
}

void hp_reroute(struct hp *h, struct hflow *fl)
{
	fl->len = (uint8_t)hp_walk(h->f, h->out, fl->src, fl->dst, fl->dlid, fl->path);
}

/* ---- evaluator ---- */

double hp_host_bound(const struct sm_fabric *f, const struct sm_flow *flows, size_t n, unsigned plane,
		     double *tmp_s, double *tmp_r)
{
	double b = 0;
	for (size_t i = 0; i < n; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		tmp_s[flows[i].src] += flows[i].weight;
		tmp_r[flows[i].dst] += flows[i].weight;
	}
	for (size_t i = 0; i < n; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		b = fmax(b, fmax(tmp_s[flows[i].src], tmp_r[flows[i].dst]));
	}
	return b;
}

int sm_hotpath_eval(const struct sm_fabric *f, unsigned plane, const struct sm_lfts *l,
		    const struct sm_flow *flows, const uint16_t *dlids, size_t n_flows, double *max_load,
		    double *host_bound, double *ebb, size_t *unroutable)
{
	double *load = calloc((size_t)f->n_ports + 1, sizeof(double));
	double *ts = calloc((size_t)f->n_ports + 1, sizeof(double));
	double *tr = calloc((size_t)f->n_ports + 1, sizeof(double));
	uint32_t(*paths)[HP_MAXHOPS] = calloc(n_flows + 1, sizeof(*paths));
	uint8_t *lens = calloc(n_flows + 1, 1);
	int rc = 0;
	if (!load || !ts || !tr || !paths || !lens) {
		rc = -ENOMEM;
		goto out;
	}
	size_t bad = 0, cnt = 0;
	for (size_t i = 0; i < n_flows; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		uint16_t d = dlids ? dlids[i] : f->ports[flows[i].dst].lid;
		lens[i] = (uint8_t)hp_walk(f, l, flows[i].src, flows[i].dst, d, paths[i]);
		if (!lens[i])
			bad++;
		for (unsigned k = 0; k < lens[i]; k++)
			load[paths[i][k]] += flows[i].weight;
	}
	double mx = 0;
	for (uint32_t p = 0; p < f->n_ports; p++)
		mx = fmax(mx, load[p]);
	double hb = hp_host_bound(f, flows, n_flows, plane, ts, tr);
	double sum = 0;
	for (size_t i = 0; i < n_flows; i++) {
		if (flow_plane(f, &flows[i]) != plane)
			continue;
		cnt++;
		if (!lens[i])
			continue;
		double worst = 0;
		for (unsigned k = 0; k < lens[i]; k++)
			worst = fmax(worst, load[paths[i][k]]);
		sum += worst > 0 ? fmin(1.0, hb / worst) : 1.0;
	}
	if (max_load)
		*max_load = mx;
	if (host_bound)
		*host_bound = hb;
	if (ebb)
		*ebb = cnt ? sum / (double)cnt : 0;
	if (unroutable)
		*unroutable = bad;
out:
	free(load);
	free(ts);
	free(tr);
	free(paths);
	free(lens);
	return rc;
}

void sm_hotpath_report_clear(struct sm_hotpath_report *r)
{
	if (!r)
		return;
	free(r->flow);
	free(r->dlid);
	free(r->is_pinned);
	memset(r, 0, sizeof(*r));
}


void sm_hotpath_report_format(const struct sm_hotpath_report *r, char *buf, size_t len)
{
	/*
	 * Plain words, within the engine ABI's 256-byte message: it reaches the
	 * log and the dry-run report ("method" stays colour/greedy/none in JSON).
	 * Exact placement = edge colouring (every flow alone on its links).
	 */
	const char *how = !strcmp(r->method, "colour") ? "exact placement" :
			  !strcmp(r->method, "greedy") ? "greedy placement" : r->method;
	snprintf(buf, len,
		 "hotpath plane%u: %s, %zu of %zu flows pinned (%u destinations, %u LIDs), busiest link "
		 "%.4g -> %.4g (hosts' links allow %.4g), EBB of these flows %.3f -> %.3f, %llu LFT entries "
		 "changed in %llu blocks%s%s",
		 r->plane, how, r->pinned, r->flows, r->hot_dests, r->hot_lids, r->max_load_before,
		 r->max_load_after, r->host_bound, r->ebb_before, r->ebb_after, (unsigned long long)r->lft_changed,
		 (unsigned long long)r->lft_blocks_changed, r->note[0] ? "; " : "", r->note);
}

static void put_endpoint(const struct sm_fabric *f, uint32_t port, FILE *out)
{
	const struct sm_node *n = &f->nodes[f->ports[port].node];
	if (!n->desc[0]) {
		fprintf(out, "0x%016llx", (unsigned long long)f->ports[port].guid);
		return;
	}
	fputc('"', out);
	for (const char *c = n->desc; *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', out);
		fputc(*c, out);
	}
	fputc('"', out);
}

int sm_hotpath_write_dlids(const struct sm_fabric *f, const struct sm_hotpath_report *r, FILE *out)
{
	fprintf(out, "# hotpath plane%u: SRC DST WEIGHT DLID pinned|base\n", r->plane);
	for (size_t i = 0; i < r->n_flows; i++) {
		put_endpoint(f, r->flow[i].src, out);
		fputc(' ', out);
		put_endpoint(f, r->flow[i].dst, out);
		fprintf(out, " %.17g %u %s\n", r->flow[i].weight, r->dlid[i], r->is_pinned[i] ? "pinned" : "base");
	}
	return ferror(out) ? -EIO : 0;
}
