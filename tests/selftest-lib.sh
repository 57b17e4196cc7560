# selftest-lib.sh - what the `ksmkit selftest` test scripts share: a
# temporary directory, running the command with its output kept, and
# checking its exit status, a line of its TAP and its totals. Sourced by
# tests/selftest*.test; each says "ok: ..." or "FAIL: ..." per check and
# counts the failures in $fails.
set -u
: "${KSMKIT:?KSMKIT must name the ksmkit binary}"
: "${top_srcdir:?top_srcdir must be set}"
selftests="$top_srcdir/workloads/selftests"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { # MESSAGE
	echo "FAIL: $1"
	sed 's/^/  out: /' "$tmp/out"
	sed 's/^/  err: /' "$tmp/err"
	fails=$((fails + 1))
}

# Run CMD... with stdout in $tmp/out and stderr in $tmp/err; its status must be WANT.
expect_status() { # WANT DESCRIPTION CMD...
	want=$1 what=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		fail "$what: exit $got, wanted $want"
	else
		echo "ok: $what"
	fi
}

# The last run's stdout (or, with FILE=err, stderr) has a line equal to TEXT.
expect_line() { # TEXT DESCRIPTION [out|err]
	grep -qxF -- "$1" "$tmp/${3:-out}" || fail "$2: no line '$1'"
}

# The last run's stdout has a line matching the extended regex RE.
expect_match() { # RE DESCRIPTION
	grep -Eq -- "$1" "$tmp/out" || fail "$2: no line matching '$1'"
}

# How many TAP result lines the last run printed.
tap_lines() {
	grep -Ec '^(not )?ok [0-9]+ ' "$tmp/out"
}

finish() {
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed"
		exit 1
	fi
	exit 0
}
