/* SPDX-License-Identifier: MIT */
/* DOC: mock fabric — see mock.h. (work in progress: bodies landing next) */
#include "mock.h"
