#!/usr/bin/env bash

test_description='every repository in the tree: checkpoints and rollbacks of submodules, nested two deep (issue 18)'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# sub_repo NAME [guarded]: case_repo NAME with a file a of its own and
# the submodules lib (files l, gone) and lib/in (file i), each added with
# `git submodule add` of a local repository, committed and checked out.
sub_repo () {
	case_repo "$@" &&
	git init -q "$REPO.in" &&
	(cd "$REPO.in" && echo i1 >i && git add . && git -c user.name=D -c user.email=d@x.invalid commit -qm in) &&
	git init -q "$REPO.lib" &&
	(cd "$REPO.lib" && echo l1 >l && echo g >gone &&
		git -c protocol.file.allow=always submodule add -q "$REPO.in" in &&
		git add . && git -c user.name=D -c user.email=d@x.invalid commit -qm lib) &&
	echo a1 >a && git add . && git commit -qm init &&
	git -c protocol.file.allow=always submodule add -q "$REPO.lib" lib &&
	git commit -qm lib &&
	git -c protocol.file.allow=always submodule update -q --init --recursive &&
	for d in lib lib/in; do
		git -C $d config user.name Dev && git -C $d config user.email dev@example.invalid || return 1
	done
}

# agent_turn: k1, then the agent's edits in every repository, then k2.
agent_turn () {
	K1=$(ts) &&
	echo "a2 (the agent's)" >a &&
	echo "l2 (the agent's)" >lib/l && rm lib/gone &&
	echo "i2 (the agent's)" >lib/in/i && echo made >lib/in/made &&
	K2=$(te)
}

heads () {
	for d in . lib lib/in; do
		echo "$d $(git -C $d rev-parse HEAD) $(git -C $d symbolic-ref -q HEAD)"
	done
}

test_expect_success 'the repositories in scope are those git submodule status --recursive lists, in repos[] order' '
	sub_repo scope &&
	git init -q nested && (cd nested && echo n >n && git add n && git -c user.name=D -c user.email=d@x.invalid commit -qm n) &&
	K1=$(ck --reason manual) &&
	git submodule status --recursive | awk "{print \$2}" >"$OUT/git-scope" &&
	{ echo .; cat "$OUT/git-scope"; } >"$OUT/expect" &&
	jq -r ".repos[].repo" "$OUT/ck.json" >"$OUT/actual" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	test_json "$OUT/ck.json" ".repos[1].path == \"$REPO/lib\"" ".repos[2].path == \"$REPO/lib/in\"" &&
	for d in . lib lib/in; do
		test "$(git -C $d rev-parse refs/venom/checkpoints/a1/1)" = "$(jq -r --arg d $d ".repos[] | select(.repo == \$d) | .commit" "$OUT/ck.json")" || return 1
	done &&
	test_json "$OUT/ck.json" "[.repos[0].submodules[] | .path] == [\"lib\", \"nested\"]" &&
	test_must_fail git -C nested rev-parse -q --verify refs/venom/checkpoints/a1/1
'

for g in guarded unguarded; do
test_expect_success "$g: an agent's edits inside submodules roll back exactly with the top's files" '
	sub_repo edits$g $(test $g = guarded && echo guarded) &&
	agent_turn &&
	heads >"$OUT/heads.before" &&
	for d in . lib lib/in; do (cd $d && index_hash) || return 1; done >"$OUT/index.before" &&
	rb $K1 --restore files >"$OUT/r.json" &&
	test_json "$OUT/r.json" "[.repos[].repo] == [\".\", \"lib\", \"lib/in\"]" ".exact == true" \
		"[.repos[0].files[] | .change + \" \" + .path] == [\"modify a\"]" \
		"[.repos[1].files[] | .change + \" \" + .path] | sort == [\"create gone\", \"modify l\"]" \
		"[.repos[2].files[] | .change + \" \" + .path] | sort == [\"delete made\", \"modify i\"]" &&
	test "$(cat a)" = a1 && test "$(cat lib/l)" = l1 && test "$(cat lib/gone)" = g &&
	test "$(cat lib/in/i)" = i1 && test_path_is_missing lib/in/made &&
	heads >"$OUT/heads.after" && test_cmp "$OUT/heads.before" "$OUT/heads.after" &&
	if test $g = guarded; then
		for d in . lib lib/in; do (cd $d && index_hash) || return 1; done >"$OUT/index.after" &&
		test_cmp "$OUT/index.before" "$OUT/index.after"
	fi
'
done

test_expect_success 'the plan shows each repository as its own section' '
	sub_repo sections &&
	agent_turn &&
	git venom-plan --agent $AG $K1 --restore files >"$OUT/plan.txt" &&
	grep -q "^submodule lib:$" "$OUT/plan.txt" && grep -q "^submodule lib/in:$" "$OUT/plan.txt" &&
	sed -n "/^submodule lib:$/,/^submodule lib\/in:$/p" "$OUT/plan.txt" >"$OUT/lib.txt" &&
	grep -q "^  change: *2 paths: 1 create, 1 modify$" "$OUT/lib.txt" &&
	grep -q "create  turn  *gone$" "$OUT/lib.txt" && grep -q "modify  turn  *l$" "$OUT/lib.txt" &&
	sed -n "/^submodule lib\/in:$/,/^to do it:/p" "$OUT/plan.txt" >"$OUT/in.txt" &&
	grep -q "delete  turn  *made$" "$OUT/in.txt" && grep -q "modify  turn  *i$" "$OUT/in.txt" &&
	sed -n "1,/^submodule lib:$/p" "$OUT/plan.txt" >"$OUT/top.txt" &&
	grep -q "modify  turn  *a$" "$OUT/top.txt" && ! grep -q " l$" "$OUT/top.txt"
'

test_expect_success 'the undo restores every repository' '
	sub_repo undo guarded &&
	agent_turn &&
	echo late >lib/in/late && echo "between turns" >lib/l &&
	tree_state >"$OUT/before" && heads >"$OUT/heads.before" &&
	rb $K1 --restore files --outside overwrite >"$OUT/r.json" &&
	test "$(cat lib/l)" = l1 &&
	SAFETY=$(jq -r .safety "$OUT/r.json") &&
	for d in . lib lib/in; do git -C $d rev-parse -q --verify "$(ref $SAFETY)" >/dev/null || return 1; done &&
	rb $SAFETY --restore files --outside overwrite >"$OUT/undo.json" &&
	tree_state >"$OUT/after" && heads >"$OUT/heads.after" &&
	test_cmp "$OUT/before" "$OUT/after" && test_cmp "$OUT/heads.before" "$OUT/heads.after"
'

test_expect_success 'a person'"'"'s edit inside a submodule between turns is refused in a guarded tree, kept with --outside keep' '
	sub_repo person guarded &&
	agent_turn &&
	echo "the person'"'"'s" >lib/in/i &&
	tree_state >"$OUT/before" &&
	venom_fails conflict.outside_edits "$OUT/refused.json" git venom-plan --agent $AG $K1 --restore files --json &&
	test_json "$OUT/refused.json" ".error.data.repos == [{repo: \"lib/in\", paths: [\"i\"], changes: [\"modify\"]}]" &&
	tree_state >"$OUT/after" && test_cmp "$OUT/before" "$OUT/after" &&
	rb $K1 --restore files --outside keep >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[2].left == [{path: \"i\", reason: \"outside\"}]" \
		"[.repos[2].files[] | .path] == [\"made\"]" &&
	test "$(cat lib/in/i)" = "the person'"'"'s" && test "$(cat lib/l)" = l1 && test "$(cat a)" = a1
'

test_expect_success 'a submodule whose HEAD the agent moved goes back in an unguarded tree, and stays in a guarded one' '
	sub_repo headmoves &&
	L0=$(git -C lib rev-parse HEAD) &&
	K1=$(ts) &&
	(cd lib && echo "l2, committed" >l && git commit -qam agent) && L1=$(git -C lib rev-parse HEAD) &&
	K2=$(te) &&
	rb $K1 --restore files >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[1].head == {moves: true, from: \"$L1\", to: \"$L0\", commits: 1}" \
		".repos[0].left == []" ".exact == true" &&
	test "$(git -C lib rev-parse HEAD)" = "$L0" && test "$(cat lib/l)" = l1 &&
	git -C lib status --porcelain >"$OUT/st" && test_must_be_empty "$OUT/st" &&
	sub_repo headstays guarded &&
	L0=$(git -C lib rev-parse HEAD) &&
	K1=$(ts) &&
	(cd lib && echo "l2, committed" >l && git commit -qam agent) && L1=$(git -C lib rev-parse HEAD) &&
	K2=$(te) &&
	rb $K1 --restore files >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[1].head.moves == false" \
		".repos[0].left == [{path: \"lib\", reason: \"gitlink\", detail: \"$L0\"}]" &&
	test "$(git -C lib rev-parse HEAD)" = "$L1" && test "$(cat lib/l)" = l1
'

test_expect_success 'a submodule added or removed since the checkpoint is left, its work tree and git dir never deleted' '
	sub_repo addrm &&
	K1=$(ts) &&
	git init -q "$REPO.new" && (cd "$REPO.new" && echo x >x && git add x && git -c user.name=D -c user.email=d@x.invalid commit -qm x) &&
	git -c protocol.file.allow=always submodule add -q "$REPO.new" added && git commit -qm added &&
	X=$(git -C added rev-parse HEAD) &&
	echo "a2" >a &&
	K2=$(te) &&
	test_json "$OUT/ck.json" "[.repos[].repo] == [\".\", \"added\", \"lib\", \"lib/in\"]" &&
	rb $K1 --restore files --keep-head >"$OUT/r.json" &&
	test_json "$OUT/r.json" "[.repos[].repo] == [\".\", \"lib\", \"lib/in\"]" \
		"[.repos[0].left[] | select(.path == \"added\")] == [{path: \"added\", reason: \"gitlink\"}]" &&
	test "$(cat added/x)" = x && test -e added/.git && test -d .git/modules/added &&
	test "$(git -C added rev-parse HEAD)" = "$X" && test "$(cat a)" = a1 &&
	L=$(git -C lib rev-parse HEAD) &&
	# The rollback gave .gitmodules back as k1 had it, without added: no
	# longer mapped, added is a nested repository now, not a submodule.
	git add .gitmodules && git rm -q lib &&
	K3=$(ck --reason manual) &&
	test_json "$OUT/ck.json" "[.repos[].repo] == [\".\"]" "[.repos[0].submodules[] | .path] == [\"added\"]" &&
	test -d .git/modules/lib &&
	rb $K1 --restore files --keep-head >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" "[.repos[].repo] == [\".\"]" \
		"[.repos[0].left[] | select(.path == \"lib\")] == [{path: \"lib\", reason: \"gitlink\", detail: \"$L\"}]" &&
	test -d .git/modules/lib
'

test_expect_success 'a nested repository that is no submodule stays a gitlink, never written into' '
	sub_repo nested &&
	git init -q side && (cd side && echo s1 >s && git add s && git -c user.name=D -c user.email=d@x.invalid commit -qm s) &&
	K1=$(ts) &&
	echo s2 >side/s && echo "l2" >lib/l &&
	K2=$(te) &&
	test_json "$OUT/ck.json" "[.repos[].repo] == [\".\", \"lib\", \"lib/in\"]" &&
	rb $K1 --restore files >"$OUT/r.json" &&
	test "$(cat side/s)" = s2 && test "$(cat lib/l)" = l1 &&
	test_json "$OUT/r.json" "[.repos[].repo] == [\".\", \"lib\", \"lib/in\"]"
'

test_expect_success 'retention and clean reach every repository; doctor names a submodule'"'"'s refs no record names' '
	sub_repo retention guarded &&
	K1=$(ck --reason manual) &&
	git -C lib/in update-ref refs/venom/checkpoints/ghost/1 HEAD &&
	git venom-doctor --json >"$OUT/doctor.json" || true &&
	test_json "$OUT/doctor.json" "[.checks[] | select(.id == \"checkpoints.refs\")][0].message | test(\"lib/in:refs/venom/checkpoints/ghost/1\")" &&
	git -C lib/in update-ref -d refs/venom/checkpoints/ghost/1 &&
	git venom-checkpoint clean --agent $AG --json >"$OUT/clean.json" &&
	for d in . lib lib/in; do
		git -C $d for-each-ref refs/venom/checkpoints/ >"$OUT/refs" && test_must_be_empty "$OUT/refs" || return 1
	done
'

# A pathspec is the top's, as git's commands (which do not recurse into
# submodules unless told): "l" and "i" name no path of the top, though
# lib and lib/in have files of those names.
test_expect_success 'a pathspec narrows the top repository only: no submodule is rolled back' '
	sub_repo narrowed &&
	agent_turn &&
	P=$(git venom-plan --agent $AG --json $K1 --restore files -- a l i | jq -r .plan) &&
	git venom-rollback --agent $AG --json $K1 --restore files --plan $P -- a l i >"$OUT/r.json" &&
	test_json "$OUT/r.json" "[.repos[].repo] == [\".\"]" \
		".repos[0].files == [{path: \"a\", change: \"modify\", class: \"turn\"}]" &&
	test "$(cat a)" = a1 &&
	test "$(cat lib/l)" = "l2 (the agent'"'"'s)" && test_path_is_missing lib/gone &&
	test_path_is_file lib/in/made &&
	# the whole tree, submodules too, is in the safety checkpoint
	S=$(jq -r .safety "$OUT/r.json") &&
	test "$(git -C lib show refs/venom/checkpoints/a1/${S#k}:l)" = "l2 (the agent'"'"'s)"
'

test_done
