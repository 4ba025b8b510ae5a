/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz_ctl - the control protocol's JSON reader and request validator
 *
 * Input: one request line as a client would send it. Checks:
 *  - smd_json_parse: an error has "offset N: text"; a success is a tree no
 *    deeper than SMD_JSON_MAX_DEPTH whose n counts its children, whose
 *    object members have keys and array elements none, whose strings are
 *    NUL-terminated; written back out (with smd's own string escaper) it
 *    parses again to the same tree;
 *  - smd_ctl_parse_request: an error has a message; a success returns an
 *    object whose "cmd" member is the returned command string.
 */
#include <errno.h>
#include <math.h>

#include "ctl/ctl.h"
#include "fuzz_common.h"
#include "lib/json.h"

static void check_tree(const struct smd_jv *v, unsigned depth, int in_obj)
{
	const struct smd_jv *c;
	unsigned n = 0;

	FUZZ_CHECK(depth <= SMD_JSON_MAX_DEPTH + 1, "tree deeper than the limit");
	FUZZ_CHECK(in_obj ? v->key != NULL : v->key == NULL, "key on a non-member / member without key");
	FUZZ_CHECK(v->type != SMD_J_STR || v->str != NULL, "string without text");
	FUZZ_CHECK(v->type != SMD_J_NUM || isfinite(v->num), "non-finite number");
	for (c = v->child; c; c = c->next) {
		FUZZ_CHECK(v->type == SMD_J_ARR || v->type == SMD_J_OBJ, "children on a scalar");
		check_tree(c, depth + 1, v->type == SMD_J_OBJ);
		n++;
	}
	FUZZ_CHECK(n == v->n, "n is not the number of children");
}

static void write_tree(FILE *out, const struct smd_jv *v)
{
	const struct smd_jv *c;

	if (v->key) {
		sm_json_write_string(out, v->key, strlen(v->key));
		fputc(':', out);
	}
	switch (v->type) {
	case SMD_J_NULL: fputs("null", out); break;
	case SMD_J_BOOL: fputs(v->boolean ? "true" : "false", out); break;
	case SMD_J_NUM: fprintf(out, "%.17g", v->num); break;
	case SMD_J_STR: sm_json_write_string(out, v->str, strlen(v->str)); break;
	case SMD_J_ARR:
	case SMD_J_OBJ:
		fputc(v->type == SMD_J_ARR ? '[' : '{', out);
		for (c = v->child; c; c = c->next) {
			write_tree(out, c);
			if (c->next)
				fputc(',', out);
		}
		fputc(v->type == SMD_J_ARR ? ']' : '}', out);
		break;
	}
}

static void same_tree(const struct smd_jv *a, const struct smd_jv *b)
{
	FUZZ_CHECK(a->type == b->type && a->n == b->n, "re-parse changed the tree");
	FUZZ_CHECK((!a->key && !b->key) || (a->key && b->key && !strcmp(a->key, b->key)), "re-parse changed a key");
	if (a->type == SMD_J_STR)
		FUZZ_CHECK(!strcmp(a->str, b->str), "re-parse changed a string");
	if (a->type == SMD_J_NUM)
		FUZZ_CHECK(a->num == b->num, "re-parse changed a number");
	if (a->type == SMD_J_BOOL)
		FUZZ_CHECK(!a->boolean == !b->boolean, "re-parse changed a boolean");
	for (a = a->child, b = b->child; a && b; a = a->next, b = b->next)
		same_tree(a, b);
	FUZZ_CHECK(!a && !b, "re-parse changed the children");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smd_jv *v = NULL, *w = NULL;
	const char *cmd = NULL;
	char err[512] = "", *text = NULL;
	size_t tlen = 0;
	FILE *mem;
	int rc;

	rc = smd_json_parse((const char *)data, size, &v, err, sizeof(err));
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL, err);
		FUZZ_CHECK(v == NULL, "error but a value");
		FUZZ_CHECK(strncmp(err, "offset ", 7) == 0, err);
	} else {
		FUZZ_CHECK(v != NULL, "success without a value");
		check_tree(v, 1, 0);
		mem = open_memstream(&text, &tlen);
		FUZZ_CHECK(mem != NULL, "open_memstream");
		write_tree(mem, v);
		fclose(mem);
		err[0] = '\0';
		rc = smd_json_parse(text, tlen, &w, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "re-written: %s\n", text);
			fuzz_fail("written back out, the JSON does not parse", err);
		}
		same_tree(v, w);
		smd_jv_free(w);
		free(text);
		smd_jv_free(v);
	}

	v = NULL;
	err[0] = '\0';
	rc = smd_ctl_parse_request((const char *)data, size, &v, &cmd, err, sizeof(err));
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL || rc == -E2BIG, err);
		FUZZ_CHECK(err[0] != '\0', "request refused without a message");
		FUZZ_CHECK(v == NULL, "error but a request");
	} else {
		FUZZ_CHECK(v != NULL && v->type == SMD_J_OBJ, "request is not an object");
		FUZZ_CHECK(cmd != NULL && smd_jv_str(v, "cmd", NULL) == cmd, "cmd is not the object's cmd");
		smd_jv_free(v);
	}
	return 0;
}
