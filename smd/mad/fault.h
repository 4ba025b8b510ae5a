/* SPDX-License-Identifier: MIT */
#ifndef SMD_TRANSPORT_FAULT_H
#define SMD_TRANSPORT_FAULT_H
/* DOC: fault injection: a transport that dies after `budget` sends (see transport_fault.c). */
#include "mad/transport.h"

/* Wrap `inner` (owned from now on). 0 or -ENOMEM (inner then still the caller's). */
int sm_transport_lossy_wrap(struct sm_transport *inner, unsigned long budget, struct sm_transport **out);

#endif
