/* SPDX-License-Identifier: MIT */
/*
 * DOC: the metrics of lost SMPs and M_Key, and the metrics as Prometheus
 * text for the HTTP endpoint (cmd.h)
 *
 * SMP loss, per plane (label plane="planeN") and attribute (NodeInfo,
 * PortInfo, ... as txn.h's slots), counted by the transaction engine of
 * every light and heavy sweep since the daemon started (dmn_metrics_cycle
 * adds each cycle's part):
 *   smd_smps_lost_total       tries that got no valid answer in time: each
 *                             was retried or, the last one, timed out
 *                             (lost = retried + timed out)
 *   smd_smps_retried_total    re-sends after such a try
 *   smd_smps_timed_out_total  requests given up after their last try
 * and per plane: transport send errors, answers dropped (late, duplicate,
 * mismatched, unknown TID, malformed: they then count as lost) and answers
 * refused by the answer checks, by check (mad/check.h).
 *
 * M_Key, per plane, as the plane's last full discovery read the ports (an
 * incremental sweep reads only some ports, so it does not change them):
 * ports protected by an M_Key smd does not hold, and the sum of the ports'
 * own M_KeyViolations counters (gauges: ports reset their counters); no
 * sample for a plane before its first full discovery.
 */
#include "daemon/cmd.h"
#include "daemon/daemon_priv.h"
#include "ctl/ctl.h"
#include "lib/json.h"
#include "mad/check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void txn_add(struct sm_txn_stats *t, const struct sm_txn_stats *s)
{
	t->submitted += s->submitted;
	t->sent += s->sent;
	t->received += s->received;
	t->completed += s->completed;
	t->mad_errors += s->mad_errors;
	t->retried += s->retried;
	t->timed_out += s->timed_out;
	t->send_errors += s->send_errors;
	t->late += s->late;
	t->duplicate += s->duplicate;
	t->mismatched += s->mismatched;
	t->unknown_tid += s->unknown_tid;
	t->malformed += s->malformed;
	t->unsolicited += s->unsolicited;
	t->unsolicited_dropped += s->unsolicited_dropped;
	t->canceled += s->canceled;
	t->adaptive_retries += s->adaptive_retries;
	for (unsigned k = 0; k < SM_CHK_COUNT; k++)
		t->rejected[k] += s->rejected[k];
	for (unsigned a = 0; a < SM_TXN_A_COUNT; a++) {
		t->attr[a].sent += s->attr[a].sent;
		t->attr[a].completed += s->attr[a].completed;
		t->attr[a].retried += s->attr[a].retried;
		t->attr[a].timed_out += s->attr[a].timed_out;
	}
	if (s->max_outstanding > t->max_outstanding)
		t->max_outstanding = s->max_outstanding;
	if (s->max_per_dest > t->max_per_dest)
		t->max_per_dest = s->max_per_dest;
}

void dmn_metrics_cycle(struct smd_dmn_plane *sp, const struct sm_mp_plane *p)
{
	if (p->light_ran)
		txn_add(&sp->txn_total, &p->light.txn);
	if (p->mft_ran)
		txn_add(&sp->txn_total, &p->mft.txn);
	if (!p->heavy)
		return;
	txn_add(&sp->txn_total, &p->sum.txn);
	if (!p->sum.incremental && p->sum.counts.switches + p->sum.counts.cas) {
		sp->mkey_seen = 1;
		sp->mkey_foreign = p->sum.mkey_foreign;
		sp->mkey_violations = p->sum.mkey_violations;
	}
}

enum attr_field { AF_LOST, AF_RETRIED, AF_TIMED_OUT };

static double attr_value(const struct sm_txn_attr_stats *a, enum attr_field f)
{
	switch (f) {
	case AF_LOST: return (double)(a->retried + a->timed_out);
	case AF_RETRIED: return (double)a->retried;
	case AF_TIMED_OUT: return (double)a->timed_out;
	}
	return 0;
}

/*
 * The SM's role per plane (IBA 14.4 states as a state set: 1 for the
 * plane's state, 0 for the others; a mock plane is not elected and always
 * master), the master's priority, and the takeovers and handovers counted
 * by the election (daemon/ha.c).
 */
static void sm_role_metrics(struct sm_json *j, const struct smd_dmn_status *st)
{
	static const char *const names[] = { "notactive", "discovering", "standby", "master" };
	char pl[16];

	smd_metric_begin(j, "smd_sm_state", "gauge",
			 "1 for the SM's master/standby state in the plane (notactive, discovering, standby, master)");
	for (unsigned i = 0; i < st->n_planes; i++) {
		const struct smd_dmn_plane *sp = &st->planes[i];
		unsigned cur = sp->role.elected ? sp->role.state & 3u : 3u;

		smd_metric_plane_name(i, pl, sizeof(pl));
		for (unsigned s = 0; s < 4; s++)
			smd_metric_sample(j, s == cur ? 1 : 0, "plane", pl, "state", names[s], NULL);
	}
	smd_metric_end(j);
	for (unsigned m = 0; m < 2; m++) {
		smd_metric_begin(j, m ? "smd_sm_handovers_total" : "smd_sm_takeovers_total", "counter",
				 m ? "Times this SM handed mastership to a better SM (HANDOVER) in the plane" :
				 "Times this SM became master of the plane after the master stopped answering");
		for (unsigned i = 0; i < st->n_planes; i++) {
			smd_metric_plane_name(i, pl, sizeof(pl));
			smd_metric_sample(j, (double)(m ? st->planes[i].role.handovers : st->planes[i].role.takeovers),
					  "plane", pl, NULL);
		}
		smd_metric_end(j);
	}
}

void smd_dmn_metrics_more(struct sm_json *j, const struct smd_dmn_status *st)
{
	static const struct { const char *name, *help; enum attr_field f; } by_attr[] = {
		{ "smd_smps_lost_total", "SMP tries that got no valid answer in time (each was retried or, the last, "
		  "timed out)", AF_LOST },
		{ "smd_smps_retried_total", "SMPs sent again after a try got no valid answer in time", AF_RETRIED },
		{ "smd_smps_timed_out_total", "SMP requests given up after their last try", AF_TIMED_OUT },
	};
	static const struct { const char *reason; size_t off; } dropped[] = {
		{ "late", offsetof(struct sm_txn_stats, late) },
		{ "duplicate", offsetof(struct sm_txn_stats, duplicate) },
		{ "mismatched", offsetof(struct sm_txn_stats, mismatched) },
		{ "unknown_tid", offsetof(struct sm_txn_stats, unknown_tid) },
		{ "malformed", offsetof(struct sm_txn_stats, malformed) },
	};
	char pl[16];

	for (size_t m = 0; m < sizeof(by_attr) / sizeof(by_attr[0]); m++) {
		smd_metric_begin(j, by_attr[m].name, "counter", by_attr[m].help);
		for (unsigned i = 0; i < st->n_planes; i++) {
			smd_metric_plane_name(i, pl, sizeof(pl));
			for (unsigned a = 0; a < SM_TXN_A_COUNT; a++)
				smd_metric_sample(j, attr_value(&st->planes[i].txn_total.attr[a], by_attr[m].f), "plane", pl,
						  "attribute", sm_txn_attr_slot_name(a), NULL);
		}
		smd_metric_end(j);
	}
	smd_metric_begin(j, "smd_smp_send_errors_total", "counter", "SMPs the transport could not send");
	for (unsigned i = 0; i < st->n_planes; i++) {
		smd_metric_plane_name(i, pl, sizeof(pl));
		smd_metric_sample(j, (double)st->planes[i].txn_total.send_errors, "plane", pl, NULL);
	}
	smd_metric_end(j);
	smd_metric_begin(j, "smd_smp_answers_dropped_total", "counter",
			 "SMP answers dropped (the request counts them as lost), by reason");
	for (unsigned i = 0; i < st->n_planes; i++) {
		smd_metric_plane_name(i, pl, sizeof(pl));
		for (size_t r = 0; r < sizeof(dropped) / sizeof(dropped[0]); r++)
			smd_metric_sample(j, (double)*(const uint64_t *)((const char *)&st->planes[i].txn_total + dropped[r].off),
					  "plane", pl, "reason", dropped[r].reason, NULL);
	}
	smd_metric_end(j);
	smd_metric_begin(j, "smd_smp_answers_rejected_total", "counter",
			 "SMP answers and facts the answer checks refused, by the check that failed");
	for (unsigned i = 0; i < st->n_planes; i++) {
		smd_metric_plane_name(i, pl, sizeof(pl));
		for (unsigned k = 1; k < SM_CHK_COUNT; k++)
			smd_metric_sample(j, (double)st->planes[i].txn_total.rejected[k], "plane", pl, "check",
					  sm_check_kind_name(k), NULL);
	}
	smd_metric_end(j);
	for (unsigned m = 0; m < 2; m++) {
		smd_metric_begin(j, m ? "smd_mkey_violations" : "smd_mkey_foreign_ports", "gauge",
				 m ? "Sum of the ports' M_KeyViolations counters, as the plane's last full discovery read them" :
				 "Ports protected by an M_Key smd does not hold, in the plane's last full discovery");
		for (unsigned i = 0; i < st->n_planes; i++) {
			const struct smd_dmn_plane *sp = &st->planes[i];
			if (!sp->mkey_seen)
				continue;   /* no full discovery yet: no value rather than a wrong 0 */
			smd_metric_plane_name(i, pl, sizeof(pl));
			smd_metric_sample(j, m ? (double)sp->mkey_violations : sp->mkey_foreign, "plane", pl, NULL);
		}
		smd_metric_end(j);
	}
	sm_role_metrics(j, st);
}

/* The "metrics" reply through the same path as smctl's: JSON, read back, rendered. */
int smd_dmn_metrics_text(struct smd_dmn *d, FILE *out, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	struct smd_jv *v = NULL;
	struct sm_json j;
	uint64_t wait_for = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	sm_json_init(&j, m, 0);
	sm_json_obj_begin(&j, NULL);
	rc = smd_ctl_daemon_request(d, NULL, "metrics", NULL, &j, &wait_for, err, errlen);
	sm_json_obj_end(&j);
	if (!rc)
		rc = sm_json_finish(&j);
	if (fclose(m) && !rc)
		rc = -ENOMEM;
	if (!rc)
		rc = smd_json_parse(buf, len, &v, err, errlen);
	if (!rc)
		rc = smd_metrics_render(out, v, err, errlen);
	smd_jv_free(v);
	free(buf);
	return rc;
}
