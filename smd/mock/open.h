/* SPDX-License-Identifier: MIT */
#ifndef SMD_MOCK_OPEN_H
#define SMD_MOCK_OPEN_H
/*
 * DOC: the transport backends above mad/ (see mad/open.h, mock/open.c)
 *
 * sm_backends: every one of them, NULL-terminated, for
 * sm_transport_open_spec(spec, sm_backends, ...): today "mock:DUMP".
 */
#include "mad/open.h"

extern const struct sm_transport_backend sm_mock_backend;
extern const struct sm_transport_backend *const sm_backends[];

/*
 * The fault injection of a mock plane's port (mock.h sm_mock_set_faults,
 * sm_mock_set_seed; smd.yaml(5) mock): 1 applied, 0 not a mock plane.
 */
int sm_mock_port_faults(const struct sm_plane_port *p, uint32_t loss_ppm, uint32_t corrupt_ppm,
			uint32_t delay_ppm, uint32_t delay_us, uint64_t seed);

#endif
