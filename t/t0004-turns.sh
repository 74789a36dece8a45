#!/usr/bin/env bash

test_description='git venom-checkpoint turns: deduplication (RFC 3.2), through_turn and mid_turn (RFC 3.3)'

. "$(dirname "$0")/test-lib.sh"

# take REASON [ARGS...]: a capture by agent "a", its JSON in take.json.
take () {
	_r=$1
	shift
	git venom-checkpoint --agent a --reason "$_r" "$@" --json >take.json
}

# logged TYPE prints the log records of that type, compact, one a line.
logged () {
	venom_log | jq -c "select(.type == \"$1\")"
}

test_expect_success 'setup' '
	test_commit initial file.txt "v0"
'

test_expect_success 'turn_start opens t1; nothing has ended, so through_turn is null' '
	take turn_start &&
	test_json take.json ".checkpoint == \"k1\"" ".reused == false" ".reason == \"turn_start\"" \
		".turn == \"t1\"" ".through_turn == null" ".mid_turn == false" &&
	git log -1 --format=%B refs/venom/checkpoints/a/1 | grep -x "Venom-Turn: t1"
'

test_expect_success 'a manual checkpoint inside a turn is mid_turn' '
	echo v1 >file.txt &&
	take manual &&
	test_json take.json ".checkpoint == \"k2\"" ".turn == \"t1\"" ".through_turn == null" ".mid_turn == true"
'

test_expect_success 'turn_end closes t1: through_turn t1, not mid_turn' '
	echo v2 >file.txt &&
	take turn_end &&
	test_json take.json ".checkpoint == \"k3\"" ".turn == \"t1\"" ".through_turn == \"t1\"" ".mid_turn == false"
'

test_expect_success 'turn_start with nothing changed reuses the turn_end checkpoint (RFC 3.2)' '
	git for-each-ref refs/venom >refs.out &&
	take turn_start &&
	test_json take.json ".checkpoint == \"k3\"" ".reused == true" \
		".reason == \"turn_end\"" ".turn == \"t1\"" &&
	git for-each-ref refs/venom >actual &&
	test_cmp refs.out actual &&
	logged checkpoint.reused >reused.out &&
	test_line_count = 1 reused.out &&
	test_json reused.out ".agent == \"a\"" ".checkpoint == \"k3\"" ".reason == \"turn_start\"" \
		".turn == \"t2\"" ".through_turn == \"t1\""
'

test_expect_success 'the reused capture still opened t2 (human output says so)' '
	git venom-checkpoint --agent a --reason manual >out &&
	short=$(git rev-parse --short=10 refs/venom/checkpoints/a/3) &&
	echo "reused checkpoint k3 of a (manual, t2) at $short" >expect &&
	test_cmp expect out &&
	logged turn.started | jq -r .turn >actual &&
	printf "t1\nt2\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'a label given to a deduplicated capture goes on the reused checkpoint' '
	take manual --label "safe point" &&
	test_json take.json ".checkpoint == \"k3\"" ".reused == true" ".label == \"safe point\"" &&
	git venom-checkpoint list --agent a --json >l.json &&
	test_json l.json "[.checkpoints[] | [.checkpoint, .label, .reason, .reused]] == [[\"k3\", \"safe point\", \"turn_start\", true], [\"k3\", \"safe point\", \"turn_end\", null], [\"k2\", null, \"manual\", null], [\"k1\", null, \"turn_start\", null]]" &&
	git venom-checkpoint show k3 --agent a --json >s.json &&
	test_json s.json ".label == \"safe point\""
'

test_expect_success 'a later reuse without a label keeps the label' '
	take manual &&
	test_json take.json ".checkpoint == \"k3\"" ".reused == true" ".label == \"safe point\""
'

test_expect_success 'turn_end of t2 after a change: k4, through_turn t2' '
	echo v3 >file.txt &&
	take turn_end &&
	test_json take.json ".checkpoint == \"k4\"" ".turn == \"t2\"" ".through_turn == \"t2\""
'

test_expect_success 'RFC 3.3: turn_start of t3 and turn_end of t2 both have through_turn t2' '
	echo "a person edits between turns" >>file.txt &&
	take turn_start &&
	test_json take.json ".checkpoint == \"k5\"" ".reused == false" ".turn == \"t3\"" ".through_turn == \"t2\"" &&
	git venom-checkpoint show k4 --agent a --json >s.json &&
	test_json s.json ".through_turn == \"t2\""
'

test_expect_success 'a turn_start while t3 is open ends t3 first (an interrupt fires no hook)' '
	echo v4 >file.txt &&
	take turn_start &&
	test_json take.json ".checkpoint == \"k6\"" ".turn == \"t4\"" ".through_turn == \"t3\"" &&
	logged turn.ended | jq -c "select(.turn == \"t3\") | {turn, synthetic}" >actual &&
	echo "{\"turn\":\"t3\",\"synthetic\":true}" >expect &&
	test_cmp expect actual
'

test_expect_success 'a manual checkpoint between turns: no turn, not mid_turn' '
	echo v5 >file.txt &&
	take turn_end &&
	test_json take.json ".checkpoint == \"k7\"" ".turn == \"t4\"" ".through_turn == \"t4\"" &&
	echo v6 >file.txt &&
	take manual &&
	test_json take.json ".checkpoint == \"k8\"" ".turn == null" ".through_turn == \"t4\"" ".mid_turn == false"
'

test_expect_success 'a turn_end with no open turn opens and closes one' '
	echo v7 >file.txt &&
	take turn_end &&
	test_json take.json ".checkpoint == \"k9\"" ".turn == \"t5\"" ".through_turn == \"t5\"" &&
	logged turn.started | jq -c "select(.turn == \"t5\") | .no_start" >actual &&
	echo true >expect &&
	test_cmp expect actual
'

test_expect_success 'turn ids are never reused: the list has each once' '
	logged turn.started | jq -r .turn >actual &&
	printf "t1\nt2\nt3\nt4\nt5\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'a moved HEAD with the same files is a new checkpoint' '
	test_tick &&
	git commit -q --allow-empty -m "empty commit" &&
	take manual &&
	test_json take.json ".checkpoint == \"k10\"" ".reused == false" \
		".repos[0].head == \"$(git rev-parse HEAD)\""
'

test_expect_success 'another branch at the same commit is a new checkpoint' '
	git checkout -q -b topic &&
	take manual &&
	test_json take.json ".checkpoint == \"k11\"" ".reused == false" ".repos[0].branch == \"topic\"" &&
	git checkout -q main
'

test_expect_success 'a detached HEAD has no branch member' '
	git checkout -q --detach &&
	take manual &&
	test_json take.json ".checkpoint == \"k12\"" "(.repos[0] | has(\"branch\")) | not" &&
	git checkout -q main
'

test_expect_success 'dedup is per agent: another agent gets its own k1' '
	take manual &&
	test_json take.json ".reused == false" &&
	git venom-checkpoint --agent b --json >b.json &&
	test_json b.json ".agent == \"b\"" ".checkpoint == \"k1\"" ".reused == false" &&
	test_cmp_tree=$(jq -r ".repos[0].tree" b.json) &&
	test_json take.json ".repos[0].tree == \"$test_cmp_tree\""
'

test_expect_success 'no dedup against a checkpoint whose ref is gone' '
	take manual &&
	test_json take.json ".checkpoint == \"k13\"" ".reused == true" &&
	git update-ref -d refs/venom/checkpoints/a/13 &&
	take manual &&
	test_json take.json ".checkpoint == \"k14\"" ".reused == false"
'

test_expect_success 'ids are never reused, even when a ref exists that the log does not name' '
	git update-ref refs/venom/checkpoints/a/15 HEAD &&
	echo v8 >file.txt &&
	take manual &&
	test_json take.json ".checkpoint == \"k16\"" &&
	test "$(git rev-parse refs/venom/checkpoints/a/15)" = "$(git rev-parse HEAD)"
'

test_expect_success '--turn that disagrees with the log warns and still captures' '
	echo v9 >file.txt &&
	git venom-checkpoint --agent a --turn t9 --json >take.json 2>err &&
	test_json take.json ".checkpoint == \"k17\"" &&
	grep "^warning: --turn t9 given, but the log puts this capture in no turn$" err
'

test_expect_success 'harness ids on a turn let its checkpoints bring the conversation back' '
	take turn_start --harness claude-code --harness-session s-1 --harness-turn u-1 &&
	echo w1 >file.txt &&
	take turn_end --harness claude-code --harness-session s-1 --harness-end u-9 &&
	first=$(jq -r .checkpoint take.json) &&
	first_turn=$(jq -r .turn take.json) &&
	take turn_start &&
	echo w2 >file.txt &&
	take turn_end &&
	second=$(jq -r .checkpoint take.json) &&
	take turn_start &&
	echo w3 >file.txt &&
	take turn_end &&
	git venom-checkpoint list --agent a --json >l.json &&
	test_json l.json \
		".checkpoints[] | select(.checkpoint == \"$first\") | .conversation == true" \
		".checkpoints[] | select(.checkpoint == \"$second\") | .conversation == false" &&
	logged turn.ended | jq -c "select(.turn == \"$first_turn\") | {harness_session, harness_end}" >actual &&
	echo "{\"harness_session\":\"s-1\",\"harness_end\":\"u-9\"}" >expect &&
	test_cmp expect actual
'

test_expect_success 'every log line is one JSON object with seq, ts and type; seq increases' '
	venom_log >log.out &&
	jq -e -s "all(.[]; has(\"seq\") and has(\"ts\") and has(\"type\"))" log.out >/dev/null &&
	jq -r .seq log.out >seqs.out &&
	sort -n seqs.out >sorted.out &&
	test_cmp sorted.out seqs.out &&
	sort -n -u seqs.out >uniq.out &&
	test_cmp seqs.out uniq.out
'

test_done
