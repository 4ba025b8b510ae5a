/* SPDX-License-Identifier: MIT */
#ifndef SMD_JSON_H
#define SMD_JSON_H
/*
 * DOC: tiny streaming JSON emitter (json.c), and a small reader (json_read.c, below)
 *
 * Writes one JSON value to a stdio stream as calls arrive: no tree is built,
 * so a report over thousands of switches costs no memory. The emitter keeps
 * a stack of open containers to place commas and, when pretty, indentation.
 *
 * Every string (keys included) is escaped per RFC 8259: quote, backslash and
 * control characters are escaped, valid UTF-8 is passed through and every
 * byte that is not part of a valid UTF-8 sequence is replaced by U+FFFD, so
 * the output is valid JSON whatever bytes a dump's NodeDescription holds.
 * Non-finite doubles are written as null (JSON has no NaN/Infinity).
 *
 * Inside an object every value call takes a key; inside an array (or at top
 * level) the key must be NULL. Misuse (key mismatch, too deep, unbalanced
 * end) sets j->err = -EINVAL and the emitter writes nothing more; stream
 * errors are reported by sm_json_finish() as -EIO. Used by the dry-run
 * report and, later, by smctl replies.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SM_JSON_MAX_DEPTH 32

struct sm_json {
	FILE *out;
	int pretty;
	int depth;
	int err;                          /* 0 or a negative errno, sticky */
	unsigned char is_obj[SM_JSON_MAX_DEPTH];
	unsigned char n_items[SM_JSON_MAX_DEPTH];  /* 0 = container still empty */
};

void sm_json_init(struct sm_json *j, FILE *out, int pretty);

void sm_json_obj_begin(struct sm_json *j, const char *key);
void sm_json_obj_end(struct sm_json *j);
void sm_json_arr_begin(struct sm_json *j, const char *key);
void sm_json_arr_end(struct sm_json *j);

void sm_json_str(struct sm_json *j, const char *key, const char *val);   /* NULL val -> null */
void sm_json_int(struct sm_json *j, const char *key, int64_t val);
void sm_json_uint(struct sm_json *j, const char *key, uint64_t val);
void sm_json_double(struct sm_json *j, const char *key, double val);  /* up to 6 significant decimals */
void sm_json_bool(struct sm_json *j, const char *key, int val);
void sm_json_null(struct sm_json *j, const char *key);

/*
 * Several unsigned members in a row, given as a list of pairs rather than
 * one call each: SM_JSON_UINTS(j, { "switches", s->switches }, { "cas", s->cas });
 */
struct sm_json_kv {
	const char *key;
	uint64_t val;
};
void sm_json_uints(struct sm_json *j, const struct sm_json_kv *kv, size_t n);
#define SM_JSON_UINTS(j, ...) \
	sm_json_uints((j), (const struct sm_json_kv[]){ __VA_ARGS__ }, \
		      sizeof((const struct sm_json_kv[]){ __VA_ARGS__ }) / sizeof(struct sm_json_kv))

/* Write a JSON string literal (with quotes) for s[0..len) to out. */
void sm_json_write_string(FILE *out, const char *s, size_t len);
/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 if invalid
 * (overlong, surrogate, past U+10FFFF, truncated). */
size_t sm_json_utf8_len(const unsigned char *s, size_t n);

/*
 * Check that every container is closed, end the text with a newline and
 * flush. Returns 0, -EINVAL (misuse) or -EIO (write error).
 */
int sm_json_finish(struct sm_json *j);

/* ---- a small JSON reader (json_read.c: control requests, and smctl reading replies) ---- */
enum smd_jtype { SMD_J_NULL, SMD_J_BOOL, SMD_J_NUM, SMD_J_STR, SMD_J_ARR, SMD_J_OBJ };

struct smd_jv {
	enum smd_jtype type;
	char *key;              /* member name inside an object, else NULL */
	char *str;              /* SMD_J_STR: NUL-terminated (embedded NULs are refused) */
	double num;
	int boolean;
	struct smd_jv *child;   /* first element/member */
	struct smd_jv *next;    /* next sibling */
	unsigned n;             /* number of children */
};

#define SMD_JSON_MAX_DEPTH 16

/*
 * Parse exactly one JSON value from buf[0..len) (surrounding whitespace
 * allowed). 0 and *out (free with smd_jv_free), or -EINVAL with
 * "offset N: what" in err, -ENOMEM.
 */
int smd_json_parse(const char *buf, size_t len, struct smd_jv **out, char *err, size_t errlen);
void smd_jv_free(struct smd_jv *v);   /* accepts NULL */
/* Member `key` of an object (NULL when absent or v is not an object). */
const struct smd_jv *smd_jv_get(const struct smd_jv *v, const char *key);
const char *smd_jv_str(const struct smd_jv *v, const char *key, const char *def);
double smd_jv_num(const struct smd_jv *v, const char *key, double def);
int smd_jv_bool(const struct smd_jv *v, const char *key, int def);

#endif
