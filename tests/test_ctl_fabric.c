/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the smctl daemon-side helpers and access checks:
 * route walking over hand-made LFTs (ok, black hole, loop, dead end, bad
 * port, wrong destination, no LID), endpoint lookup (LID, GUID, node
 * description, host name, ambiguity), the Prometheus rendering of a
 * metrics reply (golden text, escaping, refusal of bad names), the peer
 * credential check (root, own uid, group by primary gid and by a real
 * process's supplementary groups), and the client's progress ticks
 * (counted, not timed: the server answers only after the third tick).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "daemon/cmd.h"
#include "routing/engine.h"
#include "model/fabric.h"
#include "lib/json.h"
#include "fixture/fixture.h"

/*
 * S1 (4 ports) and S2 (4 ports) joined by S1[3]-S2[3]; A on S1[1], B on
 * S2[1], A2 ("hostA mlx5_1") on S2[2]; S1[4] has no link.
 * LIDs: A 1, B 2, S1 3, S2 4, A2 5.
 */
struct fx {
	struct sm_fabric *f;
	struct sm_lfts *l;
	uint32_t s1, s2, a, b, a2;
};

static void fx_build(struct fx *x)
{
	struct sm_fabric *f = sm_fabric_new();
	assert_non_null(f);
	x->f = f;
	x->s1 = (uint32_t)sm_fabric_add_node(f, SM_NODE_SWITCH, 0x15100, 4, 0, 0);
	x->s2 = (uint32_t)sm_fabric_add_node(f, SM_NODE_SWITCH, 0x15200, 4, 0, 0);
	x->a = (uint32_t)sm_fabric_add_node(f, SM_NODE_CA, 0x1a000, 1, 0, 0);
	x->b = (uint32_t)sm_fabric_add_node(f, SM_NODE_CA, 0x1b000, 1, 0, 0);
	x->a2 = (uint32_t)sm_fabric_add_node(f, SM_NODE_CA, 0x1a100, 1, 0, 0);
	assert_int_equal(sm_fabric_set_port_guid(f, x->a, 1, 0x1a001), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, x->b, 1, 0x1b001), 0);
	assert_int_equal(sm_fabric_set_port_guid(f, x->a2, 1, 0x1a101), 0);
	sm_fabric_set_desc(f, x->s1, "S1");
	sm_fabric_set_desc(f, x->s2, "S2");
	sm_fabric_set_desc(f, x->a, "hostA mlx5_0");
	sm_fabric_set_desc(f, x->b, "hostB mlx5_0");
	sm_fabric_set_desc(f, x->a2, "hostA mlx5_1");
	assert_int_equal(sm_fabric_link(f, x->s1, 3, x->s2, 3), 0);
	assert_int_equal(sm_fabric_link(f, x->a, 1, x->s1, 1), 0);
	assert_int_equal(sm_fabric_link(f, x->b, 1, x->s2, 1), 0);
	assert_int_equal(sm_fabric_link(f, x->a2, 1, x->s2, 2), 0);
	assert_int_equal(sm_fabric_set_lid(f, x->a, 1, 1, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, x->b, 1, 2, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, x->s1, 0, 3, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, x->s2, 0, 4, 0), 0);
	assert_int_equal(sm_fabric_set_lid(f, x->a2, 1, 5, 0), 0);
	x->l = sm_lfts_new(f, 0);
	assert_non_null(x->l);
	/* minimal routes */
	const uint8_t s1[] = { SM_LFT_NONE, 1, 3, 0, 3, 3 };
	const uint8_t s2[] = { SM_LFT_NONE, 3, 1, 3, 0, 2 };
	for (uint16_t lid = 1; lid <= 5; lid++) {
		sm_lfts_set(x->l, x->s1, lid, s1[lid]);
		sm_lfts_set(x->l, x->s2, lid, s2[lid]);
	}
}

static void fx_free(struct fx *x)
{
	sm_lfts_free(x->l);
	sm_fabric_free(x->f);
}

static enum smd_route_result walk(struct fx *x, uint32_t src, uint32_t dst, unsigned *nh, uint32_t *end,
				  struct smd_route_hop *hops)
{
	return smd_route_walk(x->f, x->l, src, dst, hops, 8, nh, end);
}

static void test_route_walk(void **state)
{
	struct fx x;
	struct smd_route_hop h[8];
	unsigned nh;
	uint32_t end;
	(void)state;

	fx_build(&x);
	uint32_t pa = sm_port_index(x.f, x.a, 1), pb = sm_port_index(x.f, x.b, 1);
	uint32_t ps2 = sm_port_index(x.f, x.s2, 0), ps1 = sm_port_index(x.f, x.s1, 0);

	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_OK);
	assert_int_equal(nh, 2);
	assert_int_equal(end, pb);
	assert_int_equal(h[0].node, x.s1);
	assert_int_equal(h[0].in_port, 1);
	assert_int_equal(h[0].out_port, 3);
	assert_int_equal(h[1].node, x.s2);
	assert_int_equal(h[1].in_port, 3);
	assert_int_equal(h[1].out_port, 1);
	/* to a switch: delivered at port 0 */
	assert_int_equal(walk(&x, pa, ps2, &nh, &end, h), SMD_ROUTE_OK);
	assert_int_equal(nh, 2);
	assert_int_equal(h[1].out_port, 0);
	/* from a switch */
	assert_int_equal(walk(&x, ps1, pb, &nh, &end, h), SMD_ROUTE_OK);
	assert_int_equal(h[0].in_port, 0);
	/* to itself */
	assert_int_equal(walk(&x, pa, pa, &nh, &end, h), SMD_ROUTE_OK);
	assert_int_equal(nh, 0);

	/* black hole */
	sm_lfts_set(x.l, x.s2, 2, SM_LFT_NONE);
	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_NO_ENTRY);
	assert_int_equal(nh, 2);
	assert_int_equal(h[1].out_port, SM_LFT_NONE);
	/* loop S1 -> S2 -> S1: reported, not followed */
	sm_lfts_set(x.l, x.s2, 2, 3);
	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_LOOP);
	assert_int_equal(nh, 2);
	/* a hop budget smaller than the path is a loop too (never runs past the array) */
	sm_lfts_set(x.l, x.s2, 2, 1);
	assert_int_equal(smd_route_walk(x.f, x.l, pa, pb, h, 1, &nh, &end), SMD_ROUTE_LOOP);
	assert_int_equal(nh, 1);
	/* out of a port with no link */
	sm_lfts_set(x.l, x.s1, 2, 4);
	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_DEAD_END);
	/* a port the switch does not have */
	sm_lfts_set(x.l, x.s1, 2, 9);
	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_BAD_PORT);
	/* delivered to the wrong CA (back to the source) */
	sm_lfts_set(x.l, x.s1, 2, 1);
	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_WRONG_DEST);
	assert_int_equal(end, pa);
	/* delivered to a switch that does not own the LID */
	sm_lfts_set(x.l, x.s1, 2, 0);
	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_WRONG_DEST);
	assert_int_equal(end, ps1);
	/* a destination without a LID */
	assert_int_equal(sm_fabric_set_lid(x.f, x.b, 1, 0, 0), 0);
	assert_int_equal(walk(&x, pa, pb, &nh, &end, h), SMD_ROUTE_NO_LID);
	/* a source without a link */
	sm_fabric_unlink(x.f, x.a, 1);
	assert_int_equal(walk(&x, pa, ps2, &nh, &end, h), SMD_ROUTE_NOT_LINKED);
	assert_string_equal(smd_route_result_name(SMD_ROUTE_LOOP), "loop");
	fx_free(&x);
}

static void test_find_port(void **state)
{
	struct fx x;
	uint32_t pi = 0;
	char err[256];
	(void)state;

	fx_build(&x);
	assert_int_equal(smd_ctl_find_port(x.f, 0, "1", 0, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.a, 1));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "0x4", 0, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.s2, 0));
	/* a leading zero is decimal, not octal */
	assert_int_equal(smd_ctl_find_port(x.f, 0, "05", 0, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.a2, 1));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "010", 0, &pi, err, sizeof(err)), -ENOENT);
	assert_int_equal(smd_ctl_find_port(x.f, 0, "lid:3", 1, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.s1, 0));
	/* a port GUID, a CA node GUID (its first port with a LID), a switch node GUID */
	assert_int_equal(smd_ctl_find_port(x.f, 0, "0x1b001", 0, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.b, 1));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "guid:0x1b000", 0, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.b, 1));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "0x15200", 1, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.s2, 0));
	/* descriptions and host names */
	assert_int_equal(smd_ctl_find_port(x.f, 0, "S1", 1, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.s1, 0));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "hostA mlx5_1", 0, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.a2, 1));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "hostB", 0, &pi, err, sizeof(err)), 0);
	assert_int_equal(pi, sm_port_index(x.f, x.b, 1));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "hostA", 0, &pi, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "matches 2"));
	/* not found, wrong kind, bad numbers, another plane */
	assert_int_equal(smd_ctl_find_port(x.f, 0, "nosuch", 0, &pi, err, sizeof(err)), -ENOENT);
	assert_int_equal(smd_ctl_find_port(x.f, 0, "hostB", 1, &pi, err, sizeof(err)), -ENOENT);
	assert_int_equal(smd_ctl_find_port(x.f, 0, "1", 1, &pi, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a switch"));
	assert_int_equal(smd_ctl_find_port(x.f, 0, "9", 0, &pi, err, sizeof(err)), -ENOENT);
	assert_int_equal(smd_ctl_find_port(x.f, 0, "lid:0", 0, &pi, err, sizeof(err)), -EINVAL);
	assert_int_equal(smd_ctl_find_port(x.f, 0, "lid:x", 0, &pi, err, sizeof(err)), -EINVAL);
	assert_int_equal(smd_ctl_find_port(x.f, 0, "guid:0x99999", 0, &pi, err, sizeof(err)), -ENOENT);
	assert_int_equal(smd_ctl_find_port(x.f, 1, "1", 0, &pi, err, sizeof(err)), -ENOENT);
	assert_int_equal(smd_ctl_find_port(x.f, 1, "0x1b001", 0, &pi, err, sizeof(err)), -ENOENT);
	fx_free(&x);
}

static void render(const char *json, char **out, int *rc, char *err, size_t errlen)
{
	struct smd_jv *r = NULL;
	size_t n = 0;
	char perr[128];
	FILE *m = open_memstream(out, &n);

	assert_non_null(m);
	assert_int_equal(smd_json_parse(json, strlen(json), &r, perr, sizeof(perr)), 0);
	*rc = smd_metrics_render(m, r, err, errlen);
	fclose(m);
	smd_jv_free(r);
}

static void test_metrics_render(void **state)
{
	char *out = NULL, err[128] = "";
	int rc;
	(void)state;

	render("{\"ok\":true,\"metrics\":["
	       "{\"name\":\"smd_sweeps_total\",\"type\":\"counter\",\"help\":\"Sweep cycles\\ncompleted \\\\ all\","
	       "\"samples\":[{\"labels\":{},\"value\":3}]},"
	       "{\"name\":\"smd_plane_up\",\"type\":\"gauge\",\"help\":\"up\",\"samples\":["
	       "{\"labels\":{\"plane\":\"0\",\"spec\":\"mock:/a \\\"b\\\"\\\\c\\nd\"},\"value\":1},"
	       "{\"labels\":{\"plane\":\"1\"},\"value\":0.25},"
	       "{\"labels\":{\"plane\":\"2\"},\"value\":null}]}]}",
	       &out, &rc, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_string_equal(out,
			    "# HELP smd_sweeps_total Sweep cycles\\ncompleted \\\\ all\n"
			    "# TYPE smd_sweeps_total counter\n"
			    "smd_sweeps_total 3\n"
			    "# HELP smd_plane_up up\n"
			    "# TYPE smd_plane_up gauge\n"
			    "smd_plane_up{plane=\"0\",spec=\"mock:/a \\\"b\\\"\\\\c\\nd\"} 1\n"
			    "smd_plane_up{plane=\"1\"} 0.25\n"
			    "smd_plane_up{plane=\"2\"} NaN\n");
	free(out);
	/* what would make invalid exposition text is refused */
	const char *bad[] = {
		"{\"metrics\":[{\"name\":\"1abc\",\"type\":\"gauge\",\"samples\":[]}]}",
		"{\"metrics\":[{\"name\":\"a b\",\"type\":\"gauge\",\"samples\":[]}]}",
		"{\"metrics\":[{\"name\":\"ok\",\"type\":\"histogram\",\"samples\":[]}]}",
		"{\"metrics\":[{\"name\":\"ok\",\"type\":\"gauge\",\"samples\":[{\"labels\":{\"a:b\":\"x\"},\"value\":1}]}]}",
		"{\"metrics\":[{\"name\":\"ok\",\"type\":\"gauge\",\"samples\":[{\"labels\":{\"a\":1},\"value\":1}]}]}",
		"{\"metrics\":{}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		render(bad[i], &out, &rc, err, sizeof(err));
		if (rc != -EPROTO)
			fail_msg("accepted: %s", bad[i]);
		free(out);
	}
}

static void test_peer_allowed(void **state)
{
	char why[256] = "";
	uid_t self = geteuid();
	(void)state;

	struct smd_ctl_peer root = { .pid = 1, .uid = 0, .gid = 0 };
	assert_int_equal(smd_ctl_peer_allowed(&root, 4000, 0, 0, NULL, why, sizeof(why)), 1);
	struct smd_ctl_peer me = { .pid = getpid(), .uid = 4000, .gid = 4000 };
	assert_int_equal(smd_ctl_peer_allowed(&me, 4000, 0, 0, NULL, why, sizeof(why)), 1);
	struct smd_ctl_peer other = { .pid = 0, .uid = 4001, .gid = 4001 };
	assert_int_equal(smd_ctl_peer_allowed(&other, 4000, 0, 0, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "uid 4001"));
	assert_non_null(strstr(why, "no socket_group"));
	/* the primary gid is the group */
	assert_int_equal(smd_ctl_peer_allowed(&other, 4000, 1, 4001, "g", why, sizeof(why)), 1);
	assert_int_equal(smd_ctl_peer_allowed(&other, 4000, 1, 4002, "g", why, sizeof(why)), 0);
	assert_non_null(strstr(why, "group 'g' (gid 4002)"));
	/* a pid whose uid is not the peer's is not trusted for its groups */
	struct smd_ctl_peer liar = { .pid = getpid(), .uid = 4001, .gid = 4001 };
	assert_int_equal(smd_ctl_peer_allowed(&liar, 4000, 1, 4002, "g", why, sizeof(why)), 0);
	gid_t g;
	assert_int_equal(smd_ctl_group_gid("0", &g), 0);
	assert_int_equal(g, 0);
	assert_int_equal(smd_ctl_group_gid("no-such-group-smd-test", &g), -ENOENT);
	assert_int_equal(smd_ctl_group_gid("", &g), -ENOENT);

	if (self != 0) {
		/* the supplementary-group case needs a process with another uid: root only */
		return;
	}
	/* a real process: uid/gid 4242 with supplementary group 4321 (from /proc/PID/status) */
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		gid_t sup = 4321;
		char c;
		close(pfd[1]);
		if (setgroups(1, &sup) || setgid(4242) || setuid(4242))
			_exit(1);
		(void)!read(pfd[0], &c, 1);   /* until the parent is done */
		_exit(0);
	}
	close(pfd[0]);
	struct smd_ctl_peer kid = { .pid = child, .uid = 4242, .gid = 4242 };
	int ok = 0;
	/* the child drops its ids right after fork: wait until /proc shows them */
	for (int i = 0; i < 2000 && !ok; i++) {
		char path[64], line[256];
		snprintf(path, sizeof(path), "/proc/%d/status", (int)child);
		FILE *f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "Uid:", 4) && strstr(line, "4242"))
				ok = 1;
		if (f)
			fclose(f);
		if (!ok)
			usleep(1000);
	}
	assert_true(ok);
	assert_int_equal(smd_ctl_peer_allowed(&kid, 0, 1, 4321, "sup", why, sizeof(why)), 1);
	assert_int_equal(smd_ctl_peer_allowed(&kid, 0, 1, 4322, "other", why, sizeof(why)), 0);
	close(pfd[1]);
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- progress ticks: a forked server parks "wait" until told by the client's third tick ---- */
static int t_handle(void *arg, const char *cmd, const struct smd_jv *req, struct sm_json *j, uint64_t *wait_for,
		    char *err, size_t errlen)
{
	(void)arg;
	(void)req;
	(void)j;
	(void)err;
	(void)errlen;
	if (!strcmp(cmd, "wait")) {
		*wait_for = 1;
		return SMD_CTL_WAIT;
	}
	return 0;
}

static const struct smd_ctl_ops t_ops = { .handle = t_handle, .resume = fx_ctl_resume };

struct ticks {
	int fd;
	unsigned n;
	double last;
};

static void on_tick(void *arg, double waited)
{
	struct ticks *t = arg;
	assert_true(waited >= t->last);
	t->last = waited;
	t->n++;
	(void)!write(t->fd, "t", 1);
}

static void test_progress_ticks(void **state)
{
	char dir[] = "/tmp/smd-test-ctlf-XXXXXX", path[128], err[256] = "", *reply = NULL;
	int tp[2], ready[2];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	assert_int_equal(pipe(tp), 0);
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct smd_ctl_server *s = NULL;
		close(tp[1]);
		close(ready[0]);
		if (smd_ctl_server_open(path, &t_ops, NULL, &s, err, sizeof(err)))
			_exit(1);
		(void)!write(ready[1], "r", 1);
		unsigned seen = 0;
		for (int rounds = 0; rounds < 100000; rounds++) {
			struct pollfd pf = { .fd = tp[0], .events = POLLIN };
			smd_ctl_server_poll(s, &pf, 1, 50);
			char c;
			if ((pf.revents & POLLIN) && read(tp[0], &c, 1) == 1 && ++seen == 3)
				smd_ctl_server_wake(s, 1);
			if (pf.revents & POLLHUP)
				break;
		}
		smd_ctl_server_free(s);
		_exit(0);
	}
	close(tp[0]);
	close(ready[1]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	struct ticks t = { .fd = tp[1] };
	assert_int_equal(smd_ctl_call_ex(path, "{\"cmd\":\"wait\"}", -1, 20, on_tick, &t, &reply, err, sizeof(err)), 0);
	assert_true(t.n >= 3);
	assert_non_null(strstr(reply, "\"woken\":true"));
	free(reply);
	/* no tick function: a plain call */
	assert_int_equal(smd_ctl_call_ex(path, "{\"cmd\":\"ping\"}", 5000, 20, NULL, NULL, &reply, err, sizeof(err)), 0);
	free(reply);
	close(tp[1]);
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(ready[0]);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_walk),
		cmocka_unit_test(test_find_port),
		cmocka_unit_test(test_metrics_render),
		cmocka_unit_test(test_peer_allowed),
		cmocka_unit_test(test_progress_ticks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
