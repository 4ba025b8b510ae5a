/* SPDX-License-Identifier: MIT */
/*
 * DOC: smd --once over several planes
 *
 * Opens one transport per plane spec (umad:CA:PORT, mock:DUMP,
 * ibsim:NODE), one routing chain per plane, the shared plane-consistent
 * LID table in the state directory, then runs sm_multiplane_bringup() and
 * prints one line per plane (or JSON). Exit 0 when every plane is up,
 * 1 when any plane failed (the others are up and stay configured).
 */
#include "config/options.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "sm/multiplane.h"
#include "mock/open.h"
#include "routing/registry.h"
#include "config/smdconf.h"
#include "sm/mcast.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plane_note {
	unsigned plane;
	unsigned n;
};

static void plane_note(void *arg, const char *msg)
{
	struct plane_note *pn = arg;
	if (pn->n++ < 20)
		sm_notice("SMD-0401", "plane %u: %s", pn->plane, msg);
	else
		sm_debug("SMD-0401", "plane %u: %s", pn->plane, msg);
}

static void lids_note(void *arg, const char *msg)
{
	(void)arg;
	sm_notice("SMD-0402", "%s", msg);
}

/* Open one plane's transport (mad/open.h: umad, ibsim, mock); failures go to open_err. */
static void open_plane(struct sm_mp_plane *pl, const char *spec, struct sm_plane_port *port)
{
	char err[512] = "";
	int rc;

	snprintf(pl->name, sizeof(pl->name), "%s", spec);
	rc = sm_transport_open_spec(spec, sm_backends, port, err, sizeof(err));
	if (rc)
		snprintf(pl->open_err, sizeof(pl->open_err), "%s", err[0] ? err : strerror(-rc));
	pl->t = port->t;
}

int smd_once_planes(const struct smd_opts *o, struct smd_conf *conf)
{
	struct sm_mp_plane *planes = NULL;
	struct sm_plane_port ports[SM_MAX_PLANES] = { 0 };
	struct plane_note notes[SM_MAX_PLANES];
	struct sm_registry *reg = NULL;
	struct sm_plane_lids *lids = NULL;
	struct sm_mp_cfg mp;
	struct sm_keys keys;
	const char *specs[SM_MAX_PLANES];
	unsigned n = conf->n_planes;
	char err[1024] = "";
	int status = 1, rc;

	for (unsigned i = 0; i < n; i++)
		specs[i] = conf->planes[i];
	if (!n && o->backend && !strcmp(o->backend, "ibsim")) {
		specs[0] = "ibsim:";
		n = 1;
	}
	planes = calloc(n ? n : 1, sizeof(*planes));
	reg = sm_registry_new(conf->plugin_dir);
	if (!planes || !reg) {
		sm_err("SMD-0403", "out of memory");
		goto out;
	}
	char chain_spec[SMD_CONF_MAX_CHAIN * (SMD_CONF_NAME_MAX + 2)];
	smd_conf_chain_str(conf, chain_spec, sizeof(chain_spec));
	/* every plane's routing chain first: a bad engine is refused before any port is opened */
	for (unsigned i = 0; i < n; i++) {
		rc = sm_chain_new(reg, chain_spec, conf->doc, conf->engines_map, &planes[i].chain, err,
				  sizeof(err));
		if (rc) {
			smd_conf_chain_error(conf, chain_spec, err, sizeof(err));
			sm_err("SMD-0405", "routing: %s", err);
			goto out;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		planes[i].index = i;
		open_plane(&planes[i], specs[i], &ports[i]);
		if (!planes[i].t)
			sm_err("SMD-0404", "plane %u (%s): %s", i, specs[i], planes[i].open_err);
		/* a mock plane: smd.yaml's mock keys and --seed (fault injection) */
		sm_mock_port_faults(&ports[i], conf->mock.loss_ppm, conf->mock.corrupt_ppm, conf->mock.delay_ppm,
				    conf->mock.delay_ms * 1000u, conf->mock.seed);
	}
	memset(&mp, 0, sizeof(mp));
	sm_cfg_default(&mp.base);
	mp.base.lmc = (unsigned)conf->lmc;
	mp.base.subnet_prefix = conf->subnet_prefix;
	mp.base.subnet_timeout = (uint8_t)conf->subnet_timeout;
	mp.base.portcfg = &conf->portcfg;
	if (conf->mad.window)
		mp.base.txn.window = conf->mad.window;
	if (conf->mad.per_switch_window)
		mp.base.txn.per_dest = conf->mad.per_switch_window;
	if (conf->mad.timeout_ms)
		mp.base.txn.timeout_ms = conf->mad.timeout_ms;
	mp.base.txn.retries = conf->mad.retries;
	mp.retries = 1;
	mp.base.profile_path = o->profile;
	mp.base.partitions = conf->partitions;
	if (smd_once_lids_open(conf, lids_note, NULL, &lids))   /* smd/smd_once.c */
		goto out;
	mp.lids = lids;
	rc = sm_keys_open(conf->state_dir, &conf->keys, &keys, lids_note, NULL, err, sizeof(err));
	if (rc) {
		sm_err("SMD-0802", "keys: %s", err[0] ? err : strerror(-rc));
		goto out;
	}
	mp.base.keys = sm_keys_active(&keys) || keys.sm_key ? &keys : NULL;
	for (unsigned i = 0; i < n; i++) {
		struct sm_mc_set *mc;

		/* the broadcast groups are programmed in this one bring-up (smd/smd_once.c) */
		if (smd_once_mcast(conf, i, mp.base.subnet_timeout, &mc))
			goto out;
		planes[i].mcast = mc;
		notes[i] = (struct plane_note){ .plane = i };
		planes[i].note = plane_note;
		planes[i].note_arg = &notes[i];
	}
	uint64_t t0 = sm_mono_us();
	unsigned down = sm_multiplane_bringup(planes, n, &mp);
	double wall = (double)(sm_mono_us() - t0) / 1e6;
	rc = sm_plane_lids_save(lids, err, sizeof(err));
	if (rc)
		sm_err("SMD-0407", "cannot save plane-consistent LIDs: %s", err);
	if (o->json)
		sm_multiplane_print_json(stdout, planes, n, wall, lids);
	else if (!o->quiet)
		sm_multiplane_print(stdout, planes, n, wall, lids);
	fflush(stdout);
	unsigned incomplete = 0;
	for (unsigned i = 0; i < n; i++) {
		if (planes[i].rc) {
			sm_err("SMD-0408", "plane %u (%s) is not up: %s", i, planes[i].name, planes[i].err);
		} else if (planes[i].heavy && planes[i].sum.incomplete) {
			sm_err("SMD-0409", "plane %u (%s): bring-up incomplete: %u answer%s lost or Set%s failed "
			       "(first: %s); run it again", i, planes[i].name, planes[i].sum.incomplete,
			       planes[i].sum.incomplete == 1 ? "" : "s", planes[i].sum.incomplete == 1 ? "" : "s",
			       planes[i].sum.incomplete_why);
			incomplete++;
		}
	}
	status = down || incomplete || rc ? 1 : 0;
out:
	for (unsigned i = 0; planes && i < n; i++) {
		sm_chain_free(planes[i].chain);
		sm_mc_set_unref(planes[i].mcast);
		sm_plane_port_close(&ports[i]);
	}
	free(planes);
	sm_plane_lids_free(lids);
	sm_registry_free(reg);
	return status;
}
