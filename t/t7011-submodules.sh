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
	# A pathspec that reaches into the added submodule leaves its gitlink
	# (the plan does not call the tree as at k1); one that matches
	# nothing in it does not name it.
	git venom-plan --agent $AG --json $K1 --restore files -- added/x >"$OUT/px.json" &&
	test_json "$OUT/px.json" "[.repos[].repo] == [\".\"]" ".repos[0].files == []" \
		".repos[0].left == [{path: \"added\", reason: \"gitlink\"}]" &&
	git venom-plan --agent $AG $K1 --restore files -- added/x >"$OUT/px.txt" &&
	grep "^change: *nothing: what differs from $K1 is left as it is (below)\$" "$OUT/px.txt" &&
	grep "^  left    gitlink  added\$" "$OUT/px.txt" &&
	git venom-plan --agent $AG --json $K1 --restore files -- "added/*.txt" >"$OUT/pn.json" &&
	test_json "$OUT/pn.json" ".repos[0].files == []" ".repos[0].left == []" &&
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

# A pathspec names paths inside submodules as git grep and ls-files
# --recurse-submodules take it: each path is matched by its path from the
# top (lib's l is lib/l), and a submodule the pathspec reaches has a
# section of its own.
test_expect_success 'a pathspec restores one file inside a submodule; the rest stays' '
	sub_repo onefile &&
	agent_turn &&
	P=$(git venom-plan --agent $AG --json $K1 --restore files -- lib/l | jq -r .plan) &&
	git venom-rollback --agent $AG --json $K1 --restore files --plan $P -- lib/l >"$OUT/r.json" &&
	test_json "$OUT/r.json" "[.repos[].repo] == [\".\", \"lib\"]" ".repos[0].files == []" \
		".repos[1].files == [{path: \"l\", change: \"modify\", class: \"turn\"}]" ".exact == true" &&
	test "$(cat lib/l)" = l1 && test "$(cat a)" = "a2 (the agent'"'"'s)" && test_path_is_missing lib/gone &&
	test "$(cat lib/in/i)" = "i2 (the agent'"'"'s)" && test_path_is_file lib/in/made &&
	# the whole tree, every submodule, is in the safety checkpoint
	S=$(jq -r .safety "$OUT/r.json") &&
	test "$(git -C lib/in show refs/venom/checkpoints/a1/${S#k}:i)" = "i2 (the agent'"'"'s)" &&
	test "$(git show refs/venom/checkpoints/a1/${S#k}:a)" = "a2 (the agent'"'"'s)" &&
	# the plan id binds the pathspec: another one is stale
	P=$(git venom-plan --agent $AG --json $K1 --restore files -- lib/gone | jq -r .plan) &&
	venom_fails conflict.rollback_stale "$OUT/stale.json" \
		git venom-rollback --agent $AG --json $K1 --restore files --plan $P -- lib &&
	test_path_is_missing lib/gone &&
	# inside lib, as for git, the repository is lib: its own log, where
	# a1 took no checkpoint, and paths relative to it
	(cd lib && venom_fails not_found.agent "$OUT/inside.json" git venom-plan --agent $AG --json $K1 -- gone)
'

test_expect_success 'a pathspec restores a directory inside a nested submodule, relative to the current directory' '
	sub_repo nesteddir &&
	mkdir lib/in/d docs && echo p1 >lib/in/d/p && echo q1 >lib/in/d/q && echo doc >docs/x &&
	git add docs && git commit -qm docs &&
	K1=$(ts) &&
	echo p2 >lib/in/d/p && rm lib/in/d/q && echo i2 >lib/in/i && echo a2 >a &&
	K2=$(te) &&
	(cd docs && P=$(git venom-plan --agent $AG --json $K1 --restore files -- ../lib/in/d | jq -r .plan) &&
		git venom-rollback --agent $AG --json $K1 --restore files --plan $P -- ../lib/in/d) >"$OUT/r.json" &&
	test_json "$OUT/r.json" "[.repos[].repo] == [\".\", \"lib/in\"]" ".prefix == \"docs/\"" \
		"[.repos[1].files[] | .change + \" \" + .path] | sort == [\"create d/q\", \"modify d/p\"]" &&
	test "$(cat lib/in/d/p)" = p1 && test "$(cat lib/in/d/q)" = q1 &&
	test "$(cat lib/in/i)" = i2 && test "$(cat a)" = a2
'

test_expect_success 'a pathspec matching in the top and in submodules; a glob; an exclude; the gitlink selects the submodule' '
	sub_repo both &&
	agent_turn &&
	git venom-plan --agent $AG --json $K1 --restore files -- a lib/in/i >"$OUT/both.json" &&
	test_json "$OUT/both.json" "[.repos[].repo] == [\".\", \"lib/in\"]" \
		"[.repos[] | .repo + \":\" + (.files[] | .path)] == [\".:a\", \"lib/in:i\"]" &&
	git venom-plan --agent $AG --json $K1 --restore files -- ":(glob)**/[ail]" >"$OUT/glob.json" &&
	test_json "$OUT/glob.json" "[.repos[] | .repo + \":\" + (.files[] | .path)] == [\".:a\", \"lib:l\", \"lib/in:i\"]" &&
	git venom-plan --agent $AG --json $K1 --restore files -- . ":!lib/in" >"$OUT/exclude.json" &&
	test_json "$OUT/exclude.json" "[.repos[].repo] == [\".\", \"lib\"]" \
		"[.repos[] | .repo + \":\" + (.files[] | .path)] | sort == [\".:a\", \"lib:gone\", \"lib:l\"]" &&
	git venom-plan --agent $AG --json $K1 --restore files -- lib >"$OUT/gitlink.json" &&
	test_json "$OUT/gitlink.json" "[.repos[].repo] == [\".\", \"lib\", \"lib/in\"]" ".repos[0].files == []" \
		"[.repos[] | .repo + \":\" + (.files[] | .path)] | sort == [\"lib/in:i\", \"lib/in:made\", \"lib:gone\", \"lib:l\"]" &&
	# "*e" (no glob magic: * matches /) is lib/gone and lib/in/made
	P=$(git venom-plan --agent $AG --json $K1 --restore files -- "*e" | jq -r .plan) &&
	git venom-rollback --agent $AG --json $K1 --restore files --plan $P -- "*e" >"$OUT/r.json" &&
	test_json "$OUT/r.json" "[.repos[] | .repo + \":\" + .files[].change + \" \" + .files[].path] == [\"lib:create gone\", \"lib/in:delete made\"]" &&
	test "$(cat lib/gone)" = g && test_path_is_missing lib/in/made &&
	test "$(cat lib/l)" = "l2 (the agent'"'"'s)" && test "$(cat lib/in/i)" = "i2 (the agent'"'"'s)"
'

test_expect_success 'unguarded: a submodule the pathspec reaches has its HEAD moved back, one it does not reach is never touched' '
	sub_repo headpath &&
	L0=$(git -C lib rev-parse HEAD) &&
	K1=$(ts) &&
	(cd lib/in && echo "i2, committed" >i && git commit -qam agent) && I1=$(git -C lib/in rev-parse HEAD) &&
	(cd lib && echo "l2, committed" >l && git commit -qam agent) && L1=$(git -C lib rev-parse HEAD) &&
	K2=$(te) &&
	P=$(git venom-plan --agent $AG --json $K1 --restore files -- lib/l | jq -r .plan) &&
	git venom-rollback --agent $AG --json $K1 --restore files --plan $P -- lib/l >"$OUT/r.json" &&
	test_json "$OUT/r.json" "[.repos[].repo] == [\".\", \"lib\"]" \
		".repos[1].head == {moves: true, from: \"$L1\", to: \"$L0\", commits: 1}" &&
	test "$(git -C lib rev-parse HEAD)" = "$L0" && test "$(cat lib/l)" = l1 &&
	test "$(git -C lib/in rev-parse HEAD)" = "$I1" && test "$(cat lib/in/i)" = "i2, committed"
'

test_expect_success 'attr magic cannot go into a submodule: refused, nothing touched' '
	sub_repo attr &&
	agent_turn &&
	tree_state >"$OUT/before" &&
	venom_fails unsupported.pathspec_magic "$OUT/plan.json" git venom-plan --agent $AG $K1 --restore files --json -- ":(attr:text)a" &&
	test_json "$OUT/plan.json" ".error.data == {pathspec: \":(attr:text)a\", magic: \"attr\", repo: \"lib\"}" &&
	venom_fails unsupported.pathspec_magic "$OUT/diff.json" git venom-checkpoint diff --agent $AG $K1 --json -- ":(top,attr:text)" &&
	tree_state >"$OUT/after" && test_cmp "$OUT/before" "$OUT/after"
'

test_expect_success 'checkpoint diff goes into submodules with a pathspec: --json, --name-only, --stat, --path' '
	sub_repo diff &&
	agent_turn &&
	git venom-checkpoint diff --agent $AG $K1 --json -- lib/l lib/in >"$OUT/d.json" &&
	test_json "$OUT/d.json" "[.files[] | .repo + \" \" + .path + \" \" + .change] == [\"lib/in i modify\", \"lib/in made create\", \"lib l modify\"]" \
		".files[2].added == 1" ".files[2].removed == 1" &&
	git venom-checkpoint diff --agent $AG $K1 $K2 --name-only -- "*e" >"$OUT/names" &&
	printf "%s\n" lib/gone lib/in/made >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/names" &&
	git venom-checkpoint diff --agent $AG $K1 --stat -- lib >"$OUT/stat" &&
	grep -q "^ lib/in/i  *| 2 +-$" "$OUT/stat" && grep -q "^ lib/l  *| 2 +-$" "$OUT/stat" &&
	grep -q "4 files changed" "$OUT/stat" &&
	git venom-checkpoint diff --agent $AG $K1 --path lib/l --json -- lib >"$OUT/p.json" &&
	test_json "$OUT/p.json" ".patch.text | contains(\"\\n-l1\\n\")" &&
	# without a pathspec the diff is the top repository'"'"'s, as git diff
	git venom-checkpoint diff --agent $AG $K1 --json >"$OUT/top.json" &&
	test_json "$OUT/top.json" "[.files[] | .repo + \" \" + .path] == [\". a\"]"
'


test_expect_success 'a capture names each submodule it captured; show and diff say which submodules changed inside' '
	sub_repo said &&
	git venom-checkpoint --agent $AG --reason turn_start >"$OUT/k1.txt" &&
	lib=$(git -C lib rev-parse HEAD | cut -c1-10) &&
	libck=$(git -C lib rev-parse refs/venom/checkpoints/$AG/1 | cut -c1-10) &&
	grep -q "^  submodule lib at $lib, captured as $libck$" "$OUT/k1.txt" &&
	! grep -q "not captured inside" "$OUT/k1.txt" &&
	echo "l2 (the agent'"'"'s)" >lib/l &&
	git venom-checkpoint --agent $AG --reason turn_end >"$OUT/k2.txt" &&
	grep -q "^  submodule lib at $lib, dirty, captured as " "$OUT/k2.txt" &&
	git venom-checkpoint show --agent $AG k2 >"$OUT/show" &&
	grep -q "^changed since k1: 0 file(s)$" "$OUT/show" &&
	grep -q "^  and inside submodule lib: git venom-checkpoint diff --agent $AG k1 k2 -- lib$" "$OUT/show" &&
	! grep -q "submodule lib/in" "$OUT/show" &&
	git venom-checkpoint diff --agent $AG k1 >"$OUT/files" &&
	grep -q "^  and inside submodule lib: git venom-checkpoint diff --agent $AG k1 -- lib$" "$OUT/files" &&
	echo "i2 (the agent'"'"'s)" >lib/in/i &&
	git venom-checkpoint diff --agent $AG k2 >"$OUT/files2" &&
	grep -q "^  and inside submodule lib/in: " "$OUT/files2" && ! grep -q "submodule lib:" "$OUT/files2" &&
	# the command it names lists the files
	git venom-checkpoint diff --agent $AG k1 k2 --name-only -- lib >"$OUT/names" &&
	echo lib/l >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/names" &&
	# scripts get what they got: no hint in --json, --name-only or --stat
	git venom-checkpoint diff --agent $AG k1 --name-only >"$OUT/top" && test_must_be_empty "$OUT/top"
'


test_expect_success 'a submodule'"'"'s own ref of the target gone or moved: not_found.checkpoint naming it, after a gc too; nothing touched' '
	sub_repo subref &&
	agent_turn &&
	git -C lib/in update-ref -d refs/venom/checkpoints/$AG/1 &&
	git -C lib/in reflog expire --expire=now --all && git -C lib/in gc -q --prune=now &&
	tree_state >"$OUT/before" &&
	venom_fails not_found.checkpoint "$OUT/plan.json" git venom-plan --agent $AG $K1 --json &&
	test_json "$OUT/plan.json" ".error.data.repo == \"lib/in\"" ".error.data.checkpoint == \"k1\"" \
		".error.data.ref == \"refs/venom/checkpoints/$AG/1\"" ".error.data.actual == null" \
		".error.message | test(\"in submodule lib/in is gone\")" &&
	venom_fails not_found.checkpoint "$OUT/rb.json" git venom-rollback --agent $AG $K1 --plan p2-0000000000000000 --json &&
	test_json "$OUT/rb.json" ".error.data.repo == \"lib/in\"" &&
	git -C lib update-ref refs/venom/checkpoints/$AG/1 HEAD &&
	venom_fails not_found.checkpoint "$OUT/moved.json" git venom-plan --agent $AG $K1 --json &&
	test_json "$OUT/moved.json" ".error.data.repo == \"lib\"" ".error.data.actual == \"$(git -C lib rev-parse HEAD)\"" &&
	tree_state >"$OUT/after" && test_cmp "$OUT/before" "$OUT/after" &&
	# the rest of the agent'"'"'s checkpoints are whole: k2 plans
	plan $K2 >"$OUT/k2.json"
'


test_expect_success 'a submodule deinited since a checkpoint that holds edits inside it is left, and restored once it is back' '
	sub_repo deinit &&
	agent_turn &&
	L=$(git -C lib rev-parse HEAD) &&
	git submodule deinit -q -f lib &&
	test_path_is_missing lib/l &&
	plan $K2 >"$OUT/p.json" &&
	test_json "$OUT/p.json" "[.repos[].repo] == [\".\"]" \
		".repos[0].left == [{path: \"lib\", reason: \"gitlink\", detail: \"$L\"}]" &&
	git venom-plan --agent $AG $K2 >"$OUT/p.txt" &&
	grep "^change: *nothing: what differs from $K2 is left as it is (below)\$" "$OUT/p.txt" &&
	# k1 held lib clean: its gitlink is all there is to it, nothing left
	plan $K1 >"$OUT/p1.json" &&
	test_json "$OUT/p1.json" ".repos[0].left == []" &&
	git -c protocol.file.allow=always submodule update -q --init --recursive &&
	rb $K2 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" "[.repos[].repo] == [\".\", \"lib\", \"lib/in\"]" &&
	test "$(cat lib/l)" = "l2 (the agent'"'"'s)" && test "$(cat lib/in/made)" = made
'


test_expect_success 'doctor calls no ref of a submodule moved with git mv an orphan: an older checkpoint still needs it' '
	sub_repo moved &&
	K1=$(ts) &&
	git mv lib lib2 &&
	K2=$(te) &&
	{ git venom-doctor --json >"$OUT/doctor.json" || true; } &&
	test_json "$OUT/doctor.json" "[.checks[] | select(.id == \"checkpoints.refs\")][0].message | test(\"no log record names\") | not" &&
	# a ref no record names in it is still one
	git -C lib2 update-ref refs/venom/checkpoints/ghost/1 HEAD &&
	{ git venom-doctor --json >"$OUT/doctor2.json" || true; } &&
	test_json "$OUT/doctor2.json" "[.checks[] | select(.id == \"checkpoints.refs\")][0].message | test(\"lib2:refs/venom/checkpoints/ghost/1\")"
'

test_done
