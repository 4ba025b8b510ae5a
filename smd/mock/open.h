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

#endif
