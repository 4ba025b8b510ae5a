/* SPDX-License-Identifier: MIT */
#ifndef SMD_LIDMGR_H
#define SMD_LIDMGR_H
/*
 * DOC: LID manager
 *
 * Owns the GUID -> LID table that keeps LIDs stable across SM restarts, and
 * the rules that turn (persisted table, LIDs found in the fabric) into one
 * conflict-free assignment per plane. smd's modes (--once, one plane or
 * several, and the daemon) decide LIDs with sm/planelid.h, which reads and
 * writes its files through this table; sm_lidmgr_assign() then only keeps
 * the LIDs it was handed (cfg.lid_want), or decides them itself for callers
 * without that hook (library users, tests).
 *
 * Data flow: sm_lidmgr_load() reads a guid2lid file (ours or OpenSM's; both
 * use "0xGUID FIRST_LID LAST_LID" lines, numbers in any C base, '#' starts a
 * comment; ours is sealed: lib/statefile.h's "# smd-state v1 crc32=" header
 * line first, then OpenSM's layout, each entry followed by a blank line,
 * which is what OpenSM's own parser needs to read it back), sm_lidmgr_assign() gives every LID-bearing port of one plane a
 * LID (writing it into the fabric with sm_fabric_set_lid) and updates the
 * table, sm_lidmgr_save() writes the table back atomically (temp file,
 * fsync, rename, fsync of the directory).
 *
 * Untrusted file policy: a sealed file whose checksum or version does not
 * match, any NUL byte (a file of zeros), or an unsealed file without a
 * single entry is refused with -EINVAL: never read as an empty table. An
 * unsealed file that parses (an older smd's, OpenSM's) is accepted with
 * legacy and dirty set, so the caller rewrites it sealed. A line that does not parse (bad GUID or number,
 * wrong field count, LID outside 1..0xBFFF, a range that is not 2^k LIDs
 * aligned on 2^k, a GUID listed twice) REFUSES the whole file with
 * "FILE:LINE: reason" and -EINVAL: a damaged LID file is a reason to stop
 * and ask, not to silently renumber a running fabric. LIDs shared by two
 * GUIDs are NOT an error at load time (planes are separate LID spaces, so
 * that is legal in a multi-plane file); they are resolved per plane by
 * sm_lidmgr_assign() and reported.
 *
 * Assignment rules, applied per plane, deterministic for a given input:
 *  - which ports: switch port 0 (always LMC 0: base port 0 has one LID),
 *    and every CA/router port with a known GUID (the sweep sets GUIDs only
 *    on ports it reached), with 2^lmc LIDs aligned on 2^lmc;
 *  - 1. the persisted LID, if aligned and free; 2. the LID the port already
 *    holds in the fabric, if aligned and free; 3. the lowest free aligned
 *    range. Within a step, ports are taken in port-GUID order, so on a
 *    collision the lowest port GUID keeps the LID and the others move;
 *  - GUIDs of the table that are not in the fabric keep their LIDs
 *    reserved (a port that is down today gets its LID back tomorrow); a live
 *    port that already holds such a LID in the fabric keeps it (live beats
 *    absent) and the collision is reported;
 *  - every collision, misalignment or move is reported through the note
 *    callback (the library does not log).
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"
#include "lib/err.h"

struct sm_lid_entry {
	uint64_t guid;
	uint16_t first, last;   /* inclusive LID range */
	uint32_t line;          /* line of the loaded file, 0 if added by assign */
};

struct sm_lidmgr {
	struct sm_lid_entry *e;   /* sorted by guid once loaded/assigned */
	uint32_t n, cap;
	int dirty;                /* table differs from what was loaded (or must be rewritten sealed) */
	int legacy;               /* loaded from a file without the smd-state header */
};

#define SM_LIDMGR_FILE_MAX (256u << 20)   /* MAX_ENTRIES lines of OpenSM's layout, with room */

struct sm_lidmgr_stats {
	uint32_t ports;        /* LID-bearing ports seen */
	uint32_t from_file;    /* kept the persisted LID */
	uint32_t from_fabric;  /* kept the LID found in the fabric */
	uint32_t fresh;        /* newly allocated */
	uint32_t moved;        /* had a LID in the fabric and got a different one */
	uint32_t conflicts;    /* collisions and misalignments resolved */
	uint32_t lids;         /* LIDs assigned (counting LMC ranges) */
};

/* Receives human-readable notes (collisions, moves); may be NULL. */

void sm_lidmgr_init(struct sm_lidmgr *m);
void sm_lidmgr_clear(struct sm_lidmgr *m);   /* frees entries; accepts NULL */
/* dst (cleared first) becomes a copy of src. 0 or -ENOMEM (dst empty). */
int sm_lidmgr_copy(struct sm_lidmgr *dst, const struct sm_lidmgr *src);

/*
 * Load a guid2lid file, replacing the table. -ENOENT if the file does not
 * exist (the table is then empty: a first start), -EINVAL with "FILE:LINE:
 * reason" in err on bad or damaged content, a non-regular file or one over
 * SM_LIDMGR_FILE_MAX (table left empty), other -errno on I/O.
 */
int sm_lidmgr_load(struct sm_lidmgr *m, const char *path, char *err, size_t errlen);
int sm_lidmgr_load_stream(struct sm_lidmgr *m, FILE *in, const char *name, char *err, size_t errlen);

/* Append an entry (the table is then unsorted until the caller sorts it). 0 or -ENOMEM. */
int sm_lidmgr_add(struct sm_lidmgr *m, uint64_t guid, uint16_t first, uint16_t last);

/* Persisted range of a GUID; 0 and *first untouched if absent. */
int sm_lidmgr_lookup(const struct sm_lidmgr *m, uint64_t guid, uint16_t *first, uint16_t *last);

/*
 * Assign LIDs to every LID-bearing port of `plane` of f, per the rules
 * above. cur_lid/cur_lmc (indexed by port index, may be NULL) are the LIDs
 * the ports hold in the fabric now. Existing LIDs of the plane in f are
 * cleared first. Updates the table (m->dirty set if anything changed).
 * -ENOSPC if the LID space is exhausted, -EINVAL bad lmc, -ENOMEM.
 */
int sm_lidmgr_assign(struct sm_lidmgr *m, struct sm_fabric *f, unsigned plane, unsigned lmc,
		     const uint16_t *cur_lid, const uint8_t *cur_lmc,
		     struct sm_lidmgr_stats *st, sm_note_fn *note, void *note_arg);

/* Write the table, sealed, to `path` atomically; creates the directory if missing. */
int sm_lidmgr_save(const struct sm_lidmgr *m, const char *path, char *err, size_t errlen);
int sm_lidmgr_write_stream(const struct sm_lidmgr *m, FILE *out);

#endif
