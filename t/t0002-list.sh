#!/usr/bin/env bash

test_description='git venom-checkpoint list: newest first, --turn, --before, --limit, missing refs'

. "$(dirname "$0")/test-lib.sh"

# ids prints the checkpoint ids of a listing, one a line.
ids () {
	jq -r '.checkpoints[].checkpoint' "$1"
}

test_expect_success 'an agent with no checkpoints lists nothing' '
	test_commit initial &&
	git venom-checkpoint list --json >l.json &&
	test_json l.json ".agent == \"default\"" ".pending == false" ".checkpoints == []" &&
	git venom-checkpoint list >out &&
	echo "no checkpoints for agent default" >expect &&
	test_cmp expect out
'

test_expect_success 'setup: two turns of an agent and a manual checkpoint' '
	git venom-checkpoint --reason turn_start --json >k1.json &&
	echo one >work.txt &&
	git venom-checkpoint --reason turn_end --json >k2.json &&
	echo two >>work.txt &&
	git venom-checkpoint --reason manual --label keep-me --json >k3.json &&
	echo three >>work.txt &&
	git venom-checkpoint --reason turn_start --json >k4.json &&
	echo four >>work.txt &&
	git venom-checkpoint --reason turn_end --json >k5.json &&
	for n in 1 2 3 4 5; do
		test_json k$n.json ".checkpoint == \"k$n\"" ".reused == false" || return 1
	done
'

test_expect_success 'list is newest first' '
	git venom-checkpoint list --json >l.json &&
	ids l.json >actual &&
	printf "k5\nk4\nk3\nk2\nk1\n" >expect &&
	test_cmp expect actual
'

# conversation (RFC 8): going back can bring the conversation along when no
# rewind is needed (before the first turn, or through the latest ended
# turn), or when the turn has the harness ids a rewind needs; these turns
# were taken without harness ids.
test_expect_success 'each item is the record as taken, plus conversation and label' '
	for n in 1 2 3 4 5; do
		jq -c "{checkpoint, reason, turn, through_turn, at, mid_turn, overlap, repos}" k$n.json >expect &&
		jq -c ".checkpoints[] | select(.checkpoint == \"k$n\") | {checkpoint, reason, turn, through_turn, at, mid_turn, overlap, repos}" l.json >actual &&
		test_cmp expect actual || return 1
	done &&
	test_json l.json \
		"[.checkpoints[] | .conversation] == [true, false, false, false, true]" \
		"[.checkpoints[] | .label // null] == [null, null, \"keep-me\", null, null]" \
		"[.checkpoints[] | .reason] == [\"turn_end\", \"turn_start\", \"manual\", \"turn_end\", \"turn_start\"]" \
		"[.checkpoints[] | .turn] == [\"t2\", \"t2\", null, \"t1\", \"t1\"]"
'

test_expect_success 'each listed commit is what its ref holds' '
	for n in 1 2 3 4 5; do
		git rev-parse refs/venom/checkpoints/default/$n >expect &&
		jq -r ".checkpoints[] | select(.checkpoint == \"k$n\") | .repos[0].commit" l.json >actual &&
		test_cmp expect actual || return 1
	done
'

test_expect_success '--limit keeps the newest n' '
	git venom-checkpoint list --limit 2 --json >l.json &&
	ids l.json >actual &&
	printf "k5\nk4\n" >expect &&
	test_cmp expect actual
'

test_expect_success '--before k keeps the ones older than k' '
	git venom-checkpoint list --before k3 --json >l.json &&
	ids l.json >actual &&
	printf "k2\nk1\n" >expect &&
	test_cmp expect actual &&
	git venom-checkpoint list --before 3 --json >l.json &&
	ids l.json >actual &&
	test_cmp expect actual
'

test_expect_success '--before and --limit page through the list' '
	git venom-checkpoint list --before k5 --limit 2 --json >l.json &&
	ids l.json >actual &&
	printf "k4\nk3\n" >expect &&
	test_cmp expect actual &&
	git venom-checkpoint list --before k3 --limit 2 --json >l.json &&
	ids l.json >actual &&
	printf "k2\nk1\n" >expect &&
	test_cmp expect actual &&
	git venom-checkpoint list --before k1 --json >l.json &&
	test_json l.json ".checkpoints == []"
'

test_expect_success '--turn keeps the checkpoints of that turn' '
	git venom-checkpoint list --turn t1 --json >l.json &&
	ids l.json >actual &&
	printf "k2\nk1\n" >expect &&
	test_cmp expect actual &&
	git venom-checkpoint list --turn t2 --json >l.json &&
	ids l.json >actual &&
	printf "k5\nk4\n" >expect &&
	test_cmp expect actual &&
	git venom-checkpoint list --turn t9 --json >l.json &&
	test_json l.json ".checkpoints == []"
'

test_expect_success 'the default limit is 50' '
	for i in $(seq 6 52); do
		echo $i >>work.txt &&
		git venom-checkpoint --json >k.json &&
		test_json k.json ".checkpoint == \"k$i\"" || return 1
	done &&
	git venom-checkpoint list --json >l.json &&
	test_json l.json ".checkpoints | length == 50" \
		".checkpoints[0].checkpoint == \"k52\"" \
		".checkpoints[49].checkpoint == \"k3\""
'

test_expect_success 'human output: one line per checkpoint, newest first' '
	git venom-checkpoint list --limit 3 >out &&
	test_line_count = 3 out &&
	cut -d" " -f1 out >actual &&
	printf "k52\nk51\nk50\n" >expect &&
	test_cmp expect actual &&
	short=$(git rev-parse --short=10 refs/venom/checkpoints/default/52) &&
	head -n 1 out >last &&
	grep "^k52 *manual *- .* ago *$short$" last
'

test_expect_success 'human output: the label, quoted, and the turn' '
	git venom-checkpoint list --before k4 >out &&
	test_line_count = 3 out &&
	grep "^k3 *manual *- .* \"keep-me\"$" out &&
	grep "^k2 *turn_end *t1 " out &&
	grep "^k1 *turn_start *t1 " out
'

test_expect_success 'a bad --before is invalid_params.checkpoint (exit 2)' '
	test_expect_code 2 git venom-checkpoint list --before x3 --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.checkpoint\"" &&
	test_expect_code 2 git venom-checkpoint list --before k0 --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.checkpoint\""
'

test_expect_success 'list takes no arguments' '
	test_expect_code 2 git venom-checkpoint list k1 --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\""
'

test_expect_success 'a deleted ref: the checkpoint is listed as missing' '
	git update-ref -d refs/venom/checkpoints/default/2 &&
	git venom-checkpoint list --before k4 --json >l.json &&
	test_json l.json \
		"[.checkpoints[] | .checkpoint] == [\"k3\", \"k2\", \"k1\"]" \
		"[.checkpoints[] | .missing // false] == [false, true, false]" &&
	git venom-checkpoint list --before k4 >out &&
	grep "^k2 .* MISSING-REF$" out &&
	! grep "^k1 .*MISSING-REF" out
'

test_expect_success 'a moved ref: the checkpoint is listed as missing too, and as moved' '
	git update-ref refs/venom/checkpoints/default/3 refs/venom/checkpoints/default/1 &&
	git venom-checkpoint list --before k4 --json >l.json &&
	test_json l.json "[.checkpoints[] | .missing // false] == [true, true, false]" \
		"[.checkpoints[] | .moved // false] == [true, false, false]" &&
	git venom-checkpoint list --before k4 >out &&
	grep "^k3 .* MOVED-REF" out &&
	grep "^k2 .* MISSING-REF$" out
'

test_expect_success 'a ref moved to a blob is listed as moved, not gone (issue 13 item 11)' '
	git update-ref refs/venom/checkpoints/default/3 $(echo blob | git hash-object -w --stdin) &&
	git venom-checkpoint list --before k4 >out &&
	grep "^k3 .* MOVED-REF" out &&
	! grep "^k3 .*MISSING-REF" out
'

test_expect_success 'refs the log does not name are ignored' '
	git update-ref refs/venom/checkpoints/default/99 HEAD &&
	git update-ref refs/venom/checkpoints/stranger/1 HEAD &&
	git venom-checkpoint list --limit 1 --json >l.json &&
	test_json l.json ".checkpoints[0].checkpoint == \"k52\"" &&
	test_expect_code 0 git venom-checkpoint list --agent stranger --json >l.json &&
	test_json l.json ".agent == \"stranger\"" ".checkpoints == []"
'

test_expect_success 'agents are listed apart; --agent and GIT_VENOM_AGENT select' '
	echo other >other.txt &&
	git venom-checkpoint --agent other --json >o.json &&
	test_json o.json ".checkpoint == \"k1\"" &&
	git venom-checkpoint list --agent other --json >l.json &&
	test_json l.json ".agent == \"other\"" "[.checkpoints[] | .checkpoint] == [\"k1\"]" &&
	GIT_VENOM_AGENT=default git venom-checkpoint list --limit 1 --json >l.json &&
	test_json l.json ".agent == \"default\"" "[.checkpoints[] | .checkpoint] == [\"k52\"]"
'

test_expect_success 'a checkpoint taken in another worktree is listed with its own path' '
	git worktree add -q "$VENOM_TEST_ROOT/wt" &&
	(
		cd "$VENOM_TEST_ROOT/wt" &&
		echo wt >wt.txt &&
		git venom-checkpoint --agent wt-agent --json
	) >w.json &&
	test_json w.json ".repos[0].path == \"$VENOM_TEST_ROOT/wt\"" &&
	git rev-parse --verify refs/venom/checkpoints/wt-agent/1 &&
	git venom-checkpoint list --agent wt-agent --json >l.json &&
	test_json l.json ".checkpoints[0].repos[0].path == \"$VENOM_TEST_ROOT/wt\""
'

test_expect_success 'list changes nothing: no ref, no log record' '
	git for-each-ref >refs.before.out &&
	venom_log >log.before.out &&
	git venom-checkpoint list --agent default --json >/dev/null &&
	git venom-checkpoint list --agent other >/dev/null &&
	git for-each-ref >actual &&
	test_cmp refs.before.out actual &&
	venom_log >actual &&
	test_cmp log.before.out actual
'

test_done
