#!/usr/bin/env bash

test_description='the plan id binds what the plan showed: the agent, the target, the decisions derived from the log (p2; issue 13 item 4)'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# An unguarded tree (isolation worktree) with one commit.
setup_repo () {
	case_repo "$1" &&
	echo base >base.txt && git add . && git commit -qm init
}

# sha256_16: the first 16 hex digits of the SHA-256 of stdin.
sha256_16 () {
	perl -MDigest::SHA=sha256_hex -e 'local $/; print substr(sha256_hex(<STDIN>), 0, 16), "\n"'
}

# plan_doc OUTSIDE KEEP_HEAD <plan.json: the canonical document of
# docs/json.md "The plan id", made from the plan's JSON with jq alone, as
# a client would (OUTSIDE is null or a quoted string, KEEP_HEAD true or
# false: the choices as given).
plan_doc () {
	jq -jcS --argjson outside "$1" --argjson keep_head "$2" '{
		agent, checkpoint, guarded, restore, shared_with,
		conversation: (.conversation | {drops, rewinds, through_turn} + (if .harness then {harness} else {} end)),
		keep_head: $keep_head, outside: $outside,
		repos: [.repos[] | {commit, head, repo, tree,
			files: (.files | sort_by(.path)), left: (.left | sort_by(.path))} + (if .index then {index} else {} end)]
	}'
}

# RFC 7.2's plan id: which file was "created after the last checkpoint"
# (kept by default) comes from the log, so a checkpoint taken between the
# calls changes what the real call does under the same p1 id. A p2 id
# binds the decision (notes.txt in left), so the real call is refused.
test_expect_success 'a checkpoint taken between plan and real call: the real call is refused, notes.txt kept (RFC 7.2, p2)' '
	setup_repo fresh &&
	K1=$(ts) && echo agent >a.txt && K2=$(te) &&
	echo "my notes" >notes.txt &&
	plan $K1 --restore files >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" "[.repos[0].left[] | select(.path == \"notes.txt\") | .reason] == [\"outside\"]" &&
	ck --reason manual >/dev/null &&
	P=$(jq -r .plan "$OUT/plan.json") &&
	venom_fails conflict.rollback_stale "$OUT/r.json" git venom-rollback --agent $AG $K1 --restore files --plan $P --json &&
	test_path_is_file notes.txt && test_path_is_file a.txt &&
	plan $K1 --restore files >"$OUT/plan2.json" &&
	test_json "$OUT/plan2.json" "[.repos[0].files[] | select(.path == \"notes.txt\") | .change] == [\"delete\"]" &&
	test "$(jq -r .plan "$OUT/plan2.json")" != "$P"
'

# The same for guarded: a fork shares the tree (guarded, HEAD stays); a
# clean of the fork between the calls makes it unguarded, where the real
# call would move HEAD.
test_expect_success 'archiving a sharer between plan and real call: the real call is refused, HEAD stays (RFC 7.2, p2)' '
	setup_repo flip &&
	K1=$(ts) && echo one >a.txt && git add a.txt && git commit -qm agent && K2=$(te) &&
	git venom-checkpoint --agent b1 --fork-of a1 --json >/dev/null &&
	H=$(git rev-parse HEAD) &&
	plan $K1 --restore files --outside keep >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].head.moves == false" ".guarded == true" &&
	git venom-checkpoint clean --agent b1 --json >/dev/null &&
	P=$(jq -r .plan "$OUT/plan.json") &&
	venom_fails conflict.rollback_stale "$OUT/r.json" git venom-rollback --agent $AG $K1 --restore files --outside keep --plan $P --json &&
	test "$(git rev-parse HEAD)" = "$H" && test_path_is_file a.txt
'

test_expect_success 'two agents plan to their own k2 in one tree: different ids, and one agent'"'"'s real call refuses the other'"'"'s plan' '
	setup_repo two &&
	AG=a1 && A1K2=$(ts >/dev/null && echo mine >a1.txt && te) &&
	AG=a2 && A2K2=$(ts >/dev/null && echo mine >a2.txt && te) &&
	test $A1K2 = k2 && test $A2K2 = k2 &&
	AG=a1 && ts >/dev/null && echo later >z.txt && te >/dev/null &&
	tree_state >"$OUT/tree.before" &&
	AG=a1 && plan k2 --restore files --outside overwrite >"$OUT/a1.json" &&
	AG=a2 && plan k2 --restore files --outside overwrite >"$OUT/a2.json" &&
	# The plans differ (a1 deletes a2.txt, a2 keeps it), and so do their ids.
	test_json "$OUT/a1.json" "[.repos[0].files[] | select(.change == \"delete\") | .path] == [\"a2.txt\", \"z.txt\"]" &&
	test_json "$OUT/a2.json" "[.repos[0].files[] | select(.change == \"delete\") | .path] == [\"z.txt\"]" &&
	test "$(jq -r .repos[0].tree "$OUT/a1.json")" = "$(jq -r .repos[0].tree "$OUT/a2.json")" &&
	P1=$(jq -r .plan "$OUT/a1.json") && P2=$(jq -r .plan "$OUT/a2.json") &&
	test "$P1" != "$P2" &&
	venom_fails conflict.rollback_stale "$OUT/r.json" git venom-rollback --agent a2 k2 --restore files --outside overwrite --plan $P1 --json &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after" &&
	git venom-rollback --agent a2 k2 --restore files --outside overwrite --plan $P2 --json >"$OUT/r2.json" &&
	test_path_is_file a2.txt && test_path_is_missing z.txt
'

test_expect_success 'a p1 plan id that RFC 7.2 digests for the tree as it is now is refused, with the command that makes a p2 plan' '
	setup_repo p1 &&
	K1=$(ts) && echo agent >a.txt && K2=$(te) &&
	plan $K1 --restore files >"$OUT/plan.json" &&
	T=$(jq -r .repos[0].tree "$OUT/plan.json") && H=$(git rev-parse HEAD) &&
	test "$T" = "$(git venom-checkpoint --agent $AG --reason manual --json | jq -r .repos[0].tree)" &&
	P1=p1-$(printf "{\"checkpoint\":\"%s\",\"restore\":\"files\",\"outside\":null,\"keep_head\":false,\"repos\":[{\"repo\":\".\",\"tree\":\"%s\",\"head\":\"%s\"}]}" $K1 $T $H | sha256_16) &&
	venom_fails conflict.rollback_stale "$OUT/r.json" git venom-rollback --agent $AG $K1 --restore files --plan $P1 --json &&
	test_json "$OUT/r.json" ".error.data.plan_version == \"p1\"" ".error.message | contains(\"p2\")" &&
	test_expect_code 5 git venom-rollback --agent $AG $K1 --restore files --plan $P1 2>"$OUT/err" &&
	grep "^hint: read the new plan before you confirm it: git venom-plan --agent $AG $K1 --restore files$" "$OUT/err" &&
	test_path_is_file a.txt
'

test_expect_success 'a client recomputes the plan id from the plan'"'"'s JSON alone (docs/json.md, The plan id)' '
	setup_repo client &&
	echo one >a.txt && git add a.txt && git commit -qm one &&
	K1=$(ts) && echo two >a.txt && git commit -qam two && rm base.txt && mkdir d && echo "x y" >"d/with space.txt" && K2=$(te) &&
	echo "mine" >mine.txt &&
	plan $K1 --restore files >"$OUT/p.json" &&
	test_json "$OUT/p.json" ".repos[0].head.moves == true" "(.repos[0].files | length) == 3" "(.repos[0].left | length) == 1" &&
	echo "p2-$(plan_doc null false <"$OUT/p.json" | sha256_16)" >"$OUT/id" &&
	jq -r .plan "$OUT/p.json" >"$OUT/want" && test_cmp "$OUT/want" "$OUT/id" &&
	plan $K1 --restore files --outside keep --keep-head >"$OUT/q.json" &&
	echo "p2-$(plan_doc "\"keep\"" true <"$OUT/q.json" | sha256_16)" >"$OUT/id" &&
	jq -r .plan "$OUT/q.json" >"$OUT/want" && test_cmp "$OUT/want" "$OUT/id"
'

test_done
