/* SPDX-License-Identifier: MIT */
/*
 * DOC: the bring-up summary, as text or JSON (sm.h struct sm_summary)
 */
#include "sm/sm.h"

#include <inttypes.h>
#include <stdio.h>

void sm_summary_print(FILE *out, const struct sm_summary *s)
{
	const struct sm_txn_stats *x = &s->txn;
	fprintf(out, "fabric: %u nodes (%u switches, %u CAs%s), %u links, %u LIDs (top %u), SM LID %u\n",
		s->counts.nodes, s->counts.switches, s->counts.cas, s->counts.routers ? ", routers" : "",
		s->counts.links, s->counts.lids, s->top_lid, s->sm_lid);
	fprintf(out, "sweeps: %u%s; unresponsive ports: %u\n", s->sweeps,
		s->sweeps > 1 ? " (fabric changed during the sweep)" : "", s->unresponsive);
	fprintf(out, "lids: %u kept from file, %u kept from fabric, %u new, %u moved, %u conflicts\n",
		s->lids.from_file, s->lids.from_fabric, s->lids.fresh, s->lids.moved, s->lids.conflicts);
	fprintf(out, "routing: %s\n", s->engine ? s->engine : "-");
	fprintf(out, "smps: %" PRIu64 " sent, %" PRIu64 " retried, %" PRIu64 " lost, %" PRIu64
		" errors, %" PRIu64 " late, %" PRIu64 " dropped (malformed/mismatched/unknown); up to %u in flight\n",
		x->sent, x->retried, x->timed_out, x->mad_errors, x->late,
		x->malformed + x->mismatched + x->unknown_tid + x->duplicate, x->max_outstanding);
	if (x->adaptive_retries)
		fprintf(out, "  %" PRIu64 " of the retries beyond the configured count (lossy fabric)\n",
			x->adaptive_retries);
	fprintf(out, "rejected answers:");
	int any = 0;
	for (unsigned k = 1; k < SM_CHK_COUNT; k++)
		if (x->rejected[k]) {
			fprintf(out, "%s %s %" PRIu64, any ? "," : "", sm_check_kind_name(k), x->rejected[k]);
			any = 1;
		}
	fprintf(out, "%s\n", any ? "" : " none");
	for (unsigned a = 0; a < SM_TXN_A_COUNT; a++) {
		const struct sm_txn_attr_stats *as = &x->attr[a];
		if (!as->sent)
			continue;
		fprintf(out, "  %-22s %8" PRIu64 " sent %6" PRIu64 " retried %6" PRIu64 " lost\n",
			sm_txn_attr_slot_name(a), as->sent, as->retried, as->timed_out);
	}
	fprintf(out, "lft: %u blocks written (%u switches), %u blocks read, %u SwitchInfo sets\n",
		s->lft_blocks_written, s->lft_switches_written, s->lft_blocks_read, s->switchinfo_sets);
	if (s->mft.groups || s->mft.blocks_written || s->mft.blocks_read)   /* only with a multicast group set */
		fprintf(out, "mft: %u groups, %u blocks written (%u switches), %u blocks read, %" PRIu64
			" members not in the fabric; trees %.3f s, programming %.3f s\n", s->mft.groups,
			s->mft.blocks_written, s->mft.switches_written, s->mft.blocks_read, s->mft.missing,
			s->mft.compute_s, s->mft.program_s);
	if (s->lft_switches_trusted || s->lft_switches_unknown || s->psc_cleared)
		fprintf(out, "state: %u switches' LFTs known from the last sweep, %u unknown; %u PortStateChange cleared\n",
			s->lft_switches_trusted, s->lft_switches_unknown, s->psc_cleared);
	if (s->incremental) {
		fprintf(out, "incremental sweep: ports of %u switches read, %u links removed", s->delta_switches_read,
			s->delta_links_down);
		if (s->delta_links_up || s->delta_nodes_new || s->delta_switches_gone)
			fprintf(out, ", %u links up (%u nodes behind them), %u switches gone", s->delta_links_up,
				s->delta_nodes_new, s->delta_switches_gone);
		fputc('\n', out);
	}
	fprintf(out, "portinfo: %u LID sets, %u state sets; %u/%u link ports ACTIVE; %u failed sets\n",
		s->portinfo_lid_sets, s->portinfo_state_sets, s->active_ports, s->link_ports, s->set_errors);
	if (s->pkey_ports)
		fprintf(out, "pkeys: %u ports' P_Key tables managed: %u blocks read, %u written\n", s->pkey_ports,
			s->pkey_blocks_read, s->pkey_blocks_written);
	if (s->portcfg_pi_sets || s->sl2vl_gets || s->sl2vl_sets || s->vlarb_gets || s->vlarb_sets)
		fprintf(out, "portcfg: %u PortInfo sets; SL2VL %u read, %u written; VLArb %u read, %u written; "
			"%u switch ports known from the last sweep\n", s->portcfg_pi_sets, s->sl2vl_gets, s->sl2vl_sets,
			s->vlarb_gets, s->vlarb_sets, s->tables_trusted);
	if (s->mkey_foreign || s->mkey_violations)
		fprintf(out, "m_key: %u ports protected by an M_Key smd does not hold; %" PRIu64
			" M_Key violations counted by ports\n", s->mkey_foreign, s->mkey_violations);
	if (s->incomplete)
		fprintf(out, "INCOMPLETE: %u answers lost or Sets failed (first: %s); %u nodes and %u links kept "
			"from the last sweep\n", s->incomplete, s->incomplete_why, s->merged_nodes, s->merged_links);
	if (s->state_errors)
		fprintf(out, "state: NOT SAVED: %s\n", s->state_err);
	fprintf(out, "time:");
	for (unsigned p = 0; p < SM_PH_COUNT; p++)
		fprintf(out, " %s %.3f s,", sm_phase_name(p), s->phase_s[p]);
	fprintf(out, " total %.3f s\n", s->total_s);
}

void sm_summary_print_json(FILE *out, const struct sm_summary *s)
{
	const struct sm_txn_stats *x = &s->txn;
	fprintf(out, "{\"nodes\":%u,\"switches\":%u,\"cas\":%u,\"routers\":%u,\"links\":%u,\"lids\":%u,"
		"\"top_lid\":%u,\"sm_lid\":%u,\"sweeps\":%u,\"unresponsive\":%u,",
		s->counts.nodes, s->counts.switches, s->counts.cas, s->counts.routers, s->counts.links,
		s->counts.lids, s->top_lid, s->sm_lid, s->sweeps, s->unresponsive);
	fprintf(out, "\"lid_assign\":{\"from_file\":%u,\"from_fabric\":%u,\"new\":%u,\"moved\":%u,\"conflicts\":%u},",
		s->lids.from_file, s->lids.from_fabric, s->lids.fresh, s->lids.moved, s->lids.conflicts);
	fprintf(out, "\"engine\":\"%s\",", s->engine ? s->engine : "");
	fprintf(out, "\"smps\":{\"sent\":%" PRIu64 ",\"retried\":%" PRIu64 ",\"lost\":%" PRIu64
		",\"errors\":%" PRIu64 ",\"late\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"max_in_flight\":%u,",
		x->sent, x->retried, x->timed_out, x->mad_errors, x->late,
		x->malformed + x->mismatched + x->unknown_tid + x->duplicate, x->max_outstanding);
	fprintf(out, "\"adaptive_retries\":%" PRIu64 ",\"rejected\":{", x->adaptive_retries);
	for (unsigned k = 1; k < SM_CHK_COUNT; k++)
		fprintf(out, "%s\"%s\":%" PRIu64, k > 1 ? "," : "", sm_check_kind_name(k), x->rejected[k]);
	fprintf(out, "},\"by_attr\":{");
	int first = 1;
	for (unsigned a = 0; a < SM_TXN_A_COUNT; a++) {
		const struct sm_txn_attr_stats *as = &x->attr[a];
		if (!as->sent)
			continue;
		fprintf(out, "%s\"%s\":{\"sent\":%" PRIu64 ",\"retried\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
			first ? "" : ",", sm_txn_attr_slot_name(a), as->sent, as->retried, as->timed_out);
		first = 0;
	}
	fprintf(out, "}},\"lft_blocks_written\":%u,\"lft_switches_written\":%u,\"lft_blocks_read\":%u,"
		"\"switchinfo_sets\":%u,\"portinfo_lid_sets\":%u,\"portinfo_state_sets\":%u,"
		"\"link_ports\":%u,\"active_ports\":%u,\"set_errors\":%u,\"state_errors\":%u,"
		"\"lft_switches_trusted\":%u,\"lft_switches_unknown\":%u,\"psc_cleared\":%u,"
		"\"incremental\":%u,\"delta_switches_read\":%u,\"delta_links_down\":%u,\"delta_links_up\":%u,"
		"\"delta_nodes_new\":%u,\"delta_switches_gone\":%u,"
		"\"mkey_foreign\":%u,\"mkey_violations\":%" PRIu64 ",\"incomplete\":%u,\"merged_nodes\":%u,"
		"\"merged_links\":%u,",
		s->lft_blocks_written, s->lft_switches_written, s->lft_blocks_read, s->switchinfo_sets,
		s->portinfo_lid_sets, s->portinfo_state_sets, s->link_ports, s->active_ports, s->set_errors,
		s->state_errors, s->lft_switches_trusted, s->lft_switches_unknown, s->psc_cleared,
		s->incremental, s->delta_switches_read, s->delta_links_down, s->delta_links_up, s->delta_nodes_new,
		s->delta_switches_gone, s->mkey_foreign, s->mkey_violations,
		s->incomplete, s->merged_nodes, s->merged_links);
	if (s->mft.groups || s->mft.blocks_written || s->mft.blocks_read)   /* keys only with a multicast group set */
		fprintf(out, "\"mft\":{\"groups\":%u,\"blocks_written\":%u,\"switches_written\":%u,\"blocks_read\":%u,"
			"\"missing\":%" PRIu64 "},", s->mft.groups, s->mft.blocks_written, s->mft.switches_written,
			s->mft.blocks_read, s->mft.missing);
	if (s->pkey_ports)   /* only with partitions configured: the output without them is unchanged */
		fprintf(out, "\"pkey_ports\":%u,\"pkey_blocks_read\":%u,\"pkey_blocks_written\":%u,", s->pkey_ports,
			s->pkey_blocks_read, s->pkey_blocks_written);
	fprintf(out, "\"portcfg\":{\"portinfo_sets\":%u,\"sl2vl_gets\":%u,\"sl2vl_sets\":%u,\"vlarb_gets\":%u,"
		"\"vlarb_sets\":%u,\"tables_trusted\":%u},\"seconds\":{", s->portcfg_pi_sets, s->sl2vl_gets,
		s->sl2vl_sets, s->vlarb_gets, s->vlarb_sets, s->tables_trusted);
	for (unsigned p = 0; p < SM_PH_COUNT; p++)
		fprintf(out, "\"%s\":%.6f,", sm_phase_name(p), s->phase_s[p]);
	fprintf(out, "\"total\":%.6f}}\n", s->total_s);
}
