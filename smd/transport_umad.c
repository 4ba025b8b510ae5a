/* SPDX-License-Identifier: MIT */
/* DOC: umad transport — see transport.h. (work in progress: bodies landing next) */
#include "transport.h"
