/* SPDX-License-Identifier: MIT */
#ifndef SMD_SMDCONF_H
#define SMD_SMDCONF_H
/*
 * DOC: smd configuration (YAML, see conf/smd.yaml and smd.yaml(5))
 *
 * (Named smdconf.h, not config.h: smd/smd.c and smd/smctl.c include the
 * autoconf "config.h", and a quoted include looks in the including file's
 * own folder first, so a smd/config.h would shadow it.)
 *
 * Data flow: smd_conf_load() parses a file into a NEW struct smd_conf and
 * validates every key; on any error it returns a negative errno, frees
 * everything and leaves the caller's current config alone, so a bad reload
 * changes nothing (the caller swaps pointers only on success). Then
 * smd_conf_apply_opts() lays the command-line options over it (the command
 * line always wins).
 *
 * Every message has the form "FILE:LINE: what is wrong" (line from the
 * libyaml marks, 1-based). Unknown keys, wrong types and out-of-range
 * values are errors, never ignored.
 *
 * Engine subtrees (`engines: {NAME: {...}}`) are not interpreted here: the
 * struct keeps the parsed yaml_document_t alive and hands each engine its
 * node for sm_engine_ops.init(doc, node). The document is owned by the
 * struct and freed with it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/fabric.h"
#include "sm/mkey.h"
#include "sm/portcfg.h"

struct smd_opts;
struct sm_partitions;
typedef struct yaml_document_s yaml_document_t;
typedef struct yaml_node_s yaml_node_t;

#define SMD_CONF_MAX_CHAIN 8          /* engines in one chain */
#define SMD_CONF_MAX_ENGINES 32       /* entries under engines: */
#define SMD_CONF_NAME_MAX 31          /* engine name length */
#define SMD_CONF_DEFAULT_CHAIN "ftree,minhop"

enum smd_plane_kind { SMD_PLANE_UMAD = 0, SMD_PLANE_MOCK, SMD_PLANE_IBSIM };

/* A parsed plane spec: "umad:CA:PORT", "mock:FILE" or "ibsim:NODE". */
struct smd_plane_spec {
	enum smd_plane_kind kind;
	char arg[256];          /* CA name, dump file or ibsim node id */
	unsigned port;          /* umad: port number 1..254, else 0 */
};

struct smd_conf_engine {
	char name[SMD_CONF_NAME_MAX + 1];
	yaml_node_t *node;      /* the engine's subtree in conf->doc; NULL when empty */
	unsigned line;          /* where the entry starts, for engines' messages */
};

/* Fault injection on mock planes (mock/mock.h sm_mock_set_faults; smd.yaml(5) mock). */
struct smd_conf_mock {
	uint32_t loss_ppm;      /* SMPs lost (half the requests, half the answers) */
	uint32_t corrupt_ppm;   /* answers corrupted (detectably) */
	uint32_t delay_ppm;     /* answers held back by delay_ms */
	unsigned delay_ms;
	unsigned seed;          /* the faults' RNG seed (--seed N overrides) */
};

#define SMD_CONF_TRAP_HOLDOFF_MS 10   /* default of trap_holdoff_ms */

struct smd_conf {
	char *source;           /* file it came from, "(defaults)" otherwise */
	char chain[SMD_CONF_MAX_CHAIN][SMD_CONF_NAME_MAX + 1];
	unsigned n_chain;
	char *plugin_dir;
	int lmc;                /* 0..7 */
	char *state_dir;
	char *guid2lid_file;    /* NULL: <state_dir>/guid2lid */
	char *partition_config_file; /* partitions (model/partitions.h); NULL: none configured */
	struct sm_partitions *partitions; /* that file, loaded with the config (and on reload); without one,
					   * smd_conf_apply_opts() sets sm_partitions_default() (OpenSM's) */
	char *planes[SM_MAX_PLANES];
	unsigned n_planes;
	char *socket;
	char *socket_group;     /* group allowed on the control socket besides root/smd's user; NULL none */
	unsigned sweep_interval; /* seconds between light sweeps; 0 = none */
	unsigned trap_holdoff_ms; /* trap 128 -> heavy sweep delay (both ends of a link trap) */
	int incremental_sweep;    /* trap/light-escalated sweeps patch the known fabric (default 1) */
	unsigned sm_priority;         /* election priority 0..15 (sm/election.h) */
	unsigned sm_poll_interval_ms; /* standby: ms between polls of the master */
	unsigned sm_poll_retries;     /* standby: unanswered polls in a row before taking over */
	unsigned sweep_stall_limit; /* seconds a cycle may run before the watchdog stops; 0 = never */
	struct {
		unsigned window;            /* SMPs in flight, whole SM */
		unsigned per_switch_window; /* SMPs in flight towards one switch */
		unsigned timeout_ms;
		unsigned retries;
	} mad;
	struct smd_conf_mock mock; /* fault injection on mock planes */
	int log_level;          /* enum sm_log_level */
	unsigned log_repeat_interval; /* seconds between repeats of an unchanged failure line; 0 = every sweep */
	uint64_t subnet_prefix;
	/* security (issue 8): M_Key/SM_Key (smd/sm/mkey.h) and the user to run as */
	struct sm_keys_cfg keys; /* m_key, m_key_protect_bits, m_key_lease_period, sm_key */
	/* m_key: derived: the secret file as a reload read it (daemon/reload.c; 0: not read) */
	uint8_t mkey_secret[2][16];
	uint8_t mkey_nsecrets;
	char *user;             /* NULL: keep running as started */
	char *group;            /* NULL: the user's primary group */
	char *metrics_listen;   /* "ADDRESS:PORT" of the HTTP metrics endpoint (ctl/http.h); NULL: none */
	/* port configuration (issue 14): OpenSM's link/QoS options, the qos section (sm/portcfg.h) */
	unsigned subnet_timeout;       /* PortInfo.SubnetTimeOut 0..31 */
	struct sm_portcfg portcfg;
	yaml_document_t *doc;   /* NULL for the defaults */
	yaml_node_t *engines_map; /* the engines: mapping (for sm_chain_new), NULL if none */
	struct smd_conf_engine engines[SMD_CONF_MAX_ENGINES];
	unsigned n_engines;
	unsigned chain_line;     /* line of routing_engine in source; 0: defaults, -R or set_chain */
};

/* A config holding the defaults (the values documented in smd.yaml(5)). NULL on ENOMEM. */
struct smd_conf *smd_conf_new(void);
void smd_conf_free(struct smd_conf *c);   /* accepts NULL */

/* Bounds on what is parsed at all (issue 18: a huge or deep file must not stall anyone). */
#define SMD_CONF_MAX_BYTES (1u << 20)   /* 1 MiB */
#define SMD_CONF_MAX_DEPTH 32           /* nested mappings and lists */

/*
 * Parse and validate a YAML file into a new config. A file that is not
 * regular (opened O_NONBLOCK, so a FIFO never blocks), larger than
 * SMD_CONF_MAX_BYTES or nested deeper than SMD_CONF_MAX_DEPTH is refused. 0 and *out, or a
 * negative errno (-ENOENT etc. from fopen, -EINVAL for any content error,
 * -ENOMEM) with "FILE:LINE: ..." in err; *out untouched on error.
 */
int smd_conf_load(const char *path, struct smd_conf **out, char *err, size_t errlen);
int smd_conf_load_stream(FILE *in, const char *name, struct smd_conf **out,
			 char *err, size_t errlen);

/*
 * Lay the command-line options over c: -R, --lmc, --seed, --state-dir, --guid2lid,
 * --socket, --plane (replaces the whole list), -v/-q (log level). -EINVAL
 * with a message naming the option when a value is invalid.
 */
int smd_conf_apply_opts(struct smd_conf *c, const struct smd_opts *o, char *err, size_t errlen);

/* Replace the chain from "a,b,c" (spaces around names allowed). */
int smd_conf_set_chain(struct smd_conf *c, const char *chain, char *err, size_t errlen);
/* The chain as "a,b,c" into buf. */
void smd_conf_chain_str(const struct smd_conf *c, char *buf, size_t len);

/*
 * Name the file and line in an error of sm_chain_new(reg, chain, c->doc,
 * c->engines_map, ...), in place: an engine's "ENGINE: [config ]line N:
 * text" becomes "SOURCE:N: ENGINE: text"; any other error about a chain
 * that is the one read from the file becomes "SOURCE:LINE: routing_engine
 * CHAIN: text". Left as it is otherwise (defaults, -R).
 */
void smd_conf_chain_error(const struct smd_conf *c, const char *chain, char *err, size_t errlen);

/* The engines: entry for `name`, NULL when the config has none. */
const struct smd_conf_engine *smd_conf_engine(const struct smd_conf *c, const char *name);

/* Parse a plane spec; -EINVAL with a message (without file/line) on error. */
int smd_plane_spec_parse(const char *spec, struct smd_plane_spec *ps, char *err, size_t errlen);

/*
 * Write c as smd.yaml text (config/print.c): every key of the table, with
 * the value c has (defaults included), so smd_conf_load() of the output
 * gives the same config. SMD_CONF_PRINT_HIDE_KEYS: fixed m_key/sm_key
 * values are written as comments. 0 or -EIO.
 */
#define SMD_CONF_PRINT_HIDE_KEYS 1u
int smd_conf_print(FILE *out, const struct smd_conf *c, unsigned flags);

/*
 * A share as smd.yaml and smctl faults write it: "25%", "0.5%", "0.0001%"
 * (at most 4 decimals, at most 100%) or "0", into parts per million.
 * 0 or -EINVAL. smd_conf_percent_str: the same text back ("25%").
 */
int smd_conf_percent_parse(const char *s, uint32_t *ppm);
void smd_conf_percent_str(uint32_t ppm, char *buf, size_t len);

/* "error", "warning", "notice", "info", "debug"; -1 for an unknown name. */
int smd_log_level_parse(const char *name);
const char *smd_log_level_name(int level);

#endif
