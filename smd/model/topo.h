/* SPDX-License-Identifier: MIT */
#ifndef SMD_TOPO_H
#define SMD_TOPO_H
/*
 * DOC: topology dumps
 *
 * Readers and writers for the two text formats a fabric is described in:
 *  - the output of ibnetdiscover (node blocks with vendid/devid/sysimgguid/
 *    switchguid|caguid lines and "[p](portguid) \"peer\"[q]" port lines,
 *    "# \"desc\" lid N lmc M" comments);
 *  - ibsim's net format (Switch|Hca N "nodeid" headers, "[p] \"peer\"[q]").
 *
 * Input is untrusted. A loader never aborts and never leaks: on error it
 * returns a negative errno, frees what it built, and writes one message of
 * the form "FILE:LINE: what is wrong" into err (which may be NULL).
 */
#include "model/fabric.h"

struct sm_topo_err {
	char msg[512];
	unsigned line;   /* 0 if not tied to a line */
};

enum sm_topo_format {
	SM_TOPO_AUTO = 0,  /* sniff: ibnetdiscover if it has "port 0 lid" switch headers or
			      "[p](guid)" CA port lines (in its first 64 KiB), else net */
	SM_TOPO_IBND,
	SM_TOPO_IBSIM,
};

#define SM_TOPO_MAX_LINE 4096  /* longer lines are an error */

/*
 * Load a dump into fabric f (which may already hold other planes), putting
 * every node into plane `plane`. On error f is left exactly as it was.
 */
int sm_topo_load(struct sm_fabric *f, const char *path, enum sm_topo_format fmt,
		 unsigned plane, struct sm_topo_err *err);
/* Same, from an open stream; `name` is used in messages. */
int sm_topo_load_stream(struct sm_fabric *f, FILE *in, const char *name,
			enum sm_topo_format fmt, unsigned plane, struct sm_topo_err *err);

/*
 * sm_topo_load() in two halves, so that several dumps can be read at once:
 * sm_topo_parse() reads and checks the file (errors as sm_topo_load(); it
 * touches no fabric and is safe to call from several threads), and
 * sm_topo_commit() appends the result to f, all or nothing (a GUID or LID
 * clash with what f holds is reported against the dump's line). The
 * parsed dump stays the caller's: free it with sm_topo_parsed_free(), or
 * hand it back to sm_topo_parse() in *out (after its commit) to parse the
 * next dump in the same memory. *out must be NULL or such a dump; on
 * error it is freed and set to NULL.
 */
struct sm_topo_parsed;
int sm_topo_parse(const char *path, enum sm_topo_format fmt, unsigned plane,
		  struct sm_topo_parsed **out, struct sm_topo_err *err);
int sm_topo_commit(struct sm_fabric *f, struct sm_topo_parsed *p, struct sm_topo_err *err);
void sm_topo_parsed_free(struct sm_topo_parsed *p);  /* accepts NULL */

/*
 * Link rate names as ibnetdiscover prints them: width "1x" "2x" "4x" "8x"
 * "12x" or "??"; speed "SDR" "DDR" "QDR" "FDR10" "FDR" "EDR" "HDR" "NDR"
 * "XDR" or "???" (speed/flags as in struct sm_port).
 */
const char *sm_topo_width_str(unsigned width);
const char *sm_topo_speed_str(unsigned speed, unsigned flags);
/* Parse "4xQDR" style text (the whole token); 0 or -EINVAL. */
int sm_topo_parse_rate(const char *tok, size_t len, uint8_t *width, uint8_t *speed, uint8_t *flags);

/* Write one plane (or all planes with plane < 0) in ibnetdiscover format. */
int sm_topo_write_ibnd(const struct sm_fabric *f, int plane, FILE *out);
/* Write one plane (or all with plane < 0) in ibsim net format. */
int sm_topo_write_ibsim(const struct sm_fabric *f, int plane, FILE *out);

#endif
