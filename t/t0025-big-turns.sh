#!/usr/bin/env bash

test_description='big turns: progress on a terminal only, and a failed turn_end retried stays the turn'"'"'s'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"
. "$TEST_DIRECTORY/lib-terminal.sh"

test_expect_success 'setup: a turn that makes 3,000 files' '
	case_repo big &&
	echo a >a && git add a && git commit -q -m a &&
	ts >/dev/null &&
	perl -e "for my \$d (1..3) { mkdir qq(gen\$d); for my \$i (1..1000) { open my \$f, q(>), qq(gen\$d/\$i.js) or die; print \$f qq(\$d \$i\n) } }"
'

test_expect_success TTY 'on a terminal, a capture shows git-style progress on stderr' '
	cd "$TRASH_DIRECTORY/big" && OUT="$TRASH_DIRECTORY/big.out" &&
	test_terminal env GIT_VENOM_TEST_PROGRESS_DELAY=0 git venom-checkpoint --agent a1 --reason turn_end >"$OUT/tty" &&
	sed "s/$(printf "\033")\[K//g" <"$OUT/tty" >"$OUT/lines" &&
	grep "Capturing the tree: reading changed files: 100% (3000/3000), done\.$" "$OUT/lines" &&
	grep "^took checkpoint k2 of a1 (turn_end, t1)" "$OUT/lines"
'

test_expect_success TTY 'a command that ends within the delay shows none' '
	cd "$TRASH_DIRECTORY/big" && OUT="$TRASH_DIRECTORY/big.out" &&
	echo b >>a &&
	test_terminal env GIT_VENOM_TEST_PROGRESS_DELAY=1h git venom-checkpoint --agent a1 >"$OUT/tty" &&
	! grep "Capturing" "$OUT/tty"
'

test_expect_success 'not on a terminal: no progress at all' '
	cd "$TRASH_DIRECTORY/big" && OUT="$TRASH_DIRECTORY/big.out" &&
	echo c >>a &&
	GIT_VENOM_TEST_PROGRESS_DELAY=0 git venom-checkpoint --agent a1 >"$OUT/out" 2>"$OUT/err" &&
	test_must_be_empty "$OUT/err" &&
	! grep "Capturing" "$OUT/out"
'

test_expect_success TTY 'a rollback shows its deletes and writes' '
	cd "$TRASH_DIRECTORY/big" && OUT="$TRASH_DIRECTORY/big.out" &&
	P=$(git venom-plan --agent a1 k1 --json | jq -r .plan) &&
	test_terminal env GIT_VENOM_TEST_PROGRESS_DELAY=0 git venom-rollback --agent a1 k1 --plan $P >"$OUT/tty" &&
	sed "s/$(printf "\033")\[K//g" <"$OUT/tty" >"$OUT/lines" &&
	grep "Rolling back: deleting files: 100% (3000/3000), done\.$" "$OUT/lines" &&
	grep "Rolling back: writing files: 100% (1/1), done\.$" "$OUT/lines" &&
	grep "rolled back a1 to k1" "$OUT/lines" &&
	test_path_is_missing gen1
'

# retried_end NAME HOW: a turn whose turn_end capture fails (HOW: a
# too-small maxTotalBytes, or a timeout), then a retried turn_end.
retried_end () {
	case_repo "$1" guarded &&
	echo a >a && git add a && git commit -q -m a &&
	K1=$(ts) &&
	echo "agent work" >work.txt && echo "more" >>a &&
	git venom-checkpoint --agent a1 edit --path work.txt --json >/dev/null &&
	case "$2" in
	too_large) test_expect_code 1 git -c venom.checkpoints.maxTotalBytes=4 venom-checkpoint --agent a1 --reason turn_end 2>"$OUT/err" ;;
	timeout) test_expect_code 7 git -c venom.checkpoints.timeout=1ms venom-checkpoint --agent a1 --reason turn_end 2>"$OUT/err" ;;
	esac &&
	te >"$OUT/k2"
}

for how in too_large timeout; do
	test_expect_success "a turn_end that failed ($how), then retried, is the turn's end: the work stays the agent's" '
		retried_end retry-'$how' '$how' &&
		test_json "$OUT/ck.json" ".turn == \"t1\"" ".through_turn == \"t1\"" &&
		venom_log | jq -r "select(.type == \"turn.started\") | .turn" >"$OUT/turns" &&
		echo t1 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/turns" &&
		plan $K1 >"$OUT/plan.json" &&
		test_json "$OUT/plan.json" \
			"[.repos[0].files[] | \"\\(.class) \\(.path)\"] == [\"turn a\", \"agent work.txt\"]"
	'
done

test_expect_success 'what happened after the failed turn_end stays outside: a person'"'"'s edit after the retry' '
	cd "$TRASH_DIRECTORY/retry-timeout" && OUT="$TRASH_DIRECTORY/retry-timeout.out" && AG=a1 && ISO= &&
	echo "a person" >notes.txt &&
	venom_fails conflict.outside_edits "$OUT/e.json" plan k1 &&
	test_json "$OUT/e.json" ".error.data.repos[0].paths == [\"notes.txt\"]"
'

test_expect_success 'a failed turn_end followed by another capture first is a gap, as RFC 7.3 says' '
	case_repo gap guarded &&
	echo a >a && git add a && git commit -q -m a &&
	K1=$(ts) && echo "work" >work.txt &&
	test_expect_code 7 git -c venom.checkpoints.timeout=1ms venom-checkpoint --agent a1 --reason turn_end 2>/dev/null &&
	ck >/dev/null &&
	te >/dev/null &&
	venom_fails conflict.outside_edits "$OUT/e.json" plan $K1 &&
	test_json "$OUT/e.json" ".error.data.repos[0].paths == [\"work.txt\"]"
'

test_done
