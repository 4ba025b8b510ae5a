/* SPDX-License-Identifier: MIT */
/*
 * Per-port M_Keys derived from a secret (issue 15, smd/sm/mkey.h, mode
 * m_key: derived):
 *  - the same secret gives the same keys (two SMs, a standby after a
 *    failover), different GUIDs or secrets give different keys;
 *  - the secret file: a regular 0600 file of one or two 128-bit secrets,
 *    anything else refused with FILE: reason;
 *  - on the mock: every SMA ends up holding its own key, and a second SM
 *    with the same secret manages the fabric without a Set or a violation;
 *  - rotation: with "current, previous" in the file, ports holding the
 *    previous key (protect bits 1 and 2) end up holding the current one,
 *    none lost, also when some ports already hold the current key;
 *  - migration: ports protected by a single key (kept in STATE_DIR/keys)
 *    reached with it and given their derived keys by a restart with
 *    m_key: derived; sm_keys_reload()'s decisions for a reload.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/mkey.h"
#include "sm/neighbours.h"
#include "mock/mock.h"
#include "sm/sm.h"
#include "config/smdconf.h"
#include "fixture/fixture.h"
#include "fixture/mock_fabric.h"

#define SECRET_A "00112233445566778899aabbccddeeff"
#define SECRET_B "f0e1d2c3b4a5968778695a4b3c2d1e0f"

static void put_secret(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void secret_path(const struct fx_env *e, char *out, size_t len)
{
	snprintf(out, len, "%s/mkey.secret", e->dir);
}

static void keys_derived(const struct fx_env *e, uint8_t prot, struct sm_keys *k)
{
	struct sm_keys_cfg kc = { .mkey_mode = SM_KEY_DERIVED, .protect_bits = prot };
	char err[600] = "";
	secret_path(e, kc.secret_file, sizeof(kc.secret_file));
	if (sm_keys_open(e->dir, &kc, k, NULL, NULL, err, sizeof(err)))
		fail_msg("keys: %s", err);
}

/* One bring-up; st: the state of an SM that keeps running (NULL: a fresh SM). */
static int run_st(struct fx_env *e, const struct sm_keys *k, struct sm_state *st, struct sm_summary *sum,
		  char *err, size_t errlen)
{
	struct sm_cfg cfg;
	sm_cfg_default(&cfg);
	cfg.state_dir = e->dir;
	cfg.keys = k;
	cfg.dead_after = 16;
	return sm_bringup_state(e->t, e->chain, &cfg, st, sum, NULL, err, errlen);
}

static int run(struct fx_env *e, const struct sm_keys *k, struct sm_summary *sum, char *err, size_t errlen)
{
	return run_st(e, k, NULL, sum, err, errlen);
}

/* Every SMA (switch port 0, linked CA ports) holds its key under secret[which] of k; all keys differ. */
static void check_derived(struct fx_env *e, const struct sm_keys *k, unsigned which, uint8_t prot)
{
	const struct sm_fabric *mf = sm_mock_fabric(e->mock);
	struct sm_mock_port_state st;
	uint64_t seen[64];
	unsigned n_sma = 0;

	for (uint32_t n = 0; n < mf->n_nodes; n++) {
		const struct sm_node *nd = &mf->nodes[n];
		for (unsigned p = 0; p <= nd->nports; p++) {
			if ((nd->type == SM_NODE_SWITCH) != (p == 0))
				continue;
			if (nd->type != SM_NODE_SWITCH && mf->ports[nd->port0 + p].peer_node == SM_NONE)
				continue;
			uint64_t want = sm_keys_derive(k->secret[which], mf->ports[nd->port0 + p].guid);
			assert_int_equal(sm_mock_port_state(e->mock, nd->port0 + p, &st), 0);
			if (st.mkey != want || st.mkey_prot_bits != prot)
				fail_msg("%s port %u: key 0x%llx prot %u, want 0x%llx prot %u", nd->desc, p,
					 (unsigned long long)st.mkey, st.mkey_prot_bits, (unsigned long long)want, prot);
			for (unsigned i = 0; i < n_sma; i++)
				assert_true(seen[i] != st.mkey);
			seen[n_sma++] = st.mkey;
		}
	}
	assert_int_equal(n_sma, 2 + 4);
}

static void test_derive(void **state)
{
	uint8_t a[2][16], b[2][16], na, nb;
	char err[600], dir[] = "/tmp/smd-mkeyd-XXXXXX", path[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	put_secret(path, "# current\n" SECRET_A "\n", 0600);
	assert_int_equal(sm_keys_read_secret(path, a, &na, err, sizeof(err)), 0);
	assert_int_equal(na, 1);
	put_secret(path, SECRET_B "\n" SECRET_A "  # previous\n", 0600);
	assert_int_equal(sm_keys_read_secret(path, b, &nb, err, sizeof(err)), 0);
	assert_int_equal(nb, 2);
	assert_memory_equal(b[1], a[0], 16);
	assert_int_equal(a[0][0], 0x00);
	assert_int_equal(a[0][15], 0xff);
	/* two SMs with the same secret: the same key; another GUID or secret: another key */
	uint64_t g1 = 0x0002c90000000101ULL, g2 = 0x0002c90000000102ULL;
	assert_true(sm_keys_derive(a[0], g1) == sm_keys_derive(b[1], g1));
	assert_true(sm_keys_derive(a[0], g1) != sm_keys_derive(a[0], g2));
	assert_true(sm_keys_derive(a[0], g1) != sm_keys_derive(b[0], g1));
	for (uint64_t g = 1; g < 4096; g++)
		assert_true(sm_keys_derive(a[0], g) != 0);

	static const struct { const char *text; mode_t mode; const char *msg; } bad[] = {
		{ SECRET_A "\n", 0644, ": mode 0644; the M_Key secret must be mode 0600" },
		{ SECRET_A "\n", 0640, ": mode 0640" },
		{ SECRET_A "\n", 0400, ": mode 0400" },
		{ "", 0600, ": no secret" },
		{ "# only a comment\n", 0600, ": no secret" },
		{ "0011\n", 0600, ":1: expected 32 hex digits" },
		{ SECRET_A "00\n", 0600, ":1: expected 32 hex digits" },
		{ "\n" SECRET_A "x\n", 0600, ":2: expected 32 hex digits" },
		{ SECRET_A "\n" SECRET_B "\n" SECRET_A "\n", 0600, ":3: more than two secrets" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_secret(path, bad[i].text, bad[i].mode);
		err[0] = '\0';
		assert_true(sm_keys_read_secret(path, a, &na, err, sizeof(err)) < 0);
		if (strncmp(err, path, strlen(path)) || !strstr(err, bad[i].msg))
			fail_msg("case %zu: got '%s', want '%s%s'", i, err, path, bad[i].msg);
	}
	/* not a regular file; a symlink (even to a good file) */
	assert_true(sm_keys_read_secret(dir, a, &na, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "not a regular file"));
	put_secret(path, SECRET_A "\n", 0600);
	char link[80];
	snprintf(link, sizeof(link), "%s/l", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_true(sm_keys_read_secret(link, a, &na, err, sizeof(err)) < 0);
	assert_int_equal(strncmp(err, link, strlen(link)), 0);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void test_config(void **state)
{
	struct smd_conf *c = NULL;
	char err[600] = "";
	const char *text = "m_key: derived\nm_key_secret_file: /etc/smd/mkey.secret\nm_key_protect_bits: 1\n";
	FILE *in = fmemopen((void *)text, strlen(text), "r");

	(void)state;
	assert_int_equal(smd_conf_load_stream(in, "t.yaml", &c, err, sizeof(err)), 0);
	fclose(in);
	assert_int_equal(c->keys.mkey_mode, SM_KEY_DERIVED);
	assert_string_equal(c->keys.secret_file, "/etc/smd/mkey.secret");
	smd_conf_free(c);
	/* derived without a secret file is refused when the keys are decided */
	struct sm_keys_cfg kc = { .mkey_mode = SM_KEY_DERIVED };
	struct sm_keys k;
	assert_int_equal(sm_keys_open(NULL, &kc, &k, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "m_key_secret_file"));
	/* protect bits 2-3 without a state directory: refused (no neighbour table: a restarted SM
	 * could not learn the keys of protected ports) */
	snprintf(kc.secret_file, sizeof(kc.secret_file), "/nonexistent");
	kc.protect_bits = 2;
	assert_int_equal(sm_keys_open(NULL, &kc, &k, NULL, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a state directory"));
	/* derived is for m_key only */
	text = "sm_key: derived\n";
	in = fmemopen((void *)text, strlen(text), "r");
	c = NULL;
	assert_int_equal(smd_conf_load_stream(in, "t.yaml", &c, err, sizeof(err)), -EINVAL);
	fclose(in);
}

/* Two SMs (a master and, after it dies, a standby) with one secret file manage the same ports. */
static void test_two_sms(void **state)
{
	struct fx_env e;
	struct sm_keys k1, k2;
	struct sm_summary sum;
	struct sm_mock_stats ms;
	char err[1024] = "", path[4200];

	(void)state;
	fx_env_init(&e, two_switch(), NULL, NULL, "mkeyd");
	secret_path(&e, path, sizeof(path));
	put_secret(path, SECRET_A "\n", 0600);
	keys_derived(&e, 1, &k1);
	if (run(&e, &k1, &sum, err, sizeof(err)))
		fail_msg("first SM: %s", err);
	check_derived(&e, &k1, 0, 1);
	keys_derived(&e, 1, &k2);   /* the second SM: its own reading of the same file */
	if (run(&e, &k2, &sum, err, sizeof(err)))
		fail_msg("second SM: %s", err);
	assert_int_equal(sum.counts.nodes, 6);
	assert_int_equal(sum.portinfo_lid_sets, 0);
	assert_int_equal(sum.mkey_foreign, 0);
	assert_int_equal(sum.active_ports, sum.link_ports);
	sm_mock_stats(e.mock, &ms);
	assert_int_equal(ms.mkey_violations, 0);
	/* an SM with another secret manages nothing: every Set refused */
	put_secret(path, SECRET_B "\n", 0600);
	keys_derived(&e, 1, &k2);
	(void)run(&e, &k2, &sum, err, sizeof(err));
	check_derived(&e, &k1, 0, 1);
	assert_true(sum.mkey_foreign > 0);
	fx_env_free(&e);
}

/* keys_derived() at protect bits prot, 2-3 included (refused by sm_keys_open: see run_st()). */
static void keys_prot(const struct fx_env *e, uint8_t prot, struct sm_keys *k)
{
	keys_derived(e, prot > 1 ? 1 : prot, k);
	k->protect_bits = prot;
}

/*
 * Protect with A, then rotate to B with A as previous: every port ends up
 * with B's key, none lost. Protect bits 2 drop a Get with a wrong key: the
 * SMs there keep one state (an SM that keeps running knows the GUID behind
 * each port), and a lost SMP is tried again with the previous key.
 */
static void rotate(uint8_t prot, int some_already)
{
	struct fx_env e;
	struct sm_keys ka, kb;
	struct sm_summary sum;
	struct sm_mock_stats ms;
	struct sm_state *st = NULL;
	char err[1024] = "", path[4200];

	if (prot >= 2)
		assert_int_equal(sm_state_new(&st), 0);

	fx_env_init(&e, two_switch(), NULL, NULL, "mkeyr");
	secret_path(&e, path, sizeof(path));
	put_secret(path, SECRET_A "\n", 0600);
	keys_prot(&e, prot, &ka);
	if (run_st(&e, &ka, st, &sum, err, sizeof(err)))
		fail_msg("protecting run: %s", err);
	check_derived(&e, &ka, 0, prot);
	put_secret(path, SECRET_B "\n" SECRET_A "\n", 0600);
	keys_prot(&e, prot, &kb);
	assert_int_equal(kb.nsecrets, 2);
	if (some_already) {
		/* a rotation interrupted: the first switch already holds B's key */
		const struct sm_fabric *mf = sm_mock_fabric(e.mock);
		for (uint32_t n = 0; n < mf->n_nodes; n++)
			if (mf->nodes[n].type == SM_NODE_SWITCH) {
				uint32_t i = mf->nodes[n].port0;
				assert_int_equal(sm_mock_set_mkey(e.mock, i, sm_keys_derive(kb.secret[0], mf->ports[i].guid),
								  prot, 0), 0);
				break;
			}
	}
	if (run_st(&e, &kb, st, &sum, err, sizeof(err)))
		fail_msg("rotating run: %s", err);
	check_derived(&e, &kb, 0, prot);
	assert_int_equal(sum.counts.nodes, 6);
	assert_int_equal(sum.active_ports, sum.link_ports);
	/* after the rotation, B alone manages every port with no Set and no violation */
	put_secret(path, SECRET_B "\n", 0600);
	keys_prot(&e, prot, &kb);
	sm_mock_stats(e.mock, &ms);
	uint64_t v0 = ms.mkey_violations;
	if (run_st(&e, &kb, st, &sum, err, sizeof(err)))
		fail_msg("run after the rotation: %s", err);
	assert_int_equal(sum.counts.nodes, 6);
	assert_int_equal(sum.portinfo_lid_sets, 0);
	assert_int_equal(sum.mkey_foreign, 0);
	sm_mock_stats(e.mock, &ms);
	if (ms.mkey_violations != v0) {
		const struct sm_fabric *mf = sm_mock_fabric(e.mock);
		struct sm_mock_port_state ps;
		for (uint32_t i = 0; i < mf->n_ports; i++)
			if (!sm_mock_port_state(e.mock, i, &ps) && ps.mkey_violations)
				print_message("port %u (%s %u): %u violations\n", i, mf->nodes[mf->ports[i].node].desc,
					      mf->ports[i].num, ps.mkey_violations);
		fail_msg("%llu violations after the rotation", (unsigned long long)(ms.mkey_violations - v0));
	}
	sm_state_free(st);
	fx_env_free(&e);
}

static void test_rotation_prot1(void **state)
{
	(void)state;
	rotate(1, 0);
	rotate(0, 1);
}

static void test_rotation_prot2(void **state)
{
	(void)state;
	rotate(2, 0);
	rotate(2, 1);
}

/*
 * Migration at start: a single key protected the ports (STATE_DIR/keys
 * keeps it); a restart with m_key: derived reaches them with it and gives
 * each its derived key, none lost. And sm_keys_reload's decisions.
 */
static void test_migration(void **state)
{
	struct fx_env e;
	struct sm_keys kf, kd, kr;
	struct sm_summary sum;
	char err[1024] = "", path[4200];
	(void)state;

	fx_env_init(&e, two_switch(), NULL, NULL, "mkeym");
	struct sm_keys_cfg fc = { .mkey_mode = SM_KEY_FIXED, .mkey = 0x1234567890abcdefULL, .protect_bits = 1 };
	if (sm_keys_open(e.dir, &fc, &kf, NULL, NULL, err, sizeof(err)))
		fail_msg("fixed keys: %s", err);
	if (run(&e, &kf, &sum, err, sizeof(err)))
		fail_msg("single-key run: %s", err);
	secret_path(&e, path, sizeof(path));
	put_secret(path, SECRET_A "\n", 0600);
	keys_derived(&e, 1, &kd);
	assert_int_equal(kd.prev_mkey, 0x1234567890abcdefULL);   /* from STATE_DIR/keys */
	assert_true(sm_keys_has_prev(&kd));
	if (run(&e, &kd, &sum, err, sizeof(err)))
		fail_msg("migrating run: %s", err);
	assert_int_equal(sum.mkey_rotated, 6);
	assert_int_equal(sum.mkey_foreign, 0);
	check_derived(&e, &kd, 0, 1);
	if (run(&e, &kd, &sum, err, sizeof(err)))
		fail_msg("run after the migration: %s", err);
	assert_int_equal(sum.mkey_rotated, 0);
	assert_int_equal(sum.portinfo_lid_sets, 0);

	/* sm_keys_reload: the same secret: nothing new; a new one alone keeps the running one as previous */
	uint8_t sec[2][16], n;
	assert_int_equal(sm_keys_read_secret(path, sec, &n, err, sizeof(err)), 0);
	assert_int_equal(sm_keys_reload(&kd, 1, 0, (const uint8_t (*)[16])sec, n, &kr, err, sizeof(err)), 0);
	put_secret(path, SECRET_B "\n", 0600);
	assert_int_equal(sm_keys_read_secret(path, sec, &n, err, sizeof(err)), 0);
	assert_int_equal(sm_keys_reload(&kd, 1, 0, (const uint8_t (*)[16])sec, n, &kr, err, sizeof(err)), 1);
	assert_int_equal(kr.nsecrets, 2);
	assert_memory_equal(kr.secret[1], kd.secret[0], 16);
	assert_int_equal(sm_keys_reload(&kd, 2, 0, (const uint8_t (*)[16])sec, n, &kr, err, sizeof(err)), -EINVAL);
	assert_int_equal(sm_keys_reload(&kf, 2, 0, (const uint8_t (*)[16])sec, n, &kr, err, sizeof(err)), -EINVAL);
	/* a single key moving to derived keys: it becomes the previous key */
	assert_int_equal(sm_keys_reload(&kf, 1, 0, (const uint8_t (*)[16])sec, n, &kr, err, sizeof(err)), 1);
	assert_true(kr.derived && kr.prev_mkey == kf.mkey && kr.nsecrets == 1);
	fx_env_free(&e);
}

/*
 * Protect bits 2 and a restart: a fresh SM (no state) knows no GUID behind
 * its own port, so its NodeInfo Get to the switch carries no key and is
 * dropped; with the neighbour table the last run saved (STATE_DIR/
 * neighbours), it reaches every port, none lost, nothing to set.
 */
static void test_neighbours(void **state)
{
	struct fx_env e;
	struct sm_keys k;
	struct sm_summary sum;
	struct sm_cfg cfg;
	struct sm_fabric *f = NULL;
	struct sm_nbr t = { 0 }, t2;
	char err[1024] = "", path[4200], npath[4200];
	(void)state;

	fx_env_init(&e, two_switch(), NULL, NULL, "mkeyn");
	secret_path(&e, path, sizeof(path));
	put_secret(path, SECRET_A "\n", 0600);
	keys_derived(&e, 2, &k);
	assert_int_equal(sm_nbr_open(e.dir, &k, &t, npath, sizeof(npath), NULL, NULL), 1);
	assert_int_equal(t.n, 0);
	sm_cfg_default(&cfg);
	cfg.state_dir = e.dir;
	cfg.keys = &k;
	cfg.dead_after = 16;
	cfg.neighbours = &t;
	if (sm_bringup_state(e.t, e.chain, &cfg, NULL, &sum, &f, err, sizeof(err)))
		fail_msg("protecting run: %s", err);
	check_derived(&e, &k, 0, 2);
	assert_int_equal(sm_nbr_update(&t, f, npath, err, sizeof(err)), 0);
	assert_int_equal(t.n, 2 * sum.counts.links);   /* both ends of every link */
	sm_fabric_free(f);
	/* a restart without the table: nothing beyond the SM's own node */
	cfg.neighbours = NULL;
	assert_true(sm_bringup_state(e.t, e.chain, &cfg, NULL, &sum, NULL, err, sizeof(err)) != 0 ||
		    sum.counts.nodes < 6);
	/* with it (read back from the file): every port, nothing set */
	assert_int_equal(sm_nbr_load(&t2, npath, err, sizeof(err)), 0);
	assert_int_equal(t2.n, t.n);
	assert_int_equal(sm_nbr_lookup(&t2, t.e[0].node_guid, t.e[0].port), t.e[0].sma_guid);
	cfg.neighbours = &t2;
	if (sm_bringup_state(e.t, e.chain, &cfg, NULL, &sum, NULL, err, sizeof(err)))
		fail_msg("restart with the neighbour table: %s", err);
	assert_int_equal(sum.counts.nodes, 6);
	assert_int_equal(sum.mkey_foreign, 0);
	assert_int_equal(sum.portinfo_lid_sets, 0);
	/* a damaged table is refused, never read as empty */
	FILE *fp = fopen(npath, "a");
	assert_non_null(fp);
	fputs("0x1 2 0x3\n", fp);
	fclose(fp);
	sm_nbr_free(&t2);   /* sm_nbr_load() starts from an empty table: it does not free one */
	assert_int_equal(sm_nbr_load(&t2, npath, err, sizeof(err)), -EINVAL);
	sm_nbr_free(&t);
	fx_env_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_two_sms),
		cmocka_unit_test(test_rotation_prot1),
		cmocka_unit_test(test_rotation_prot2),
		cmocka_unit_test(test_migration),
		cmocka_unit_test(test_neighbours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
