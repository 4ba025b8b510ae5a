/* SPDX-License-Identifier: MIT */
#ifndef SMD_PROFILE_H
#define SMD_PROFILE_H
/*
 * DOC: traffic profiles (input of the hotpath engine, `--profile FILE`)
 *
 * A profile is untrusted input turned into a list of weighted flows between
 * CA ports of one fabric (struct sm_flow below: fabric port
 * indices + weight). The loader resolves every endpoint against the fabric
 * it is given; the result is only valid for that fabric.
 *
 * Formats (auto-detected from the first meaningful line, or forced with
 * sm_profile_opts.format):
 *
 * 1. Traffic matrix, text. One flow per line: `SRC DST WEIGHT`. `#` starts a
 *    comment (outside quotes); blank lines are ignored. An endpoint is
 *      "host00012 mlx5_0"   node description (quote it when it has spaces)
 *      host00012            host name: node-description prefix before the
 *                           first space, extended to the nodes sharing its
 *                           system image GUID (the NICs of one host)
 *      host00012:3          host name + rail (rail = plane index)
 *      0x0002c90300001234   port GUID (or a node GUID: its first port with a LID)
 *      17 / 17:3            LID (decimal), optionally with a rail
 *    WEIGHT is a finite decimal >= 0 and <= SM_PROFILE_MAX_WEIGHT (bytes,
 *    rate, any unit: only ratios matter). Weight 0 lines are skipped.
 *
 * 2. Traffic matrix, YAML:
 *      name: allreduce-step          # optional metadata: name, source,
 *      source: nccl profiler         #   description, unit, window
 *      window: {start: "2026-11-22T01:00:00Z", end: "...", seconds: 60}
 *      flows:
 *        - {src: "host00012 mlx5_0", dst: host00044, weight: 12.5}
 *        - [host00001:0, 0x0002c90300001234, 3]
 *    Unknown keys are refused (typos must not be silent).
 *
 * 3. Port-counter snapshots (two readings of PortXmitData/PortRcvData per
 *    port). Either the output of `perfquery` (optionally `-x`) run twice per
 *    port and concatenated (the first block of a LID/port is reading 1, the
 *    second reading 2), or smd's own text form:
 *      counters v1
 *      interval 10            # optional: seconds between the readings
 *      plane 0                # optional: plane of the LIDs that follow
 *      reading 1
 *      0x0002c90300001234 1 1000 2000     # GUID|LID PORT XMIT RCV
 *      reading 2
 *      0x0002c90300001234 1 51000 9000
 *    `plane N` lines are accepted in the perfquery form too (LIDs are per
 *    plane). Counter deltas of every port become link heat (heat[], bytes =
 *    4 * data words, as PortXmitData counts 32-bit words). Deltas of CA
 *    ports become flows by a gravity model: within a plane, a host s that
 *    sent X_s and a host d that received R_d get the flow
 *        w(s,d) = X_s * R_d / (sum of R over receivers other than s),
 *    i.e. each host's sent volume is spread over receivers in proportion to
 *    what they received. It matches volumes per host exactly, not the real
 *    pairs: use a matrix when one exists. A port whose second reading is
 *    lower than the first (counter reset or 32-bit wrap) is skipped and
 *    counted. At most opts.max_flows gravity flows are produced (heaviest
 *    senders x heaviest receivers); the rest is counted as dropped weight.
 *
 * Multi-plane resolution: a description or GUID names one port, so one
 * plane; a bare host name or LID is plane-agnostic. A flow takes the plane
 * of its destination if that is specific, else of its source; the other
 * endpoint is then taken as the same host's port in that plane (cross-plane
 * traffic is forwarded inside the host to the NIC of the target plane). If
 * both are plane-agnostic the weight is split evenly over the planes where
 * both hosts have a port.
 *
 * Robustness: lines longer than SM_PROFILE_MAX_LINE, NUL bytes or other
 * control characters, files larger than SM_PROFILE_MAX_BYTES, bad weights
 * (negative, NaN, inf, huge) and malformed lines are errors naming
 * FILE:LINE. A YAML profile nested deeper than SM_PROFILE_MAX_DEPTH
 * (brackets, braces, indentation levels and "- " items together) is refused
 * before libyaml sees it, whose cost grows with the square of the depth. Unknown endpoints are not an error: they are counted (entries
 * and weight) in stats, and sm_profile_warning() words the warning; it is an
 * error (-ENOENT) only when no flow at all resolves. Flows with the same
 * (src, dst) are merged (weights summed).
 *
 * Output: flows sorted by weight (heaviest first, ties by src then dst).
 * Library code: never logs, returns 0 or a negative errno plus a message.
 */
#include <stddef.h>
#include <stdint.h>
#include "model/fabric.h"

/* A weighted flow between two CA ports (input of the hotpath engine and of routing/metrics.h). */
struct sm_flow {
	uint32_t src, dst;     /* fabric port indices of CA ports */
	double weight;
};

#define SM_PROFILE_MAX_LINE 4096
#define SM_PROFILE_MAX_DEPTH 64
#define SM_PROFILE_MAX_BYTES (256u << 20)
#define SM_PROFILE_MAX_WEIGHT 1e18
#define SM_PROFILE_DEFAULT_MAX_FLOWS (1u << 20)

enum sm_profile_kind {
	SM_PROFILE_MATRIX = 1,    /* text or YAML traffic matrix */
	SM_PROFILE_COUNTERS = 2,  /* port-counter snapshots (gravity model) */
};

enum sm_profile_format {
	SM_PROFILE_FMT_AUTO = 0,
	SM_PROFILE_FMT_TEXT,
	SM_PROFILE_FMT_YAML,
	SM_PROFILE_FMT_COUNTERS,  /* smd's "counters v1" form */
	SM_PROFILE_FMT_PERFQUERY, /* concatenated perfquery output */
};

struct sm_profile_stats {
	uint64_t lines;          /* lines read */
	uint64_t entries;        /* matrix entries read (lines / YAML items), 0 for counters */
	uint64_t zero;           /* entries with weight 0 (skipped) */
	uint64_t merged;         /* entries merged into an earlier flow with the same (src, dst) */
	uint64_t unknown;        /* entries dropped: an endpoint did not resolve */
	double unknown_weight;
	uint64_t self;           /* entries dropped: source and destination are the same port */
	double self_weight;
	uint64_t no_plane;       /* entries dropped: the two hosts share no plane */
	double no_plane_weight;
	double total_weight;     /* weight of all entries read (counters: sum of host xmit deltas) */
	double kept_weight;      /* sum of flows[].weight */
	unsigned first_unknown_line;   /* line of the first unknown endpoint, 0 if none */
	char first_unknown[80];        /* its text (truncated) */
	/* counters */
	uint64_t counter_ports;  /* ports with two readings */
	uint64_t counter_reset;  /* ports skipped: reading 2 < reading 1 */
	uint64_t counter_single; /* ports with only one reading (ignored) */
	uint64_t gravity_capped; /* gravity flows not produced (max_flows) */
	double gravity_capped_weight;
};

/* Link heat from counters: bytes sent/received by one port in the window. */
struct sm_profile_heat {
	uint32_t port;           /* fabric port index */
	double xmit_bytes, rcv_bytes;
};

struct sm_profile {
	enum sm_profile_kind kind;
	enum sm_profile_format format;  /* the format actually parsed */
	char path[256];          /* as given to the loader (for messages) */
	char name[64];           /* YAML metadata, "" when absent */
	char source[128];
	char description[128];
	char unit[32];
	char window_start[40], window_end[40];
	double window_seconds;   /* YAML window.seconds or counters interval, 0 unknown */
	struct sm_flow *flows;   /* heaviest first */
	size_t n_flows;
	struct sm_profile_heat *heat; /* counters only, sorted by port index */
	size_t n_heat;
	struct sm_profile_stats stats;
};

struct sm_profile_opts {
	enum sm_profile_format format; /* SM_PROFILE_FMT_AUTO = detect */
	size_t max_flows;              /* gravity model cap, 0 = SM_PROFILE_DEFAULT_MAX_FLOWS */
};

/*
 * Load FILE and resolve it against f. o may be NULL (defaults). On success
 * *out owns a new profile (free with sm_profile_free). On failure returns
 * -EINVAL (syntax, bad value: err says FILE:LINE), -ENOENT (nothing
 * resolved / file missing), -EFBIG (file too large), -ENOMEM, or another
 * errno from reading; *out is NULL.
 */
int sm_profile_load(const struct sm_fabric *f, const char *path, const struct sm_profile_opts *o,
		    struct sm_profile **out, char *err, size_t errlen);

/* Same, from memory (name is used in messages). buf need not be NUL-terminated. */
int sm_profile_parse(const struct sm_fabric *f, const char *name, const char *buf, size_t len,
		     const struct sm_profile_opts *o, struct sm_profile **out, char *err, size_t errlen);

void sm_profile_free(struct sm_profile *p); /* accepts NULL */

/*
 * Word the warning about dropped input (unknown endpoints, self flows,
 * counter resets, gravity cap) into buf. Returns 1 if there is something to
 * warn about, 0 otherwise (buf then holds a one-line summary).
 */
int sm_profile_warning(const struct sm_profile *p, char *buf, size_t len);

/* Plane of a flow (plane of its source port's node). */
static inline unsigned sm_profile_flow_plane(const struct sm_fabric *f, const struct sm_flow *fl)
{
	return f->nodes[f->ports[fl->src].node].plane;
}

const char *sm_profile_format_str(enum sm_profile_format fmt); /* "text", "yaml", ... */

#endif
