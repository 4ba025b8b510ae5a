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
#include "dryrun/reference.h"
#include "dryrun/mcast.h"

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

	/* what a good value is for this tree (reference.h) */
	struct sm_dr_shape shape;
	char tight_leaf[SM_DESC_MAX + 1]; /* description of shape.tight_leaf, "" none */
	char tight_last[SM_DESC_MAX + 1]; /* description of shape.cut.last_leaf, "" none */
	char bis_leaf[SM_DESC_MAX + 1];   /* description of shape.bis.first_leaf, "" none */
	char ud_from[SM_DESC_MAX + 1], ud_to[SM_DESC_MAX + 1]; /* shape.cut.ud_from/ud_to, "" none */
	int have_ref;               /* ref holds the complete tree's metrics */
	struct sm_route_metrics ref;
	char ref_why[128];          /* no reference: why */

	/* traffic profile */
	int have_load;
	size_t n_flows;             /* profile flows in this plane */
	double flow_weight;
	double load_before;         /* max link load: chain routed without the profile */
	double load_after;          /* ... and with it */
	double load_bound;          /* no routing does better: the busiest host's own link */

	/* multicast (--mcast-groups N; mcast.h) */
	struct sm_dr_mcast mc;
};

/* Whom the plane-health counts are about (hosts.h examples, resolved to names). */
struct sm_dr_health_names {
	char no_nic[SM_HEALTH_EXAMPLES][SM_DESC_MAX + 1];    /* hosts without a NIC in the plane */
	char below[SM_HEALTH_EXAMPLES][SM_DESC_MAX + 1];     /* hosts under 90% of the fair share */
	char thin_leaf[SM_HEALTH_EXAMPLES][SM_DESC_MAX + 1]; /* leaves with fewer uplinks than a full one */
};

/* A partition as the dry-run resolved it against the dumps (--partitions; dryrun/partitions.c). */
struct sm_dr_part {
	char name[64];
	uint16_t pkey;              /* 15 bits */
	int ipoib;
	uint32_t mgroups;           /* multicast groups it declares (IPoIB broadcast, mgid= lines, per scope) */
	uint32_t full, limited, both;  /* member ports, every plane (SELF names no port offline) */
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
	struct sm_dr_health_names health_names[SM_MAX_PLANES];
	char partitions[SM_DR_NAME_MAX];  /* the --partitions file, "" when none */
	struct sm_dr_part *parts;       /* n_parts, freed by sm_dryrun_free() */
	size_t n_parts;
	struct {
		double load, lids, route, metrics, profile, write, total;  /* seconds */
	} t;
};

/*
 * Human-readable report (report_text.c): each figure with its meaning and
 * the good value for this tree; with several planes, what all planes share
 * is printed once and each plane only where it differs. 0, -EIO, -ENOMEM.
 */
int sm_report_write_text(FILE *out, const struct sm_dr_run *r);
/* The partitions section (dryrun/partitions.c): nothing without --partitions. */
struct sm_json;
void sm_report_partitions_text(FILE *out, const struct sm_dr_run *r);
void sm_report_partitions_json(struct sm_json *j, const struct sm_dr_run *r);
/* JSON report (pretty-printed). 0, -EIO or -EINVAL (emitter misuse: a bug). */
int sm_report_write_json(FILE *out, const struct sm_dr_run *r);

#endif
