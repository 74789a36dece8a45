#!/usr/bin/env bash

test_description='git venom-checkpoint capture: every row of RFC 4, and the field cases of kinds D, F, G, K, N'

. "$(dirname "$0")/test-lib.sh"

# take [ARGS...]: a capture by agent "a", its JSON in take.json, and the
# checkpoint's ref in $ref.
take () {
	git venom-checkpoint --agent a "$@" --json >take.json &&
	ref=refs/venom/checkpoints/a/$(jq -r '.checkpoint | ltrimstr("k")' take.json)
}

# names REF prints the paths in REF's tree, NUL-separated names shown one a
# line with newlines escaped, so odd names compare exactly.
names () {
	git ls-tree -r -z --name-only "$1" | perl -0 -ne 'chomp; s/\\/\\\\/g; s/\n/\\n/g; s/\t/\\t/g; print "$_\n"'
}

test_expect_success 'setup' '
	test_commit initial tracked.txt "v0" &&
	echo "deleted later" >doomed.txt &&
	echo "#!/bin/sh" >tool.sh &&
	git add doomed.txt tool.sh &&
	test_commit second
'

test_expect_success 'tracked, untracked, deleted and mode changes are captured as the files are' '
	echo v1 >tracked.txt &&
	rm doomed.txt &&
	chmod +x tool.sh &&
	mkdir -p gen/deep &&
	echo generated >gen/deep/out.txt &&
	take &&
	names $ref >actual &&
	cat >expect <<-\EOF &&
	gen/deep/out.txt
	second.t
	tool.sh
	tracked.txt
	EOF
	test_cmp expect actual &&
	git ls-tree $ref tool.sh | cut -c1-6 >actual &&
	echo 100755 >expect &&
	test_cmp expect actual &&
	git cat-file blob $ref:tracked.txt >actual &&
	echo v1 >expect &&
	test_cmp expect actual
'

test_expect_success SYMLINKS 'a symlink is captured as a symlink with its target' '
	ln -s tracked.txt link &&
	ln -s ../nowhere dangling &&
	take &&
	git ls-tree $ref link dangling >actual &&
	grep "^120000 blob .*	link$" actual &&
	grep "^120000 blob .*	dangling$" actual &&
	git cat-file blob $ref:link >actual &&
	printf tracked.txt >expect &&
	test_cmp expect actual &&
	rm link dangling
'

test_expect_success 'ignored files are never captured: .gitignore, info/exclude, core.excludesFile' '
	echo "*.log" >.gitignore &&
	echo "secret.key" >>.git/info/exclude &&
	echo "*.cache" >"$HOME/global-ignore" &&
	git config core.excludesFile "$HOME/global-ignore" &&
	echo noise >build.log &&
	echo key >secret.key &&
	echo c >x.cache &&
	mkdir -p node_modules/pkg &&
	echo "node_modules/" >>.gitignore &&
	echo m >node_modules/pkg/index.js &&
	take &&
	names $ref >actual &&
	! grep -E "build[.]log|secret[.]key|x[.]cache|node_modules" actual &&
	grep -x .gitignore actual
'

test_expect_success 'an ignored file that is tracked is still captured (git tracks it)' '
	echo forced >forced.log &&
	git add -f forced.log &&
	echo "forced, edited" >forced.log &&
	take &&
	git cat-file blob $ref:forced.log >actual &&
	echo "forced, edited" >expect &&
	test_cmp expect actual
'

test_expect_success 'BR-12: index bytes identical; an assume-unchanged edit is captured; the bit stays' '
	printf "l1\nl2\nl3\n" >f.txt &&
	echo cfg >local.cfg &&
	git add f.txt local.cfg &&
	test_tick &&
	git commit -q -m "staging setup" &&
	printf "l1 staged\nl2\nl3\n" >f.txt &&
	git add f.txt &&
	printf "l1 staged\nl2\nl3 unstaged\n" >f.txt &&
	echo n >new.txt &&
	git add -N new.txt &&
	git update-index --assume-unchanged local.cfg &&
	echo changed >local.cfg &&
	cp .git/index index.out &&
	git diff --cached >cached.out &&
	take &&
	cmp .git/index index.out &&
	git cat-file blob $ref:local.cfg >actual &&
	echo changed >expect &&
	test_cmp expect actual &&
	git cat-file blob $ref:f.txt >actual &&
	printf "l1 staged\nl2\nl3 unstaged\n" >expect &&
	test_cmp expect actual &&
	git ls-files -v local.cfg >actual &&
	echo "h local.cfg" >expect &&
	test_cmp expect actual &&
	git diff --cached >actual &&
	test_cmp cached.out actual
'

test_expect_success 'BR-21: a nested repository with no commit is left out and reported; the rest is fresh' '
	echo v1 >file.txt &&
	git add file.txt &&
	test_tick &&
	git commit -q -m file &&
	echo v2 >file.txt &&
	git init -q scratch-clone &&
	echo z >scratch-clone/z &&
	take &&
	git cat-file blob $ref:file.txt >actual &&
	echo v2 >expect &&
	test_cmp expect actual &&
	names $ref >actual &&
	! grep "^scratch-clone" actual &&
	test_json take.json \
		".repos[0].submodules == [{\"path\":\"scratch-clone\",\"commit\":null,\"dirty\":true}]" &&
	test_path_is_file scratch-clone/z &&
	test_must_fail git -C scratch-clone rev-parse -q --verify HEAD
'

# What is inside a nested repository is not part of the tree (only its
# commit is, as a gitlink, RFC 4.2), so a change inside it that makes no
# commit does not make a new checkpoint (RFC 3.2 compares tree and HEAD);
# the checks below change a file too.
test_expect_success 'a change inside a nested repository alone is deduplicated' '
	(cd scratch-clone && echo y >y && git add y) &&
	take &&
	test_json take.json ".reused == true" &&
	rm scratch-clone/y &&
	git -C scratch-clone rm -q --cached y
'

test_expect_success 'a nested repository at a commit is reported with that commit and its state, and is a gitlink at it (RFC 4.2)' '
	(
		cd scratch-clone &&
		git add z &&
		test_tick &&
		git commit -q -m z
	) &&
	nested=$(git -C scratch-clone rev-parse HEAD) &&
	echo v3 >file.txt &&
	take &&
	test_json take.json ".reused == false" \
		".repos[0].submodules == [{\"path\":\"scratch-clone\",\"commit\":\"$nested\",\"dirty\":false}]" &&
	echo dirt >>scratch-clone/z &&
	echo v4 >file.txt &&
	take &&
	test_json take.json \
		".repos[0].submodules == [{\"path\":\"scratch-clone\",\"commit\":\"$nested\",\"dirty\":true}]" &&
	git ls-tree $ref scratch-clone >actual &&
	echo "160000 commit $nested	scratch-clone" >expect &&
	test_cmp expect actual &&
	names $ref >actual &&
	! grep "^scratch-clone/" actual &&
	echo v5 >file.txt &&
	git venom-checkpoint --agent a >out &&
	grep "^  nested repository scratch-clone at $(echo $nested | cut -c1-10), dirty (not captured inside)$" out
'

test_expect_success 'a nested repository whose .git is a file (a linked worktree) is a gitlink too, nothing inside' '
	git -C scratch-clone worktree add -q ../linked-wt 2>/dev/null &&
	test_path_is_file linked-wt/.git &&
	echo v6 >file.txt &&
	take &&
	test_json take.json "[.repos[0].submodules[].path] == [\"linked-wt\", \"scratch-clone\"]" &&
	git ls-tree $ref linked-wt >actual &&
	echo "160000 commit $(git -C linked-wt rev-parse HEAD)	linked-wt" >expect &&
	test_cmp expect actual &&
	names $ref >actual &&
	! grep "^linked-wt/" actual &&
	git -C scratch-clone worktree remove --force ../linked-wt &&
	rm -rf scratch-clone
'

test_expect_success 'setup: a registered submodule' '
	git init -q "$VENOM_TEST_ROOT/lib-src" &&
	git -C "$VENOM_TEST_ROOT/lib-src" commit -q --allow-empty -m lib &&
	echo s >"$VENOM_TEST_ROOT/lib-src/s.txt" &&
	git -C "$VENOM_TEST_ROOT/lib-src" add s.txt &&
	git -C "$VENOM_TEST_ROOT/lib-src" commit -q -m s &&
	git -c protocol.file.allow=always submodule add -q "$VENOM_TEST_ROOT/lib-src" lib &&
	test_tick &&
	git commit -q -m "add lib"
'

test_expect_success 'a submodule is captured as a gitlink at its commit, nothing inside' '
	lib=$(git -C lib rev-parse HEAD) &&
	take &&
	git ls-tree $ref lib >actual &&
	printf "160000 commit %s\tlib\n" "$lib" >expect &&
	test_cmp expect actual &&
	test_json take.json ".repos[0].submodules == [{\"path\":\"lib\",\"commit\":\"$lib\",\"dirty\":false}]"
'

test_expect_success 'a submodule moved to a new commit is captured at that commit' '
	(cd lib && test_tick && git commit -q --allow-empty -m moved) &&
	lib=$(git -C lib rev-parse HEAD) &&
	take &&
	test_json take.json ".reused == false" &&
	git ls-tree $ref lib >actual &&
	printf "160000 commit %s\tlib\n" "$lib" >expect &&
	test_cmp expect actual
'

test_expect_success 'submodules[] names the commit a moved submodule is captured at' '
	lib=$(git -C lib rev-parse HEAD) &&
	test_json take.json ".repos[0].submodules[0].commit == \"$lib\""
'

test_expect_success 'a submodule with modified files is reported dirty' '
	echo edit >>lib/s.txt &&
	echo sub-dirty >>tracked.txt &&
	take &&
	test_json take.json ".reused == false" \
		".repos[0].submodules == [{\"path\":\"lib\",\"commit\":\"$(git -C lib rev-parse HEAD)\",\"dirty\":true}]"
'

test_expect_success 'setup: remove the submodule' '
	git -C lib checkout -q -- . &&
	git rm -q -f lib &&
	rm -rf lib .git/modules/lib &&
	test_tick &&
	git commit -q -m "drop lib"
'

test_expect_success 'a file over venom.checkpoints.maxFileBytes is skipped and listed, the rest captured' '
	printf "%02000d" 0 >big.bin &&
	echo small >model.bin &&
	git config venom.checkpoints.maxFileBytes 1k &&
	take &&
	test_json take.json \
		".repos[0].skipped == [{\"path\":\"big.bin\",\"bytes\":2000,\"reason\":\"too_big\"}]" &&
	names $ref >actual &&
	! grep -x big.bin actual &&
	grep -x model.bin actual
'

test_expect_success 'a tracked file that grew past the limit keeps the content the index has' '
	git add big.bin &&
	test_tick &&
	git commit -q -m "big, tracked" &&
	printf "%04000d" 1 >big.bin &&
	take &&
	test_json take.json ".repos[0].skipped == [{\"path\":\"big.bin\",\"bytes\":4000,\"reason\":\"too_big\"}]" &&
	git cat-file blob $ref:big.bin >actual &&
	git cat-file blob HEAD:big.bin >expect &&
	test_cmp expect actual
'

test_expect_success 'the human output lists skipped files with their size' '
	git venom-checkpoint --agent a >out &&
	grep "^  skipped big.bin (too_big, 3.9 KiB)$" out
'

test_expect_success 'git -c venom.checkpoints.maxFileBytes=... works like any git config' '
	git -c venom.checkpoints.maxFileBytes=10000 venom-checkpoint --agent a --json >take.json &&
	test_json take.json ".repos[0].skipped == []" &&
	git cat-file blob refs/venom/checkpoints/a/$(jq -r ".checkpoint | ltrimstr(\"k\")" take.json):big.bin >actual &&
	test_cmp big.bin actual &&
	git config --unset venom.checkpoints.maxFileBytes &&
	git checkout -q -- big.bin
'

test_expect_success 'a config value that does not parse is invalid_params.config (exit 2)' '
	test_expect_code 2 git -c venom.checkpoints.maxFileBytes=lots venom-checkpoint --agent a --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.config\"" \
		".error.data.key == \"venom.checkpoints.maxfilebytes\"" ".error.data.value == \"lots\"" &&
	test_expect_code 2 git -c venom.checkpoints.timeout=soon venom-checkpoint --agent a --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.config\""
'

test_expect_success 'BR-25: past maxTotalBytes the capture fails, naming the five largest; nothing is written' '
	mkdir build-out &&
	for i in 1 2 3 4 5 6 7; do
		printf "%0${i}000d" 0 >build-out/chunk$i.o || return 1
	done &&
	git config venom.checkpoints.maxTotalBytes 20k &&
	git count-objects -v >objects.out &&
	git for-each-ref refs/venom >refs.out &&
	test_expect_code 1 git venom-checkpoint --agent a --json >err.json &&
	test_json err.json \
		".error.code == \"failed.checkpoint_too_large\"" \
		".error.data.bytes >= 28000" \
		".error.data.largest == [\"build-out/chunk7.o\", \"build-out/chunk6.o\", \"build-out/chunk5.o\", \"build-out/chunk4.o\", \"build-out/chunk3.o\"]" &&
	git count-objects -v >actual &&
	test_cmp objects.out actual &&
	git for-each-ref refs/venom >actual &&
	test_cmp refs.out actual &&
	venom_log | tail -n 1 >last &&
	test_json last ".type == \"checkpoint.failed\"" ".code == \"failed.checkpoint_too_large\"" ".agent == \"a\"" &&
	test_expect_code 1 git venom-checkpoint --agent a 2>err &&
	grep "^error: capture refused: " err &&
	grep "^hint: .*maxTotalBytes" err &&
	git config --unset venom.checkpoints.maxTotalBytes &&
	rm -rf build-out
'

test_expect_success 'BR-56: skip-worktree paths keep the index content and are listed' '
	mkdir keep other &&
	echo k >keep/k.txt &&
	echo o >other/o.txt &&
	git add keep other &&
	test_tick &&
	git commit -q -m sparse &&
	git sparse-checkout set --cone keep &&
	test_path_is_missing other/o.txt &&
	echo k2 >keep/k.txt &&
	git ls-files -v >lsfiles.out &&
	take &&
	git cat-file blob $ref:other/o.txt >actual &&
	echo o >expect &&
	test_cmp expect actual &&
	git cat-file blob $ref:keep/k.txt >actual &&
	echo k2 >expect &&
	test_cmp expect actual &&
	test_json take.json "[.repos[0].skipped[] | select(.reason == \"skip_worktree\") | .path] | index(\"other/o.txt\") != null" &&
	git ls-files -v >actual &&
	test_cmp lsfiles.out actual &&
	git venom-checkpoint --agent a >out &&
	grep "^  kept [0-9]* skip-worktree path(s) at the index.s content$" out &&
	git sparse-checkout disable
'

test_expect_success 'BR-15: a split index is left whole' '
	git config core.splitIndex true &&
	git config splitIndex.maxPercentChange 1 &&
	git config splitIndex.sharedIndexExpire now &&
	for i in $(seq 1 30); do echo $i >s$i.txt || return 1; done &&
	git add s*.txt &&
	test_tick &&
	git commit -q -m split &&
	ls .git/sharedindex.* >shared.out &&
	for i in $(seq 1 30); do echo x >>s$i.txt || return 1; done &&
	echo new >g.txt &&
	take &&
	ls .git/sharedindex.* >actual &&
	test_cmp shared.out actual &&
	git status --porcelain >/dev/null &&
	git cat-file blob $ref:s7.txt >actual &&
	printf "7\nx\n" >expect &&
	test_cmp expect actual &&
	git config --unset core.splitIndex &&
	git config --unset splitIndex.maxPercentChange &&
	git config --unset splitIndex.sharedIndexExpire
'

test_expect_success 'BR-34: core.safecrlf=true with autocrlf does not stop a capture' '
	printf "one\ntwo\n" >unix.txt &&
	git add unix.txt &&
	test_tick &&
	git commit -q -m unix &&
	git config core.autocrlf true &&
	git config core.safecrlf true &&
	printf "one\ntwo\nthree\n" >unix.txt &&
	cp .git/index index.out &&
	take &&
	cmp .git/index index.out &&
	git cat-file blob $ref:unix.txt >actual &&
	grep -x three actual &&
	git config --unset core.autocrlf &&
	git config --unset core.safecrlf
'

test_expect_success 'BR-38: odd file names are captured exactly' '
	for n in ":todo.md" ":(top)x.md" "*.md" "[ab].md" "b.md" "-rf" "sp ace.txt" "--help"; do
		printf "%s\n" "$n" >"./$n" || return 1
	done &&
	take &&
	names $ref >names.out &&
	for n in ":todo.md" ":(top)x.md" "*.md" "[ab].md" "b.md" "-rf" "sp ace.txt" "--help"; do
		grep -Fx -- "$n" names.out &&
		git cat-file blob "$ref:./$n" >actual &&
		printf "%s\n" "$n" >expect &&
		test_cmp expect actual || return 1
	done
'

test_expect_success FUNNYNAMES 'BR-38: names with a newline or a tab are captured' '
	printf "nl\n" >"new
line.txt" &&
	printf "tab\n" >"tab	x.txt" &&
	take &&
	names $ref >names.out &&
	grep -Fx "new\\nline.txt" names.out &&
	grep -Fx "tab\\tx.txt" names.out
'

test_expect_success NONUTF8NAMES 'a name that is not UTF-8 is captured' '
	name=$(printf "caf\351.txt") &&
	echo latin1 >"$name" &&
	take &&
	git ls-tree -r -z --name-only $ref | tr "\000" "\n" | grep -a -Fx "$name"
'

test_expect_success 'BR-17: checkpoint refs point at commits; fsck, gc and pack-refs keep them' '
	git for-each-ref --format="%(objecttype)" refs/venom | sort -u >actual &&
	echo commit >expect &&
	test_cmp expect actual &&
	git for-each-ref refs/venom | wc -l >count.out &&
	git fsck --strict --no-dangling 2>err.out &&
	git pack-refs --all &&
	git gc -q &&
	git for-each-ref refs/venom | wc -l >actual &&
	test_cmp count.out actual &&
	git branch -a >branches.out &&
	! grep -i venom branches.out
'

test_expect_success SYMLINKS 'BR-54: a tree reached through a symlink is recorded by its real path' '
	ln -s "$TRASH_DIRECTORY" "$VENOM_TEST_ROOT/alias" &&
	echo via-alias >>tracked.txt &&
	(cd "$VENOM_TEST_ROOT/alias/" && git venom-checkpoint --agent a --json) >take.json &&
	test_json take.json ".repos[0].path == \"$TRASH_DIRECTORY\"" &&
	(cd "$VENOM_TEST_ROOT/alias" && git venom-checkpoint list --agent a --limit 1 --json) >l.json &&
	jq -r ".checkpoints[0].checkpoint" l.json >actual &&
	jq -r ".checkpoint" take.json >expect &&
	test_cmp expect actual &&
	k=$(cat expect) &&
	(cd "$VENOM_TEST_ROOT/alias" && git venom-checkpoint show $k --agent a --json) >s.json &&
	test_json s.json ".checkpoint == \"$k\""
'

test_expect_success 'BR-55: an unborn HEAD and an empty tree both capture; HEAD stays unborn' '
	git init -q "$VENOM_TEST_ROOT/empty" &&
	(
		cd "$VENOM_TEST_ROOT/empty" &&
		git venom-checkpoint --reason turn_start --json >"$VENOM_TEST_ROOT/e1.json" &&
		echo a >a.txt &&
		git venom-checkpoint --reason turn_end --json >"$VENOM_TEST_ROOT/e2.json" &&
		rm a.txt &&
		git venom-checkpoint --json >"$VENOM_TEST_ROOT/e3.json" &&
		git rev-parse "refs/venom/checkpoints/default/1^{tree}" >"$VENOM_TEST_ROOT/tree1" &&
		git rev-parse "refs/venom/checkpoints/default/3^{tree}" >"$VENOM_TEST_ROOT/tree3" &&
		test_must_fail git rev-parse -q --verify "refs/venom/checkpoints/default/1^" &&
		test_must_fail git rev-parse -q --verify HEAD &&
		git symbolic-ref HEAD >"$VENOM_TEST_ROOT/sym"
	) &&
	test_json "$VENOM_TEST_ROOT/e1.json" ".checkpoint == \"k1\"" ".repos[0].head == null" ".repos[0].branch == \"main\"" &&
	test_json "$VENOM_TEST_ROOT/e2.json" ".checkpoint == \"k2\"" &&
	test_json "$VENOM_TEST_ROOT/e3.json" ".checkpoint == \"k3\"" ".reused == false" &&
	echo 4b825dc642cb6eb9a060e54bf8d69288fbee4904 >expect &&
	test_cmp expect "$VENOM_TEST_ROOT/tree1" &&
	test_cmp expect "$VENOM_TEST_ROOT/tree3" &&
	echo refs/heads/main >expect &&
	test_cmp expect "$VENOM_TEST_ROOT/sym"
'

test_done
