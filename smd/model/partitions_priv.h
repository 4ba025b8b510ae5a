/* SPDX-License-Identifier: MIT */
#ifndef SMD_MODEL_PARTITIONS_PRIV_H
#define SMD_MODEL_PARTITIONS_PRIV_H
/*
 * DOC: partitions parser, private (partitions.c: OpenSM's text grammar and
 * the definitions both forms feed; partitions_yaml.c: the YAML form)
 *
 * Both forms go through the same calls, in file order: pp_def_begin()
 * (a definition's header: name, P_Key, flags), pp_member() (one port
 * specifier "WHO[=full|limited|both]"), pp_mgroup() (an `mgid=` entry and
 * its flags), pp_def_end(). Every call checks its input and fails with
 * "NAME:LINE: message" in the context's err; the caller then frees the
 * partly built set.
 */
#include "model/partitions.h"

struct pp_flags {
	unsigned mtu, rate, sl, scope_mask;
	uint32_t qkey;
	uint8_t tclass;
	uint32_t flow_label;
};

struct pp_ctx {
	const char *name;            /* for messages */
	char *err;
	size_t errlen;
	unsigned line;
	struct sm_partitions *ps;
	uint16_t gen;                /* OpenSM's counter for P_Keys left out */
	/* the definition being read */
	int in_def;
	size_t cur;                  /* index in ps->v */
	struct pp_flags fl;
	enum sm_part_membership defm;
	bool indx0;
};

/* "NAME:LINE: message" into c->err; returns -EINVAL. */
int pp_fail(struct pp_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * A new set holding the default partition as OpenSM makes it: with a file
 * ALL=limited, SELF=full; without ALL=full, SELF=full. 0 or -ENOMEM.
 */
int pp_init(struct pp_ctx *c, const char *name, bool file, char *err, size_t errlen);
/*
 * Header of a definition: name (may be empty), id (the P_Key text, NULL
 * when left out) and nflags "flag[=value]" strings (value NULL when none).
 */
int pp_def_begin(struct pp_ctx *c, const char *name, const char *id, char *const *flag, char *const *val,
		 unsigned nflags);
/* One port specifier: who and its membership text (NULL: the definition's defmember). */
int pp_member(struct pp_ctx *c, const char *who, const char *m);
/* An mgid= entry with nflags group flags. */
int pp_mgroup(struct pp_ctx *c, const char *mgid, char *const *flag, char *const *val, unsigned nflags);
void pp_def_end(struct pp_ctx *c);

/* Trim spaces, tabs, CR and LF at both ends of s, in place. */
char *pp_trim(char *s);

/* partitions_yaml.c: parse YAML text (len bytes) into c->ps. */
int pp_parse_yaml(struct pp_ctx *c, const char *text, size_t len);

#endif
