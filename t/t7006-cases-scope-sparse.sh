#!/usr/bin/env bash

test_description='field cases N, O of CASES.md: scope and tree identity, sparse checkouts and worktrees'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# --- N. Scope and tree identity ----------------------------------------------

test_expect_success 'BR-51: a checkpoint of a linked worktree is not_found.checkpoint from the main one, with data.tree' '
	case_repo br51 &&
	echo a >a && git add . && git commit -qm init &&
	WT="$REPO.wt-apply" &&
	git worktree add -q "$WT" -b apply &&
	K=$(cd "$WT" && echo scratch >scratch.txt && ck --reason manual) &&
	tree_state >"$OUT/main.0" && refs_state >"$OUT/refs.0" &&
	venom_fails not_found.checkpoint "$OUT/other.json" plan $K &&
	test_json "$OUT/other.json" ".error.data.checkpoint == \"$K\"" ".error.data.tree == \"$WT\"" &&
	venom_fails not_found.checkpoint "$OUT/other2.json" git venom-rollback --agent $AG $K --plan p1-0000000000000000 --json &&
	test_json "$OUT/other2.json" ".error.data.tree == \"$WT\"" &&
	git status --porcelain >"$OUT/status" && test_must_be_empty "$OUT/status" &&
	tree_state >"$OUT/main.1" && test_cmp "$OUT/main.0" "$OUT/main.1" &&
	refs_state >"$OUT/refs.1" && test_cmp "$OUT/refs.0" "$OUT/refs.1" &&
	(cd "$WT" && plan $K) >"$OUT/own.json" &&
	test_json "$OUT/own.json" ".plan | startswith(\"p2-\")" ".repos[0].path == \"$WT\""
'

test_expect_success 'BR-51: after the repository moved on disk its checkpoints are not_found.checkpoint, with the old tree' '
	cd "$TRASH_DIRECTORY/br51" && OUT="$TRASH_DIRECTORY/br51.out" && REPO="$TRASH_DIRECTORY/br51" &&
	AG=a9 && KM=$(ck --reason manual) && echo more >>a &&
	mv "$REPO" "$REPO.moved" && cd "$REPO.moved" &&
	tree_state >"$OUT/moved.0" &&
	venom_fails not_found.checkpoint "$OUT/moved.json" plan $KM &&
	test_json "$OUT/moved.json" ".error.data.checkpoint == \"$KM\"" ".error.data.tree == \"$REPO\"" &&
	AG=a1 && venom_fails not_found.checkpoint "$OUT/moved-wt.json" plan $K &&
	tree_state >"$OUT/moved.1" && test_cmp "$OUT/moved.0" "$OUT/moved.1" &&
	AG=a9 && K2=$(ck --reason manual) &&
	test_json "$OUT/ck.json" ".repos[0].path == \"$REPO.moved\""
'

test_expect_success 'BR-52: a capture from a subdirectory is never silent: the whole repository is captured' '
	case_repo br52 &&
	mkdir -p packages/web && echo x >packages/web/index.ts && echo r >root.txt && git add . && git commit -qm init &&
	echo y >>packages/web/index.ts && echo s >>root.txt &&
	cd packages/web &&
	git venom-checkpoint --agent $AG --reason manual --json >"$OUT/k.json"
	rc=$? &&
	if test $rc = 0
	then
		test_json "$OUT/k.json" ".checkpoint == \"k1\"" ".repos[0].path == \"$REPO\"" &&
		git show "$(ref k1):packages/web/index.ts" >"$OUT/actual" && printf "x\ny\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
		git show "$(ref k1):root.txt" >"$OUT/actual" && printf "r\ns\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual"
	else
		test $rc = 10 && test_json "$OUT/k.json" ".error.code == \"unsupported.checkpoint_no_repo\"" &&
		venom_log | jq -e "select(.type == \"checkpoint.failed\")"
	fi
'

test_expect_success SYMLINKS 'BR-54: a tree reached through a symlinked path is one tree, by its canonical path' '
	case_repo br54 &&
	echo a >a && git add . && git commit -qm init &&
	ALIAS="$TRASH_DIRECTORY/br54.alias" && ln -s "$REPO" "$ALIAS" &&
	cd "$ALIAS/" && K1=$(ts) && echo b >>a && K2=$(te) &&
	test_json "$OUT/ck.json" ".repos[0].path == \"$REPO\"" &&
	cd "$REPO" && rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].path == \"$REPO\"" ".exact == true" &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" a &&
	cd "$ALIAS" && AG=a2 && ts >/dev/null && AG=a1 &&
	cd "$REPO" &&
	venom_fails conflict.tree_shared "$OUT/shared.json" plan $K2 &&
	test_json "$OUT/shared.json" ".error.data.agents == [\"a2\"]"
'

test_expect_success 'BR-55: an unborn repository: empty-tree checkpoints and rollbacks both ways, HEAD stays unborn' '
	case_repo br55 &&
	K0=$(ts) &&
	test_json "$OUT/ck.json" ".repos[0].head == null" &&
	test "$(treeof $K0)" = 4b825dc642cb6eb9a060e54bf8d69288fbee4904 &&
	echo a >a.txt && K1=$(te) &&
	rm a.txt && K2=$(ck --reason manual) &&
	test "$(treeof $K2)" = 4b825dc642cb6eb9a060e54bf8d69288fbee4904 &&
	rb $K1 --restore files >"$OUT/r1.json" &&
	test_json "$OUT/r1.json" ".exact == true" ".repos[0].head == {moves: false, from: null, to: null, commits: 0}" \
		"[.repos[0].files[] | [.path, .change]] == [[\"a.txt\", \"create\"]]" &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" a.txt &&
	rb $K0 --restore files >"$OUT/r0.json" &&
	test_json "$OUT/r0.json" ".exact == true" "[.repos[0].files[] | [.path, .change]] == [[\"a.txt\", \"delete\"]]" &&
	test_path_is_missing a.txt &&
	test_must_fail git rev-parse -q --verify HEAD &&
	test "$(git symbolic-ref HEAD)" = refs/heads/main &&
	venom_log | jq -c "select(.type == \"checkpoint.failed\")" >"$OUT/failed" && test_must_be_empty "$OUT/failed"
'

# --- O. Sparse checkout and worktrees ----------------------------------------

test_expect_success 'BR-56: skip-worktree paths keep their index content, are listed as skipped, never materialized' '
	case_repo br56 &&
	mkdir keep other && echo k >keep/k.txt && echo o >other/o.txt && git add . && git commit -qm init &&
	git sparse-checkout set --cone keep &&
	git ls-files -v >"$OUT/bits.0" && grep "^S other/o.txt$" "$OUT/bits.0" &&
	K1=$(ts) &&
	git ls-tree -r --name-only "$(ref $K1)" >"$OUT/names" && grep -x other/o.txt "$OUT/names" &&
	test_json "$OUT/ck.json" "[.repos[0].skipped[] | {path, reason}] == [{path: \"other/o.txt\", reason: \"skip_worktree\"}]" &&
	git update-index --cacheinfo "100644,$(echo o2 | git hash-object -w --stdin),other/o.txt" &&
	git update-index --skip-worktree other/o.txt &&
	echo k2 >keep/k.txt && K2=$(te) &&
	git show "$(ref $K2):other/o.txt" >"$OUT/actual" && echo o2 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	git venom-checkpoint list --agent $AG --json >"$OUT/list.json" &&
	test_json "$OUT/list.json" "[.checkpoints[0].repos[0].skipped[] | {path, reason}] == [{path: \"other/o.txt\", reason: \"skip_worktree\"}]" &&
	git ls-files -v >"$OUT/bits.1" && I0=$(index_hash) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"keep/k.txt\", change: \"modify\", class: \"turn\"}]" \
		".repos[0].left == [{path: \"other/o.txt\", reason: \"skip_worktree\"}]" &&
	test_path_is_missing other && echo k >"$OUT/expect" && test_cmp "$OUT/expect" keep/k.txt &&
	test "$(index_hash)" = "$I0" &&
	git ls-files -v >"$OUT/bits.2" && test_cmp "$OUT/bits.1" "$OUT/bits.2"
'

test_expect_success 'BR-56: a manually skip-worktree'"'"'d file deleted inside the cone is no deletion' '
	case_repo br56m &&
	mkdir keep && echo k >keep/k.txt && echo j >keep/j.txt && git add . && git commit -qm init &&
	git update-index --skip-worktree keep/k.txt && rm keep/k.txt &&
	K1=$(ts) &&
	git show "$(ref $K1):keep/k.txt" >"$OUT/actual" && echo k >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	test_json "$OUT/ck.json" "[.repos[0].skipped[] | {path, reason}] == [{path: \"keep/k.txt\", reason: \"skip_worktree\"}]" &&
	echo j2 >keep/j.txt && K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"keep/j.txt\", change: \"modify\", class: \"turn\"}]" \
		".repos[0].left == []" &&
	test_path_is_missing keep/k.txt &&
	git ls-files -v keep/k.txt >"$OUT/bit" && echo "S keep/k.txt" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/bit"
'

test_done
