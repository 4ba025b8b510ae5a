/* SPDX-License-Identifier: MIT */
#ifndef SMD_MODEL_PARTITIONS_H
#define SMD_MODEL_PARTITIONS_H
/*
 * DOC: partitions (issue 14), parsed from OpenSM's partitions.conf grammar
 * or from smd.yaml's partitions section, and resolved against a fabric
 *
 * CONTRACT between the partitions work (parser, P_Key tables, SA
 * membership) and the multicast work (one IPoIB broadcast group per
 * partition with `ipoib`, and the groups of `mgid=` lines). Change it only
 * if you must, and say so in the commit message.
 *
 * A struct sm_partitions is immutable once loaded and may be shared by
 * threads (the daemon swaps the pointer on reload). pkey is 15 bits (the
 * membership bit is never stored here; SM_PART_FULL sets it on the wire).
 * Membership per port: FULL (bit 15 set in the table entry), LIMITED (bit
 * clear), BOTH (both entries: OpenSM's allow_both_pkeys), or NONE.
 * Every element keeps the file and line it came from (errors and
 * `smctl config` name them).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

enum sm_part_membership {
	SM_PART_NONE = 0,
	SM_PART_LIMITED = 1,
	SM_PART_FULL = 2,
	SM_PART_BOTH = 3,
};

/* Who a member line names. */
enum sm_part_who {
	SM_PART_WHO_GUID = 0,        /* one port GUID */
	SM_PART_WHO_ALL,             /* every CA, switch and router port */
	SM_PART_WHO_ALL_CAS,
	SM_PART_WHO_ALL_SWITCHES,
	SM_PART_WHO_ALL_ROUTERS,
	SM_PART_WHO_SELF,            /* the SM's own port */
};

struct sm_part_member {
	enum sm_part_who who;
	uint64_t guid;               /* SM_PART_WHO_GUID only */
	enum sm_part_membership m;   /* never NONE */
	unsigned line;
	bool indx0;                  /* the definition's `indx0` flag: this P_Key goes to index 0 of the port */
};

/* A multicast group a partition declares (the `ipoib` flag or an `mgid=` line), with OpenSM's defaults applied. */
struct sm_part_mgroup {
	uint8_t mgid[16];            /* for `ipoib`: ff1<scope>:401b:<pkey>::ffff:ffff (IPv4 broadcast) */
	bool ipoib;                  /* the partition's IPoIB broadcast group */
	uint8_t mtu;                 /* IBA MTU code, default 4 (2048) */
	uint8_t rate;                /* IBA rate code, default 3 (10 Gb/s) */
	uint8_t sl;                  /* default 0 */
	uint8_t scope;               /* default 2 (link-local) */
	uint32_t qkey;               /* default 0x0B1B (IPoIB) */
	uint8_t tclass;
	uint32_t flow_label;
	uint8_t hop_limit;
	unsigned line;
};

struct sm_partition {
	char name[64];
	uint16_t pkey;               /* 15 bits, 0x0001..0x7fff */
	bool ipoib;                  /* the `ipoib` flag (its broadcast group is in mgroups) */
	enum sm_part_membership defmember;   /* `defmember=`, default LIMITED (as OpenSM) */
	struct sm_part_member *members;
	size_t n_members;
	struct sm_part_mgroup *mgroups;
	size_t n_mgroups;
	unsigned line;
};

struct sm_partitions {
	char file[256];              /* where it came from ("(default)" for the built-in one) */
	struct sm_partition *v;      /* v[0] is the default partition 0x7fff when the file names it or none is given */
	size_t n;
};

/*
 * The built-in set used when no file is configured: OpenSM's default
 * (Default=0x7fff, ipoib : ALL=full ;) with its broadcast group.
 */
int sm_partitions_default(struct sm_partitions **out);
/*
 * Parse OpenSM's grammar from text (len bytes, name for messages). On error
 * -EINVAL and "NAME:LINE: message" in err; nothing is allocated.
 */
int sm_partitions_parse(const char *text, size_t len, const char *name, struct sm_partitions **out, char *err,
			size_t errlen);
/* Read and parse a file (regular files only, bounded size). */
int sm_partitions_load(const char *path, struct sm_partitions **out, char *err, size_t errlen);
void sm_partitions_free(struct sm_partitions *p);   /* accepts NULL */

/*
 * Port index port of f: its membership in partition part (the last member
 * line that names it, as OpenSM: `A=0x10: ALL=full; A=0x10: SELF=limited;`
 * leaves the SM's port limited; SELF is sm_port). Switch external ports are
 * not members of anything (they carry P_Keys only for enforcement).
 */
enum sm_part_membership sm_partition_port(const struct sm_partition *part, const struct sm_fabric *f,
					  uint32_t port, uint32_t sm_port);

/*
 * The P_Key (membership bit set for a full member) that goes to index 0 of
 * end port `port`'s table, 0 when none does (then the default partition's
 * does): OpenSM's indx0 (osm_prtn_add_port, osm_pkey_mgr.c). The member
 * lines naming the port are taken in file order: one of a partition
 * flagged `indx0` sets it, a later one of the same P_Key without the flag
 * clears it, other partitions' lines leave it.
 */
uint16_t sm_partitions_port_indx0(const struct sm_partitions *ps, const struct sm_fabric *f, uint32_t port,
				  uint32_t sm_port);

#endif
