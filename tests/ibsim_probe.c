/* SPDX-License-Identifier: MIT */
/*
 * ibsim_probe NODE [NODE...]: attach at each node of a running ibsim (one
 * process, several attachments: what multi-plane needs), send a
 * directed-route NodeInfo Get (hop count 0) on each, and print
 * "NODE GUID PORTGUID TYPE PORTS" from the replies. The SMP is built by
 * hand from the IBA layout, independent of smd's codecs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/ibsim_client.h"

static uint64_t be64_at(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int main(int argc, char **argv)
{
	struct sm_ibsim *c[16] = { 0 };
	char err[256];
	int n = argc - 1, rc = 0;

	if (n < 1 || n > 8) {
		fprintf(stderr, "usage: ibsim_probe NODE [NODE...] (at most 8)\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		if (sm_ibsim_open(NULL, argv[i + 1], 0, 5000, &c[i], err, sizeof(err))) {
			fprintf(stderr, "ibsim_probe: %s\n", err);
			rc = 1;
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		uint8_t mad[256] = { 0 };
		mad[0] = 1;                 /* base version */
		mad[1] = 0x81;              /* SM class, directed route */
		mad[2] = 1;                 /* class version */
		mad[3] = 0x01;              /* Get */
		mad[6] = 0;                 /* hop pointer */
		mad[7] = 0;                 /* hop count */
		mad[10] = 0x12; mad[11] = 0x34; mad[12] = 0; mad[13] = 0; mad[14] = 0; mad[15] = (uint8_t)(i + 1);
		mad[16] = 0x00; mad[17] = 0x11;  /* NodeInfo */
		mad[32] = 0xff; mad[33] = 0xff;  /* DrSLID permissive */
		mad[34] = 0xff; mad[35] = 0xff;  /* DrDLID permissive */
		if (sm_ibsim_send(c[i], mad, 0xffff, 0)) {
			fprintf(stderr, "ibsim_probe: send failed\n");
			rc = 1;
			goto out;
		}
		uint8_t r[256];
		uint32_t st = 0;
		int e = sm_ibsim_recv(c[i], r, 5000, NULL, &st);
		if (e) {
			fprintf(stderr, "ibsim_probe: %s: receive failed: %s (status %u)\n", argv[i + 1],
				strerror(-e), st);
			rc = 1;
			goto out;
		}
		if (!(r[3] & 0x80) || r[15] != (uint8_t)(i + 1) || r[8] != 0 || r[9] != 0 ||
		    r[10] != 0x12 || r[11] != 0x34) {
			fprintf(stderr, "ibsim_probe: %s: unexpected reply (method 0x%02x tid byte %u)\n",
				argv[i + 1], r[3], r[15]);
			rc = 1;
			goto out;
		}
		const uint8_t *ni = r + 64;  /* SMP data */
		printf("%s 0x%016llx 0x%016llx %u %u\n", sm_ibsim_info(c[i])->nodeid,
		       (unsigned long long)be64_at(ni + 12), (unsigned long long)be64_at(ni + 20), ni[2],
		       ni[3]);
	}
out:
	for (int i = 0; i < n; i++)
		sm_ibsim_close(c[i]);
	return rc;
}
