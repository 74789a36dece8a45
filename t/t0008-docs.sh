#!/usr/bin/env bash

test_description='the docs keep up with the code: every flag, subcommand, config key and error code is documented'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"

man_src="$VENOM_SRC/docs/man/git-venom-checkpoint.md"
codes_doc="$VENOM_SRC/docs/exit-codes.md"

# flags_of ARGS... prints the long flags `git venom-checkpoint ARGS -h`
# lists, one a line.
flags_of () {
	git venom-checkpoint "$@" -h | sed -n 's/^ *\(-[a-zA-Z], \)*\(--[a-z][a-z-]*\).*/\2/p'
}

test_expect_success 'every flag of every subcommand is in the man page' '
	for sub in "" list show diff edit; do
		flags_of $sub >flags.out &&
		test -s flags.out &&
		while read flag; do
			grep -F -- "**$flag**" "$man_src" >/dev/null || {
				echo >&4 "git venom-checkpoint $sub: $flag is not documented in docs/man/git-venom-checkpoint.md"
				return 1
			}
		done <flags.out || return 1
	done
'

test_expect_success 'every subcommand in the usage is in the man page' '
	git venom-checkpoint -h | sed -n "s/^.*git venom-checkpoint \([a-z][a-z]*\) .*/\1/p" >subs.out &&
	test -s subs.out &&
	while read sub; do
		grep -F "**git venom-checkpoint $sub**" "$man_src" >/dev/null &&
		grep -F "**$sub**" "$man_src" >/dev/null || {
			echo >&4 "subcommand $sub is not documented"
			return 1
		}
	done <subs.out
'

test_expect_success 'every venom.checkpoints.* key the code reads is in the man page, with its RFC 11.5 default' '
	sed -n "s/^[	 ]*case \"\(venom\.checkpoints\.[a-z]*\)\":.*/\1/p" "$VENOM_SRC/checkpoint/config.go" >keys.out &&
	test_line_count -ge 8 keys.out &&
	while read key; do
		grep -i -F "**$key**" "$man_src" >/dev/null || {
			echo >&4 "$key is not documented"
			return 1
		}
	done <keys.out &&
	for d in 52428800 536870912 100 14d 30d 30s; do
		grep -F "(default **$d**" "$man_src" >/dev/null || return 1
	done
'

test_expect_success 'every error code in the code base is in docs/exit-codes.md' '
	grep -rhoE "\"(failed|invalid_params|not_found|denied|conflict|timeout|unsupported)\.[a-z_]+\"" \
		--include="*.go" --exclude="*_test.go" "$VENOM_SRC" | tr -d "\"" | sort -u >codes.out &&
	test -s codes.out &&
	while read code; do
		grep -F "\`$code\`" "$codes_doc" >/dev/null || {
			echo >&4 "$code is not documented in docs/exit-codes.md"
			return 1
		}
	done <codes.out
'

test_expect_success 'every code the checkpoint command returns is in its man page' '
	(
		cd "$VENOM_SRC" &&
		grep -hoE "\"(failed|invalid_params|not_found|denied|conflict|timeout|unsupported)\.[a-z_]+\"" \
			internal/cli/checkpoint.go internal/cli/show.go internal/cli/edit.go internal/cli/cli.go \
			checkpoint/tree.go checkpoint/list.go checkpoint/take.go checkpoint/diff.go \
			checkpoint/edit.go checkpoint/config.go
	) | tr -d "\"" | grep -v "^invalid_params.command$" | sort -u >codes.out &&
	test -s codes.out &&
	while read code; do
		grep -F "**$code** (" "$man_src" >/dev/null || {
			echo >&4 "$code is not in the EXIT STATUS table of docs/man/git-venom-checkpoint.md"
			return 1
		}
	done <codes.out
'

test_expect_success 'the exit classes in the docs match what the binary returns' '
	git init -q repo &&
	cd repo &&
	test_expect_code 2 git venom-checkpoint --agent BAD --json >/dev/null &&
	grep "^| 2 | .invalid_params. |" "$codes_doc" &&
	test_expect_code 3 git venom-checkpoint show k1 --json >/dev/null &&
	grep "^| 3 | .not_found. |" "$codes_doc" &&
	(cd "$VENOM_TEST_ROOT" && test_expect_code 10 git venom-checkpoint --json >/dev/null) &&
	grep "^| 10 | .unsupported. |" "$codes_doc"
'

# Issue 13 item 16: the behaviour itself is pinned by
# rollback.TestEmptyDirectoriesAreNotRecorded.
test_expect_success 'the man pages say that empty directories are not recorded, and what a rollback does with them' '
	grep -F "| Empty directories" "$man_src" &&
	grep -F "EMPTY DIRECTORIES" "$man_src" &&
	grep "^# EMPTY DIRECTORIES$" "$VENOM_SRC/docs/man/git-venom-plan.md"
'

test_expect_success 'the README gives the two set-up commands and the layout' '
	grep "^make demo" "$VENOM_SRC/README.md" &&
	grep "^make test" "$VENOM_SRC/README.md" &&
	grep "^make install" "$VENOM_SRC/README.md" &&
	grep "^docs/ " "$VENOM_SRC/README.md" &&
	grep "^t/ " "$VENOM_SRC/README.md"
'

test_done
