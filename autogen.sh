#!/bin/sh
# autogen.sh - regenerate the autotools build system (configure, Makefile.in)
# from configure.ac and Makefile.am. Run once after a fresh clone.
set -e
cd "$(dirname "$0")"
# Makefile.am includes the detectors' sources, derived from their list
sim/detectors-am workload/wl_policy.h > sim/detectors.am
autoreconf --install --force --warnings=all
