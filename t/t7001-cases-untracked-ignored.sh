#!/usr/bin/env bash

test_description='field cases A, B, C of CASES.md: untracked-file loss, ignored-file loss, overlay-restore leftovers'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# --- A. Untracked-file loss --------------------------------------------------

test_expect_success 'BR-01: rollback deletes only what the plan lists; untracked outputs the agent never wrote survive' '
	case_repo br01 &&
	git config venom.checkpoints.maxFileBytes 100k &&
	echo "print(1)" >app.py && git add . && git commit -qm init &&
	mkdir output && random_bytes 2000 output/run-1.jsonl 1 &&
	printf "out/\n" >.gitignore && mkdir out && echo cache >out/cache.bin &&
	K1=$(ts) &&
	echo "print(2)" >>app.py &&
	random_bytes 3000 output/run-2.jsonl 2 &&
	random_bytes 150000 output/run-2.parquet 3 &&
	sha output/run-1.jsonl >"$OUT/run-1.sha" &&
	sha output/run-2.parquet >"$OUT/parquet.sha" &&
	sha output/run-2.jsonl >"$OUT/run-2.sha" &&
	sha out/cache.bin >"$OUT/cache.sha" &&
	K2=$(te) &&
	test_json "$OUT/ck.json" "[.repos[0].skipped[] | {path, reason}] == [{path: \"output/run-2.parquet\", reason: \"too_big\"}]" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" \
		".repos[0].files == [{path: \"app.py\", change: \"modify\", class: \"turn\"}, {path: \"output/run-2.jsonl\", change: \"delete\", class: \"turn\"}]" \
		".repos[0].left == [{path: \"output/run-2.parquet\", reason: \"too_big\"}]" \
		"[.repos[0] | .files[], .left[] | .path] | index(\"output/run-1.jsonl\") == null" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".dry_run == false" ".exact == true" \
		".repos[0].files == [{path: \"app.py\", change: \"modify\", class: \"turn\"}, {path: \"output/run-2.jsonl\", change: \"delete\", class: \"turn\"}]" \
		".repos[0].left == [{path: \"output/run-2.parquet\", reason: \"too_big\"}]" &&
	test "$(sha output/run-1.jsonl)" = "$(cat "$OUT/run-1.sha")" &&
	test "$(sha output/run-2.parquet)" = "$(cat "$OUT/parquet.sha")" &&
	test "$(sha out/cache.bin)" = "$(cat "$OUT/cache.sha")" &&
	test_path_is_missing output/run-2.jsonl &&
	echo "print(1)" >"$OUT/expect" && test_cmp "$OUT/expect" app.py &&
	SAFE=$(jq -r .safety "$OUT/r.json") &&
	git cat-file blob "$(ref $SAFE):output/run-2.jsonl" >"$OUT/recovered" &&
	test "$(sha "$OUT/recovered")" = "$(cat "$OUT/run-2.sha")"
'

test_expect_success 'BR-01: an output written after the last checkpoint is kept unless --outside overwrite is explicit' '
	case_repo br01b &&
	echo "print(1)" >app.py && git add . && git commit -qm init &&
	K1=$(ts) && echo "print(2)" >>app.py && K2=$(te) &&
	random_bytes 3000 output.jsonl 4 &&
	sha output.jsonl >"$OUT/out.sha" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".guarded == false" \
		".repos[0].files == [{path: \"app.py\", change: \"modify\", class: \"turn\"}]" \
		".repos[0].left == [{path: \"output.jsonl\", reason: \"outside\", detail: \"created after the last checkpoint\"}]" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" \
		".repos[0].left == [{path: \"output.jsonl\", reason: \"outside\", detail: \"created after the last checkpoint\"}]" &&
	test "$(sha output.jsonl)" = "$(cat "$OUT/out.sha")" &&
	echo "print(1)" >"$OUT/expect" && test_cmp "$OUT/expect" app.py &&
	rb $K1 --outside overwrite >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" ".repos[0].files == [{path: \"output.jsonl\", change: \"delete\", class: \"outside\"}]" \
		".repos[0].left == []" ".exact == true" &&
	test_path_is_missing output.jsonl &&
	git cat-file blob "$(ref "$(jq -r .safety "$OUT/r2.json")"):output.jsonl" >"$OUT/recovered" &&
	test "$(sha "$OUT/recovered")" = "$(cat "$OUT/out.sha")"
'

test_expect_success 'BR-02: only the repository in scope is touched; a folder that is not a repository is unsupported.checkpoint_no_repo' '
	W="$TRASH_DIRECTORY/br02" && OUT="$TRASH_DIRECTORY/br02.out" && AG=a1 && ISO="--isolation worktree" &&
	mkdir -p "$W" "$OUT" && cd "$W" &&
	git init -q projA && git init -q projB && echo note >loose.txt &&
	echo a >projA/a.txt && echo b >projB/keep.txt &&
	git -C projA add -A && git -C projA commit -qm a &&
	cd projA &&
	K1=$(ts) &&
	echo a2 >>a.txt && echo junk >../projB/junk.txt &&
	venom_fails conflict.turn_running "$OUT/running.json" plan $K1 &&
	test_json "$OUT/running.json" ".error.data.turn == \"t1\"" &&
	K2=$(te) &&
	git ls-tree -r --name-only "$(ref $K2)" >"$OUT/names" &&
	echo a.txt >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/names" &&
	(cd .. && tree_state) >"$OUT/before" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].path == \"$W/projA\"" \
		".repos[0].files == [{path: \"a.txt\", change: \"modify\", class: \"turn\"}]" ".repos[0].left == []" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"a.txt\", change: \"modify\", class: \"turn\"}]" ".exact == true" &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" a.txt &&
	(cd .. && tree_state) | grep -v "^\\./projA/a\\.txt " >"$OUT/after" &&
	grep -v "^\\./projA/a\\.txt " "$OUT/before" >"$OUT/before.rest" &&
	test_cmp "$OUT/before.rest" "$OUT/after" &&
	test "$(cat ../projB/junk.txt)" = junk && test "$(cat ../projB/keep.txt)" = b &&
	test "$(cat ../loose.txt)" = note &&
	git -C ../projB for-each-ref refs/venom >"$OUT/b-refs" && test_must_be_empty "$OUT/b-refs" &&
	cd "$W" &&
	(cd "$W" && tree_state) >"$OUT/w-before" &&
	GIT_CEILING_DIRECTORIES="$TRASH_DIRECTORY" &&
	export GIT_CEILING_DIRECTORIES &&
	test_when_finished "unset GIT_CEILING_DIRECTORIES" &&
	venom_fails unsupported.checkpoint_no_repo "$OUT/norepo.json" \
		git venom-checkpoint --agent a1 --reason manual --json &&
	tree_state >"$OUT/w-after" &&
	test_cmp "$OUT/w-before" "$OUT/w-after" &&
	test_path_is_missing .git
'

test_expect_success 'BR-03: a rollback never stashes; a person'"'"'s older file is not in the plan, a new one is outside' '
	case_repo br03 guarded &&
	echo x >x && git add . && git commit -qm init &&
	echo draft >research-notes.md &&
	K1=$(ts) && echo y >>x && K2=$(te) &&
	echo later >late.md &&
	venom_fails conflict.outside_edits "$OUT/refused.json" plan $K1 &&
	test_json "$OUT/refused.json" ".error.data.repos == [{repo: \".\", paths: [\"late.md\"], changes: [\"delete\"]}]" &&
	plan $K1 --outside keep >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".guarded == true" \
		".repos[0].files == [{path: \"x\", change: \"modify\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"late.md\", reason: \"outside\"}]" &&
	rb $K1 --outside keep >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"x\", change: \"modify\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"late.md\", reason: \"outside\"}]" &&
	test "$(cat research-notes.md)" = draft && test "$(cat late.md)" = later &&
	test "$(cat x)" = x &&
	git stash list >"$OUT/stash" && test_must_be_empty "$OUT/stash" &&
	test_must_fail git rev-parse -q --verify refs/stash
'

test_expect_success 'BR-04: files the agent deleted with the shell come back byte-exact; the index is untouched' '
	case_repo br04 &&
	echo base >tracked.txt && git add . && git commit -qm init &&
	printf "scratch v1\n" >scratch.md &&
	git status --porcelain >"$OUT/status.k1" &&
	K1=$(ts) &&
	rm scratch.md tracked.txt &&
	K2=$(te) &&
	git diff --name-status "$(ref $K1)" "$(ref $K2)" >"$OUT/actual" &&
	printf "D\tscratch.md\nD\ttracked.txt\n" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	I0=$(index_hash) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" ".repos[0].head.moves == false" \
		".repos[0].files == [{path: \"scratch.md\", change: \"create\", class: \"turn\"}, {path: \"tracked.txt\", change: \"create\", class: \"turn\"}]" &&
	test "$(index_hash)" = "$I0" &&
	printf "scratch v1\n" >"$OUT/expect" && test_cmp "$OUT/expect" scratch.md &&
	echo base >"$OUT/expect" && test_cmp "$OUT/expect" tracked.txt &&
	git status --porcelain >"$OUT/status.now" &&
	test_cmp "$OUT/status.k1" "$OUT/status.now" &&
	echo "?? scratch.md" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/status.now"
'

# --- B. Ignored-file loss ----------------------------------------------------

test_expect_success 'BR-05 A: a file the turn made ignored is in the way, never overwritten' '
	case_repo br05a &&
	echo a >a && git add . && git commit -qm init &&
	printf "log v1\n" >run.log &&
	K1=$(ts) &&
	git show "$(ref $K1):run.log" >"$OUT/t-log" && printf "log v1\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/t-log" &&
	printf "*.log\n" >.gitignore && printf "log v2 (ignored now)\n" >run.log &&
	K2=$(te) &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" \
		".repos[0].files == [{path: \".gitignore\", change: \"delete\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"run.log\", reason: \"ignored_in_the_way\"}]" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \".gitignore\", change: \"delete\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"run.log\", reason: \"ignored_in_the_way\"}]" &&
	printf "log v2 (ignored now)\n" >"$OUT/expect" && test_cmp "$OUT/expect" run.log &&
	test_path_is_missing .gitignore
'

test_expect_success 'BR-05 B: a file the target ignores is never deleted (ignored_at_target)' '
	case_repo br05b &&
	printf "*.log\n" >.gitignore && echo a >a && git add . && git commit -qm init &&
	printf "precious local log\n" >run.log &&
	K1=$(ts) && : >.gitignore && K2=$(te) &&
	git cat-file -e "$(ref $K2):run.log" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" \
		".repos[0].files == [{path: \".gitignore\", change: \"modify\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"run.log\", reason: \"ignored_at_target\"}]" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \".gitignore\", change: \"modify\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"run.log\", reason: \"ignored_at_target\"}]" \
		".exact == true" &&
	printf "precious local log\n" >"$OUT/expect" && test_cmp "$OUT/expect" run.log &&
	printf "*.log\n" >"$OUT/expect" && test_cmp "$OUT/expect" .gitignore
'

test_expect_success 'BR-07: an ignored .env is never captured, deleted or overwritten, and an edit of it is in ignored_edits' '
	case_repo br07 &&
	printf ".env\n" >.gitignore && echo a >a && git add . && git commit -qm init &&
	printf "API_KEY=one\n" >.env &&
	K1=$(ts) &&
	printf "API_KEY=two\n" >.env && echo b >>a &&
	git venom-checkpoint edit --agent $AG --path .env --json >"$OUT/edit.json" &&
	test_json "$OUT/edit.json" ".turn == \"t1\"" &&
	K2=$(te) &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].ignored_edits == [\".env\"]" \
		".repos[0].files == [{path: \"a\", change: \"modify\", class: \"turn\"}]" ".repos[0].left == []" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].ignored_edits == [\".env\"]" ".exact == true" &&
	printf "API_KEY=two\n" >"$OUT/expect" && test_cmp "$OUT/expect" .env &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" a &&
	for k in $K1 $K2 $(jq -r ".safety, .after" "$OUT/r.json"); do
		git ls-tree -r --name-only "$(ref $k)" >"$OUT/names" &&
		! grep -x .env "$OUT/names" || return 1
	done
'

# --- C. Overlay-restore leftovers --------------------------------------------

test_expect_success 'BR-09: files created after the checkpoint are deleted and emptied folders removed' '
	case_repo br09 &&
	echo a >a.txt && git add . && git commit -qm init &&
	K1=$(ts) &&
	mkdir -p src/new/deep && echo x >src/new/deep/x.go && echo poem >poem.md && echo a2 >a.txt &&
	K2=$(te) &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" "[.repos[0].files[] | [.path, .change]] | sort == [[\"a.txt\", \"modify\"], [\"poem.md\", \"delete\"], [\"src/new/deep/x.go\", \"delete\"]]" \
		".repos[0].left == []" &&
	rb $K1 >"$OUT/r.json" &&
	test_path_is_missing src && test_path_is_missing poem.md &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" a.txt &&
	test "$(treeof "$(jq -r .after "$OUT/r.json")")" = "$(treeof $K1)" &&
	test_json "$OUT/r.json" ".exact == true"
'

test_expect_success 'BR-10: a tracked file the checkpoint lacked is deleted; the index keeps its entry' '
	case_repo br10 &&
	echo k >keep.txt && echo d >delete-me.txt && git add . && git commit -qm init &&
	rm delete-me.txt &&
	K1=$(ts) &&
	git show HEAD:delete-me.txt >delete-me.txt &&
	K2=$(te) &&
	I0=$(index_hash) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"delete-me.txt\", change: \"delete\", class: \"turn\"}]" ".exact == true" &&
	test_path_is_missing delete-me.txt &&
	test "$(index_hash)" = "$I0" &&
	echo " D delete-me.txt" >"$OUT/expect" &&
	git status --porcelain >"$OUT/actual" &&
	test_cmp "$OUT/expect" "$OUT/actual"
'

test_done
