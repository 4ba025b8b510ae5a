/* SPDX-License-Identifier: MIT */
#ifndef SMD_REPORT_H
#define SMD_REPORT_H
/*
 * DOC: dry-run results and the route-quality report
 *
 * struct sm_dr_run is everything a dry-run found, per plane: the fabric
 * counts, the LIDs kept from the dump or assigned by smd, which engine of
 * the chain routed (and why earlier ones were passed over), the parts of a
 * disconnected plane, the route metrics (routing/metrics.h) and, with a
 * traffic profile, the max link load before and after. It is filled by
 * smd/dryrun/dryrun.c and is self-contained: examples carry their GUIDs and
 * descriptions, so the report writers need no fabric.
 *
 * Two renderings: human text and JSON. The JSON layout is a stable,
 * versioned contract ("version": 1; keys documented in smd.yaml(5),
 * section DRY-RUN REPORT): keys are only ever added.
 */
#include <stdint.h>
#include <stdio.h>

#include "model/fabric.h"
#include "model/hosts.h"
#include "routing/metrics.h"
#include "routing/registry.h"

#define SM_DR_REPORT_VERSION 1
#define SM_DR_EXAMPLES 10       /* examples kept per list (LIDs, unreachable pairs) */
#define SM_DR_NAME_MAX 256

struct sm_dr_endpoint {
	uint64_t guid;              /* port GUID */
	uint16_t lid;
	uint8_t port;
	char desc[SM_DESC_MAX + 1];
};

struct sm_dr_plane {
	unsigned plane;
	char name[32];
	char dump[SM_DR_NAME_MAX];
	struct sm_fabric_counts counts;

	/* LIDs */
	uint32_t lid_ports_kept;    /* ports whose LID came from the dump */
	uint32_t lid_ports_assigned;/* ports smd gave a LID */
	uint32_t lids_assigned;     /* LIDs smd gave (LMC ranges counted) */
	unsigned n_lid_examples;
	struct sm_dr_endpoint lid_examples[SM_DR_EXAMPLES];

	/* connectivity (cables), independent of routing */
	uint32_t hosts;             /* CA/router ports with a LID */
	uint32_t parts;             /* connected parts holding at least one host */
	uint64_t disconnected_pairs;/* ordered host pairs in different parts */
	unsigned n_pair_examples;
	struct sm_dr_endpoint pair_examples[SM_DR_EXAMPLES][2];

	/* routing */
	int routed;                 /* an engine's output was accepted */
	struct sm_plane_result route;

	/* metrics (only with a report) */
	int have_metrics;
	struct sm_route_metrics m;

	/* traffic profile */
	int have_load;
	size_t n_flows;             /* profile flows in this plane */
	double flow_weight;
	double load_before;         /* max link load: chain routed without the profile */
	double load_after;          /* ... and with it */
};

struct sm_dr_run {
	char chain[SM_DR_NAME_MAX];
	char config[SM_DR_NAME_MAX];    /* "" when no -c */
	char profile[SM_DR_NAME_MAX];   /* "" when none */
	char lfts_out[SM_DR_NAME_MAX];  /* "" when none */
	uint64_t seed;
	unsigned n_random;
	unsigned n_planes;
	int all_routed;
	struct sm_dr_plane planes[SM_MAX_PLANES];
	int have_health;                /* plane health computed (with the metrics, 2+ planes) */
	struct sm_planes_health health; /* asymmetry between planes (hosts.h) */
	struct {
		double load, lids, route, metrics, profile, write, total;  /* seconds */
	} t;
};

/* Human-readable report. 0 or -EIO. */
int sm_report_write_text(FILE *out, const struct sm_dr_run *r);
/* JSON report (pretty-printed). 0, -EIO or -EINVAL (emitter misuse: a bug). */
int sm_report_write_json(FILE *out, const struct sm_dr_run *r);

#endif
