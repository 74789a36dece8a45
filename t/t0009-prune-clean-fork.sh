#!/usr/bin/env bash

test_description='git venom-checkpoint prune, clean and --fork-of: retention (RFC 5.2), archiving (5.3), forks (10)'

. "$(dirname "$0")/test-lib.sh"

# turns AGENT N: N turns of AGENT, each changing work.txt, so none dedups.
turns () {
	for _i in $(seq 1 $2); do
		git venom-checkpoint --agent $1 --reason turn_start >/dev/null &&
		echo "$1 $_i" >>work.txt &&
		git venom-checkpoint --agent $1 --reason turn_end >/dev/null || return 1
		echo "between $_i" >>work.txt
	done
}

ids () {
	git venom-checkpoint list --agent $1 --json | jq -r '[.checkpoints[] | select(.reused | not) | .checkpoint] | join(" ")'
}

test_expect_success 'setup: five turns of agent a (k1..k10)' '
	test_commit initial &&
	turns a 5 &&
	echo "k10 k9 k8 k7 k6 k5 k4 k3 k2 k1" >expect &&
	ids a >actual &&
	test_cmp expect actual
'

test_expect_success 'with the defaults there is nothing to prune' '
	git venom-checkpoint prune --agent a --json >p.json &&
	test_json p.json ".pruned == [{\"agent\":\"a\",\"checkpoints\":[]}]" &&
	git venom-checkpoint prune --agent a >out &&
	echo "a: nothing to prune" >expect &&
	test_cmp expect out
'

test_expect_success 'keep=3 keeps the newest three and deletes the other refs, oldest first' '
	k1=$(git rev-parse refs/venom/checkpoints/a/1) &&
	git -c venom.checkpoints.keep=3 venom-checkpoint prune --agent a --json >p.json &&
	test_json p.json ".pruned == [{\"agent\":\"a\",\"checkpoints\":[\"k1\",\"k2\",\"k3\",\"k4\",\"k5\",\"k6\",\"k7\"]}]" &&
	echo "k10 k9 k8" >expect &&
	ids a >actual &&
	test_cmp expect actual &&
	git for-each-ref --format="%(refname)" refs/venom/checkpoints/a >actual &&
	printf "refs/venom/checkpoints/a/10\nrefs/venom/checkpoints/a/8\nrefs/venom/checkpoints/a/9\n" >expect &&
	test_cmp expect actual &&
	venom_log | tail -n 1 >last &&
	test_json last ".type == \"checkpoint.pruned\"" ".agent == \"a\"" ".checkpoints | length == 7"
'

test_expect_success 'pruning never runs gc: the commits are still there' '
	git cat-file -e $k1 &&
	test "$(git cat-file -t $k1)" = commit
'

test_expect_success 'a pruned checkpoint is not_found, and ids are not reused' '
	test_expect_code 3 git venom-checkpoint show k1 --agent a --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\"" &&
	echo more >>work.txt &&
	git venom-checkpoint --agent a --json >take.json &&
	test_json take.json ".checkpoint == \"k11\""
'

# turns starts with a turn_start, which reuses the latest checkpoint when
# nothing changed since: the ids below count that in.
test_expect_success 'manual checkpoints are kept by count; only their age prunes them' '
	git -c venom.checkpoints.keep=1 venom-checkpoint prune --agent a --json >p.json &&
	test_json p.json ".pruned[0].checkpoints == [\"k8\", \"k9\", \"k10\"]" &&
	echo "k11" >expect &&
	ids a >actual &&
	test_cmp expect actual &&
	turns a 2 &&
	echo "k14 k13 k12 k11" >expect &&
	ids a >actual &&
	test_cmp expect actual &&
	git -c venom.checkpoints.keep=1 venom-checkpoint prune --agent a --json >p.json &&
	test_json p.json ".pruned[0].checkpoints == [\"k12\", \"k13\"]" &&
	echo "k14 k11" >expect &&
	ids a >actual &&
	test_cmp expect actual
'

test_expect_success 'retention also runs after every turn_end capture' '
	git config venom.checkpoints.keep 2 &&
	test_when_finished "git config --unset venom.checkpoints.keep" &&
	turns a 2 &&
	echo "k18 k17 k11" >expect &&
	ids a >actual &&
	test_cmp expect actual
'

test_expect_success 'prune --all prunes every agent of the tree' '
	turns b 3 &&
	echo "k6 k5 k4 k3 k2 k1" >expect &&
	ids b >actual &&
	test_cmp expect actual &&
	git -c venom.checkpoints.keep=1 venom-checkpoint prune --all --json >p.json &&
	test_json p.json \
		"[.pruned[] | .agent] == [\"a\", \"b\"]" \
		".pruned[0].checkpoints == [\"k17\"]" \
		".pruned[1].checkpoints == [\"k1\", \"k2\", \"k3\", \"k4\", \"k5\"]" &&
	echo "k6" >expect &&
	ids b >actual &&
	test_cmp expect actual &&
	git venom-checkpoint prune --all >out &&
	printf "a: nothing to prune\nb: nothing to prune\n" >expect &&
	test_cmp expect out
'

test_expect_success 'clean refuses while the agent is in a turn (exit 5)' '
	git venom-checkpoint --agent b --reason turn_start >/dev/null &&
	test_expect_code 5 git venom-checkpoint clean --agent b --json >err.json &&
	test_json err.json ".error.code == \"conflict.turn_running\"" ".error.data.turn == \"t4\"" &&
	test_expect_code 5 git venom-checkpoint clean --agent b 2>err &&
	grep "^hint: end it first: git venom-checkpoint --agent b --reason turn_end$" err
'

test_expect_success 'clean archives the agent and deletes its refs; the log keeps the records' '
	echo b-last >>work.txt &&
	git venom-checkpoint --agent b --reason turn_end --json >take.json &&
	test_json take.json ".checkpoint == \"k8\"" &&
	git venom-checkpoint clean --agent b --json >c.json &&
	test_json c.json ".agent == \"b\"" \
		".checkpoints == [{\"agent\":\"b\",\"repo\":\".\",\"removed\":[\"k6\",\"k7\",\"k8\"],\"kept\":[]}]" &&
	git for-each-ref refs/venom/checkpoints/b >refs.out &&
	test_must_be_empty refs.out &&
	venom_log | tail -n 1 >last &&
	test_json last ".type == \"agent.archived\"" ".agent == \"b\"" &&
	venom_log | jq -r "select(.type == \"checkpoint.taken\" and .agent == \"b\") | .checkpoint" >taken.out &&
	test_line_count = 8 taken.out
'

test_expect_success 'clean: errors' '
	test_expect_code 2 git venom-checkpoint clean --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 3 git venom-checkpoint clean --agent nobody --json >err.json &&
	test_json err.json ".error.code == \"not_found.agent\"" ".error.data.agent == \"nobody\""
'

test_expect_success 'a fork is a new agent whose k1 is the source agent'"'"'s latest turn checkpoint' '
	git status --porcelain >status.out &&
	git venom-checkpoint list --agent a --json >a.json &&
	commit=$(jq -r "[.checkpoints[] | select(.reason == \"turn_end\")][0].repos[0].commit" a.json) &&
	through=$(jq -r "[.checkpoints[] | select(.reason == \"turn_end\")][0].through_turn" a.json) &&
	git venom-checkpoint --agent f --fork-of a --json >f.json &&
	test_json f.json ".agent == \"f\"" ".checkpoint == \"k1\"" ".reason == \"fork\"" \
		".through_turn == \"$through\"" ".repos[0].commit == \"$commit\"" &&
	test "$(git rev-parse refs/venom/checkpoints/f/1)" = "$commit" &&
	git status --porcelain >actual &&
	test_cmp status.out actual &&
	git venom-checkpoint list --agent f --json >l.json &&
	test_json l.json ".checkpoints[0].conversation == false"
'

test_expect_success '--through-turn forks at an earlier turn' '
	git venom-checkpoint list --agent a --json >a.json &&
	jq -r ".checkpoints[-1] | \"\(.through_turn) \(.repos[0].commit) \(.reason)\"" a.json >oldest.out &&
	read through commit reason <oldest.out &&
	test "$reason" = manual &&
	git venom-checkpoint --agent g --fork-of a --through-turn $through --json >g.json &&
	test_json g.json ".through_turn == \"$through\"" ".repos[0].commit == \"$commit\""
'

test_expect_success 'fork: errors' '
	test_expect_code 2 git venom-checkpoint --fork-of a --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 2 git venom-checkpoint --agent a --fork-of f --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.agent\"" &&
	test_expect_code 3 git venom-checkpoint --agent h --fork-of nobody --json >err.json &&
	test_json err.json ".error.code == \"not_found.agent\"" &&
	test_expect_code 3 git venom-checkpoint --agent h --fork-of a --through-turn t1 --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\""
'

# A git killed in the middle of a prune's ref transaction (an older version
# cut it short at a capture's deadline) leaves lock files of the refs, and
# some refs deleted with no record. The next prune removes the stale locks
# (older than a minute; the agent lock keeps other toolkit processes out),
# and logs as pruned the refs that are already gone.
test_expect_success 'a prune after one cut short: stale ref locks go, vanished refs are logged pruned' '
	turns s 3 &&
	git update-ref -d refs/venom/checkpoints/s/1 &&
	lock=.git/refs/venom/checkpoints/s/2.lock &&
	git rev-parse refs/venom/checkpoints/s/2 >"$lock" &&
	touch -t 202001010000 "$lock" &&
	git -c venom.checkpoints.keep=1 venom-checkpoint prune --agent s --json >p.json &&
	test_json p.json ".pruned[0].checkpoints == [\"k1\", \"k2\", \"k3\", \"k4\", \"k5\"]" &&
	test_path_is_missing "$lock" &&
	echo "k6" >expect &&
	ids s >actual &&
	test_cmp expect actual &&
	git for-each-ref --format="%(refname)" refs/venom/checkpoints/s >actual &&
	echo refs/venom/checkpoints/s/6 >expect &&
	test_cmp expect actual &&
	git venom-doctor >doc &&
	! grep -i "not_found" doc
'

test_done
