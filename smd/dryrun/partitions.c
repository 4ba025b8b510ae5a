/* SPDX-License-Identifier: MIT */
/*
 * DOC: the dry-run's partitions section (smd --dry-run --partitions FILE)
 *
 * The file is validated like the daemon's (errors FILE:LINE, exit 1) and
 * each partition resolved against every plane of the dumps: how many end
 * ports (CA and router ports, switch port 0) are full, limited and both
 * members, and how many multicast groups it declares. SELF names no port
 * offline (there is no SM port). Text: one line per partition; JSON: the
 * "partitions" object (keys only added; absent without --partitions).
 */
#include "dryrun/dryrun.h"
#include "lib/json.h"
#include "model/partitions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sm_dryrun_partitions(struct sm_dryrun *d, const struct sm_partitions *ps)
{
	struct sm_dr_run *r = &d->run;
	const struct sm_fabric *f = d->f;

	free(r->parts);
	r->parts = calloc(ps->n ? ps->n : 1, sizeof(*r->parts));
	if (!r->parts)
		return -ENOMEM;
	r->n_parts = ps->n;
	snprintf(r->partitions, sizeof(r->partitions), "%s", ps->file);
	for (size_t i = 0; i < ps->n; i++) {
		const struct sm_partition *p = &ps->v[i];
		struct sm_dr_part *o = &r->parts[i];
		snprintf(o->name, sizeof(o->name), "%s", p->name);
		o->pkey = p->pkey;
		o->ipoib = p->ipoib;
		o->mgroups = (uint32_t)p->n_mgroups;
		for (uint32_t port = 0; f && port < f->n_ports; port++) {
			switch (sm_partition_port(p, f, port, SM_NONE)) {
			case SM_PART_FULL: o->full++; break;
			case SM_PART_LIMITED: o->limited++; break;
			case SM_PART_BOTH: o->both++; break;
			default: break;
			}
		}
	}
	return 0;
}

void sm_report_partitions_text(FILE *out, const struct sm_dr_run *r)
{
	if (!r->partitions[0])
		return;
	fprintf(out, "partitions: %zu from %s (member ports: full / limited / both)\n", r->n_parts, r->partitions);
	for (size_t i = 0; i < r->n_parts; i++) {
		const struct sm_dr_part *p = &r->parts[i];
		fprintf(out, "  0x%04x %-20s %6u / %6u / %6u%s", p->pkey, p->name, p->full, p->limited, p->both,
			p->ipoib ? "  ipoib" : "");
		if (p->mgroups)
			fprintf(out, "  %u multicast group%s", p->mgroups, p->mgroups == 1 ? "" : "s");
		if (!p->full && !p->limited && !p->both)
			fprintf(out, "  (no member in these dumps)");
		fputc('\n', out);
	}
}

void sm_report_partitions_json(struct sm_json *j, const struct sm_dr_run *r)
{
	if (!r->partitions[0])
		return;
	sm_json_obj_begin(j, "partitions");
	sm_json_str(j, "file", r->partitions);
	sm_json_arr_begin(j, "list");
	for (size_t i = 0; i < r->n_parts; i++) {
		const struct sm_dr_part *p = &r->parts[i];
		sm_json_obj_begin(j, NULL);
		sm_json_str(j, "name", p->name);
		sm_json_uint(j, "pkey", p->pkey);
		sm_json_bool(j, "ipoib", p->ipoib);
		sm_json_uint(j, "mgroups", p->mgroups);
		sm_json_uint(j, "full", p->full);
		sm_json_uint(j, "limited", p->limited);
		sm_json_uint(j, "both", p->both);
		sm_json_obj_end(j);
	}
	sm_json_arr_end(j);
	sm_json_obj_end(j);
}
