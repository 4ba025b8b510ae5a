/* SPDX-License-Identifier: MIT */
#ifndef SMD_MKEY_H
#define SMD_MKEY_H
/*
 * DOC: M_Key and SM_Key (the keys file)
 *
 * What smd protects its subnet with, and where those keys live across
 * restarts. The M_Key is written into PortInfo of every port smd
 * configures (switch port 0, CA ports) together with M_KeyProtectBits and
 * M_KeyLeasePeriod, and sent in the header of every SMP smd sends, Get and
 * Set alike: a port that holds a non-zero M_Key refuses Sets (and, at
 * protect bits 2 and 3, answers no Get) carrying another key (IBA 14.2.4).
 * The SM_Key is what smd answers SMInfo with (smd/sm/sminfo.c).
 *
 * Data flow: smd_conf (m_key, m_key_protect_bits, m_key_lease_period,
 * sm_key) -> struct sm_keys_cfg -> sm_keys_open() reads STATE_DIR/keys,
 * decides the keys, and writes the file (sm_state_write: atomic, mode
 * 0600) BEFORE any port is touched, so a key set on a port is always on
 * disk first: a later run, or a run after a crash at any point, finds the
 * ports it protected.
 *
 * Decisions (mode per key):
 *   random  the key in the file; generated (getrandom) on the first start
 *           and saved; a start that cannot save a new key fails (a key set
 *           on ports but lost would lock smd out until the lease expires).
 *   fixed   the configured key; saved to the file (a failed save is a
 *           note: the key is in the config). If the file held another
 *           key, that is noted: ports still holding it will refuse.
 *   none    M_Key off. If the file holds a key from earlier runs, smd
 *           still sends it (ports may hold it) and writes M_Key 0 and
 *           protect bits 0 on every port it configures: protection is
 *           lifted cleanly. The file is kept.
 *   derived one key per port: SipHash-2-4 (lib/siphash.h) of the port's
 *           GUID (the SMA's: a switch's port-0 GUID, a CA port's own)
 *           under a 128-bit secret read from m_key_secret_file, never 0.
 *           Two SMs with the same secret compute the same keys (a standby
 *           manages the ports after a failover); one port's key reveals no
 *           other's. Nothing is saved in STATE_DIR/keys for it (the secret
 *           file is the state). Rotation: the file holds the current
 *           secret and optionally the previous one; a port that shows (or,
 *           hiding its key, refuses) the current key is reached with the
 *           previous one and set to the current (sm_core_mkey_at, sweep.c);
 *           an SMP lost to such a port is sent once more with the previous
 *           key (core.c). A reload re-reads the file (sm_keys_reload);
 *           a single key held before (STATE_DIR/keys, or the running
 *           m_key on a reload) is the previous key (migration). Refused with protect bits 2-3: a port then answers
 *           not even NodeInfo without its key, and an SM starting afresh
 *           knows no GUID behind a port (no persistent neighbour table).
 * Rotation of a single key (random/fixed) is not supported; moving to
 * derived keys is the way to rotate.
 *
 * Secret file (m_key_secret_file): a regular file, mode 0600 (no group or
 * other bits; refused otherwise with FILE: reason), one or two lines of 32
 * hex digits (the 16 bytes of the secret): the current secret, then the
 * previous one. '#' comments and blank lines are ignored.
 *
 * File format: "NAME VALUE" lines, NAME m_key or sm_key, VALUE a 64-bit
 * number (0x hex); '#' comments. Anything else refuses the file with
 * FILE:LINE. A file readable by group or others is tightened to 0600 and
 * that is noted.
 *
 * Library code: returns errors with a message, notes through a callback.
 */
#include <stddef.h>
#include <stdint.h>

#include "sm/lidmgr.h"   /* sm_note_fn */

enum sm_key_mode { SM_KEY_NONE = 0, SM_KEY_FIXED, SM_KEY_RANDOM, SM_KEY_DERIVED };

#define SM_KEY_SECRET_PATH_MAX 1024

struct sm_keys_cfg {
	uint8_t mkey_mode;          /* enum sm_key_mode */
	uint64_t mkey;              /* SM_KEY_FIXED: the key (non-zero) */
	uint8_t protect_bits;       /* M_KeyProtectBits 0-3 */
	uint16_t lease_period;      /* M_KeyLeasePeriod, seconds; 0 = never expires */
	uint8_t smkey_mode;         /* enum sm_key_mode */
	uint64_t sm_key;            /* SM_KEY_FIXED: the key */
	char secret_file[SM_KEY_SECRET_PATH_MAX]; /* SM_KEY_DERIVED (m_key only): the secret file */
};

struct sm_keys {
	uint64_t mkey;              /* sent in every SMP header: what managed ports hold (0: none) */
	uint64_t set_mkey;          /* written to PortInfo.M_Key (0 when M_Key was turned off) */
	uint8_t protect_bits;       /* written to PortInfo.M_KeyProtectBits */
	uint16_t lease_period;      /* written to PortInfo.M_KeyLeasePeriod */
	uint64_t sm_key;            /* SMInfo.SM_Key (0: none) */
	uint8_t derived;            /* per-port keys: mkey/set_mkey unused, see sm_keys_send() */
	uint8_t nsecrets;           /* derived: 1, or 2 with the previous secret */
	uint8_t secret[2][16];      /* derived: current, previous */
	/*
	 * derived: the single key (m_key: 0x... or random) ports held before
	 * derived keys, reached with it and re-keyed like a previous secret
	 * (migration); used when there is no previous secret. 0: none.
	 */
	uint64_t prev_mkey;
	char path[4096];            /* the keys file, "" when not persisted */
};

/*
 * Decide the keys from cfg and STATE_DIR/keys (state_dir NULL: nothing is
 * persisted; `random` then fails with -EINVAL). Saves the file when it
 * changes. 0, or a negative errno with the reason in err (a damaged file:
 * FILE:LINE).
 */
int sm_keys_open(const char *state_dir, const struct sm_keys_cfg *cfg, struct sm_keys *out,
		 sm_note_fn *note, void *note_arg, char *err, size_t errlen);

/*
 * Read a keys file: -ENOENT if absent, -EINVAL with FILE:LINE on bad
 * content. The file is sealed (lib/statefile.h); a sealed file that fails
 * its check, and an unsealed one that holds no key, are damaged (-EINVAL),
 * never read as "no keys". An older smd's unsealed file is read (and
 * sm_keys_open() writes it again, sealed).
 */
int sm_keys_load(const char *path, uint64_t *mkey, uint64_t *sm_key, char *err, size_t errlen);

/* Write a keys file (sealed, atomic, 0600). */
int sm_keys_save(const char *path, uint64_t mkey, uint64_t sm_key, char *err, size_t errlen);

/*
 * Read a secret file (see the DOC): 0, or -errno with "FILE: reason"
 * (not a regular file, mode other than 0600, bad content, more than two).
 */
int sm_keys_read_secret(const char *path, uint8_t secret[2][16], uint8_t *nsecrets, char *err, size_t errlen);

/* The derived key of port GUID guid under secret (never 0). */
uint64_t sm_keys_derive(const uint8_t secret[16], uint64_t guid);

/* The GUID whose key protects the SMA that answers for port p of node n (0: unknown). */
uint64_t sm_keys_sma_guid(const struct sm_fabric *f, uint32_t n, unsigned p);

/* Is M_Key handling on at all (a key to send or to set)? */
static inline int sm_keys_active(const struct sm_keys *k)
{
	return k && (k->derived || k->mkey || k->set_mkey || k->protect_bits || k->lease_period);
}

/* Derived keys with something ports may still hold: a previous secret, or the single key before. */
static inline int sm_keys_has_prev(const struct sm_keys *k)
{
	return k && k->derived && (k->nsecrets > 1 || k->prev_mkey);
}

/*
 * The M_Key to send to the SMA of port GUID guid; prev: the port is known
 * to hold the previous secret's key (or the single key before derived
 * keys). Derived keys with guid 0 (not yet known): 0.
 */
static inline uint64_t sm_keys_send(const struct sm_keys *k, uint64_t guid, int prev)
{
	if (!k)
		return 0;
	if (!k->derived)
		return k->mkey;
	if (prev && k->nsecrets < 2 && k->prev_mkey)
		return k->prev_mkey;
	return guid ? sm_keys_derive(k->secret[prev && k->nsecrets > 1], guid) : 0;
}

/*
 * The keys after a reload (derived keys only; the rest is decided at
 * start): cur the running keys, secrets/n what the secret file holds now.
 * Derived to derived: the new secrets; when the file holds one secret that
 * is not the running one, the running one is kept as the previous (no
 * port is lost if the old line was left out). A single key (fixed or
 * random) to derived: that key becomes prev_mkey (migration). out gets the
 * keys; returns 1 when they differ from cur, 0 when not, -EINVAL (err)
 * when this change needs a restart (protect bits 2-3 entered or left:
 * the neighbour table is opened at start).
 */
int sm_keys_reload(const struct sm_keys *cur, uint8_t protect_bits, uint16_t lease_period,
		   const uint8_t secrets[2][16], uint8_t n, struct sm_keys *out, char *err, size_t errlen);

/* The M_Key to write into PortInfo of the port with GUID guid. */
static inline uint64_t sm_keys_set(const struct sm_keys *k, uint64_t guid)
{
	if (!k)
		return 0;
	return k->derived ? (guid ? sm_keys_derive(k->secret[0], guid) : 0) : k->set_mkey;
}

#endif
