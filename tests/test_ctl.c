/* SPDX-License-Identifier: MIT */
/*
 * Tests of the control protocol (smd/ctl/ctl.h): the JSON reader on good,
 * bad, oversized and garbage input; request validation; reply encoding
 * (golden lines); and a server round trip over a socketpair-free temp
 * socket (the poll loop is driven by the test, no threads, no timing).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "lib/json.h"
#include "fixture/fixture.h"

static int parse_req(const char *s, const char **cmd, char *err, size_t errlen, struct smd_jv **v)
{
	return smd_ctl_parse_request(s, strlen(s), v, cmd, err, errlen);
}

static void test_good_requests(void **state)
{
	struct smd_jv *v = NULL;
	const char *cmd = NULL;
	char err[256];

	(void)state;
	assert_int_equal(parse_req("{\"version\":1,\"cmd\":\"status\"}", &cmd, err, sizeof(err), &v), 0);
	assert_string_equal(cmd, "status");
	smd_jv_free(v);
	/* version optional, whitespace, other members ignored, CR tolerated by the reader */
	assert_int_equal(parse_req("  {\"cmd\" : \"sweep\", \"wait\": false, \"x\": null, \"n\": -1.5e2 }\r\n",
				   &cmd, err, sizeof(err), &v), 0);
	assert_string_equal(cmd, "sweep");
	assert_int_equal(smd_jv_bool(v, "wait", 1), 0);
	assert_true(smd_jv_num(v, "n", 0) == -150.0);
	assert_non_null(smd_jv_get(v, "x"));
	assert_int_equal(smd_jv_get(v, "x")->type, SMD_J_NULL);
	smd_jv_free(v);
	/* escapes: \u00e9 is 2 UTF-8 bytes, a surrogate pair is 4 */
	assert_int_equal(parse_req("{\"cmd\":\"a\\u00e9\\ud83d\\ude00\\n\\\"\"}", &cmd, err, sizeof(err), &v), 0);
	assert_string_equal(cmd, "a\xc3\xa9\xf0\x9f\x98\x80\n\"");
	smd_jv_free(v);
}

static void expect_bad(const char *s, const char *msg_part)
{
	struct smd_jv *v = NULL;
	const char *cmd = NULL;
	char err[256] = "";
	int rc = smd_ctl_parse_request(s, strlen(s), &v, &cmd, err, sizeof(err));

	if (rc == 0)
		fail_msg("accepted: %s", s);
	assert_null(v);
	if (!strstr(err, msg_part))
		fail_msg("'%s': message '%s' lacks '%s'", s, err, msg_part);
}

static void test_bad_requests(void **state)
{
	(void)state;
	expect_bad("", "bad JSON");
	expect_bad("status", "bad JSON");
	expect_bad("{", "bad JSON");
	expect_bad("{\"cmd\":\"status\"", "bad JSON");
	expect_bad("{\"cmd\":\"status\"}}", "trailing");
	expect_bad("{\"cmd\":\"status\",}", "bad JSON");
	expect_bad("{\"cmd\":'status'}", "bad JSON");
	expect_bad("[\"status\"]", "a request is a JSON object");
	expect_bad("\"status\"", "a request is a JSON object");
	expect_bad("{}", "missing \"cmd\"");
	expect_bad("{\"cmd\":7}", "missing \"cmd\"");
	expect_bad("{\"cmd\":\"\"}", "missing \"cmd\"");
	expect_bad("{\"version\":2,\"cmd\":\"status\"}", "unsupported protocol version");
	expect_bad("{\"version\":\"1\",\"cmd\":\"status\"}", "unsupported protocol version");
	expect_bad("{\"cmd\":\"status\",\"a\":{\"b\":1}}", "nested");
	expect_bad("{\"cmd\":\"status\",\"a\":[1]}", "nested");
	expect_bad("{\"cmd\":\"st\\x\"}", "bad escape");
	expect_bad("{\"cmd\":\"st\\ud800\"}", "surrogate");
	expect_bad("{\"cmd\":\"st\\u0000\"}", "NUL");
	expect_bad("{\"cmd\":\"a\tb\"}", "control character");
	/* invalid UTF-8 (found by fuzz/fuzz_ctl: replies would echo it changed) */
	expect_bad("{\"cmd\":\"stat\x80s\"}", "invalid UTF-8");
	expect_bad("{\"cmd\":\"\xc0\xaf\"}", "invalid UTF-8");
	expect_bad("{\"cmd\":\"s\",\"n\":01}", "bad JSON");
	expect_bad("{\"cmd\":\"s\",\"n\":1e999}", "out of range");
	expect_bad("{\"cmd\":\"s\",\"n\":-}", "bad number");
	expect_bad("{\"cmd\":\"s\",\"b\":tru}", "bad JSON");
	/* a NUL byte inside the line */
	struct smd_jv *v = NULL;
	const char *cmd;
	char err[128];
	assert_int_equal(smd_ctl_parse_request("{\"cmd\":\"s\0\"}", 11, &v, &cmd, err, sizeof(err)), -EINVAL);
}

static void test_oversized_and_deep(void **state)
{
	char *big = malloc(SMD_CTL_MAX_REQ + 64);
	struct smd_jv *v = NULL;
	const char *cmd;
	char err[128];
	size_t n;

	(void)state;
	assert_non_null(big);
	n = (size_t)snprintf(big, SMD_CTL_MAX_REQ + 64, "{\"cmd\":\"status\",\"pad\":\"");
	memset(big + n, 'x', SMD_CTL_MAX_REQ + 10 - n);
	strcpy(big + SMD_CTL_MAX_REQ + 10, "\"}");
	assert_int_equal(smd_ctl_parse_request(big, strlen(big), &v, &cmd, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "longer than"));
	free(big);

	/* nesting beyond the depth limit is refused by the reader, not by the stack */
	char deep[200];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	assert_int_equal(smd_json_parse(deep, sizeof(deep), &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too deep"));
	/* within the limit it parses */
	memset(deep, '[', 10);
	memset(deep + 10, ']', 10);
	assert_int_equal(smd_json_parse(deep, 20, &v, err, sizeof(err)), 0);
	smd_jv_free(v);
}

static void test_garbage(void **state)
{
	unsigned seed = 12345;
	char buf[512];

	(void)state;
	/* random bytes and random mutations of a good request: never a crash, never a leak (ASan) */
	for (int it = 0; it < 20000; it++) {
		struct smd_jv *v = NULL;
		const char *cmd;
		char err[128];
		size_t n;
		if (it % 2) {
			n = (size_t)(rand_r(&seed) % sizeof(buf));
			for (size_t i = 0; i < n; i++)
				buf[i] = (char)rand_r(&seed);
		} else {
			const char *good = "{\"version\":1,\"cmd\":\"sweep\",\"wait\":true,\"s\":\"a\\u00e9\",\"n\":[1,{\"x\":2.5e3}]}";
			n = strlen(good);
			memcpy(buf, good, n);
			static const char bytes[] = "{}[]\":,\\u0e.-tfn \x01\xff";
			for (int k = rand_r(&seed) % 4; k >= 0; k--)
				buf[rand_r(&seed) % n] = bytes[(size_t)rand_r(&seed) % (sizeof(bytes) - 1)];
		}
		if (smd_json_parse(buf, n, &v, err, sizeof(err)) == 0)
			smd_jv_free(v);
		if (smd_ctl_parse_request(buf, n, &v, &cmd, err, sizeof(err)) == 0) {
			assert_non_null(cmd);
			smd_jv_free(v);
		}
	}
}

static void test_reply_encoding(void **state)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	struct sm_json j;

	(void)state;
	buf = smd_ctl_error_line("unknown command 'x\"y'", &n);
	assert_non_null(buf);
	assert_string_equal(buf, "{\"version\":1,\"ok\":false,\"error\":\"unknown command 'x\\\"y'\"}\n");
	assert_int_equal(n, strlen(buf));
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &n);
	assert_non_null(f);
	sm_json_init(&j, f, 0);
	smd_ctl_reply_begin(&j, "status");
	sm_json_str(&j, "state", "up");
	sm_json_uint(&j, "planes", 8);
	sm_json_obj_end(&j);
	assert_int_equal(sm_json_finish(&j), 0);
	fclose(f);
	assert_string_equal(buf, "{\"version\":1,\"ok\":true,\"cmd\":\"status\",\"state\":\"up\",\"planes\":8}\n");
	/* and our own reader reads it back */
	struct smd_jv *v = NULL;
	char err[128];
	assert_int_equal(smd_json_parse(buf, strlen(buf), &v, err, sizeof(err)), 0);
	assert_int_equal(smd_jv_bool(v, "ok", 0), 1);
	assert_true(smd_jv_num(v, "planes", 0) == 8);
	assert_string_equal(smd_jv_str(v, "state", ""), "up");
	smd_jv_free(v);
	free(buf);
}

/* ---- server, driven by hand ---- */
struct srv_ctx {
	unsigned handled;
	unsigned later;             /* "later": resume calls so far */
	struct smd_ctl_server *srv; /* for the peer's uid */
	uid_t uid;                  /* the peer uid the handler saw */
};

static int t_handle(void *arg, const char *cmd, const struct smd_jv *req, struct sm_json *j,
		    uint64_t *wait_for, char *err, size_t errlen)
{
	struct srv_ctx *c = arg;
	(void)req;
	c->handled++;
	if (!strcmp(cmd, "ping")) {
		sm_json_str(j, "pong", "yes");
		return 0;
	}
	if (!strcmp(cmd, "wait")) {
		*wait_for = 3;
		return SMD_CTL_WAIT;
	}
	if (!strcmp(cmd, "later")) {   /* work off the loop: resume says "not yet" twice */
		c->uid = c->srv ? smd_ctl_server_peer_uid(c->srv) : (uid_t)-2;
		*wait_for = 0;
		return SMD_CTL_WAIT;
	}
	snprintf(err, errlen, "unknown command '%s'", cmd);
	return -EINVAL;
}

static int t_resume(void *arg, const char *cmd, const struct smd_jv *req, struct sm_json *j, char *err,
		    size_t errlen)
{
	struct srv_ctx *c = arg;
	if (strcmp(cmd, "later"))
		return fx_ctl_resume(arg, cmd, req, j, err, errlen);
	if (++c->later < 3)
		return SMD_CTL_WAIT;
	sm_json_bool(j, "done", 1);
	return 0;
}

static const struct smd_ctl_ops t_ops = { .handle = t_handle, .resume = t_resume };

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Read one line, serving the server in between (no threads). */
static void read_line(struct smd_ctl_server *s, int fd, char *buf, size_t len)
{
	size_t n = 0;
	for (int rounds = 0; rounds < 200; rounds++) {
		assert_int_equal(smd_ctl_server_poll(s, NULL, 0, 10), 0);
		ssize_t r = recv(fd, buf + n, len - 1 - n, MSG_DONTWAIT);
		if (r > 0) {
			n += (size_t)r;
			buf[n] = '\0';
			if (memchr(buf, '\n', n))
				return;
		} else if (r == 0) {
			break;
		}
	}
	buf[n] = '\0';
}

static void test_server(void **state)
{
	char dir[] = "/tmp/smd-test-ctl-XXXXXX", path[128], line[8192];
	struct smd_ctl_server *s = NULL, *s2 = NULL;
	struct srv_ctx ctx = { 0 };
	char err[256];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/smd.sock", dir);
	assert_int_equal(smd_ctl_server_open(path, &t_ops, &ctx, &s, err, sizeof(err)), 0);
	/* a second server on a live socket is refused */
	assert_int_equal(smd_ctl_server_open(path, &t_ops, &ctx, &s2, err, sizeof(err)), -EADDRINUSE);

	fd = connect_to(path);
	/* two pipelined requests, a blank line, one error */
	const char *reqs = "{\"cmd\":\"ping\"}\n\n{\"cmd\":\"nope\"}\n";
	assert_int_equal(write(fd, reqs, strlen(reqs)), (ssize_t)strlen(reqs));
	read_line(s, fd, line, sizeof(line));
	assert_string_equal(line, "{\"version\":1,\"ok\":true,\"cmd\":\"ping\",\"pong\":\"yes\"}\n");
	read_line(s, fd, line, sizeof(line));
	assert_string_equal(line, "{\"version\":1,\"ok\":false,\"error\":\"unknown command 'nope'\"}\n");
	/* garbage, then the connection still works */
	assert_int_equal(write(fd, "\x01\xff garbage\n", 11), 11);
	read_line(s, fd, line, sizeof(line));
	assert_non_null(strstr(line, "\"ok\":false,\"error\":\"bad JSON"));
	/* parked until woken */
	assert_int_equal(write(fd, "{\"cmd\":\"wait\"}\n", 15), 15);
	for (int i = 0; i < 5; i++)
		assert_int_equal(smd_ctl_server_poll(s, NULL, 0, 0), 0);
	assert_int_equal(recv(fd, line, sizeof(line), MSG_DONTWAIT), -1);
	smd_ctl_server_wake(s, 2);
	assert_int_equal(recv(fd, line, sizeof(line), MSG_DONTWAIT), -1);
	smd_ctl_server_wake(s, 3);
	read_line(s, fd, line, sizeof(line));
	assert_string_equal(line, "{\"version\":1,\"ok\":true,\"cmd\":\"wait\",\"woken\":true}\n");
	/* oversized: error and close */
	char *big = malloc(SMD_CTL_MAX_REQ * 3);
	assert_non_null(big);
	memset(big, 'a', SMD_CTL_MAX_REQ * 3);
	assert_int_equal(send(fd, big, SMD_CTL_MAX_REQ * 3, MSG_NOSIGNAL), SMD_CTL_MAX_REQ * 3);
	free(big);
	read_line(s, fd, line, sizeof(line));
	assert_non_null(strstr(line, "request longer than 4096 bytes"));
	close(fd);
	/* a request without newline at EOF is answered */
	fd = connect_to(path);
	assert_int_equal(write(fd, "{\"cmd\":\"ping\"}", 14), 14);
	shutdown(fd, SHUT_WR);
	read_line(s, fd, line, sizeof(line));
	assert_non_null(strstr(line, "\"pong\":\"yes\""));
	close(fd);
	/* too many clients: the one past the limit is refused with a reply */
	int fds[SMD_CTL_MAX_CLIENTS + 1];
	for (int i = 0; i <= SMD_CTL_MAX_CLIENTS; i++) {
		fds[i] = connect_to(path);
		assert_int_equal(smd_ctl_server_poll(s, NULL, 0, 0), 0);
	}
	read_line(s, fds[SMD_CTL_MAX_CLIENTS], line, sizeof(line));
	assert_non_null(strstr(line, "too many clients"));
	for (int i = 0; i <= SMD_CTL_MAX_CLIENTS; i++)
		close(fds[i]);
	for (int i = 0; i < 5; i++)
		assert_int_equal(smd_ctl_server_poll(s, NULL, 0, 0), 0);
	assert_int_equal(smd_ctl_server_clients(s), 0);

	/* a full table: a peer that hung up frees its slot before the next connection is refused */
	for (int i = 0; i < SMD_CTL_MAX_CLIENTS; i++) {
		fds[i] = connect_to(path);
		assert_int_equal(smd_ctl_server_poll(s, NULL, 0, 0), 0);
	}
	assert_int_equal(smd_ctl_server_clients(s), SMD_CTL_MAX_CLIENTS);
	close(fds[0]);
	fds[0] = connect_to(path);
	assert_int_equal(smd_ctl_server_poll(s, NULL, 0, 0), 0);
	assert_int_equal(smd_ctl_server_clients(s), SMD_CTL_MAX_CLIENTS);
	assert_int_equal(send(fds[0], "{\"cmd\":\"ping\"}\n", 15, MSG_NOSIGNAL), 15);
	read_line(s, fds[0], line, sizeof(line));
	assert_non_null(strstr(line, "\"pong\":\"yes\""));
	for (int i = 0; i < SMD_CTL_MAX_CLIENTS; i++)
		close(fds[i]);
	for (int i = 0; i < 5; i++)
		assert_int_equal(smd_ctl_server_poll(s, NULL, 0, 0), 0);
	assert_int_equal(smd_ctl_server_clients(s), 0);
	/* resume may say "not yet": asked again every SMD_CTL_RECHECK_MS; the handler knows the peer */
	ctx.srv = s;
	fd = connect_to(path);
	assert_int_equal(send(fd, "{\"cmd\":\"later\"}\n", 16, MSG_NOSIGNAL), 16);
	read_line(s, fd, line, sizeof(line));
	assert_string_equal(line, "{\"version\":1,\"ok\":true,\"cmd\":\"later\",\"done\":true}\n");
	assert_int_equal(ctx.later, 3);
	assert_int_equal(ctx.uid, getuid());
	assert_int_equal(smd_ctl_server_peer_uid(s), (uid_t)-1);
	close(fd);

	smd_ctl_server_free(s);
	assert_int_equal(access(path, F_OK), -1);   /* unlinked */
	/* a stale socket file (nobody listening) is replaced */
	{
		int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		assert_true(strlen(path) < sizeof(sa.sun_path));
		memcpy(sa.sun_path, path, strlen(path));
		assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		close(lfd);
	}
	assert_int_equal(smd_ctl_server_open(path, &t_ops, &ctx, &s, err, sizeof(err)), 0);
	smd_ctl_server_free(s);
	snprintf(line, sizeof(line), "%s/sub", dir);
	rmdir(line);
	rmdir(dir);
	assert_int_equal(smd_ctl_call(path, "{\"cmd\":\"ping\"}", 100, &big, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

/* The command table (ctl.h): names and aliases found, words and request members consistent. */
static void test_cmd_table(void **state)
{
	(void)state;
	for (unsigned i = 0; i < SMD_CMD_N; i++) {
		const struct smd_ctl_cmd *c = &smd_ctl_cmds[i];
		assert_non_null(c->name);
		assert_ptr_equal(smd_ctl_cmd_find(c->name), c);
		if (c->alias)
			assert_ptr_equal(smd_ctl_cmd_find(c->alias), c);
		if (smd_ctl_cmd_n_args(c))
			assert_non_null(c->args_missing);
		if (c->word0)
			assert_non_null(c->word0_wrong);
	}
	assert_ptr_equal(smd_ctl_cmd_find("resweep"), &smd_ctl_cmds[SMD_CMD_SWEEP]);
	assert_int_equal(smd_ctl_cmd_n_args(&smd_ctl_cmds[SMD_CMD_ROUTE]), 2);
	assert_int_equal(smd_ctl_cmd_n_args(&smd_ctl_cmds[SMD_CMD_STATUS]), 0);
	assert_null(smd_ctl_cmd_find("reboot"));
	assert_null(smd_ctl_cmd_find(""));
	assert_non_null(smd_ctl_cmds[0].help);   /* smctl's usage starts with the first entry's lines */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_requests),
		cmocka_unit_test(test_cmd_table),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_oversized_and_deep),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_reply_encoding),
		cmocka_unit_test(test_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
