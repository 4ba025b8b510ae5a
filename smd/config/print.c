/* SPDX-License-Identifier: MIT */
/*
 * DOC: a config as smd.yaml text (smd --print-config, smctl config)
 *
 * Walks the key table (keys.c) in its order and writes each key's value
 * from struct smd_conf, so what is printed is what smd runs with: the
 * defaults, the file, then the command line laid over them. The output is
 * itself a valid smd.yaml (smd_conf_load() reads it back to the same
 * config), except that fixed keys are written as "hidden" comments when
 * asked (SMD_CONF_PRINT_HIDE_KEYS: what the control socket answers). A key
 * without a value (socket_group, user, ...) is written as a comment.
 * Engine subtrees are copied from the parsed document.
 */
#include "config/keys.h"
#include "config/smdconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

/* A scalar as YAML: plain when it was plain (or is a safe word), else double-quoted. */
static void scalar_out(FILE *out, const char *s, int plain)
{
	if (plain && s[0] && !strpbrk(s, ":#'\"\n{}[],&*!|>%@`") && s[0] != '-' && s[0] != ' ' &&
	    s[strlen(s) - 1] != ' ') {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

/* A node of the parsed document (an engine's settings), block style, at indent. */
static void node_out(FILE *out, yaml_document_t *doc, yaml_node_t *n, int indent)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		fputc(' ', out);
		scalar_out(out, (const char *)n->data.scalar.value,
			   n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
		fputc('\n', out);
		break;
	case YAML_SEQUENCE_NODE:
		if (n->data.sequence.items.start == n->data.sequence.items.top)
			fputs(" []", out);
		fputc('\n', out);
		for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
			fprintf(out, "%*s-", indent, "");
			node_out(out, doc, yaml_document_get_node(doc, *it), indent + 2);
		}
		break;
	case YAML_MAPPING_NODE:
		if (n->data.mapping.pairs.start == n->data.mapping.pairs.top)
			fputs(" {}", out);
		fputc('\n', out);
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			fprintf(out, "%*s", indent, "");
			scalar_out(out, k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "?", 1);
			fputc(':', out);
			node_out(out, doc, yaml_document_get_node(doc, p->value), indent + 2);
		}
		break;
	default:
		fputs(" ~\n", out);
		break;
	}
}

static void key_out(FILE *out, const char *name, uint8_t mode, uint64_t val, unsigned flags)
{
	if (mode == SM_KEY_NONE)
		fprintf(out, "%s: none\n", name);
	else if (mode == SM_KEY_RANDOM)
		fprintf(out, "%s: random\n", name);
	else if (mode == SM_KEY_DERIVED)
		fprintf(out, "%s: derived\n", name);
	else if (flags & SMD_CONF_PRINT_HIDE_KEYS)
		fprintf(out, "# %s: a fixed key (not shown)\n", name);
	else
		fprintf(out, "%s: 0x%016" PRIx64 "\n", name, val);
}

/* A VLArb table in opensm.conf's syntax, up to its last entry that is not 0:0 (at least one). */
static void vlarb_out(FILE *out, const uint8_t *vl, const uint8_t *w)
{
	unsigned n = SM_QOS_VLARB_MAX;
	while (n > 1 && !vl[n - 1] && !w[n - 1])
		n--;
	for (unsigned i = 0; i < n; i++)
		fprintf(out, "%s%u:%u", i ? "," : "", vl[i], w[i]);
}

/* The port configuration keys left to a parser: part_enforce, qos.CLASS.{sl2vl,vlarb_*}. */
static int portcfg_out(FILE *out, const struct smd_conf *c, const char *full, const char *name, const char *ind)
{
	static const char *const cls[SM_QOS_CLASSES] = { "qos.ca.", "qos.sw0.", "qos.swe." };
	const struct sm_qos_level *l = NULL;

	if (!strcmp(full, "part_enforce")) {
		fprintf(out, "%s: %s\n", name, sm_part_enforce_name(c->portcfg.part_enforce));
		return 1;
	}
	for (unsigned k = 0; k < SM_QOS_CLASSES; k++)
		if (!strncmp(full, cls[k], strlen(cls[k])))
			l = &c->portcfg.level[k];
	if (!l)
		return 0;
	fprintf(out, "%s%s: ", ind, name);
	if (!strcmp(name, "sl2vl"))
		for (unsigned sl = 0; sl < 16; sl++)
			fprintf(out, "%s%u", sl ? "," : "", l->sl2vl[sl]);
	else if (!strcmp(name, "vlarb_high"))
		vlarb_out(out, l->high_vl, l->high_w);
	else
		vlarb_out(out, l->low_vl, l->low_w);
	fputc('\n', out);
	return 1;
}

/* The keys the table leaves to a parser (SMD_KEY_OTHER). */
static void other_out(FILE *out, const struct smd_conf *c, const char *name, unsigned flags)
{
	if (!strcmp(name, "routing_engine")) {
		char chain[SMD_CONF_MAX_CHAIN * (SMD_CONF_NAME_MAX + 2)];
		smd_conf_chain_str(c, chain, sizeof(chain));
		fprintf(out, "%s: %s\n", name, chain);
	} else if (!strcmp(name, "engines")) {
		fprintf(out, "%s:%s\n", name, c->n_engines ? "" : " {}");
		for (unsigned i = 0; i < c->n_engines; i++) {
			fprintf(out, "  %s:", c->engines[i].name);
			if (c->engines[i].node && c->doc)
				node_out(out, c->doc, c->engines[i].node, 4);
			else
				fputs(" ~\n", out);
		}
	} else if (!strcmp(name, "planes")) {
		fprintf(out, "%s:%s\n", name, c->n_planes ? "" : " []");
		for (unsigned i = 0; i < c->n_planes; i++) {
			fputs("  - ", out);
			scalar_out(out, c->planes[i], 1);
			fputc('\n', out);
		}
	} else if (!strcmp(name, "log_level")) {
		fprintf(out, "%s: %s\n", name, smd_log_level_name(c->log_level));
	} else if (!strcmp(name, "subnet_prefix")) {
		fprintf(out, "%s: 0x%016" PRIx64 "\n", name, c->subnet_prefix);
	} else if (!strncmp(name, "mock.", 5)) {
		const uint32_t *share = !strcmp(name, "mock.loss") ? &c->mock.loss_ppm :
					!strcmp(name, "mock.corrupt") ? &c->mock.corrupt_ppm : &c->mock.delay_ppm;
		char pct[32];
		smd_conf_percent_str(*share, pct, sizeof(pct));
		fprintf(out, "  %s: %s\n", name + 5, pct);
	} else if (!strcmp(name, "m_key")) {
		key_out(out, name, c->keys.mkey_mode, c->keys.mkey, flags);
	} else if (!strcmp(name, "m_key_secret_file")) {
		if (c->keys.secret_file[0]) {
			fprintf(out, "%s: ", name);
			scalar_out(out, c->keys.secret_file, 1);
			fputc('\n', out);
		} else {
			fprintf(out, "# %s: none\n", name);
		}
	} else if (!strcmp(name, "sm_key")) {
		key_out(out, name, c->keys.smkey_mode, c->keys.sm_key, flags);
	} else {
		fprintf(out, "# %s: (not printable)\n", name);
	}
}

int smd_conf_print(FILE *out, const struct smd_conf *c, unsigned flags)
{
	fprintf(out, "# smd configuration: %s\n", c->source ? c->source : "(defaults)");
	for (size_t i = 0; i < smd_conf_n_keys; i++) {
		const struct smd_conf_key *d = &smd_conf_keys[i];
		const char *dot = strrchr(d->name, '.');
		const char *name = dot ? dot + 1 : d->name;
		const char *field = (const char *)c + d->off;
		unsigned depth = 0;
		char ind[16];

		for (const char *s = d->name; *s; s++)
			depth += *s == '.';
		snprintf(ind, sizeof(ind), "%*s", (int)(2 * (depth < 6 ? depth : 6)), "");

		switch (d->kind) {
		case SMD_KEY_UINT: {
			unsigned long v = d->size == 1 ? *(const uint8_t *)field :
					  d->size == 2 ? *(const uint16_t *)field : *(const unsigned *)field;
			fprintf(out, "%s%s: %lu\n", ind, name, v);
			break;
		}
		case SMD_KEY_BOOL:
			fprintf(out, "%s%s: %s\n", ind, name, *(const int *)field ? "true" : "false");
			break;
		case SMD_KEY_STR: {
			const char *s = *(char *const *)field;
			if (!s) {
				fprintf(out, "%s# %s: (not set)\n", ind, name);
				break;
			}
			fprintf(out, "%s%s: ", ind, name);
			scalar_out(out, s, 1);
			fputc('\n', out);
			break;
		}
		case SMD_KEY_MAP:
			fprintf(out, "%s%s:\n", ind, name);
			break;
		default:
			if (!portcfg_out(out, c, d->name, name, ind))
				other_out(out, c, d->name, flags);
			break;
		}
	}
	return ferror(out) ? -EIO : 0;
}
