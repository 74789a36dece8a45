#!/usr/bin/env bash

test_description='what people take for granted: no conversation without a harness, a reused turn_start listed under its turn, the disk report, checkpoints hidden from git log --all'

. "$(dirname "$0")/test-lib.sh"

test_expect_success 'setup: two turns of an agent with no harness (checkpoints by hand)' '
	test_commit base a.txt "a" &&
	git venom-checkpoint --agent me --reason turn_start >/dev/null &&
	echo "b" >b.txt &&
	git venom-checkpoint --agent me --reason turn_end >/dev/null &&
	git venom-checkpoint --agent me --reason turn_start >/dev/null &&
	echo "c" >c.txt &&
	git venom-checkpoint --agent me --reason turn_end >/dev/null
'

test_expect_success 'an agent with no harness has no conversation: --restore all restores the files and says so' '
	git venom-plan --agent me k1 >out &&
	grep "^conversation: none: no harness reported a turn of this agent" out &&
	! grep "dropping" out &&
	git venom-plan --agent me k1 --json >plan.json &&
	test_json plan.json ".restore == \"all\"" ".conversation.no_conversation == true" \
		".conversation.rewinds == false" ".conversation.drops == []" "has(\"note\") | not" &&
	git venom-rollback --agent me k1 --plan $(jq -r .plan plan.json) --json >rb.json &&
	test_json rb.json ".conversation.no_conversation == true" "has(\"note\") | not" &&
	test_path_is_missing b.txt && test_path_is_missing c.txt &&
	venom_log | jq -r .type >types &&
	! grep -e "^agent.binding$" -e "^note.pending$" types
'

test_expect_success 'an agent whose turns a harness reported keeps its conversation: gemini cannot rewind, so --restore all refuses' '
	git venom-checkpoint --agent g1 --harness gemini --harness-session s --reason turn_start >/dev/null &&
	echo "g" >g.txt &&
	git venom-checkpoint --agent g1 --harness gemini --harness-session s --reason turn_end >/dev/null &&
	git venom-checkpoint --agent g1 --harness gemini --harness-session s --reason turn_start >/dev/null &&
	echo "h" >h.txt &&
	git venom-checkpoint --agent g1 --harness gemini --harness-session s --reason turn_end >/dev/null &&
	test_expect_code 10 git venom-plan --agent g1 k2 --outside overwrite --json >err.json &&
	test_json err.json ".error.code == \"unsupported.harness_capability\""
'

test_expect_success 'a deduplicated turn_start shows under its turn in list' '
	git init -q "$VENOM_TEST_ROOT/dedup" && (
	cd "$VENOM_TEST_ROOT/dedup" &&
	printf "/%s\n" out first "*.json" >>.git/info/exclude &&
	test_commit one f.txt 1 &&
	git venom-checkpoint --agent d --reason turn_start >/dev/null &&
	echo 2 >f.txt &&
	git venom-checkpoint --agent d --reason turn_end >/dev/null &&
	git venom-checkpoint --agent d --reason turn_start --json >ts.json &&
	test_json ts.json ".reused == true" ".checkpoint == \"k2\"" &&
	git venom-checkpoint list --agent d --turn t2 --json >l.json &&
	test_json l.json "[.checkpoints[] | [.checkpoint, .reason, .turn, .reused]] == [[\"k2\", \"turn_start\", \"t2\", true]]" &&
	git venom-checkpoint list --agent d >out &&
	sed -n 1p out >first &&
	grep "^k2    turn_start   t2 .*(reused: the tree was as k2 holds it)$" first &&
	grep "^k2    turn_end     t1 " out &&
	git venom-checkpoint show --agent d k2 --json >s.json &&
	test_json s.json ".reason == \"turn_end\"" "has(\"reused\") | not"
	)
'

test_expect_success 'the doctor counts loose objects as the files on disk, and suggests git gc over gc.auto' '
	git init -q "$VENOM_TEST_ROOT/disk" && (
	cd "$VENOM_TEST_ROOT/disk" &&
	printf "/%s\n" "*.json" >>.git/info/exclude &&
	test_commit one f.txt 1 &&
	# 150 new files: 150 blobs, a tree and a commit that only the checkpoint holds.
	perl -e "for my \$i (1..150) { open my \$f, q(>), qq(gen\$i.txt) or die; print \$f qq(unique \$i\n) }" &&
	git venom-checkpoint --agent d --json >/dev/null &&
	git -c gc.auto=100 venom-doctor --json >doc.json &&
	jq -c ".checks[] | select(.id == \"checkpoints.size\")" doc.json >size.json &&
	test_json size.json ".level == \"warn\"" ".fix | test(\"git gc\")" \
		".message | test(\"152 objects loose\")" &&
	git count-objects -v | sed -n "s/^size: //p" >kib &&
	test "$(cat kib)" -gt 100 &&
	git venom-doctor --json >doc.json &&
	jq -c ".checks[] | select(.id == \"checkpoints.size\")" doc.json >size.json &&
	test_json size.json ".level == \"ok\"" &&
	git gc -q &&
	git -c gc.auto=100 venom-doctor --json >doc.json &&
	jq -c ".checks[] | select(.id == \"checkpoints.size\")" doc.json >size.json &&
	test_json size.json ".level == \"ok\"" ".message | test(\" 0 objects loose\")" &&
	git for-each-ref refs/venom/checkpoints/d >refs.out && test_line_count = 1 refs.out
	)
'

test_expect_success 'the doctor names an object a checkpoint lacks, and a rollback writes its blob back' '
	git init -q "$VENOM_TEST_ROOT/lacks" && (
	cd "$VENOM_TEST_ROOT/lacks" &&
	printf "/%s\n" "*.json" "*.out" "*.err" >>.git/info/exclude &&
	test_commit one f.txt 1 &&
	git venom-checkpoint --agent d --reason turn_start --json >/dev/null &&
	echo "the only copy" >x.txt &&
	sleep 1.1 &&
	git venom-checkpoint --agent d --reason turn_end --json >/dev/null &&
	# What a git gc --prune=now beside the capture does.
	blob=$(git hash-object x.txt) &&
	rm "$(git rev-parse --git-path objects)/$(echo "$blob" | cut -c1-2)/$(echo "$blob" | cut -c3-)" &&
	git venom-doctor --json >doc.json &&
	jq -c ".checks[] | select(.id == \"checkpoints.size\")" doc.json >size.json &&
	test_json size.json ".level == \"warn\"" ".message | test(\"lacks the blob object $blob\")" ".fix | test(\"fsck\")" &&
	plan=$(git venom-plan --agent d k1 --json | jq -r .plan) &&
	git venom-rollback --agent d k1 --plan "$plan" --json >rb.json 2>rb.err &&
	grep "lacked 1 object(s)" rb.err &&
	test_path_is_missing x.txt &&
	git cat-file -e "$blob" &&
	git venom-doctor --json >doc.json &&
	jq -c ".checks[] | select(.id == \"checkpoints.size\")" doc.json >size.json &&
	test_json size.json ".level == \"ok\""
	)
'

test_expect_success 'the README'"'"'s way to hide checkpoints from git log --all works' '
	cmd=$(sed -n "s/^git log --oneline --graph --exclude=/--exclude=/p" "$VENOM_SRC/README.md") &&
	test -n "$cmd" &&
	git log --all --format=%H >all.out &&
	eval "git log --format=%H $cmd" >excl.out &&
	git venom-checkpoint list --agent me --json | jq -r ".checkpoints[0].repos[0].commit" >ck.out &&
	grep -f ck.out all.out &&
	! grep -f ck.out excl.out &&
	git rev-parse HEAD >head.out && grep -f head.out excl.out
'

test_done
