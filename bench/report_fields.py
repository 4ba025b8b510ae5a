#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report_fields.py REPORT.json PATH[=DEFAULT] ...: print, space-separated, the
values at the given dotted paths of the dry-run report's first plane
(`smd --dry-run --report FILE --json`), DEFAULT where a value is missing or
null (an error without one). A path ending in "*1000" prints the value
times 1000, rounded down (seconds as milliseconds). For the bench scripts
(degraded.sh, ebb_model.sh): python3 is already a test dependency."""
import json
import math
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: report_fields.py REPORT.json PATH[=DEFAULT] ...")
    with open(sys.argv[1]) as f:
        plane = json.load(f)["planes"][0]
    out = []
    for arg in sys.argv[2:]:
        path, _, default = arg.partition("=")
        ms = path.endswith("*1000")
        v = plane
        for key in (path[:-5] if ms else path).split("."):
            v = v.get(key) if isinstance(v, dict) else None
        if v is None or v is False:
            if not default:
                sys.exit("report_fields.py: %s: no %s" % (sys.argv[1], path))
            v = default
        elif ms:
            v = math.floor(float(v) * 1000)
        out.append(str(v))
    print(" ".join(out))


main()
