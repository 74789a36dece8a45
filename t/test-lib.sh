# t/test-lib.sh: a small test library in the style of git's t/test-lib.sh.
#
# A test script sets test_description, sources this file, runs
# test_expect_success / test_expect_failure blocks and ends with test_done:
#
#	#!/usr/bin/env bash
#	test_description='what this script covers'
#	. "$(dirname "$0")/test-lib.sh"
#	test_expect_success 'title' '
#		git venom-checkpoint --json >out &&
#		jq -e ".reused == false" out
#	'
#	test_done
#
# Output is TAP, for prove (`prove --exec bash t/t*.sh`, or `make test`).
# Each script runs in its own trash directory, a fresh repository under a
# temporary directory whose name holds a space (as git's does), with HOME
# beside it and a scrubbed environment. The directory is removed at the end
# unless VENOM_TEST_KEEP=1 (or --debug) is set.
#
# Options (after the script name, or as variables for prove):
#	-v, --verbose     show each test's commands' output  (VENOM_TEST_VERBOSE=1)
#	-x                trace each test's commands          (VENOM_TEST_TRACE=1)
#	-i, --immediate   stop at the first failing test      (VENOM_TEST_IMMEDIATE=1)
#	-d, --debug       keep the trash directory            (VENOM_TEST_KEEP=1)
#
# The binaries under test are the ones in $VENOM_BIN (default: bin/ of this
# checkout), put first on PATH so `git venom-checkpoint` finds them.
#
# Portability: bash 3.2 (macOS) and later, BSD and GNU userlands. No
# associative arrays, no `stat -c`, no `sed -i`, no `readlink -f`.

# --- options -----------------------------------------------------------------

while test $# -gt 0; do
	case "$1" in
	-v | --verbose) VENOM_TEST_VERBOSE=1 ;;
	-x) VENOM_TEST_TRACE=1 VENOM_TEST_VERBOSE=1 ;;
	-i | --immediate) VENOM_TEST_IMMEDIATE=1 ;;
	-d | --debug) VENOM_TEST_KEEP=1 ;;
	*) echo "test-lib: unknown option '$1'" >&2; exit 1 ;;
	esac
	shift
done
if test -n "${VENOM_TEST_TRACE:-}"; then
	VENOM_TEST_VERBOSE=1
fi

# --- where things are --------------------------------------------------------

TEST_DIRECTORY=$(cd "$(dirname "$0")" && pwd -P)
VENOM_SRC=$(cd "$TEST_DIRECTORY/.." && pwd -P)
VENOM_BIN=${VENOM_BIN:-$VENOM_SRC/bin}
this_test=$(basename "$0" .sh)
export TEST_DIRECTORY VENOM_SRC VENOM_BIN

if test -z "${test_description:-}"; then
	echo "Bail out! $this_test: test_description is not set"
	exit 1
fi

if ! test -x "$VENOM_BIN/git-venom-checkpoint"; then
	echo "Bail out! no $VENOM_BIN/git-venom-checkpoint: run 'make build' first"
	exit 1
fi

# The tests read the JSON the commands print with jq, and check mtimes with
# perl (which prove needs anyway). .ci/run installs jq when it is missing.
for _tool in git jq perl; do
	if ! command -v $_tool >/dev/null 2>&1; then
		echo "Bail out! $_tool is needed by the tests and is not on PATH"
		exit 1
	fi
done

# The environment the tests ran with, for the few that must call out (make,
# go) with the user's own caches.
VENOM_TEST_ORIG_HOME=${HOME:-}
VENOM_TEST_ORIG_PATH=$PATH
export VENOM_TEST_ORIG_HOME VENOM_TEST_ORIG_PATH

# --- a clean environment -----------------------------------------------------

# Every GIT_* variable the caller had (GIT_DIR from a hook, GIT_VENOM_AGENT
# from a harness, GIT_CONFIG_PARAMETERS from `git -c`) would change what the
# tests see. Drop them all, then set the few we want.
for _v in $(compgen -v GIT_); do
	unset "$_v"
done
for _v in $(compgen -v VENOM_ | grep -E -v '^VENOM_(SRC|BIN|TEST_.*)$'); do
	unset "$_v"
done
unset _v
# CI (set by CI runners) and CLICOLOR_FORCE change whether the TUI uses
# colour (termenv reads them); a test that wants them sets them.
unset XDG_CONFIG_HOME XDG_CACHE_HOME MANPATH EMAIL CDPATH NO_COLOR \
	LANGUAGE PAGER EDITOR VISUAL GREP_OPTIONS CI CLICOLOR CLICOLOR_FORCE \
	COLORTERM

LC_ALL=C
LANG=C
TZ=UTC
TERM=dumb
export LC_ALL LANG TZ TERM

GIT_CONFIG_NOSYSTEM=1
GIT_AUTHOR_NAME='A U Thor'
GIT_AUTHOR_EMAIL='author@example.com'
GIT_COMMITTER_NAME='C O Mitter'
GIT_COMMITTER_EMAIL='committer@example.com'
GIT_AUTHOR_DATE='1112354055 +0200'
GIT_COMMITTER_DATE='1112354055 +0200'
GIT_MERGE_AUTOEDIT=no
GIT_PAGER=cat
GIT_EDITOR=:
export GIT_CONFIG_NOSYSTEM GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_AUTHOR_DATE \
	GIT_COMMITTER_DATE GIT_MERGE_AUTOEDIT GIT_PAGER GIT_EDITOR

PATH="$VENOM_BIN:$PATH"
export PATH

# A Claude Code rewind runs claude (its print-mode fork): the tests run a
# stand-in that records what it was asked, never a real claude.
GIT_VENOM_CLAUDE=$VENOM_SRC/harness/testdata/claude-code/fake-claude
export GIT_VENOM_CLAUDE

# --- the trash directory -----------------------------------------------------

# mktemp -d with a template works with both GNU and BSD mktemp. pwd -P
# resolves /tmp -> /private/tmp on macOS, so paths compare equal to the
# canonical ones the tool records.
VENOM_TEST_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/venom-test.XXXXXX") || {
	echo "Bail out! cannot create a temporary directory"
	exit 1
}
VENOM_TEST_ROOT=$(cd "$VENOM_TEST_ROOT" && pwd -P)
TRASH_DIRECTORY="$VENOM_TEST_ROOT/trash directory.$this_test"
HOME="$VENOM_TEST_ROOT/home"
export VENOM_TEST_ROOT TRASH_DIRECTORY HOME
mkdir "$HOME" "$TRASH_DIRECTORY" || exit 1

# HOME sits beside the repository, not in it, so its files never show up
# in a capture. The only global setting fixes the initial branch name.
cat >"$HOME/.gitconfig" <<-\EOF
	[init]
		defaultBranch = main
	[advice]
		detachedHead = false
EOF

# --- bookkeeping -------------------------------------------------------------

test_count=0
test_success=0
test_failure=0
test_fixed=0
test_broken=0
test_skipped=0
test_prereqs=' '

# fd 5 is TAP (the real stdout) and 6 the real stderr; 3 and 4 take the
# tests' own stdout and stderr: the terminal in verbose mode, otherwise a
# file per test ($VENOM_TEST_ROOT/test-output), whose last lines go to
# stderr when the test fails, so that a failure in CI (prove without -v)
# shows why. Test bodies read /dev/null.
exec 5>&1 6>&2
if test -n "${VENOM_TEST_VERBOSE:-}"; then
	exec 3>&1 4>&2
else
	exec 3>/dev/null 4>/dev/null
fi

say_tap () {
	printf '%s\n' "$*" >&5
}

# say_comment prints lines as TAP comments, so prove shows them with -v.
say_comment () {
	printf '%s\n' "$*" | sed 's/^/# /' >&5
}

_cleanup_trash () {
	cd "$VENOM_SRC" 2>/dev/null || cd /
	if test -n "${VENOM_TEST_KEEP:-}"; then
		say_comment "trash directory kept: $TRASH_DIRECTORY"
		return
	fi
	chmod -R u+rwx "$VENOM_TEST_ROOT" 2>/dev/null
	rm -rf "$VENOM_TEST_ROOT"
}

_die () {
	_code=$?
	if test -n "${test_done_called:-}"; then
		return
	fi
	say_tap "Bail out! $this_test: the script exited (status $_code) before test_done"
	_cleanup_trash
	exit 1
}
trap _die EXIT

# --- prerequisites -----------------------------------------------------------

# test_set_prereq NAME marks a prerequisite as met. A test names its
# prerequisites as an optional first argument, comma-separated; a name
# starting with ! is met when NAME is not.
test_set_prereq () {
	test_prereqs="$test_prereqs$1 "
}

test_have_prereq () {
	_ok=0
	_save_ifs=$IFS
	IFS=,
	for _p in $1; do
		IFS=$_save_ifs
		case "$_p" in
		!*)
			case "$test_prereqs" in *" ${_p#!} "*) _ok=1 ;; esac ;;
		*)
			case "$test_prereqs" in *" $_p "*) ;; *) _ok=1 ;; esac ;;
		esac
	done
	IFS=$_save_ifs
	return $_ok
}

command -v make >/dev/null 2>&1 && test_set_prereq MAKE
command -v man >/dev/null 2>&1 && test_set_prereq MAN
test "$(id -u)" = 0 && test_set_prereq ROOT
(ln -s x "$VENOM_TEST_ROOT/.symlink-probe") 2>/dev/null && test_set_prereq SYMLINKS
rm -f "$VENOM_TEST_ROOT/.symlink-probe"
case "$(uname -s)" in
Darwin) test_set_prereq MACOS ;;
Linux) test_set_prereq LINUX ;;
esac
# Names with a newline, a tab or bytes that are not UTF-8 need a file
# system that allows them (APFS refuses non-UTF-8 names).
if (: >"$VENOM_TEST_ROOT/.nl
probe") 2>/dev/null; then
	test_set_prereq FUNNYNAMES
fi
rm -f "$VENOM_TEST_ROOT/.nl
probe"
if (: >"$VENOM_TEST_ROOT/.$(printf '\377')probe") 2>/dev/null; then
	test_set_prereq NONUTF8NAMES
fi
rm -f "$VENOM_TEST_ROOT/.$(printf '\377')probe"

# --- running tests -----------------------------------------------------------

# test_when_finished CMD runs CMD after the current test's body, whether
# it passed or not; a failing CMD fails the test.
test_when_finished () {
	test_cleanup="{ $*
		} && (exit \"\$_eval_ret\"); _eval_ret=\$?; $test_cleanup"
}

_run_test_body () {
	test_cleanup=:
	cd "$TRASH_DIRECTORY" || return 1
	if test -z "${VENOM_TEST_VERBOSE:-}"; then
		exec 3>"$VENOM_TEST_ROOT/test-output" 4>&3
	fi
	if test -n "${VENOM_TEST_TRACE:-}"; then
		set -x
	fi
	eval "$1" </dev/null >&3 2>&4
	_eval_ret=$?
	eval "$test_cleanup" </dev/null >&3 2>&4
	if test -n "${VENOM_TEST_TRACE:-}"; then
		set +x
	fi 2>/dev/null
	if test -z "${VENOM_TEST_VERBOSE:-}"; then
		exec 3>/dev/null 4>/dev/null
	fi
	cd "$TRASH_DIRECTORY" || return 1
	return $_eval_ret
}

# _show_output prints, on the real stderr, the last lines the failed
# test's commands wrote (nothing in verbose mode: they are on the terminal).
_show_output () {
	_out="$VENOM_TEST_ROOT/test-output"
	if test -n "${VENOM_TEST_VERBOSE:-}" || ! test -s "$_out"; then
		return 0
	fi
	{
		echo "$this_test $test_count failed; the last lines its commands wrote:"
		tail -n 60 "$_out" | sed 's/^/|	/'
		# Again at the end, for a log that keeps only its tail.
		echo "$this_test $test_count failed: $_title"
	} >&6
}

_test_args () {
	# Sets _prereq, _title and _body from 2 or 3 arguments.
	if test $# = 3; then
		_prereq=$1; _title=$2; _body=$3
	elif test $# = 2; then
		_prereq=; _title=$1; _body=$2
	else
		say_tap "Bail out! $this_test: bug in the test script: test_expect_* takes 2 or 3 arguments"
		exit 1
	fi
}

_skip () {
	test_skipped=$((test_skipped + 1))
	say_tap "ok $test_count # skip $_title (missing $_prereq)"
}

test_expect_success () {
	_test_args "$@"
	test_count=$((test_count + 1))
	if test -n "$_prereq" && ! test_have_prereq "$_prereq"; then
		_skip
		return 0
	fi
	if _run_test_body "$_body"; then
		test_success=$((test_success + 1))
		say_tap "ok $test_count - $_title"
	else
		test_failure=$((test_failure + 1))
		say_tap "not ok $test_count - $_title"
		printf '%s\n' "$_body" | sed 's/^/#	/' >&5
		_show_output
		if test -n "${VENOM_TEST_IMMEDIATE:-}"; then
			test_done
		fi
	fi
	return 0
}

# test_expect_failure marks a known breakage: a failing body is reported as
# "not ok ... # TODO known breakage" (prove does not count it), a passing one
# as "# TODO known breakage vanished" so it gets promoted.
test_expect_failure () {
	_test_args "$@"
	test_count=$((test_count + 1))
	if test -n "$_prereq" && ! test_have_prereq "$_prereq"; then
		_skip
		return 0
	fi
	if _run_test_body "$_body"; then
		test_fixed=$((test_fixed + 1))
		say_tap "ok $test_count - $_title # TODO known breakage vanished"
	else
		test_broken=$((test_broken + 1))
		say_tap "not ok $test_count - $_title # TODO known breakage"
	fi
	return 0
}

test_done () {
	test_done_called=1
	trap - EXIT
	say_tap "1..$test_count"
	if test $test_fixed -gt 0; then
		say_comment "$test_fixed known breakage(s) vanished; please update test_expect_failure to test_expect_success"
	fi
	if test $test_broken -gt 0; then
		say_comment "still have $test_broken known breakage(s)"
	fi
	if test $test_failure -gt 0; then
		say_comment "failed $test_failure among $test_count test(s)"
		if test -z "${VENOM_TEST_KEEP:-}"; then
			say_comment "rerun with VENOM_TEST_KEEP=1 (or: bash t/$this_test.sh -v -i -d) to keep the trash directory"
		fi
		_cleanup_trash
		exit 1
	fi
	say_comment "passed all $test_success test(s)"
	_cleanup_trash
	exit 0
}

# --- helpers for test bodies -------------------------------------------------

# test_must_fail CMD... succeeds when CMD fails in the ordinary way: a
# non-zero exit that is not a crash (signal), a missing command (127) or
# one that cannot run (126).
test_must_fail () {
	"$@"
	_exit_code=$?
	if test $_exit_code -eq 0; then
		echo >&4 "test_must_fail: command succeeded: $*"
		return 1
	elif test $_exit_code -gt 128 && test $_exit_code -le 192; then
		echo >&4 "test_must_fail: died by signal $((_exit_code - 128)): $*"
		return 1
	elif test $_exit_code -eq 127; then
		echo >&4 "test_must_fail: command not found: $*"
		return 1
	elif test $_exit_code -eq 126; then
		echo >&4 "test_must_fail: cannot run: $*"
		return 1
	fi
	return 0
}

# test_expect_code N CMD... succeeds when CMD exits with status N.
test_expect_code () {
	_want=$1
	shift
	"$@"
	_exit_code=$?
	if test $_exit_code = "$_want"; then
		return 0
	fi
	echo >&4 "test_expect_code: command exited with $_exit_code, we wanted $_want: $*"
	return 1
}

# test_cmp EXPECTED ACTUAL compares two files and shows a diff when they
# differ.
test_cmp () {
	diff -u "$@" >&4 2>&4 || {
		diff -u "$@" >&3 2>&3
		return 1
	}
}

# test_must_be_empty FILE
test_must_be_empty () {
	test -e "$1" || { echo >&4 "'$1' is missing"; return 1; }
	if test -s "$1"; then
		echo >&4 "'$1' is not empty, it contains:"
		cat "$1" >&4
		return 1
	fi
}

test_path_is_file () {
	test -f "$1" || { echo >&4 "file '$1' does not exist"; return 1; }
}

test_path_is_dir () {
	test -d "$1" || { echo >&4 "directory '$1' does not exist"; return 1; }
}

test_path_is_missing () {
	if test -e "$1" || test -L "$1"; then
		echo >&4 "path '$1' exists"
		return 1
	fi
}

# test_line_count OP N FILE, e.g. test_line_count = 3 out
test_line_count () {
	_n=$(wc -l <"$3" | tr -d ' ')
	test "$_n" "$1" "$2" || {
		echo >&4 "test_line_count: line count for $3 is $_n, not $1 $2"
		cat "$3" >&4
		return 1
	}
}

# test_tick moves the author and committer dates one minute on, so commits
# made in a row have distinct, reproducible times.
test_tick () {
	if test -z "${test_tick_time:-}"; then
		test_tick_time=1112911993
	else
		test_tick_time=$((test_tick_time + 60))
	fi
	GIT_COMMITTER_DATE="$test_tick_time -0700"
	GIT_AUTHOR_DATE="$test_tick_time -0700"
	export GIT_COMMITTER_DATE GIT_AUTHOR_DATE
}

# test_commit MESSAGE [FILE [CONTENTS]] writes FILE (default MESSAGE.t),
# adds and commits it; like git's, without the tag.
test_commit () {
	_file=${2:-$1.t}
	_content=${3:-$1}
	mkdir -p "$(dirname "$_file")" &&
	printf '%s\n' "$_content" >"$_file" &&
	git add -- "$_file" &&
	test_tick &&
	git commit -q -m "$1"
}

# test_json FILE JQ-EXPR... asserts that each jq expression is true for the
# JSON in FILE, and shows the document when one is not.
test_json () {
	_f=$1
	shift
	for _e in "$@"; do
		jq -e "$_e" "$_f" >/dev/null 2>&4 || {
			echo >&4 "test_json: not true for $_f: $_e"
			cat "$_f" >&4
			return 1
		}
	done
}

# test_mtimes prints "<mtime in nanoseconds or seconds> <path>" for every
# file below the current directory, outside .git, sorted by path: a
# portable stand-in for GNU `find -printf` and `stat -c`.
test_mtimes () {
	perl -MFile::Find -MTime::HiRes=lstat -e '
		my @out;
		find({ no_chdir => 1, wanted => sub {
			if ($_ eq "./.git") { $File::Find::prune = 1; return; }
			return if $_ eq ".";
			my @s = lstat($_);
			push @out, sprintf("%.6f %o %d %s", $s[9], $s[2], $s[7], $_);
		}}, ".");
		print "$_\n" for sort { substr($a, index($a, " ./")) cmp substr($b, index($b, " ./")) } @out;
	'
}

# test_mtime FILE prints FILE's modification time, to the microsecond
# where the file system keeps it.
test_mtime () {
	perl -MTime::HiRes=stat -e 'printf "%.6f\n", (stat $ARGV[0])[9]' "$1"
}

# venom_ref AGENT K prints the ref of checkpoint K (k<n>) of AGENT.
venom_ref () {
	echo "refs/venom/checkpoints/$1/${2#k}"
}

# venom_log prints the sidecar log of the repository in the current
# directory.
venom_log () {
	cat "$(git rev-parse --path-format=absolute --git-common-dir)/venom/log.jsonl"
}

# --- start -------------------------------------------------------------------

cd "$TRASH_DIRECTORY" || exit 1
if test -z "${TEST_NO_CREATE_REPO:-}"; then
	git init -q . || {
		echo "Bail out! git init failed in $TRASH_DIRECTORY"
		exit 1
	}
	# A capture takes every untracked file, so the scratch files test
	# bodies write (out, err, expect, actual, *.json) would change every
	# checkpoint and defeat deduplication. Ignore them in this repository
	# only; tests of ignore rules use other names.
	printf '/%s\n' out err expect actual msg trace last refs '*.json' '*.out' \
		>>.git/info/exclude
fi
