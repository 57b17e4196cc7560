#!/bin/sh
# autogen.sh - regenerate the autotools build system (configure, Makefile.in)
# from configure.ac and Makefile.am. Run once after a fresh clone.
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all
