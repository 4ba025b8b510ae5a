/* SPDX-License-Identifier: MIT */
#ifndef SMD_LFTFILE_H
#define SMD_LFTFILE_H
/*
 * DOC: LFT files in the dump_lfts / ibroute text format
 *
 * Writer: one block per switch, byte for byte what infiniband-diags'
 * dump_fts (behind dump_lfts) prints for a switch, except that the header
 * names the switch by "Lid N" (as `ibroute LID` does) instead of a DR path
 * from some SM port, which a dry-run does not have:
 *
 *   Unicast lids [0x0-0xTOP] of switch Lid N guid 0x%016x (DESC):
 *     Lid  Out   Destination
 *          Port     Info 
 *   0x0001 003 : (Channel Adapter portguid 0x...: 'DESC')
 *   0x0009 004 : (path #2 out of 2: portguid 0x...)     (LMC > 0)
 *   N valid lids dumped 
 *
 * Entries are printed for LIDs 0..TOP whose port is <= the switch's port
 * count (SM_LFT_NONE = 255 is skipped, as dump_fts does without -a). The
 * "path #k out of n" form follows dump_fts' rule: after a destination whose
 * LMC is > 0, the following LIDs of its range use it (state reset per
 * switch). TOP is the LFT's top LID (LinearFDBTop as an SM would set it).
 * Planes are separated by a "# ..." comment line: OpenSM's file engine
 * (osm_ucast_file.c) skips lines starting with '#' after blanks, and ignores
 * every line that starts neither with "Unicast lids" nor with "0x".
 *
 * Reader: parses that format (dump_lfts output including its trailing
 * warning lines, ibroute output, our files) into per-switch tables keyed
 * by switch GUID, independent of any fabric. Untrusted input: malformed
 * lines are "FILE:LINE: ..." errors, never crashes. Multicast sections
 * ("Multicast mlids ...") are skipped.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/fabric.h"
#include "model/lfts.h"

/*
 * Write every switch of l's plane. With `comment` non-NULL, a line
 * "# COMMENT" is written first. 0 or -EIO (stream error) / -ENOMEM.
 */
int sm_lftfile_write(FILE *out, const struct sm_fabric *f, const struct sm_lfts *l,
		     const char *comment);

/*
 * The compact form (dry-run --lfts-format compact), for tools that do not
 * need dump_lfts' text:
 *
 *   # smd-lfts 2
 *   # COMMENT                                   (any number of '#' lines)
 *   switch 0xGUID lid N top 0xTOP desc DESC     (DESC: the rest of the line)
 *   BLOCK HEX                                   (one line per block of 64 LIDs)
 *
 * BLOCK is the LFT block number (decimal, as in the LinearForwardingTable
 * attribute modifier); HEX has 2 hex digits per LID from BLOCK*64 up to
 * 64 LIDs or TOP, ff = no route (SM_LFT_NONE). Entries are written as the
 * table holds them (dump_lfts leaves out ports above the switch's port
 * count; this form does not).
 *
 * Version 2 (written since issue 17's next scale) is a delta form: a switch's table
 * starts as the table of the switch line before it in the file (all ff for
 * the first; cut to, or filled with ff up to, its own TOP), and its block
 * lines replace the entries they list; blocks equal to that table are left out (a
 * block that routes nothing where the previous switch's did is written, as
 * ff's). On fat trees ~98% of the blocks are left out: 40,960 hosts are
 * ~5 MB per plane instead of 332 MB. Version 1 (still read): every table
 * starts all ff, blocks that route no LID are left out; a plane of the
 * same tree in version 1 is about 35 times smaller than dump_lfts' text.
 * The reader (sm_lftfile_read) takes every form, telling them by the
 * first line.
 */
#define SM_LFTFILE_COMPACT_MAGIC "# smd-lfts"
#define SM_LFTFILE_COMPACT_VERSION 2

/* The delta base of the compact form: the table of the last switch written. */
struct sm_lftc_base {
	bool written;                        /* the format line is out */
	uint32_t top;
	uint8_t row[SM_UNICAST_LID_MAX + 1]; /* [0..top]; SM_LFT_NONE above */
};
void sm_lftc_base_init(struct sm_lftc_base *b);

/* Decimal v at p (no NUL); the end. Shared by the two writers. */
char *sm_lft_put_u(char *p, uint32_t v);

/* The most one switch takes in the compact form. */
#define SM_LFTC_SW_MAX (128 + SM_DESC_MAX + (SM_UNICAST_LID_MAX / 64 + 1) * (8 + 2 * 64))

/*
 * One switch in the compact form (its switch line and the blocks of row
 * [0..top] that differ from base) into buf (SM_LFTC_SW_MAX bytes); base
 * becomes this switch's table. The bytes written.
 */
size_t sm_lftc_put_switch(char *buf, struct sm_lftc_base *base, uint64_t guid, unsigned lid, uint32_t top,
			  const char *desc, const uint8_t *row);

/*
 * Every switch of l's plane in the compact form, after "# COMMENT" when
 * comment is non-NULL; the format line first unless base->written. base
 * carries the delta base from plane to plane of one file (NULL: a file
 * of this plane alone). 0, -EIO or -ENOMEM.
 */
int sm_lftfile_write_compact(FILE *out, const struct sm_fabric *f, const struct sm_lfts *l, const char *comment,
			     struct sm_lftc_base *base);

struct sm_lftfile_sw {
	uint64_t guid;           /* switch node GUID from the header */
	uint16_t lid;            /* "Lid N" in the header, 0 for a DR-path header */
	uint16_t first, top;     /* the header's [first-top] range */
	unsigned line;           /* header line */
	uint32_t n_entries;      /* entry lines read */
	char desc[SM_DESC_MAX + 1];
	uint8_t *ports;          /* [top+1]; SM_LFT_NONE where no entry */
};

struct sm_lftfile {
	struct sm_lftfile_sw *sw;
	uint32_t n_sw, cap_sw;
	unsigned n_comments;     /* '#' lines seen (plane separators) */
	struct sm_guid_map idx;  /* switch GUID -> index in sw[] */
};

/* 0 and *out, or a negative errno with "NAME:LINE: ..." in err. */
int sm_lftfile_read(FILE *in, const char *name, struct sm_lftfile **out, char *err, size_t errlen);
int sm_lftfile_load(const char *path, struct sm_lftfile **out, char *err, size_t errlen);
void sm_lftfile_free(struct sm_lftfile *lf);   /* accepts NULL */

const struct sm_lftfile_sw *sm_lftfile_find(const struct sm_lftfile *lf, uint64_t guid);

/*
 * Copy the entries of every file switch that is a switch of l's plane
 * in f into l (rows of switches absent from the file are left as they
 * are). *matched = switches of the plane found in the file. -EINVAL with
 * a message if an entry names a port the switch does not have or a LID
 * above l->top_lid.
 */
int sm_lftfile_apply(const struct sm_lftfile *lf, const struct sm_fabric *f, struct sm_lfts *l,
		     uint32_t *matched, char *err, size_t errlen);

#endif
