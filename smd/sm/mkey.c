/* SPDX-License-Identifier: MIT */
/*
 * DOC: the keys file and key decisions (see mkey.h)
 *
 * Random keys come from getrandom(2) (the kernel CSPRNG); a key of 0 means
 * "no key" on the wire, so a random 0 is drawn again.
 */
#include "sm/mkey.h"
#include "lib/err.h"
#include "lib/siphash.h"
#include "lib/statefile.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int random_key(uint64_t *out)
{
	uint64_t v = 0;
	while (!v) {
		ssize_t n = getrandom(&v, sizeof(v), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(v))
			return n < 0 ? -errno : -EIO;
	}
	*out = v;
	return 0;
}

uint64_t sm_keys_derive(const uint8_t secret[16], uint64_t guid)
{
	uint8_t in[8];
	for (unsigned i = 0; i < 8; i++)
		in[i] = (uint8_t)(guid >> (56 - 8 * i));   /* the GUID as on the wire */
	uint64_t v = sm_siphash24(secret, in, sizeof(in));
	return v ? v : 1;   /* 0 is "no key" */
}

uint64_t sm_keys_sma_guid(const struct sm_fabric *f, uint32_t n, unsigned p)
{
	if (!f || n >= f->n_nodes)
		return 0;
	const struct sm_node *nd = &f->nodes[n];
	if (nd->type == SM_NODE_SWITCH)
		return f->ports[nd->port0].guid;
	if (p >= 1 && p <= nd->nports)
		return sm_port(f, n, p)->guid;
	return 0;
}

/* One line of 32 hex digits into out. */
static int secret_line(const char *line, uint8_t out[16])
{
	unsigned i;
	for (i = 0; i < 32 && isxdigit((unsigned char)line[i]); i++) {
		unsigned d = isdigit((unsigned char)line[i]) ? (unsigned)(line[i] - '0') :
			     (unsigned)(tolower((unsigned char)line[i]) - 'a' + 10);
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | d : d << 4);
	}
	return i == 32 && !line[i] ? 0 : -EINVAL;
}

int sm_keys_read_secret(const char *path, uint8_t secret[2][16], uint8_t *nsecrets, char *err, size_t errlen)
{
	char buf[1024];
	struct stat st;
	unsigned n = 0, ln = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), rc = 0;
	ssize_t len;

	*nsecrets = 0;
	if (fd < 0)
		return sm_errf_rc(-errno, err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return sm_errf_rc(-EINVAL, err, errlen, "%s: not a regular file", path);
	}
	if ((st.st_mode & 07777) != 0600) {
		close(fd);
		return sm_errf_rc(-EPERM, err, errlen, "%s: mode %04o; the M_Key secret must be mode 0600", path,
				  (unsigned)(st.st_mode & 07777));
	}
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return sm_errf_rc(-errno, err, errlen, "%s: %s", path, strerror(errno));
	if ((size_t)len == sizeof(buf) - 1)
		return sm_errf_rc(-EINVAL, err, errlen, "%s: too long for a secret file", path);
	buf[len] = '\0';
	for (char *line = buf, *nl; line && !rc; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		ln++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		for (size_t e = strlen(line); e && (line[e - 1] == ' ' || line[e - 1] == '\t' || line[e - 1] == '\r');)
			line[--e] = '\0';
		if (!*line)
			continue;
		if (n == 2)
			rc = sm_errf_rc(-EINVAL, err, errlen, "%s:%u: more than two secrets (current, previous)",
					path, ln);
		else if (secret_line(line, secret[n]))
			rc = sm_errf_rc(-EINVAL, err, errlen, "%s:%u: expected 32 hex digits (a 128-bit secret)",
					path, ln);
		else
			n++;
	}
	if (!rc && !n)
		rc = sm_errf_rc(-EINVAL, err, errlen, "%s: no secret", path);
	if (rc) {
		memset(secret, 0, 2 * 16);
		return rc;
	}
	if (n == 2 && !memcmp(secret[0], secret[1], 16))
		n = 1;
	*nsecrets = (uint8_t)n;
	return 0;
}

#define SM_KEYS_FILE_MAX 4096   /* a keys file is three short lines */

/* One "NAME VALUE" line (comments stripped) into mkey or sm_key; ln for messages. */
static int keys_line(const char *path, unsigned ln, char *line, uint64_t *mkey, uint64_t *sm_key,
		     unsigned *seen_m, unsigned *seen_s, char *err, size_t errlen)
{
	char name[32], val[64], extra[2], *end, *hash = strchr(line, '#');
	uint64_t v;

	if (hash)
		*hash = '\0';
	int nf = sscanf(line, "%31s %63s %1s", name, val, extra);
	if (nf <= 0)
		return 0;
	if (nf != 2)
		return sm_errf_rc(-EINVAL, err, errlen, "%s:%u: expected 'NAME VALUE' (m_key or sm_key)", path, ln);
	errno = 0;
	v = strtoull(val, &end, 0);
	if (!isdigit((unsigned char)val[0]) || *end || errno)
		return sm_errf_rc(-EINVAL, err, errlen, "%s:%u: '%s' is not a 64-bit number", path, ln, val);
	if (!strcmp(name, "m_key") && !*seen_m) {
		*mkey = v;
		*seen_m = ln;
	} else if (!strcmp(name, "sm_key") && !*seen_s) {
		*sm_key = v;
		*seen_s = ln;
	} else {
		return sm_errf_rc(-EINVAL, err, errlen, "%s:%u: %s '%s'", path, ln,
				  !strcmp(name, "m_key") || !strcmp(name, "sm_key") ? "duplicate" : "unknown key", name);
	}
	return 0;
}

/*
 * The file is sealed (lib/statefile.h: header, version, CRC-32) since issue
 * 18. A sealed file that fails its check (a flipped bit, zeros, a cut) is
 * refused; an unsealed one (an older smd's) is read, unless it holds no key
 * at all: an emptied keys file is damage, not "no keys" (with random keys
 * it would mean new keys, and ports that keep refusing the old ones).
 */
static int keys_read(const char *path, uint64_t *mkey, uint64_t *sm_key, int *sealed_out, char *err,
		     size_t errlen)
{
	unsigned ln = 0, seen_m = 0, seen_s = 0;
	size_t len = 0, off = 0;
	char *buf = NULL;
	int rc, sealed;

	*mkey = *sm_key = 0;
	rc = sm_state_read(path, SM_KEYS_FILE_MAX, &buf, &len, err, errlen);
	if (rc)
		return rc;
	sealed = rc = sm_state_check(buf, len, path, &off, err, errlen);
	if (sealed > 0)
		ln = 1;   /* the header */
	for (char *line = buf + off; rc >= 0 && line < buf + len;) {
		char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		ln++;
		if (nl)
			*nl = '\0';
		if (strlen(line) > 255)
			rc = sm_errf_rc(-EINVAL, err, errlen, "%s:%u: line too long", path, ln);
		else
			rc = keys_line(path, ln, line, mkey, sm_key, &seen_m, &seen_s, err, errlen);
		line = nl ? nl + 1 : buf + len;
	}
	if (rc >= 0 && !sealed && !seen_m && !seen_s)
		rc = sm_errf_rc(-EINVAL, err, errlen, "%s:1: no key and no smd-state header: an empty or damaged "
				"keys file is refused (remove it only if new keys are intended)", path);
	free(buf);
	if (rc < 0) {
		*mkey = *sm_key = 0;
		return rc;
	}
	*sealed_out = sealed > 0;
	return 0;
}

int sm_keys_load(const char *path, uint64_t *mkey, uint64_t *sm_key, char *err, size_t errlen)
{
	int sealed;

	return keys_read(path, mkey, sm_key, &sealed, err, errlen);
}

int sm_keys_save(const char *path, uint64_t mkey, uint64_t sm_key, char *err, size_t errlen)
{
	char body[200], buf[SM_STATE_HDR_MAX + sizeof(body)];
	int n = snprintf(body, sizeof(body),
			 "# smd keys: the M_Key and SM_Key this SM sets and uses. Secret: keep mode 0600.\n"
			 "m_key 0x%016" PRIx64 "\nsm_key 0x%016" PRIx64 "\n", mkey, sm_key);
	size_t hl = sm_state_header(buf, body, (size_t)n);

	memcpy(buf + hl, body, (size_t)n);
	return sm_state_write(path, buf, hl + (size_t)n, 0600, err, errlen);
}

/* The value of one key, given its mode and what the file holds. */
static int decide(const char *what, uint8_t mode, uint64_t cfg, uint64_t file, int persisted,
		  uint64_t *out, sm_note_fn *nfn, void *narg, char *err, size_t errlen)
{
	switch (mode) {
	case SM_KEY_FIXED:
		if (file && file != cfg)
			sm_notef(nfn, narg, "%s: the configured key differs from the persisted one; ports still "
			     "holding the old key will refuse it (key rotation is not supported)", what);
		*out = cfg;
		return 0;
	case SM_KEY_RANDOM:
		if (!persisted) {
			sm_errf(err, errlen, "%s: random needs a state directory to keep the key in", what);
			return -EINVAL;
		}
		if (file) {
			*out = file;
			return 0;
		}
		return random_key(out);
	default:
		*out = 0;
		return 0;
	}
}

int sm_keys_open(const char *state_dir, const struct sm_keys_cfg *cfg, struct sm_keys *k,
		 sm_note_fn *nfn, void *narg, char *err, size_t errlen)
{
	uint64_t fm = 0, fs = 0, mkey, smkey;
	int rc, have = 0, sealed = 0;
	struct stat st;

	memset(k, 0, sizeof(*k));
	if (cfg->protect_bits > 3) {
		sm_errf(err, errlen, "m_key_protect_bits: %u is out of range (0-3)", cfg->protect_bits);
		return -EINVAL;
	}
	if (cfg->mkey_mode == SM_KEY_FIXED && !cfg->mkey) {
		sm_errf(err, errlen, "m_key: 0 is no key (use none)");
		return -EINVAL;
	}
	if (cfg->mkey_mode == SM_KEY_DERIVED) {
		if (!cfg->secret_file[0]) {
			sm_errf(err, errlen, "m_key: derived needs m_key_secret_file");
			return -EINVAL;
		}
		/*
		 * Protect bits 2-3 drop a NodeInfo Get with a wrong key, and the
		 * key of a port is known only once its GUID is: a restart reads
		 * the neighbour table (sm/neighbours.h) from the state directory;
		 * an SM that never swept (a first start, a standby that never was
		 * master) finds nothing behind its own port until the leases expire.
		 */
		if (cfg->protect_bits >= 2 && !state_dir) {
			sm_errf(err, errlen, "m_key: derived at m_key_protect_bits %u needs a state directory (the "
				"neighbour table: a restarted SM cannot otherwise learn the GUIDs, hence the keys, of "
				"protected ports)", cfg->protect_bits);
			return -EINVAL;
		}
		if (cfg->protect_bits >= 2)
			sm_notef(nfn, narg, "m_key: derived at protect bits %u: an SM without STATE_DIR/neighbours "
				 "(a first start, a standby that never was master) reaches protected ports only "
				 "once their lease expires (m_key_lease_period %u%s)", cfg->protect_bits,
				 cfg->lease_period, cfg->lease_period ? " s" : ": never");
		rc = sm_keys_read_secret(cfg->secret_file, k->secret, &k->nsecrets, err, errlen);
		if (rc)
			return rc;
		k->derived = 1;
	}
	if (state_dir) {
		if ((size_t)snprintf(k->path, sizeof(k->path), "%s/keys", state_dir) >= sizeof(k->path)) {
			sm_errf(err, errlen, "%s/keys: path too long", state_dir);
			return -ENAMETOOLONG;
		}
		rc = keys_read(k->path, &fm, &fs, &sealed, err, errlen);
		if (rc && rc != -ENOENT)
			return rc;
		have = !rc;
		if (have && !stat(k->path, &st) && (st.st_mode & 077)) {
			if (chmod(k->path, 0600))
				sm_notef(nfn, narg, "%s: readable by others (mode %04o) and cannot be made 0600: %s",
				     k->path, (unsigned)(st.st_mode & 07777), strerror(errno));
			else
				sm_notef(nfn, narg, "%s: was mode %04o, now 0600", k->path,
				     (unsigned)(st.st_mode & 07777));
		}
	}
	rc = decide("m_key", cfg->mkey_mode, cfg->mkey, fm, state_dir != NULL, &mkey, nfn, narg, err, errlen);
	if (!rc)
		rc = decide("sm_key", cfg->smkey_mode, cfg->sm_key, fs, state_dir != NULL, &smkey, nfn, narg,
			    err, errlen);
	if (rc)
		return rc;
	if (cfg->mkey_mode == SM_KEY_NONE) {
		/* off: reach ports that still hold an old key with it, and clear it on them */
		k->mkey = fm;
		k->set_mkey = 0;
		if (fm)
			sm_notef(nfn, narg, "m_key is off; ports still holding the key of %s are reached with it "
			     "and their M_Key is cleared", k->path);
	} else if (cfg->mkey_mode == SM_KEY_DERIVED) {
		k->protect_bits = cfg->protect_bits;   /* keys per port: sm_keys_send(), sm_keys_set() */
		k->lease_period = cfg->lease_period;
		/* a single key from earlier runs: ports still holding it are reached with it and re-keyed */
		k->prev_mkey = fm;
		if (fm && k->nsecrets < 2)
			sm_notef(nfn, narg, "m_key: derived; ports still holding the single key of %s are reached "
				 "with it and given their derived keys", k->path);
	} else {
		k->mkey = k->set_mkey = mkey;
		k->protect_bits = cfg->protect_bits;
		k->lease_period = cfg->lease_period;
	}
	k->sm_key = smkey;
	if (cfg->smkey_mode == SM_KEY_NONE)
		smkey = fs;   /* keep what the file has */
	/* an older smd's file (no header) is written again, sealed */
	int keep_fm = cfg->mkey_mode == SM_KEY_NONE || cfg->mkey_mode == SM_KEY_DERIVED;
	if (!state_dir || (have && sealed && fm == (keep_fm ? fm : mkey) && fs == smkey))
		return 0;
	if (!have && !mkey && !smkey)
		return 0;     /* nothing to keep */
	char serr[600];
	rc = sm_keys_save(k->path, keep_fm ? fm : mkey, smkey, serr, sizeof(serr));
	if (rc) {
		if (cfg->mkey_mode == SM_KEY_RANDOM || cfg->smkey_mode == SM_KEY_RANDOM) {
			sm_errf(err, errlen, "cannot keep a new random key: %s", serr);
			return rc;
		}
		sm_notef(nfn, narg, "cannot save the keys (they are in the configuration): %s", serr);
	}
	return 0;
}

int sm_keys_reload(const struct sm_keys *cur, uint8_t protect_bits, uint16_t lease_period,
		   const uint8_t secrets[2][16], uint8_t n, struct sm_keys *out, char *err, size_t errlen)
{
	if (n < 1 || n > 2) {
		sm_errf(err, errlen, "m_key: derived needs one or two secrets");
		return -EINVAL;
	}
	/* the neighbour table is opened at start, for derived keys at protect bits 2-3 only */
	if ((protect_bits >= 2) != (cur->derived && cur->protect_bits >= 2)) {
		sm_errf(err, errlen, "m_key_protect_bits %u with derived keys (the neighbour table is opened at start)",
			protect_bits);
		return -EINVAL;
	}
	*out = *cur;
	if (!cur->derived) {
		out->prev_mkey = cur->mkey;   /* migration: ports holding the single key are re-keyed */
		out->mkey = out->set_mkey = 0;
		out->derived = 1;
	}
	out->protect_bits = protect_bits;
	out->lease_period = lease_period;
	memcpy(out->secret, secrets, 2 * sizeof(secrets[0]));
	out->nsecrets = n;
	if (cur->derived && n == 1 && memcmp(secrets[0], cur->secret[0], sizeof(secrets[0]))) {
		memcpy(out->secret[1], cur->secret[0], sizeof(out->secret[1]));   /* the running one: previous */
		out->nsecrets = 2;
	}
	if (cur->derived && cur->nsecrets == out->nsecrets && cur->prev_mkey == out->prev_mkey &&
	    !memcmp(cur->secret, out->secret, sizeof(cur->secret[0]) * cur->nsecrets) &&
	    cur->protect_bits == out->protect_bits && cur->lease_period == out->lease_period)
		return 0;
	return 1;
}
