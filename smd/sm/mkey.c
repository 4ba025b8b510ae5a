/* SPDX-License-Identifier: MIT */
/*
 * DOC: the keys file and key decisions (see mkey.h)
 *
 * Random keys come from getrandom(2) (the kernel CSPRNG); a key of 0 means
 * "no key" on the wire, so a random 0 is drawn again.
 */
#include "sm/mkey.h"
#include "lib/err.h"
#include "lib/statefile.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

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

int sm_keys_load(const char *path, uint64_t *mkey, uint64_t *sm_key, char *err, size_t errlen)
{
	FILE *in = fopen(path, "r");
	char line[512];
	unsigned ln = 0, seen_m = 0, seen_s = 0;
	int rc = 0;

	*mkey = *sm_key = 0;
	if (!in) {
		rc = -errno;
		sm_errf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	while (fgets(line, sizeof(line), in)) {
		char name[32], val[64], extra[2];
		uint64_t v;
		char *end, *hash;
		ln++;
		if (!strchr(line, '\n') && !feof(in)) {
			sm_errf(err, errlen, "%s:%u: line too long", path, ln);
			rc = -EINVAL;
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		int nf = sscanf(line, "%31s %63s %1s", name, val, extra);
		if (nf <= 0)
			continue;
		if (nf != 2) {
			sm_errf(err, errlen, "%s:%u: expected 'NAME VALUE' (m_key or sm_key)", path, ln);
			rc = -EINVAL;
			break;
		}
		errno = 0;
		v = strtoull(val, &end, 0);
		if (!isdigit((unsigned char)val[0]) || *end || errno) {
			sm_errf(err, errlen, "%s:%u: '%s' is not a 64-bit number", path, ln, val);
			rc = -EINVAL;
			break;
		}
		if (!strcmp(name, "m_key") && !seen_m) {
			*mkey = v;
			seen_m = ln;
		} else if (!strcmp(name, "sm_key") && !seen_s) {
			*sm_key = v;
			seen_s = ln;
		} else {
			sm_errf(err, errlen, "%s:%u: %s '%s'", path, ln,
			       !strcmp(name, "m_key") || !strcmp(name, "sm_key") ? "duplicate" : "unknown key",
			       name);
			rc = -EINVAL;
			break;
		}
	}
	if (!rc && ferror(in)) {
		rc = -EIO;
		sm_errf(err, errlen, "%s: read error", path);
	}
	fclose(in);
	if (rc)
		*mkey = *sm_key = 0;
	return rc;
}

int sm_keys_save(const char *path, uint64_t mkey, uint64_t sm_key, char *err, size_t errlen)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf),
			 "# smd keys: the M_Key and SM_Key this SM sets and uses. Secret: keep mode 0600.\n"
			 "m_key 0x%016" PRIx64 "\nsm_key 0x%016" PRIx64 "\n", mkey, sm_key);
	return sm_state_write(path, buf, (size_t)n, 0600, err, errlen);
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
	int rc, have = 0;
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
	if (state_dir) {
		if ((size_t)snprintf(k->path, sizeof(k->path), "%s/keys", state_dir) >= sizeof(k->path)) {
			sm_errf(err, errlen, "%s/keys: path too long", state_dir);
			return -ENAMETOOLONG;
		}
		rc = sm_keys_load(k->path, &fm, &fs, err, errlen);
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
	} else {
		k->mkey = k->set_mkey = mkey;
		k->protect_bits = cfg->protect_bits;
		k->lease_period = cfg->lease_period;
	}
	k->sm_key = smkey;
	if (cfg->smkey_mode == SM_KEY_NONE)
		smkey = fs;   /* keep what the file has */
	if (!state_dir || (have && fm == (cfg->mkey_mode == SM_KEY_NONE ? fm : mkey) && fs == smkey))
		return 0;
	if (!have && !mkey && !smkey)
		return 0;     /* nothing to keep */
	char serr[600];
	rc = sm_keys_save(k->path, cfg->mkey_mode == SM_KEY_NONE ? fm : mkey, smkey, serr, sizeof(serr));
	if (rc) {
		if (cfg->mkey_mode == SM_KEY_RANDOM || cfg->smkey_mode == SM_KEY_RANDOM) {
			sm_errf(err, errlen, "cannot keep a new random key: %s", serr);
			return rc;
		}
		sm_notef(nfn, narg, "cannot save the keys (they are in the configuration): %s", serr);
	}
	return 0;
}
