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
 * Key rotation (a new key while ports hold the old one) is not supported.
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

enum sm_key_mode { SM_KEY_NONE = 0, SM_KEY_FIXED, SM_KEY_RANDOM };

struct sm_keys_cfg {
	uint8_t mkey_mode;          /* enum sm_key_mode */
	uint64_t mkey;              /* SM_KEY_FIXED: the key (non-zero) */
	uint8_t protect_bits;       /* M_KeyProtectBits 0-3 */
	uint16_t lease_period;      /* M_KeyLeasePeriod, seconds; 0 = never expires */
	uint8_t smkey_mode;         /* enum sm_key_mode */
	uint64_t sm_key;            /* SM_KEY_FIXED: the key */
};

struct sm_keys {
	uint64_t mkey;              /* sent in every SMP header: what managed ports hold (0: none) */
	uint64_t set_mkey;          /* written to PortInfo.M_Key (0 when M_Key was turned off) */
	uint8_t protect_bits;       /* written to PortInfo.M_KeyProtectBits */
	uint16_t lease_period;      /* written to PortInfo.M_KeyLeasePeriod */
	uint64_t sm_key;            /* SMInfo.SM_Key (0: none) */
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

/* Is M_Key handling on at all (a key to send or to set)? */
static inline int sm_keys_active(const struct sm_keys *k)
{
	return k && (k->mkey || k->set_mkey || k->protect_bits || k->lease_period);
}

#endif
