/* SPDX-License-Identifier: MIT */
#ifndef SMD_SA_PKEY_H
#define SMD_SA_PKEY_H
/*
 * DOC: partition membership as the SA answers it (issue 14)
 *
 * From the P_Key tables as the SM programmed them (snapshot.h, struct
 * sm_pkey_tables), as OpenSM's SA reads its ports' tables
 * (osm_physp_share_this_pkey, osm_physp_find_common_pkey with
 * allow_both_pkeys off): two ports share a P_Key when both hold it (the
 * 15-bit base) and at least one holds it as a full member. Without tables
 * (no partitions configured) every port is a full member of the default
 * partition, 0xFFFF, as before.
 */
#include <stdbool.h>
#include <stdint.h>

struct sm_pkey_tables;

/*
 * May ports a and b (port indices holding LIDs) exchange packets, and with
 * which P_Key? want: the request names want_pkey, which both must share
 * (*out = want_pkey); else the first P_Key they share, in OpenSM's order
 * (its map keyed by the P_Key in network byte order), as a holds it.
 */
bool sm_sa_pkey_shared(const struct sm_pkey_tables *pk, uint32_t a, uint32_t b, bool want, uint16_t want_pkey,
		       uint16_t *out);

/*
 * May requester req (a port index, SM_NONE when its LID names no port) see
 * a path between a and b? As OpenSM's PathRecord (osm_port_share_pkey
 * between the requester and each end): req shares some P_Key with a and
 * some P_Key with b (not necessarily the same one, nor the path's); a port
 * shares with itself. OpenSM exempts no requester here, trusted or not, and
 * neither do we. Without tables every port may.
 */
bool sm_sa_pkey_requester(const struct sm_pkey_tables *pk, uint32_t req, uint32_t a, uint32_t b);

#endif
