/* SPDX-License-Identifier: MIT */
#ifndef SMD_CONF_KEYS_H
#define SMD_CONF_KEYS_H
/*
 * DOC: the smd.yaml keys, one descriptor each (smd/config/keys.c)
 *
 * One table says, for every key: its full name ("mad.window"), its type,
 * range and default, and the first words of its paragraph in smd.yaml(5).
 * The parser walks the file with it, smd_conf_new() takes its defaults
 * from it (each default goes through the same parser as a value read from
 * a file), and `smd --dump-config-keys` prints it so tests/conf_keys.sh
 * can hold the table, man/smd.yaml.5 and conf/smd.yaml to each other.
 */
#include <stddef.h>
#include <stdio.h>

#include "config/smdconf.h"

struct smd_conf_walk;

enum smd_conf_kind {
	SMD_KEY_UINT,     /* plain decimal min..max, stored in a field of `size` bytes */
	SMD_KEY_BOOL,     /* true or false, stored in an int */
	SMD_KEY_STR,      /* a non-empty string, stored as a malloc'ed char * */
	SMD_KEY_MAP,      /* a mapping of the keys named "NAME.*" */
	SMD_KEY_OTHER,    /* parse() does it all */
};

typedef int smd_conf_parse_fn(struct smd_conf_walk *w, const char *key, yaml_node_t *v);

struct smd_conf_key {
	const char *name;          /* full name: "lmc", "mad.window" */
	enum smd_conf_kind kind;
	const char *type;          /* as smd.yaml(5) writes it; UINT: "integer MIN-MAX" is made */
	unsigned long min, max;    /* UINT */
	const char *unit;          /* UINT: after the range in smd.yaml(5) ("seconds"), or NULL */
	const char *def;           /* the default, parsed like a plain YAML value; NULL: none */
	const char *shown;         /* the default as smd.yaml(5) shows it when not "default DEF";
				    * "" for none at all */
	const char *doc;           /* the first words of its paragraph in smd.yaml(5) */
	size_t off, size;          /* the field in struct smd_conf (UINT, BOOL, STR) */
	smd_conf_parse_fn *parse;  /* OTHER, MAP: the parser; STR: a check after the value is stored */
};

extern const struct smd_conf_key smd_conf_keys[];
extern const size_t smd_conf_n_keys;

/* Set every key that has a default to it (0, or -EINVAL/-ENOMEM: a broken table). */
int smd_conf_set_defaults(struct smd_conf *c);

/*
 * Walk a loaded document's root node into c (the file is `name` in
 * messages "NAME:LINE: text"). 0, -EINVAL with the message, -ENOMEM.
 */
int smd_conf_walk_doc(struct smd_conf *c, const char *name, yaml_node_t *root, char *err, size_t errlen);

/*
 * One line per key, tab-separated: name, the text in parentheses after
 * the key's tag in smd.yaml(5) ("integer 0-7; default 0"), the default
 * as given to the parser ("-" none), the doc words.
 */
void smd_conf_keys_dump(FILE *out);

/* smdconf.c, shared with the routing_engine and engines parsers */
int smd_conf_valid_engine_name(const char *s, size_t len);
int smd_conf_chain_add(char names[][SMD_CONF_NAME_MAX + 1], unsigned *n, const char *s, size_t len, char *msg, size_t msglen);
int smd_conf_chain_parse(const char *str, char names[][SMD_CONF_NAME_MAX + 1], unsigned *n, char *msg, size_t msglen);

#endif
