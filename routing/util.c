/* SPDX-License-Identifier: MIT */
/* DOC: the engines' shared helpers: YAML subtrees and a parallel loop (see util.h). */
#include "lib/err.h"
#include "routing/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- YAML helpers ---- */

unsigned long sm_yaml_line(const yaml_node_t *node)
{
	return node ? (unsigned long)node->start_mark.line + 1 : 0;
}

yaml_node_t *sm_yaml_map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (!doc || !map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

int sm_yaml_check_keys(yaml_document_t *doc, yaml_node_t *map, const char *engine,
		       const char *const *known, char *err, size_t errlen)
{
	if (!map)
		return 0;
	if (map->type == YAML_SCALAR_NODE && map->data.scalar.length == 0)
		return 0;  /* "minhop:" with nothing under it */
	if (map->type != YAML_MAPPING_NODE) {
		sm_errf(err, errlen, "%s: config line %lu: expected a mapping of options", engine,
		       sm_yaml_line(map));
		return -EINVAL;
	}
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (!k || k->type != YAML_SCALAR_NODE) {
			sm_errf(err, errlen, "%s: config line %lu: option names must be plain words", engine,
			       sm_yaml_line(k ? k : map));
			return -EINVAL;
		}
		const char *name = (const char *)k->data.scalar.value;
		int ok = 0;
		for (unsigned i = 0; known && known[i]; i++)
			ok |= !strcmp(known[i], name);
		if (!ok) {
			char list[200] = "none";
			size_t off = 0;
			for (unsigned i = 0; known && known[i] && off < sizeof(list); i++) {
				int n = snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", known[i]);
				if (n < 0)
					break;
				off += (size_t)n;
			}
			sm_errf(err, errlen, "%s: config line %lu: unknown option '%s' (known: %s)", engine,
			       sm_yaml_line(k), name, list);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- parallel loop ---- */

struct par_job {
	void (*fn)(void *arg, unsigned i);
	void *arg;
	unsigned n;
	atomic_uint next;
};

static void *par_worker(void *p)
{
	struct par_job *j = p;
	unsigned i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->n)
		j->fn(j->arg, i);
	return NULL;
}

void sm_parallel_for(unsigned n, void (*fn)(void *arg, unsigned i), void *arg)
{
	struct par_job j = { .fn = fn, .arg = arg, .n = n };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = cpus > 1 ? (unsigned)cpus : 1, n_th = 0;
	pthread_t th[SM_PARALLEL_MAX];

	atomic_init(&j.next, 0);
	if (want > n)
		want = n;
	if (want > SM_PARALLEL_MAX)
		want = SM_PARALLEL_MAX;
	for (unsigned i = 1; i < want; i++) {
		if (pthread_create(&th[n_th], NULL, par_worker, &j))
			break;   /* fewer threads is only slower */
		n_th++;
	}
	par_worker(&j);
	for (unsigned i = 0; i < n_th; i++)
		pthread_join(th[i], NULL);
}
