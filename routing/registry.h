/* SPDX-License-Identifier: MIT */
#ifndef SMD_REGISTRY_H
#define SMD_REGISTRY_H
/*
 * DOC: engine registry, plugin loader and engine chain
 *
 * Registry: the built-in engine table (minhop, updn, ftree) plus plugins
 * loaded with dlopen(). A name that is not built in is looked up as
 * PLUGINDIR/NAME.so (PLUGINDIR: sm_registry_new() argument, default
 * SMD_PLUGINDIR from the build). A plugin exports exactly one symbol,
 * SM_ENGINE_SYMBOL; the loader refuses it, with a message naming the file,
 * when the symbol is missing, abi_version differs, size is smaller than our
 * struct sm_engine_ops, the name is empty/too long/not NAME of NAME.so/taken
 * by a built-in or another plugin, or route or free is NULL. The registry
 * owns the dlopen() handles: descriptors stay valid until sm_registry_free().
 *
 * Chain: an ordered list of engines parsed from "ftree,minhop". Each engine
 * is initialised once with its own YAML subtree: sm_chain_new() gets a
 * mapping node (may be NULL) and hands each engine the value under the key
 * equal to its name (or NULL = defaults). sm_route_chain() tries the engines
 * in order for one plane; an engine that returns an error OR whose output
 * fails sm_validate() is skipped with the reason recorded, and the next one
 * is tried. struct sm_plane_result tells which engine routed, how long it
 * took and why every earlier engine was passed over, for the log and the
 * dry-run report.
 *
 * Library code: nothing here logs; errors come back as a negative errno plus
 * a message in the caller's buffer.
 *
 * Threads: an engine's state is read-only after init (minhop, updn, ftree
 * and the ecmp plugin keep to that), so one chain may route different
 * planes from different threads at once; the registry itself is not locked
 * (find/load plugins before starting threads).
 */
#include <stddef.h>
#include <stdint.h>
#include "routing/engine.h"
#include "routing/validate.h"
#include "routing/builtin.h"
#include "routing/util.h"

#define SM_CHAIN_MAX 8          /* engines in one chain */
#define SM_ENGINE_NAME_MAX 32   /* longest engine name, NUL excluded */

struct sm_registry;

/* plugindir NULL = SMD_PLUGINDIR. NULL on ENOMEM. */
struct sm_registry *sm_registry_new(const char *plugindir);
void sm_registry_free(struct sm_registry *r);  /* dlclose()s plugins; accepts NULL */
const char *sm_registry_plugindir(const struct sm_registry *r);

/* Built-in table, NULL-terminated; sm_engine_builtin(name) or NULL. */
const struct sm_engine_ops *const *sm_engine_builtins(void);
const struct sm_engine_ops *sm_engine_builtin(const char *name);

/*
 * Check a descriptor as the loader does (also applied to built-ins in
 * tests). 0 or -EPROTO/-EINVAL with the reason in err.
 */
int sm_engine_check_ops(const struct sm_engine_ops *ops, char *err, size_t errlen);

/*
 * dlopen() one plugin file and register it. On success *out (may be NULL)
 * is the descriptor. Errors: -ENOENT (file missing / dlopen failed),
 * -ENOEXEC (symbol missing), -EPROTO (abi_version or size), -EINVAL (bad
 * name or NULL hooks), -EEXIST (name of a built-in or already loaded).
 * err gets "PATH: reason".
 */
int sm_engine_load_plugin(struct sm_registry *r, const char *path,
			  const struct sm_engine_ops **out, char *err, size_t errlen);

/*
 * Find an engine by name: built-in, already loaded plugin, else
 * PLUGINDIR/NAME.so. -ENOENT "unknown engine 'x' (built-in: ...; no
 * PLUGINDIR/x.so)" when absent; loader errors as above.
 */
int sm_registry_find(struct sm_registry *r, const char *name,
		     const struct sm_engine_ops **out, char *err, size_t errlen);

/* A chain of initialised engines. */
struct sm_chain_engine {
	const struct sm_engine_ops *ops;
	void *state;                    /* from ops->init */
};

struct sm_chain {
	unsigned n;
	struct sm_chain_engine e[SM_CHAIN_MAX];
	unsigned flags;                 /* SM_VALIDATE_* passed to sm_validate() */
	/*
	 * Set by the caller around a reroute (NULL otherwise): outputs are then
	 * checked by sm_validate_incremental() against these previous routes.
	 */
	const struct sm_validate_prev *prev;
	/*
	 * Set by the caller around a reroute (NULL otherwise): an engine with a
	 * reroute() hook (engine.h) starts from these routes when the fabric is
	 * theirs minus cables; with prev set too, only the LIDs it changed are
	 * validated again.
	 */
	const struct sm_validate_prev *reroute_from;
	/*
	 * Set by the caller around a reroute (NULL otherwise): when the accepted
	 * tables came from reroute(), *reroute_changed receives the engine's
	 * per-LID map of what it changed ([top_lid + 1], 1 = the LID's column
	 * may differ from reroute_from's; the caller frees it); else NULL.
	 * Also after hosts went or came back (reroute_nodes.h): the nodes are
	 * renumbered, the switch slots stay those of reroute_from's tables.
	 */
	uint8_t **reroute_changed;
};

/*
 * Parse "ftree, minhop" (comma separated, spaces ignored) and init each
 * engine with config_map[NAME] (config_map is a YAML mapping or NULL; doc
 * NULL if config_map is NULL). Errors: -EINVAL (empty spec, empty item,
 * name listed twice, more than SM_CHAIN_MAX), registry errors, or the
 * engine's init error ("updn: config line 7: ..."). The registry must
 * outlive the chain.
 */
int sm_chain_new(struct sm_registry *r, const char *spec, yaml_document_t *doc,
		 yaml_node_t *config_map, struct sm_chain **out, char *err, size_t errlen);
void sm_chain_free(struct sm_chain *c);  /* calls each engine's free; accepts NULL */

/* "ftree,minhop": the chain's names, for logs. */
void sm_chain_describe(const struct sm_chain *c, char *buf, size_t len);

/* One engine tried for one plane. */
struct sm_chain_attempt {
	const char *engine;             /* ops->name (valid while the registry lives) */
	int rc;                         /* 0 ok; engine error; -EBADMSG validation failed */
	double seconds;                 /* time in route() */
	double cpu_seconds;             /* the routing thread's CPU time in route() or reroute() */
	double validate_seconds;        /* time in sm_validate() (0 if not reached) */
	char why[320];                  /* reason it was passed over ("" when it routed) */
};

struct sm_plane_result {
	unsigned plane;
	int rc;                         /* 0 routed; negative errno when every engine failed */
	int engine_index;               /* index in the chain of the engine that routed, -1 none */
	const char *engine;             /* its name, NULL none */
	double route_seconds;           /* route() time of that engine */
	double route_cpu_seconds;       /* the CPU time of the routing thread in route() or reroute() */
	double validate_seconds;        /* sm_validate() time of its output */
	double total_seconds;           /* every attempt, validation included */
	unsigned n_attempts;
	struct sm_chain_attempt attempts[SM_CHAIN_MAX];
	char notes[256];                /* the routing engine's ctx->msg on success (warnings) */
	int rerouted;                   /* 1: the accepted tables came from the engine's reroute() */
	uint32_t reroute_lids;          /* then: the LIDs whose column it changed */
	char reroute_why[256];          /* why an engine with reroute() routed in full ("" otherwise) */
	struct sm_validation val;       /* validation of the accepted output (or the last attempt) */
};

/*
 * Route one plane with the chain. On success (return 0) *out is a new LFT
 * table owned by the caller (sm_lfts_free) and res->rc == 0. When every
 * engine fails: returns the last error (res->rc too), *out = NULL, and
 * res->attempts says why each one failed. -ENOMEM is returned at once.
 * An engine's route() is used when present; engines with only
 * route_planes are called with a one-plane list.
 */
int sm_route_chain(struct sm_chain *c, const struct sm_fabric *f, unsigned plane,
		   const struct sm_profile *profile, struct sm_lfts **out, struct sm_plane_result *res);

/*
 * Route several planes: for each engine in chain order, planes not yet
 * routed are given to route_planes() at once when the engine has it, else
 * to route() one by one; each plane's output is validated on its own, so a
 * plane can fall back while the others keep the first engine. outs[i] and
 * res[i] belong to planes[i]. Returns 0 if every plane routed, else the
 * first failing plane's error (the others are still routed and reported).
 */
int sm_route_chain_planes(struct sm_chain *c, const struct sm_fabric *f, const unsigned *planes,
			  unsigned n_planes, const struct sm_profile *profile, struct sm_lfts **outs,
			  struct sm_plane_result *res);

/* Multi-line human summary of a plane result ("plane0: routed by minhop in 12.3 ms; ftree: ..."). */
void sm_plane_result_format(const struct sm_plane_result *res, char *buf, size_t len);

#endif
