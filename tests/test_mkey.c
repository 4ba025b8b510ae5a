/* SPDX-License-Identifier: MIT */
/*
 * M_Key and the keys file (issue 8): smd/sm/mkey.c decisions and file, the
 * mock's M_Key enforcement (IBA 14.2.4), and sm_bringup() with keys:
 *  - a protected fabric is managed again by a second run that reads the
 *    key back from the state directory (no Set needed, no violation);
 *  - a run with a wrong or missing key changes nothing (every Set is
 *    refused) and says why; at protect bits 2 not even a Get is answered;
 *  - the lease period lifts protection after violations;
 *  - m_key: none with a persisted key clears the keys on the ports;
 *  - the keys file is 0600, written atomically, refused when damaged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mad/codec.h"
#include "sm/mkey.h"
#include "mock/mock.h"
#include "sm/sm.h"
#include "config/smdconf.h"
#include "sm/sminfo.h"
#include "fixture/fixture.h"
#include "fixture/mock_fabric.h"

/* two_switch() on the mock with the SM attached (fixture.h). */
static void env_init(struct fx_env *e)
{
	fx_env_init(e, two_switch(), NULL, NULL, "mkey");
}

static void keys_for(const struct fx_env *e, uint8_t mode, uint64_t key, uint8_t prot, uint16_t lease,
		     struct sm_keys *k)
{
	struct sm_keys_cfg kc = { .mkey_mode = mode, .mkey = key, .protect_bits = prot,
				  .lease_period = lease };
	char err[600] = "";
	if (sm_keys_open(e->dir, &kc, k, NULL, NULL, err, sizeof(err)))
		fail_msg("keys: %s", err);
}

static int run(struct fx_env *e, const struct sm_keys *k, struct sm_summary *sum, char *err, size_t errlen)
{
	struct sm_cfg cfg;
	sm_cfg_default(&cfg);
	cfg.state_dir = e->dir;
	cfg.keys = k;
	/* a protected plane drops SMPs: give up fast, it is virtual time anyway */
	cfg.dead_after = 16;
	return sm_bringup(e->t, e->chain, &cfg, sum, NULL, err, errlen);
}

/* Every SMA (switch port 0, CA ports) of the mock holds key/prot/lease. */
static void check_keys(struct fx_env *e, uint64_t key, uint8_t prot, uint16_t lease)
{
	const struct sm_fabric *mf = sm_mock_fabric(e->mock);
	struct sm_mock_port_state st;
	unsigned n_sma = 0;

	for (uint32_t n = 0; n < mf->n_nodes; n++) {
		const struct sm_node *nd = &mf->nodes[n];
		for (unsigned p = 0; p <= nd->nports; p++) {
			if ((nd->type == SM_NODE_SWITCH) != (p == 0))
				continue;
			if (nd->type != SM_NODE_SWITCH && mf->ports[nd->port0 + p].peer_node == SM_NONE)
				continue;   /* an unconnected CA port is never reached */
			assert_int_equal(sm_mock_port_state(e->mock, nd->port0 + p, &st), 0);
			if (st.mkey != key || st.mkey_prot_bits != prot || st.mkey_lease_period != lease)
				fail_msg("%s port %u: key 0x%llx prot %u lease %u, want 0x%llx %u %u", nd->desc, p,
					 (unsigned long long)st.mkey, st.mkey_prot_bits, st.mkey_lease_period,
					 (unsigned long long)key, prot, lease);
			n_sma++;
		}
	}
	assert_int_equal(n_sma, 2 + 4);
}

/* env_init(), then a first run that protects every port with these keys (checked). */
static void protected_env(struct fx_env *e, struct sm_keys *k, uint8_t mode, uint64_t key, uint8_t prot,
			  uint16_t lease)
{
	struct sm_summary sum;
	char err[1024] = "";
	env_init(e);
	keys_for(e, mode, key, prot, lease, k);
	if (run(e, k, &sum, err, sizeof(err)))
		fail_msg("protecting run: %s", err);
	check_keys(e, k->mkey, prot, lease);
}

/* PortInfo Sets and LIDs of the whole mock, to show a refused run changed nothing. */
static uint64_t port_fingerprint(struct fx_env *e)
{
	const struct sm_fabric *mf = sm_mock_fabric(e->mock);
	struct sm_mock_port_state st;
	uint64_t h = 1469598103934665603ULL;
	for (uint32_t i = 0; i < mf->n_ports; i++) {
		assert_int_equal(sm_mock_port_state(e->mock, i, &st), 0);
		h = (h ^ st.sets) * 1099511628211ULL;
		h = (h ^ st.lid) * 1099511628211ULL;
		h = (h ^ st.state) * 1099511628211ULL;
		h = (h ^ st.mkey) * 1099511628211ULL;
	}
	return h;
}

static void test_keys_file(void **state)
{
	struct fx_env e;
	struct sm_keys k1, k2;
	struct sm_keys_cfg kc = { .mkey_mode = SM_KEY_RANDOM, .protect_bits = 2, .smkey_mode = SM_KEY_RANDOM };
	char err[600] = "", path[128];
	struct stat st;
	FILE *f;

	(void)state;
	env_init(&e);
	umask(022);
	assert_int_equal(sm_keys_open(e.dir, &kc, &k1, NULL, NULL, err, sizeof(err)), 0);
	assert_true(k1.mkey != 0);
	assert_int_equal(k1.set_mkey, k1.mkey);
	assert_true(k1.sm_key != 0);
	snprintf(path, sizeof(path), "%s/keys", e.dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* a second start keeps both keys */
	assert_int_equal(sm_keys_open(e.dir, &kc, &k2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(k2.mkey, k1.mkey);
	assert_int_equal(k2.sm_key, k1.sm_key);
	/* a loosened file is tightened back */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(sm_keys_open(e.dir, &kc, &k2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* a fixed key replaces it in the file */
	kc.mkey_mode = SM_KEY_FIXED;
	kc.mkey = 0x1122334455667788ULL;
	assert_int_equal(sm_keys_open(e.dir, &kc, &k2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(k2.mkey, 0x1122334455667788ULL);
	uint64_t fm, fs;
	assert_int_equal(sm_keys_load(path, &fm, &fs, err, sizeof(err)), 0);
	assert_int_equal(fm, 0x1122334455667788ULL);
	assert_int_equal(fs, k1.sm_key);
	/* a damaged file is refused with FILE:LINE, never replaced */
	static const struct { const char *text, *want; } damaged[] = {
		{ "# comment\nm_key 0x12\nm_key nonsense\n", "/keys:3:" },
		{ "m_key 0x12\nm_key 0x13\n", "/keys:2: duplicate" },
		{ "s_key 0x12\n", "/keys:1: unknown key 's_key'" },
	};
	kc.mkey_mode = SM_KEY_RANDOM;
	for (unsigned i = 0; i < sizeof(damaged) / sizeof(damaged[0]); i++) {
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(damaged[i].text, f);
		fclose(f);
		assert_int_equal(sm_keys_open(e.dir, &kc, &k2, NULL, NULL, err, sizeof(err)), -EINVAL);
		if (!strstr(err, damaged[i].want))
			fail_msg("'%s' lacks '%s'", err, damaged[i].want);
	}
	/* random without a state directory has nowhere to keep the key */
	assert_int_equal(sm_keys_open(NULL, &kc, &k2, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "random needs a state directory"));
	fx_env_free(&e);
}

static void put_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static size_t get_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n;
}

/* The keys file is sealed (issue 18): damage is refused loudly, never read as "no keys". */
static void test_keys_file_sealed(void **state)
{
	struct fx_env e;
	struct sm_keys k1, k2;
	struct sm_keys_cfg kc = { .mkey_mode = SM_KEY_RANDOM, .protect_bits = 2, .smkey_mode = SM_KEY_RANDOM };
	char err[600] = "", path[128], good[512], bad[512];
	size_t n;

	(void)state;
	env_init(&e);
	assert_int_equal(sm_keys_open(e.dir, &kc, &k1, NULL, NULL, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/keys", e.dir);
	n = get_file(path, good, sizeof(good));
	assert_true(!strncmp(good, "# smd-state v1 crc32=", 21));
	/* a flipped bit in the key, zeros, a cut, an emptied file: refused with the file's name */
	static const char *why[] = { "crc", "NUL", "crc", "no key" };
	for (unsigned i = 0; i < 4; i++) {
		size_t bl = n;
		memcpy(bad, good, n);
		if (i == 0)
			bad[n - 3] ^= 0x01;
		else if (i == 1)
			memset(bad, 0, n);
		else if (i == 2)
			bl = n - 10;
		else
			bl = 0;
		put_file(path, bad, bl);
		memset(&k2, 0xAB, sizeof(k2));
		assert_int_equal(sm_keys_open(e.dir, &kc, &k2, NULL, NULL, err, sizeof(err)), -EINVAL);
		if (!strstr(err, "/keys:") || !strcasestr(err, why[i]))
			fail_msg("case %u: '%s' lacks the file or '%s'", i, err, why[i]);
		/* the damaged file is left for the admin to see, not replaced by new keys */
		char now[512];
		assert_int_equal(get_file(path, now, sizeof(now)), bl);
	}
	/* an older smd's unsealed file is read, and written again sealed */
	snprintf(bad, sizeof(bad), "# smd keys\nm_key 0x%016llx\nsm_key 0x%016llx\n",
		 (unsigned long long)k1.mkey, (unsigned long long)k1.sm_key);
	put_file(path, bad, strlen(bad));
	assert_int_equal(sm_keys_open(e.dir, &kc, &k2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(k2.mkey, k1.mkey);
	assert_int_equal(k2.sm_key, k1.sm_key);
	get_file(path, good, sizeof(good));
	assert_true(!strncmp(good, "# smd-state v1 crc32=", 21));
	fx_env_free(&e);
}

static void test_protect_and_manage_again(void **state)
{
	struct fx_env e;
	struct sm_keys k;
	struct sm_summary sum;
	struct sm_mock_stats ms;
	char err[1024] = "";

	(void)state;
	protected_env(&e, &k, SM_KEY_RANDOM, 0, 2, 0);
	/* a second smd: keys from the state directory, everything found and nothing to Set */
	struct sm_keys k2;
	keys_for(&e, SM_KEY_RANDOM, 0, 2, 0, &k2);
	assert_int_equal(k2.mkey, k.mkey);
	if (run(&e, &k2, &sum, err, sizeof(err)))
		fail_msg("second run: %s", err);
	assert_int_equal(sum.counts.nodes, 6);
	assert_int_equal(sum.portinfo_lid_sets, 0);
	assert_int_equal(sum.portinfo_state_sets, 0);
	assert_int_equal(sum.lids.from_file, 6);
	assert_int_equal(sum.active_ports, sum.link_ports);
	assert_int_equal(sum.mkey_foreign, 0);
	assert_int_equal(sum.mkey_violations, 0);
	sm_mock_stats(e.mock, &ms);
	assert_int_equal(ms.mkey_violations, 0);
	/* a configuration change of protect bits/lease is applied to every port */
	keys_for(&e, SM_KEY_RANDOM, 0, 1, 60, &k2);
	assert_int_equal(run(&e, &k2, &sum, err, sizeof(err)), 0);
	assert_int_equal(sum.portinfo_lid_sets, 6);
	check_keys(&e, k.mkey, 1, 60);
	fx_env_free(&e);
}

/*
 * Every SMP smd sends carries the key, retries included, on a lossy fabric
 * with links retraining (state Sets again). (The read-back of a refused
 * retried state Set is not reached here: the mock accepts repeats.)
 */
static void test_every_smp_has_the_key(void **state)
{
	struct fx_env e;
	struct sm_keys k;
	struct sm_summary sum;
	struct sm_mock_stats ms;
	char err[1024] = "";

	(void)state;
	/* the first run protects every port (no faults) */
	protected_env(&e, &k, SM_KEY_RANDOM, 0, 3, 0);
	/* then a lossy fabric with few retries: many SMPs retried or given up */
	sm_mock_set_faults(e.mock, 300000, 0, 50000, 0);   /* 30% dropped, 5% late */
	for (int i = 0; i < 8; i++) {
		struct sm_cfg cfg;
		sm_cfg_default(&cfg);
		cfg.state_dir = e.dir;
		cfg.keys = &k;
		cfg.txn.retries = 1;
		cfg.dead_after = 0;
		/* links back to INIT: the state Sets (and their read-backs) run again */
		assert_int_equal(sm_mock_link_down(e.mock, TF_S1, 3), 0);
		assert_int_equal(sm_mock_link_down(e.mock, TF_S2, 4), 0);
		assert_int_equal(sm_mock_link_up(e.mock, TF_S1, 3), 0);
		assert_int_equal(sm_mock_link_up(e.mock, TF_S2, 4), 0);
		(void)sm_bringup(e.t, e.chain, &cfg, &sum, NULL, err, sizeof(err));   /* may fail: lossy */
	}
	sm_mock_stats(e.mock, &ms);
	assert_true(ms.fault_dropped > 0);
	assert_int_equal(ms.mkey_violations, 0);
	sm_mock_set_faults(e.mock, 0, 0, 0, 0);
	if (run(&e, &k, &sum, err, sizeof(err)))
		fail_msg("after the faults: %s", err);
	check_keys(&e, k.mkey, 3, 0);
	fx_env_free(&e);
}

static void test_wrong_key_refused(void **state)
{
	struct fx_env e;
	struct sm_keys k, wrong;
	struct sm_summary sum;
	struct sm_mock_stats ms;
	char err[1024] = "";
	uint64_t fp;

	(void)state;
	env_init(&e);
	keys_for(&e, SM_KEY_FIXED, 0x5EC0DE5EC0DE0001ULL, 2, 0, &k);
	assert_int_equal(run(&e, &k, &sum, err, sizeof(err)), 0);
	fp = port_fingerprint(&e);

	/* protect bits 2: a wrong key gets no answer at all, from the SM's own port on */
	memset(&wrong, 0, sizeof(wrong));
	wrong.mkey = wrong.set_mkey = 0x0BADBADBADBAD000ULL;
	assert_int_not_equal(run(&e, &wrong, &sum, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "M_Key"));
	assert_int_equal(port_fingerprint(&e), fp);
	sm_mock_stats(e.mock, &ms);
	assert_true(ms.mkey_violations > 0);
	/* no key at all: the same */
	assert_int_not_equal(run(&e, NULL, &sum, err, sizeof(err)), 0);
	assert_int_equal(port_fingerprint(&e), fp);

	/* protect bits 1: Gets are answered (key hidden), every Set is refused */
	keys_for(&e, SM_KEY_FIXED, 0x5EC0DE5EC0DE0001ULL, 1, 0, &k);
	assert_int_equal(run(&e, &k, &sum, err, sizeof(err)), 0);
	check_keys(&e, k.mkey, 1, 0);
	fp = port_fingerprint(&e);
	err[0] = '\0';
	int rc = run(&e, &wrong, &sum, err, sizeof(err));
	/* every port reads protected (key hidden); the Sets giving them the wrong key are refused */
	assert_int_equal(rc, -EACCES);
	assert_int_equal(sum.counts.nodes, 6);
	assert_int_equal(sum.mkey_foreign, 6);
	assert_true(sum.set_errors >= 6);
	assert_non_null(strstr(err, "protected by an M_Key smd does not hold"));
	check_keys(&e, k.mkey, 1, 0);
	/* the refused Sets changed nothing (sets counters count applied Sets only) */
	assert_int_equal(port_fingerprint(&e), fp);
	/* and the ports counted the violations, which the next (right) run reports */
	assert_int_equal(run(&e, &k, &sum, err, sizeof(err)), 0);
	assert_true(sum.mkey_violations >= 6);
	assert_int_equal(sum.mkey_foreign, 0);
	fx_env_free(&e);
}

static void test_lease_expires(void **state)
{
	struct fx_env e;
	struct sm_keys k, other;
	struct sm_summary sum;
	struct sm_mock_stats ms;
	char err[1024] = "";

	(void)state;
	protected_env(&e, &k, SM_KEY_FIXED, 0x1EA5E1EA5E000001ULL, 2, 30);
	memset(&other, 0, sizeof(other));
	other.mkey = other.set_mkey = 0x07E507E507E50000ULL;
	/* violations start the lease timers; within the lease nothing answers */
	assert_int_not_equal(run(&e, &other, &sum, err, sizeof(err)), 0);
	sm_mock_advance_us(e.mock, 31u * 1000000u);
	/* the lease ran out: the SM's port and what it reaches answer Gets again */
	err[0] = '\0';
	(void)run(&e, &other, &sum, err, sizeof(err));
	sm_mock_stats(e.mock, &ms);
	assert_true(ms.mkey_leases_expired >= 1);
	assert_true(sum.counts.nodes >= 1);
	assert_true(sum.mkey_foreign >= 1);   /* protect bits 0 now: the other key is shown */
	fx_env_free(&e);
}

static void test_off_clears_keys(void **state)
{
	struct fx_env e;
	struct sm_keys k, off;
	struct sm_summary sum;
	char err[1024] = "";

	(void)state;
	protected_env(&e, &k, SM_KEY_RANDOM, 0, 3, 0);
	/* m_key: none with the key persisted: reach the ports with it and clear it */
	keys_for(&e, SM_KEY_NONE, 0, 0, 0, &off);
	assert_int_equal(off.mkey, k.mkey);
	assert_int_equal(off.set_mkey, 0);
	assert_true(sm_keys_active(&off));
	if (run(&e, &off, &sum, err, sizeof(err)))
		fail_msg("clearing run: %s", err);
	check_keys(&e, 0, 0, 0);
	fx_env_free(&e);
}

static int conf_str(const char *text, struct smd_conf **c, char *err, size_t errlen)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	assert_non_null(in);
	int rc = smd_conf_load_stream(in, "t.yaml", c, err, errlen);
	fclose(in);
	return rc;
}

static void test_config_keys(void **state)
{
	struct smd_conf *c = NULL;
	char err[600] = "";

	(void)state;
	assert_int_equal(conf_str("m_key: 0x0123456789abcdef\nm_key_protect_bits: 2\n"
				  "m_key_lease_period: 60\nsm_key: random\nuser: root\ngroup: root\n",
				  &c, err, sizeof(err)), 0);
	assert_int_equal(c->keys.mkey_mode, SM_KEY_FIXED);
	assert_int_equal(c->keys.mkey, 0x0123456789abcdefULL);
	assert_int_equal(c->keys.protect_bits, 2);
	assert_int_equal(c->keys.lease_period, 60);
	assert_int_equal(c->keys.smkey_mode, SM_KEY_RANDOM);
	assert_string_equal(c->user, "root");
	assert_string_equal(c->group, "root");
	smd_conf_free(c);
	c = NULL;
	/* defaults: no M_Key; the SM_Key is OpenSM's default, 1, so the two SMs see each other */
	assert_int_equal(conf_str("lmc: 0\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c->keys.mkey_mode, SM_KEY_NONE);
	assert_int_equal(c->keys.smkey_mode, SM_KEY_FIXED);
	assert_true(c->keys.sm_key == 1);
	assert_null(c->user);
	smd_conf_free(c);
	c = NULL;
	static const struct { const char *text, *msg; } bad[] = {
		{ "m_key: 0\n", "t.yaml:1: m_key: 0 is no key" },
		{ "m_key: banana\n", "t.yaml:1: m_key: 'banana' is not none, random or a 64-bit number" },
		{ "m_key: 0x10000000000000000\n", "t.yaml:1: m_key: '0x10000000000000000' is not" },
		{ "lmc: 0\nm_key_protect_bits: 4\n", "t.yaml:2: m_key_protect_bits: 4 is out of range (0-3)" },
		{ "m_key_lease_period: 65536\n", "t.yaml:1: m_key_lease_period: 65536 is out of range" },
		{ "sm_key: [1]\n", "t.yaml:1: sm_key: expected none, random or a 64-bit key" },
		{ "user: no-such-user-smd\n", "t.yaml:1: user: no such user 'no-such-user-smd'" },
		{ "group: no-such-group-smd\n", "t.yaml:1: group: no such group 'no-such-group-smd'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(conf_str(bad[i].text, &c, err, sizeof(err)), -EINVAL);
		if (strncmp(err, bad[i].msg, strlen(bad[i].msg)))
			fail_msg("'%s': got '%s', want '%s...'", bad[i].text, err, bad[i].msg);
	}
}

static void test_sminfo_answer(void **state)
{
	struct sm_sminfo_self self = { .guid = 0x0002c90000000001ULL, .sm_key = 0x5EED5EED5EED5EEDULL,
				       .act_count = 7, .priority = 3, .state = SM_SMSTATE_MASTER };
	struct sm_dr_path path = { .cnt = 1, .hops = { 0, 1 } };
	struct sm_smp req, resp;
	struct sm_sm_info in, out;

	(void)state;
	/* a Get without the key: everything but the key */
	sm_smp_init_lid(&req, SM_METHOD_GET, SM_ATTR_SM_INFO, 0);
	req.tid = 0x1234;
	assert_int_equal(sm_sminfo_answer(&req, &self, &resp), 1);
	assert_int_equal(resp.method, SM_METHOD_GET_RESP);
	assert_int_equal(resp.status, 0);
	assert_int_equal(resp.tid, 0x1234);
	assert_int_equal(sm_sm_info_decode(resp.data, &out, NULL), 0);
	assert_int_equal(out.guid, self.guid);
	assert_int_equal(out.sm_key, 0);
	assert_int_equal(out.act_count, 7);
	assert_int_equal(out.priority, 3);
	assert_int_equal(out.state, SM_SMSTATE_MASTER);
	/* with the right key: the key too */
	memset(&in, 0, sizeof(in));
	in.sm_key = self.sm_key;
	sm_sm_info_encode(&in, req.data);
	assert_int_equal(sm_sminfo_answer(&req, &self, &resp), 1);
	assert_int_equal(sm_sm_info_decode(resp.data, &out, NULL), 0);
	assert_int_equal(out.sm_key, self.sm_key);
	/* a wrong key: withheld */
	in.sm_key = 0x1;
	sm_sm_info_encode(&in, req.data);
	assert_int_equal(sm_sminfo_answer(&req, &self, &resp), 1);
	assert_int_equal(sm_sm_info_decode(resp.data, &out, NULL), 0);
	assert_int_equal(out.sm_key, 0);
	/* a Set (handover, standby...), even with the key: refused, directed route answered as such */
	sm_smp_init_dr(&req, SM_METHOD_SET, SM_ATTR_SM_INFO, SM_SMINFO_STANDBY, &path);
	in.sm_key = self.sm_key;
	sm_sm_info_encode(&in, req.data);
	assert_int_equal(sm_sminfo_answer(&req, &self, &resp), 1);
	assert_int_equal(resp.status, SM_MAD_STATUS_ATTR_UNSUPP);
	assert_true(resp.direction);
	assert_int_equal(sm_sm_info_decode(resp.data, &out, NULL), 0);
	assert_int_equal(out.state, SM_SMSTATE_MASTER);
	/* not SMInfo, or a trap: not ours */
	sm_smp_init_lid(&req, SM_METHOD_GET, SM_ATTR_NODE_INFO, 0);
	assert_int_equal(sm_sminfo_answer(&req, &self, &resp), 0);
	sm_smp_init_lid(&req, SM_METHOD_TRAP, SM_ATTR_SM_INFO, 0);
	assert_int_equal(sm_sminfo_answer(&req, &self, &resp), 0);
	/* garbage in the payload (state 9 does not decode): no key */
	sm_smp_init_lid(&req, SM_METHOD_GET, SM_ATTR_SM_INFO, 0);
	memset(req.data, 0xFF, sizeof(req.data));
	assert_int_equal(sm_sminfo_answer(&req, &self, &resp), 1);
	assert_int_equal(sm_sm_info_decode(resp.data, &out, NULL), 0);
	assert_int_equal(out.sm_key, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_file),
		cmocka_unit_test(test_keys_file_sealed),
		cmocka_unit_test(test_protect_and_manage_again),
		cmocka_unit_test(test_every_smp_has_the_key),
		cmocka_unit_test(test_wrong_key_refused),
		cmocka_unit_test(test_lease_expires),
		cmocka_unit_test(test_off_clears_keys),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_sminfo_answer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
