/* SPDX-License-Identifier: MIT */
#ifndef SMD_ROUTING_UTIL_H
#define SMD_ROUTING_UTIL_H
/*
 * DOC: helpers the engines and the chain share: their YAML subtrees and a
 * parallel loop. Nothing here knows the registry, so engines depend on
 * this file and the registry on the engines, never both ways.
 */
#include <stddef.h>
#include <yaml.h>

/*
 * YAML helpers for engines' init hooks (libyaml documents). map_get returns
 * the value under `key` of a mapping node, NULL if absent or map is not a
 * mapping. check_keys fails with "ENGINE: config line N: unknown key 'k'
 * (known: a, b)" on a key not in the NULL-terminated `known`, or when node
 * is not a mapping. sm_yaml_line(): node->start_mark.line + 1.
 */
yaml_node_t *sm_yaml_map_get(yaml_document_t *doc, yaml_node_t *map, const char *key);
int sm_yaml_check_keys(yaml_document_t *doc, yaml_node_t *map, const char *engine,
		       const char *const *known, char *err, size_t errlen);
unsigned long sm_yaml_line(const yaml_node_t *node);

/*
 * Run fn(arg, 0) .. fn(arg, n - 1), taken in index order by up to one
 * thread per online CPU (at most SM_PARALLEL_MAX; the calling thread is one
 * of them), and return when all are done. Jobs must not depend on each
 * other; failing to start a thread only makes it slower.
 */
#define SM_PARALLEL_MAX 16
void sm_parallel_for(unsigned n, void (*fn)(void *arg, unsigned i), void *arg);

#endif
