/* SPDX-License-Identifier: MIT */
/* DOC: SMP transactions — see txn.h. (work in progress: bodies landing next) */
#include "txn.h"
