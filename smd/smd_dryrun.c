/* SPDX-License-Identifier: MIT */
/*
 * DOC: `smd --dry-run`: route topology dumps offline and report.
 *
 * Thin driver over smd/dryrun/dryrun.c: it parses nothing itself, only runs
 * the steps, logs between them (message IDs SMD-20xx) and maps failures to
 * exit codes: 0 every plane routed; 1 bad input (config, dump, engine,
 * profile) or a plane no engine could route (the report is still
 * written); 2 usage.
 */
#include "config/options.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "config/smdconf.h"
#include "dryrun/dryrun.h"
#include "dryrun/report.h"
#include "model/partitions.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define PAIR_WARNINGS 10   /* unreachable pairs logged one by one per plane, then a count */

static void log_plane(const struct sm_dr_plane *p)
{
	const struct sm_plane_result *res = &p->route;

	for (unsigned i = 0; i < res->n_attempts; i++) {
		const struct sm_chain_attempt *a = &res->attempts[i];
		if ((int)i != res->engine_index)
			sm_warn("SMD-2010", "plane %u: engine %s passed over: %s", p->plane,
				a->engine ? a->engine : "?", a->why);
	}
	if (p->routed)
		sm_notice("SMD-2011", "plane %u (%s): routed by %s in %.2f ms", p->plane, p->dump,
			  res->engine ? res->engine : "?", res->route_seconds * 1e3);
	else
		sm_err("SMD-2012", "plane %u (%s): no engine of the chain could route it", p->plane,
		       p->dump);
	if (p->lid_ports_assigned)
		sm_notice("SMD-2013", "plane %u: %u ports had no LID in the dump and got one from smd "
			  "(e.g. '%s' port %u -> LID %u)", p->plane, p->lid_ports_assigned,
			  p->lid_examples[0].desc, p->lid_examples[0].port, p->lid_examples[0].lid);
	for (unsigned i = 0; i < p->n_pair_examples && i < PAIR_WARNINGS; i++)
		sm_warn("SMD-2014", "plane %u: unreachable pair: '%s' port %u (LID %u) -> '%s' port %u "
			"(LID %u): no cable path between them", p->plane,
			p->pair_examples[i][0].desc, p->pair_examples[i][0].port,
			p->pair_examples[i][0].lid, p->pair_examples[i][1].desc,
			p->pair_examples[i][1].port, p->pair_examples[i][1].lid);
	if (p->disconnected_pairs > p->n_pair_examples)
		sm_warn("SMD-2015", "plane %u: ... and %" PRIu64 " more unreachable pairs (%u hosts in "
			"%u disconnected parts)", p->plane, p->disconnected_pairs - p->n_pair_examples,
			p->hosts, p->parts);
}

static int write_report(const char *path, int json, const struct sm_dr_run *run)
{
	int to_stdout = !strcmp(path, "-");
	FILE *out = to_stdout ? stdout : fopen(path, "w");
	int rc;

	if (!out) {
		rc = -errno;
		sm_err("SMD-2020", "cannot write the report to %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = json ? sm_report_write_json(out, run) : sm_report_write_text(out, run);
	if (!to_stdout && fclose(out) && !rc)
		rc = -EIO;
	if (rc)
		sm_err("SMD-2020", "cannot write the report to %s: %s", path, strerror(-rc));
	return rc;
}

int smd_dry_run(const struct smd_opts *o)
{
	struct smd_conf *c = NULL;
	struct sm_dryrun *d = NULL;
	const struct sm_partitions *parts;
	char err[1024] = "", warn[512] = "";
	double t0 = sm_mono_sec();
	/* --json alone means a JSON report on stdout */
	const char *report = o->report ? o->report : o->json ? "-" : NULL;
	int status = 1, rc;

	if (!o->n_dumps) {
		fprintf(stderr, "smd: --dry-run needs at least one -t DUMP (one per plane)\n"
				"Usage: smd --dry-run -t DUMP [-t DUMP ...] [-R ENGINE[,ENGINE...]] "
				"[--profile FILE] [--partitions FILE] [-c FILE] [--lfts-out FILE [--lfts-format dump|compact]] [--report FILE|-] [--json]\n");
		return 2;
	}
	if (o->lfts_format && strcmp(o->lfts_format, "dump") && strcmp(o->lfts_format, "compact")) {
		fprintf(stderr, "smd: --lfts-format: '%s' is neither dump nor compact\n", o->lfts_format);
		return 2;
	}
	if (o->config)
		rc = smd_conf_load(o->config, &c, err, sizeof(err));
	else
		rc = (c = smd_conf_new()) ? 0 : -ENOMEM;
	if (rc) {
		sm_err("SMD-2001", "%s", err[0] ? err : strerror(-rc));
		return 1;
	}
	if (o->partitions) {
		/* a bad partitions file is bad input (exit 1), not a usage error */
		struct sm_partitions *ps = NULL;
		if ((rc = sm_partitions_load(o->partitions, &ps, err, sizeof(err)))) {
			sm_err("SMD-2018", "%s", err[0] ? err : strerror(-rc));
			smd_conf_free(c);
			return 1;
		}
		sm_partitions_free(ps);
	}
	if (smd_conf_apply_opts(c, o, err, sizeof(err))) {
		sm_err("SMD-2002", "%s", err);
		smd_conf_free(c);
		return 2;
	}
	sm_log_set_level(c->log_level);

	d = sm_dryrun_new();
	if (!d) {
		sm_err("SMD-2003", "out of memory");
		goto out;
	}
	if (o->config)
		snprintf(d->run.config, sizeof(d->run.config), "%s", o->config);
	rc = sm_dryrun_load(d, o->dumps, o->n_dumps, err, sizeof(err));
	if (rc) {
		sm_err("SMD-2004", "%s", err);
		goto out;
	}
	rc = sm_dryrun_lids(d, (unsigned)c->lmc, err, sizeof(err));
	if (rc) {
		sm_err("SMD-2005", "%s", err);
		goto out;
	}
	if (o->profile) {
		rc = sm_dryrun_profile(d, o->profile, warn, sizeof(warn), err, sizeof(err));
		if (rc) {
			sm_err("SMD-2006", "%s", err[0] ? err : strerror(-rc));
			goto out;
		}
		if (warn[0])
			sm_warn("SMD-2007", "%s", warn);
	}
	/* the report's partitions section and groups: a configured file's (not the default partition) */
	parts = c->partition_config_file ? c->partitions : NULL;
	if (parts && sm_dryrun_partitions(d, parts)) {
		sm_err("SMD-2019", "out of memory");
		goto out;
	}
	/* the LFT file, asked for now, is written while the planes route (if this fails: after routing) */
	if (o->lfts_out)
		(void)sm_dryrun_lfts_request(d, o->lfts_out, o->lfts_format && !strcmp(o->lfts_format, "compact"),
					     !report);
	rc = sm_dryrun_route(d, c, err, sizeof(err));
	if (rc && rc != -EHOSTUNREACH) {
		sm_err("SMD-2008", "%s", err);
		goto out;
	}
	for (unsigned i = 0; i < d->run.n_planes; i++)
		log_plane(&d->run.planes[i]);
	/* --mcast-groups N: synthetic groups; else with --partitions, their IPoIB broadcast groups */
	for (unsigned i = 0; i < d->run.n_planes && (o->mcast_groups || parts); i++) {
		struct sm_dr_mcast *mc = &d->run.planes[i].mc;
		rc = sm_dr_mcast_plane(d->f, d->run.planes[i].plane, o->mcast_groups,
				       o->mcast_groups ? NULL : parts, mc, err, sizeof(err));
		if (rc) {
			sm_err("SMD-2018", "plane %u: %s", d->run.planes[i].plane, err);
			goto out;
		}
		sm_notice("SMD-2019", "plane %u: %u multicast groups, trees in %.2f ms, roots on %u switches "
			  "(%u to %u groups per spine), depth %u", d->run.planes[i].plane, mc->groups, mc->route_s * 1e3,
			  mc->roots, mc->spine_min, mc->spine_max, mc->depth_max);
	}
	if (report) {
		rc = sm_dryrun_metrics(d, 0, o->seed);
		if (rc) {
			sm_err("SMD-2009", "route metrics: %s", strerror(-rc));
			goto out;
		}
	}
	if (o->lfts_out) {
		rc = sm_dryrun_write_lfts(d, o->lfts_out, o->lfts_format && !strcmp(o->lfts_format, "compact"), err,
					  sizeof(err));
		if (rc) {
			sm_err("SMD-2016", "cannot write the LFTs: %s", err);
			goto out;
		}
	}
	d->run.t.total = sm_mono_sec() - t0;
	if (report && write_report(report, o->json, &d->run))
		goto out;
	status = d->run.all_routed ? 0 : 1;
	sm_info("SMD-2017", "dry-run done in %.1f ms (load %.1f, routing %.1f, metrics %.1f, LFT file %.1f)",
		d->run.t.total * 1e3, d->run.t.load * 1e3, d->run.t.route * 1e3,
		d->run.t.metrics * 1e3, d->run.t.write * 1e3);
	if (o->lfts_out) {
		struct stat st;
		sm_info("SMD-2021", "LFT file: %lld bytes, writer CPU %.1f ms",
			strcmp(o->lfts_out, "-") && !stat(o->lfts_out, &st) ? (long long)st.st_size : -1LL,
			d->lfts_cpu * 1e3);
	}
out:
	sm_dryrun_free(d);
	smd_conf_free(c);
	return status;
}
