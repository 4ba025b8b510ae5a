/* SPDX-License-Identifier: MIT */
/* DOC: SMP codecs — see mad.h. (work in progress: bodies landing next) */
#include "mad.h"
