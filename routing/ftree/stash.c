/* SPDX-License-Identifier: MIT */
/*
 * DOC: ftree's model of the fabric it routed last, kept for the next reroute
 *
 * A reroute (reroute.c) compares the model of the new fabric with the
 * model of the previous one, which ftree built when it routed that fabric
 * (route() or the previous reroute()). Building it again was half of a
 * reroute's CPU at 40k hosts (10-12 ms: the canonical host order), so the
 * engine's state keeps the last model it built and the identity of the
 * fabric and plane it was built for: every node's GUID, type, plane,
 * port count and first port, every port's GUID, owner, number, LID, LMC
 * and peer, and the plane's top LID, the inputs ft_model_build() reads
 * (the same the loader compares before a reroute, routing/reroute.c). A
 * model is taken back only for a fabric equal in all of them, compared
 * word by word (no hash: nothing to collide); its pointers into the fabric
 * and the LFT layout are set to the caller's. One model, not one per
 * plane: the SM routes each plane with a chain (and an engine state) of
 * its own, and a chain that routes all planes (the dry-run) never
 * reroutes, so more would only be held in vain (10 MB a plane at 40k
 * hosts). Planes routed in parallel share that chain's state: a mutex.
 *
 * Cost: one pass over the fabric's nodes and ports per put and per take;
 * memory: the model and 24 bytes per port, 16 per node.
 */
#include "config.h"
#include "routing/ftree/model.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ft_kept {
	int valid;
	struct ft_model m;
	uint64_t *key;   /* the fabric's identity (key_of) */
	size_t nkey;
};

struct ft_stash {
	pthread_mutex_t mu;
	struct ft_kept k;
};

/* Words of f's identity for plane (key_of), in order; n: how many. */
static size_t key_len(const struct sm_fabric *f)
{
	return 4 + 2 * (size_t)f->n_nodes + 3 * (size_t)f->n_ports;
}

/*
 * f's identity word by word: into out (NULL: compared with cmp instead,
 * 0 at the first difference). 1 when equal or written.
 */
static int key_of(const struct sm_fabric *f, unsigned plane, uint64_t *out, const uint64_t *cmp)
{
	size_t k = 0;
#define KEY(w)                                   \
	do {                                         \
		uint64_t w_ = (w);                       \
		if (out)                                 \
			out[k] = w_;                         \
		else if (cmp[k] != w_)                   \
			return 0;                            \
		k++;                                     \
	} while (0)
	KEY(f->n_nodes);
	KEY(f->n_ports);
	KEY(plane);
	KEY(plane < SM_MAX_PLANES && plane < f->n_planes ? f->planes[plane].max_lid : 0);
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		const struct sm_node *a = &f->nodes[n];
		KEY(a->guid);
		KEY((uint64_t)a->port0 | (uint64_t)a->type << 32 | (uint64_t)a->plane << 40 | (uint64_t)a->nports << 48);
	}
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct sm_port *p = &f->ports[i];
		int up = p->peer_node != SM_NONE;
		KEY(p->guid);
		KEY((uint64_t)p->node | (uint64_t)p->peer_node << 32);
		KEY((uint64_t)p->lid | (uint64_t)p->lmc << 16 | (uint64_t)p->num << 24 |
		    (uint64_t)(up ? p->peer_port : 0) << 32);
	}
#undef KEY
	return 1;
}

struct ft_stash *ft_stash_new(void)
{
	struct ft_stash *s = calloc(1, sizeof(*s));
	if (s)
		pthread_mutex_init(&s->mu, NULL);
	return s;
}

void ft_stash_free(struct ft_stash *s)
{
	if (!s)
		return;
	ft_model_free(&s->k.m);
	free(s->k.key);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void ft_stash_put(const struct ft_config *cfg, unsigned plane, const struct sm_fabric *f, struct ft_model *m)
{
	struct ft_stash *s = cfg ? cfg->stash : NULL;
	if (!s) {
		ft_model_free(m);
		return;
	}
	size_t n = key_len(f);
	pthread_mutex_lock(&s->mu);
	struct ft_kept *k = &s->k;
	ft_model_free(&k->m);
	k->valid = 0;
	if (k->nkey != n) {
		free(k->key);
		k->key = malloc(n * sizeof(*k->key));
		k->nkey = k->key ? n : 0;
	}
	if (k->key) {
		key_of(f, plane, k->key, NULL);
		k->m = *m;
		k->valid = 1;
		memset(m, 0, sizeof(*m));
	}
	pthread_mutex_unlock(&s->mu);
	ft_model_free(m);
}

int ft_stash_take(const struct ft_config *cfg, unsigned plane, const struct sm_fabric *f, const struct sm_lfts *l,
		  struct ft_model *m)
{
	struct ft_stash *s = cfg ? cfg->stash : NULL;
	int ok = 0;
	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	struct ft_kept *k = &s->k;
	if (k->valid && k->nkey == key_len(f) && key_of(f, plane, NULL, k->key)) {
		*m = k->m;
		memset(&k->m, 0, sizeof(k->m));
		k->valid = 0;
		ok = 1;
	}
	pthread_mutex_unlock(&s->mu);
	if (ok) { /* the same nodes: the same layout as the tables it was built with */
		m->f = f;
		m->sw_node = l->sw_node;
		m->slot_of_node = l->slot_of_node;
		m->n_nodes = l->n_nodes;
	}
	return ok;
}
