/* SPDX-License-Identifier: MIT */
/*
 * DOC: LID phase (sm.h "lids")
 *
 * LIDs come from sm_lidmgr_assign() (persisted file, then the fabric's,
 * then fresh; with cfg.lid_want the plane-consistent table's instead), the
 * table is saved atomically in cfg.state_dir, and every LID port whose
 * PortInfo differs is Set. Before any LID is set, each switch is checked
 * against the state: is what the state remembers of its LFT still there?
 */
#include "sm/phases.h"
#include "sm/state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Ports that carry a LID: switch port 0, reached CA/router ports. */
static int lid_port(const struct sm_core *c, uint32_t n, unsigned p)
{
	const struct sm_node *nd = &c->f->nodes[n];
	uint32_t idx = nd->port0 + p;
	if (nd->type == SM_NODE_SWITCH)
		return p == 0 && c->tab.pi_ok[idx];
	return p >= 1 && c->f->ports[idx].guid && c->tab.pi_ok[idx];
}

/*
 * Index in the state's fabric of switch n when what the state remembers of
 * its LFT still holds, else SM_NONE. Read before this bring-up set any LID:
 * a switch that rebooted comes back with LID 0 and LinearFDBTop 0; one that
 * another SM took over has other values.
 */
static uint32_t trusted_shadow(const struct sm_core *c, uint32_t n, uint16_t lid_read)
{
	const struct sm_state *st = c->state;
	const struct sm_node *nd = &c->f->nodes[n];
	const struct sm_fabric *sf = sm_state_fabric(st);
	if (!sf || nd->type != SM_NODE_SWITCH || !c->tab.si_ok[n] || !lid_read)
		return SM_NONE;
	uint32_t o = sm_fabric_find_node(sf, nd->guid);
	if (o == SM_NONE || o >= st->tab.n_shadow || sf->nodes[o].type != SM_NODE_SWITCH)
		return SM_NONE;
	const struct sm_lft_shadow *sh = &st->tab.shadow[o];
	if (!sh->n_blocks || sh->top != c->tab.si[n].lft_top ||
	    sf->ports[sf->nodes[o].port0].lid != lid_read)
		return SM_NONE;
	return o;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * sm_lidmgr_load(), or with a state the copy it kept of the same file
 * when the file is still that one (state.h lid_file): a file changed,
 * replaced or gone is read again, with the same errors.
 */
static int load_lids(struct sm_core *c, struct sm_lidmgr *m, const char *in, char *lerr, size_t lerrlen)
{
	struct sm_state *st = c->state;
	struct stat sb;
	int known = st && stat(in, &sb) == 0;

	if (known && st->lid_file_path && !strcmp(st->lid_file_path, in) && same_file(&sb, &st->lid_file_st))
		return sm_lidmgr_copy(m, &st->lid_file);
	int rc = sm_lidmgr_load(m, in, lerr, lerrlen);
	if (!st)
		return rc;
	free(st->lid_file_path);
	st->lid_file_path = NULL;
	sm_lidmgr_clear(&st->lid_file);
	if (rc || !known)
		return rc;
	st->lid_file_st = sb;
	if ((st->lid_file_path = strdup(in)) && sm_lidmgr_copy(&st->lid_file, m)) {
		free(st->lid_file_path);
		st->lid_file_path = NULL;
	}
	return rc;
}

int sm_phase_lids(struct sm_core *c, struct sm_summary *sum, char *err, size_t errlen)
{
	const struct sm_cfg *cfg = c->cfg;
	struct sm_fabric *f = c->f;
	struct sm_lidmgr m;
	char path[4096], lerr[512];
	const char *in = NULL;
	int rc, have_file = 0;
	uint16_t *cur = NULL;

	sm_lidmgr_init(&m);
	path[0] = '\0';
	if (cfg->state_dir)
		snprintf(path, sizeof(path), "%s/guid2lid", cfg->state_dir);
	in = cfg->guid2lid ? cfg->guid2lid : (path[0] ? path : NULL);
	if (in) {
		rc = load_lids(c, &m, in, lerr, sizeof(lerr));
		if (rc == -ENOENT && !cfg->guid2lid) {
			rc = 0;   /* first start */
		} else if (rc) {
			snprintf(err, errlen, "%s", lerr);
			goto out;
		} else {
			have_file = 1;
		}
	}
	cur = calloc((size_t)f->n_ports + 1, sizeof(*cur));
	if (!cur) {
		rc = -ENOMEM;
		goto out;
	}
	c->unconfigured = calloc((size_t)f->n_nodes + 1, 1);
	c->trusted = malloc(((size_t)f->n_nodes + 1) * sizeof(*c->trusted));
	if (!c->unconfigured || !c->trusted) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < f->n_ports; i++)
		if (c->tab.pi_ok[i])
			cur[i] = c->tab.pi[i].lid;
	for (uint32_t n = 0; n < f->n_nodes; n++) {
		c->unconfigured[n] = f->nodes[n].type == SM_NODE_SWITCH && !cur[f->nodes[n].port0];
		c->trusted[n] = trusted_shadow(c, n, cur[f->nodes[n].port0]);
	}
	if (cfg->lid_want) {
		/* plane-consistent LIDs: the wanted LIDs stand in for the fabric's */
		rc = cfg->lid_want(cfg->lid_want_arg, f, c->plane, cur, cur);
		if (rc) {
			snprintf(err, errlen, "plane-consistent LID assignment failed: %s",
				 rc == -ENOSPC ? "LID space exhausted" : strerror(-rc));
			goto out;
		}
	}
	rc = sm_lidmgr_assign(&m, f, c->plane, cfg->lmc, cur, NULL, &sum->lids, cfg->note, cfg->note_arg);
	if (rc) {
		snprintf(err, errlen, "LID assignment failed: %s", rc == -ENOSPC ? "LID space exhausted" :
			 strerror(-rc));
		goto out;
	}
	if (path[0] && (m.dirty || !have_file || cfg->guid2lid)) {
		/*
		 * A state file that cannot be written (disk full, read-only) must
		 * not take the subnet down: the LIDs are assigned in memory and
		 * the previous file is intact. Report it; the caller decides.
		 */
		if (sm_lidmgr_save(&m, path, lerr, sizeof(lerr))) {
			sum->state_errors++;
			snprintf(sum->state_err, sizeof(sum->state_err), "%s", lerr);
			sm_core_note(c, "cannot save LIDs: %s", lerr);
		}
	}
	uint32_t smp_idx = sm_port_index(f, c->tab.sm_node, c->tab.sm_portnum);
	uint16_t sm_lid = f->ports[smp_idx].lid;
	f->planes[c->plane].sm_lid = sm_lid;
	f->planes[c->plane].sm_port = smp_idx;
	f->planes[c->plane].subnet_prefix = cfg->subnet_prefix;
	sum->sm_lid = sm_lid;

	for (uint32_t n = 0; n < f->n_nodes && !rc; n++) {
		const struct sm_node *nd = &f->nodes[n];
		for (unsigned p = 0; p <= nd->nports && !rc; p++) {
			if (!lid_port(c, n, p))
				continue;
			uint32_t idx = nd->port0 + p;
			const struct sm_port *pt = &f->ports[idx];
			const struct sm_port_info *cp = &c->tab.pi[idx];
			/*
			 * SubnetTimeout goes out with every Set but is not compared:
			 * some SMAs (ibsim's) keep their own value, and re-setting
			 * every port on every run for it would defeat the point.
			 */
			if (cp->lid == pt->lid && cp->lmc == pt->lmc && cp->master_sm_lid == sm_lid &&
			    cp->gid_prefix == cfg->subnet_prefix && sm_set_keys_ok(c, n, p, cp))
				continue;
			struct sm_port_info_set s = {
				.lid = pt->lid, .lmc = pt->lmc, .sm_lid = sm_lid,
				.gid_prefix = cfg->subnet_prefix, .subnet_timeout = cfg->subnet_timeout,
			};
			sm_set_keys(c, n, p, &s);
			struct sm_port_info out;
			uint8_t data[SM_SMP_DATA_SIZE];
			sm_port_info_prepare_set(&out, cp, &s);
			sm_port_info_encode(&out, data);
			rc = sm_set_submit(c, SM_ATTR_PORT_INFO, p, n, data, SM_RQ_PI_SET_LID, (uint16_t)p, 0);
			c->pi_lid_sets++;
		}
	}
	if (!rc)
		rc = sm_core_run(c);
	if (rc)
		snprintf(err, errlen, "setting LIDs failed: %s", strerror(-rc));
out:
	free(cur);
	sm_lidmgr_clear(&m);
	return rc;
}
