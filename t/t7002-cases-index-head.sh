#!/usr/bin/env bash

test_description='field cases D, E of CASES.md: the index, HEAD and refs are the person'"'"'s; git config and hooks do not leak in'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# --- D. Index / HEAD / ref clobbering ----------------------------------------

test_expect_success 'BR-12: capture and a guarded rollback leave the index byte-identical (partial staging, intent-to-add, assume-unchanged)' '
	case_repo br12 guarded &&
	printf "l1\nl2\nl3\n" >f.txt && echo cfg >local.cfg && git add . && git commit -qm init &&
	printf "l1 staged\nl2\nl3\n" >f.txt && git add f.txt &&
	printf "l1 staged\nl2\nl3 unstaged\n" >f.txt &&
	echo n >new.txt && git add -N new.txt &&
	git update-index --assume-unchanged local.cfg && echo changed >local.cfg &&
	I0=$(index_hash) && git diff --cached >"$OUT/cached.0" && H0=$(git rev-parse HEAD) &&
	cp f.txt "$OUT/f.k1" &&
	K1=$(ts) &&
	test "$(index_hash)" = "$I0" &&
	git show "$(ref $K1):local.cfg" >"$OUT/actual" && echo changed >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	git show "$(ref $K1):new.txt" >"$OUT/actual" && echo n >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	echo agent >>f.txt &&
	K2=$(te) &&
	test "$(index_hash)" = "$I0" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".guarded == true" ".repos[0].head.moves == false" \
		".repos[0].files == [{path: \"f.txt\", change: \"modify\", class: \"turn\"}]" ".repos[0].left == []" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" ".repos[0].head.moves == false" \
		".repos[0].files == [{path: \"f.txt\", change: \"modify\", class: \"turn\"}]" &&
	test "$(index_hash)" = "$I0" &&
	git diff --cached >"$OUT/cached.1" && test_cmp "$OUT/cached.0" "$OUT/cached.1" &&
	git ls-files -v local.cfg >"$OUT/actual" && echo "h local.cfg" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	test "$(cat local.cfg)" = changed &&
	test_cmp "$OUT/f.k1" f.txt &&
	test "$(git rev-parse HEAD)" = "$H0"
'

# BR-13 needs two trees: isolation is registered once per agent and tree,
# so the guarded part runs in one repository and the unguarded ones in
# another.
br13_setup () {
	git init -q --bare "$REPO.remote.git" &&
	git remote add origin "$REPO.remote.git" &&
	echo a >a && git add . && git commit -qm init && git push -q origin main &&
	INIT=$(git rev-parse HEAD) &&
	K1=$(ts) && echo b >b && git add b && git commit -qm "later commit" &&
	C=$(git rev-parse HEAD) && K2=$(te)
}

test_expect_success 'BR-13 1: a guarded rollback never moves HEAD or the branch; the safety checkpoint undoes it' '
	case_repo br13g guarded &&
	br13_setup &&
	I0=$(index_hash) &&
	rb $K1 >"$OUT/r1.json" &&
	test_json "$OUT/r1.json" ".repos[0].head == {moves: false, from: \"$C\", to: \"$C\", commits: 0, since: 1}" \
		".repos[0].files == [{path: \"b\", change: \"delete\", class: \"turn\"}]" ".exact == true" &&
	test "$(git rev-parse HEAD)" = "$C" && test "$(git rev-parse main)" = "$C" &&
	test "$(git symbolic-ref HEAD)" = refs/heads/main &&
	test "$(index_hash)" = "$I0" &&
	echo " D b" >"$OUT/expect" && git status --porcelain >"$OUT/actual" && test_cmp "$OUT/expect" "$OUT/actual" &&
	rb "$(jq -r .safety "$OUT/r1.json")" --restore files >"$OUT/undo.json" &&
	test_json "$OUT/undo.json" ".repos[0].files == [{path: \"b\", change: \"create\", class: \"turn\"}]" ".exact == true" &&
	test "$(cat b)" = b && git status --porcelain >"$OUT/actual" && test_must_be_empty "$OUT/actual" &&
	test "$(git rev-parse HEAD)" = "$C"
'

test_expect_success 'BR-13 2: unguarded, not pushed: the branch moves back with the index, and the commit stays reachable' '
	case_repo br13u &&
	br13_setup &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".guarded == false" ".repos[0].head == {moves: true, from: \"$C\", to: \"$INIT\", commits: 1}" &&
	rb $K1 >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" ".repos[0].head == {moves: true, from: \"$C\", to: \"$INIT\", commits: 1}" ".exact == true" &&
	test "$(git log -1 --format=%s)" = init &&
	test "$(git symbolic-ref HEAD)" = refs/heads/main && test "$(git rev-parse main)" = "$INIT" &&
	test_path_is_missing b &&
	git status --porcelain >"$OUT/actual" && test_must_be_empty "$OUT/actual" &&
	git merge-base --is-ancestor "$C" "$(ref "$(jq -r .safety "$OUT/r2.json")")" &&
	git reflog -1 --format=%gs main >"$OUT/reflog" && grep "venom rollback" "$OUT/reflog"
'

test_expect_success 'BR-13 2: rolling back to the safety checkpoint brings the branch and the files back' '
	cd "$TRASH_DIRECTORY/br13u" && OUT="$TRASH_DIRECTORY/br13u.out" &&
	rb "$(jq -r .safety "$OUT/r2.json")" --restore files >"$OUT/undo.json" &&
	test_json "$OUT/undo.json" ".repos[0].head == {moves: true, from: \"$INIT\", to: \"$C\", commits: 0}" ".exact == true" &&
	test "$(git rev-parse main)" = "$C" && test "$(git symbolic-ref HEAD)" = refs/heads/main &&
	test "$(cat b)" = b &&
	git status --porcelain >"$OUT/actual" && test_must_be_empty "$OUT/actual"
'

test_expect_success 'BR-13 3: unguarded, pushed: conflict.commits_pushed changes nothing; --keep-head is the way out' '
	case_repo br13p &&
	br13_setup && git push -q origin main &&
	refs_state >"$OUT/refs.0" && tree_state >"$OUT/tree.0" && I0=$(index_hash) &&
	venom_fails conflict.commits_pushed "$OUT/pushed.json" plan $K1 &&
	test_json "$OUT/pushed.json" ".error.data.commits == [\"$C\"]" ".error.data.refs == [\"refs/remotes/origin/main\"]" \
		".error.data.repo == \".\"" &&
	venom_fails conflict.commits_pushed "$OUT/pushed2.json" \
		git venom-rollback --agent $AG $K1 --plan p1-0000000000000000 --json &&
	refs_state >"$OUT/refs.1" && test_cmp "$OUT/refs.0" "$OUT/refs.1" &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" && test "$(index_hash)" = "$I0" &&
	rb $K1 --keep-head >"$OUT/r3.json" &&
	test_json "$OUT/r3.json" ".repos[0].head == {moves: false, from: \"$C\", to: \"$C\", commits: 0, since: 1}" \
		".repos[0].files == [{path: \"b\", change: \"delete\", class: \"turn\"}]" ".repos[0].left == []" &&
	test "$(git rev-parse HEAD)" = "$C" && test "$(git rev-parse origin/main)" = "$C" && test_path_is_missing b &&
	echo " D b" >"$OUT/expect" && git status --porcelain >"$OUT/actual" && test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success 'BR-13 4: HEAD on another branch than the checkpoint recorded is conflict.head_moved' '
	case_repo br13h &&
	br13_setup &&
	git switch -q -c elsewhere &&
	venom_fails conflict.head_moved "$OUT/moved.json" plan $K1 &&
	test_json "$OUT/moved.json" ".error.data.repo == \".\"" ".error.data.expected == \"$INIT\"" \
		".error.data.actual == \"$C\"" ".error.data.branch == \"main\"" &&
	test "$(git symbolic-ref HEAD)" = refs/heads/elsewhere && test "$(git rev-parse main)" = "$C"
'

test_expect_success 'BR-15: with a split index, capture and rollback leave the shared index files alone' '
	case_repo br15 &&
	git config core.splitIndex true && git config splitIndex.maxPercentChange 1 &&
	git config splitIndex.sharedIndexExpire now &&
	for i in $(seq 1 50); do echo $i >f$i || return 1; done &&
	git add . && git commit -qm init &&
	(cd .git && ls sharedindex.*) >"$OUT/shared.before" &&
	test -s "$OUT/shared.before" &&
	for i in $(seq 1 50); do echo x >>f$i || return 1; done && echo new >g &&
	K1=$(ck --reason manual) &&
	(cd .git && ls sharedindex.*) >"$OUT/shared.after" &&
	test_cmp "$OUT/shared.before" "$OUT/shared.after" &&
	git show "$(ref $K1):f7" >"$OUT/actual" && printf "7\nx\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	K2=$(ts) && echo y >>f1 && rm f2 && echo h >h && K3=$(te) &&
	rb $K2 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" "[.repos[0].files[].path] == [\"f1\", \"f2\", \"h\"]" &&
	(cd .git && ls sharedindex.*) >"$OUT/shared.after" &&
	test_cmp "$OUT/shared.before" "$OUT/shared.after" &&
	git status --porcelain >"$OUT/status"
'

test_expect_success 'BR-17: checkpoint refs point at commits, pass fsck, survive pack-refs and gc, and are no branches' '
	case_repo br17 &&
	echo a >a && git add . && git commit -qm init &&
	for t in 1 2 3; do
		ts >/dev/null && echo $t >>a && te >/dev/null || return 1
	done &&
	git for-each-ref --format="%(objecttype) %(refname)" refs/venom >"$OUT/types" &&
	test_line_count -ge 4 "$OUT/types" &&
	! grep -v "^commit refs/venom/checkpoints/a1/[0-9][0-9]*$" "$OUT/types" &&
	git fsck --strict --no-dangling &&
	git for-each-ref refs/venom >"$OUT/refs.before" &&
	git pack-refs --all && git gc -q &&
	git for-each-ref refs/venom >"$OUT/refs.after" &&
	test_cmp "$OUT/refs.before" "$OUT/refs.after" &&
	git branch -a >"$OUT/branches" && ! grep -i venom "$OUT/branches" &&
	git log --branches --tags --format=%H >"$OUT/log" && ! grep -i venom "$OUT/log" &&
	git venom-checkpoint list --agent $AG --json >"$OUT/list.json" &&
	test_json "$OUT/list.json" "[.checkpoints[] | select(.missing == true)] == []" &&
	plan k1 >"$OUT/plan.json" && test_json "$OUT/plan.json" ".plan | startswith(\"p2-\")"
'

test_expect_success 'BR-18: refs stay refs/venom/checkpoints/<agent>/<n>, short; a bad agent id is invalid_params.agent' '
	case_repo br18 &&
	echo a >a && git add . && git commit -qm init &&
	AG=agent-with-a-rather-long-but-valid-name-0123456789 && ck --reason manual >/dev/null &&
	AG=a123456789b123456789c123456789d123456789e123456789f123456789abcd && ck --reason manual >/dev/null &&
	git for-each-ref --format="%(refname)" refs/venom >"$OUT/refs" &&
	cat >"$OUT/expect" <<-EOF &&
	refs/venom/checkpoints/a123456789b123456789c123456789d123456789e123456789f123456789abcd/1
	refs/venom/checkpoints/agent-with-a-rather-long-but-valid-name-0123456789/1
	EOF
	test_cmp "$OUT/expect" "$OUT/refs" &&
	! awk "length(\$0) > 100" "$OUT/refs" | grep . &&
	for bad in "bad/../name" Bad -x a..b a.lock "a b" \
		a123456789b123456789c123456789d123456789e123456789f123456789abcde; do
		venom_fails invalid_params.agent "$OUT/bad.json" \
			git venom-checkpoint --agent "$bad" --reason manual --json || return 1
	done &&
	git for-each-ref --format="%(refname)" refs/venom >"$OUT/refs.after" &&
	test_cmp "$OUT/refs" "$OUT/refs.after"
'

test_expect_success 'BR-19: during a rebase, capture reads only and plan and rollback are conflict.git_operation' '
	case_repo br19 &&
	echo base >f && git add . && git commit -qm base &&
	git checkout -qb topic && echo topic >f && git commit -qam topic &&
	git checkout -q main && echo main >f && git commit -qam main &&
	K1=$(ts) &&
	git checkout -q topic && test_must_fail git rebase main >/dev/null 2>&1 &&
	printf "resolved by hand\n" >f &&
	I0=$(index_hash) && H0=$(git rev-parse HEAD) &&
	K2=$(ck --reason manual) &&
	test "$(index_hash)" = "$I0" &&
	git show "$(ref $K2):f" >"$OUT/actual" && printf "resolved by hand\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	venom_fails conflict.turn_running "$OUT/running.json" plan $K1 &&
	test_json "$OUT/running.json" ".error.data.turn == \"t1\"" &&
	K3=$(te) &&
	test "$(index_hash)" = "$I0" &&
	venom_fails conflict.git_operation "$OUT/op.json" plan $K1 &&
	test_json "$OUT/op.json" ".error.data == {repo: \".\", operation: \"rebase\"}" &&
	venom_fails conflict.git_operation "$OUT/op2.json" \
		git venom-rollback --agent $AG $K1 --plan p1-0000000000000000 --json &&
	test_json "$OUT/op2.json" ".error.data.operation == \"rebase\"" &&
	test -d .git/rebase-merge &&
	printf "resolved by hand\n" >"$OUT/expect" && test_cmp "$OUT/expect" f &&
	git ls-files -u -- f >"$OUT/unmerged" && test -s "$OUT/unmerged" &&
	test "$(index_hash)" = "$I0" && test "$(git rev-parse HEAD)" = "$H0" &&
	git stash list >"$OUT/stash" && test_must_be_empty "$OUT/stash"
'

test_expect_success 'BR-19: merge, cherry-pick, revert and bisect in progress are conflict.git_operation too' '
	cd "$TRASH_DIRECTORY/br19" && OUT="$TRASH_DIRECTORY/br19.out" &&
	git rebase --abort && git checkout -q main &&
	K4=$(ts) && K5=$(te) &&
	test_must_fail git merge -q topic >/dev/null 2>&1 && test -f .git/MERGE_HEAD &&
	venom_fails conflict.git_operation "$OUT/op.json" plan $K4 &&
	test_json "$OUT/op.json" ".error.data.operation == \"merge\"" &&
	test -f .git/MERGE_HEAD && git merge --abort &&
	test_must_fail git cherry-pick topic >/dev/null 2>&1 && test -f .git/CHERRY_PICK_HEAD &&
	venom_fails conflict.git_operation "$OUT/op.json" plan $K4 &&
	test_json "$OUT/op.json" ".error.data.operation == \"cherry-pick\"" &&
	test -f .git/CHERRY_PICK_HEAD && git cherry-pick --abort &&
	git checkout -q topic && echo more >f && git commit -qam more &&
	test_must_fail git revert --no-edit HEAD~1 >/dev/null 2>&1 && test -f .git/REVERT_HEAD &&
	venom_fails conflict.git_operation "$OUT/op.json" plan $K4 &&
	test_json "$OUT/op.json" ".error.data.operation == \"revert\"" &&
	test -f .git/REVERT_HEAD && git revert --abort &&
	git bisect start >/dev/null 2>&1 &&
	venom_fails conflict.git_operation "$OUT/op.json" plan $K4 &&
	test_json "$OUT/op.json" ".error.data.operation == \"bisect\"" &&
	test -f .git/BISECT_LOG && git bisect reset >/dev/null 2>&1
'

# --- E. Git config and hook leakage ------------------------------------------

test_expect_success 'BR-20: no signing, hook or fsmonitor runs; venom'"'"'s own identity works with none configured' '
	case_repo br20 &&
	echo a >a && git add . && git commit -qm init &&
	git config commit.gpgSign true && git config gpg.program false &&
	mkdir hooks &&
	printf "#!/bin/sh\necho \"\$0\" >>\"%s\"\nexit 1\n" "$OUT/hook-ran" >hooks/reference-transaction &&
	cp hooks/reference-transaction hooks/post-commit && cp hooks/reference-transaction hooks/pre-commit &&
	cp hooks/reference-transaction hooks/fsmonitor && cp hooks/reference-transaction hooks/post-checkout &&
	chmod +x hooks/* &&
	git config core.hooksPath "$PWD/hooks" && git config core.fsmonitor "$PWD/hooks/fsmonitor" &&
	K1=$(ts) && echo b >>a && K2=$(te) &&
	rb $K1 >"$OUT/r.json" && test_json "$OUT/r.json" ".exact == true" &&
	test_path_is_missing "$OUT/hook-ran" &&
	for k in $K1 $K2 $(jq -r ".safety, .after" "$OUT/r.json"); do
		git cat-file commit "$(ref $k)" >"$OUT/commit" &&
		! grep "^gpgsig" "$OUT/commit" &&
		grep "^author venom <venom@localhost> " "$OUT/commit" &&
		grep "^committer venom <venom@localhost> " "$OUT/commit" || return 1
	done &&
	git ls-tree -r --name-only "$(ref $K1)" >"$OUT/names" && grep -x hooks/reference-transaction "$OUT/names" &&
	echo c >>a &&
	(
		unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL &&
		HOME=/nonexistent git -c user.name= -c user.email= venom-checkpoint --agent a1 --reason manual --json
	) >"$OUT/noid.json" &&
	test_json "$OUT/noid.json" ".reused == false" ".checkpoint | test(\"^k[0-9]+$\")" &&
	test_path_is_missing "$OUT/hook-ran"
'

# RFC 7.5 resets the index when HEAD moves: a rollback records the
# index's tree first (rollback.started's index, reachable from the safety
# checkpoint), and its undo, which moves HEAD back, sets the index to it.
test_expect_success 'the undo of a rollback that moved HEAD restores the staged versions, a gc --prune=now between them (issue 13 item 5)' '
	case_repo staged &&
	echo base >base.txt && git add . && git commit -qm init &&
	K1=$(ts) && echo one >a.txt && git add a.txt && git commit -qm c1 && K2=$(te) &&
	echo staged-version >b.txt && git add b.txt && echo worktree-version >b.txt &&
	echo staged-a >a.txt && git add a.txt && echo worktree-a >a.txt &&
	BLOB=$(git rev-parse :b.txt) && git ls-files -s >"$OUT/index.before" && H=$(git rev-parse HEAD) &&
	rb $K1 --restore files --outside overwrite >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].head.moves == true" &&
	! git ls-files -s b.txt | grep $BLOB &&
	S=$(jq -r .safety "$OUT/r.json") &&
	IDX=$(venom_log | jq -r "select(.type == \"rollback.started\") | .index") &&
	test "$(git rev-parse "$(ref $S)^2^{tree}")" = "$IDX" &&
	git gc -q --prune=now &&
	plan $S --restore files --outside overwrite >"$OUT/u.plan" &&
	test_json "$OUT/u.plan" ".repos[0].index == \"$IDX\"" ".repos[0].head.moves == true" &&
	git venom-plan --agent $AG $S --restore files --outside overwrite >"$OUT/u.human" &&
	grep "^index: *back to what was staged" "$OUT/u.human" &&
	rb $S --restore files --outside overwrite >"$OUT/u.json" &&
	test "$(git rev-parse HEAD)" = "$H" &&
	git ls-files -s b.txt | grep $BLOB &&
	git ls-files -s >"$OUT/index.after" && test_cmp "$OUT/index.before" "$OUT/index.after" &&
	test "$(cat b.txt)" = worktree-version && test "$(cat a.txt)" = worktree-a
'

test_done
