#!/usr/bin/env bash

test_description='git venom-checkpoint: take a checkpoint, its JSON, its ref and commit, errors and exit codes'

. "$(dirname "$0")/test-lib.sh"

test_expect_success 'setup' '
	test_commit initial a.txt "one" &&
	mkdir -p src/deep &&
	test_commit second src/deep/b.txt "two" &&
	printf ".env\n*.log\n" >.gitignore &&
	git add .gitignore &&
	test_commit ignore-rules .gitignore "$(cat .gitignore)" &&
	echo SECRET=1 >.env &&
	echo noise >build.log &&
	echo "agent output" >result.txt &&
	echo "one, edited" >a.txt
'

test_expect_success '-h prints the usage of every subcommand and exits 129, as git'"'"'s builtins do' '
	test_expect_code 129 git venom-checkpoint -h >out 2>err &&
	test_must_be_empty err &&
	grep "^usage: git venom-checkpoint \[--agent <id>\]" out &&
	grep "or: git venom-checkpoint list " out &&
	grep "or: git venom-checkpoint show " out &&
	grep "or: git venom-checkpoint diff " out &&
	grep "^    --reason <reason>  *turn_start, " out &&
	grep "^    --label <text>  " out &&
	grep "^    -C, --directory <dir>  " out
'

test_expect_success 'the usage names no pflag types and no [=true|false]' '
	for cmd in "venom-checkpoint" "venom-checkpoint list" "venom-checkpoint diff" "venom-plan" "venom-rollback" "venom-doctor" "venom"; do
		test_expect_code 129 git $cmd -h >out &&
		! grep -e "\[=true|false\]" -e " string " -e " int " out || return 1
	done
'

test_expect_success 'git venom-plan -h does not offer --plan; the rollback does' '
	test_expect_code 129 git venom-plan -h >out &&
	! grep -e "--plan" out &&
	grep "^    --agent <id>  " out &&
	test_expect_code 129 git venom-rollback -h >out &&
	grep "^    --plan <plan>  " out
'

test_expect_success 'git venom -h (the TUI) prints its usage as the commands do and exits 129' '
	test_expect_code 129 git venom -h >out 2>err &&
	test_must_be_empty err &&
	grep "^usage: git venom \[--agent <id>\] \[-C <dir>\]$" out &&
	grep "^    --agent <id>  *open this agent" out &&
	grep "^    -C, --directory <dir>  " out
'

test_expect_success '--help given to the binary itself prints the usage' '
	test_expect_code 129 git-venom-checkpoint --help >out &&
	grep "^usage: git venom-checkpoint" out
'

test_expect_success 'subcommands have -h too, with their own usage line' '
	test_expect_code 129 git venom-checkpoint list -h >out &&
	grep "^usage: git venom-checkpoint list " out &&
	! grep "or: " out &&
	grep -- "^    --limit <n>  *at most this many (default 50)$" out &&
	grep -- "^    --before <k>  " out &&
	test_expect_code 129 git venom-checkpoint diff -h >out &&
	grep -- "^    --path <path>  " out
'

test_expect_success 'options before a subcommand: git venom-checkpoint --agent me list' '
	git init -q "$VENOM_TEST_ROOT/opts" && (
	cd "$VENOM_TEST_ROOT/opts" &&
	git venom-checkpoint --agent me --json >take.json &&
	git venom-checkpoint --agent me list >out &&
	grep "^k1 " out &&
	git venom-checkpoint --agent me --limit 1 list --json >list.json &&
	test_json list.json ".agent == \"me\"" ".checkpoints | length == 1" &&
	git venom-checkpoint -C "$PWD" --agent me show k1 --json >show.json &&
	test_json show.json ".checkpoint == \"k1\"" &&
	git config alias.me "!git venom-checkpoint --agent me" &&
	git me list >out &&
	grep "^k1 " out &&
	git me diff k1 --json >diff.json &&
	test_json diff.json ".from == \"k1\"" &&
	git venom-checkpoint --label list --agent me --json >take2.json &&
	test_json take2.json ".label == \"list\"" &&
	test_expect_code 2 git venom-checkpoint --agent me lst 2>err &&
	grep "^error: unknown subcommand \"lst\"" err
	)
'

test_expect_success 'a first capture: human output names the checkpoint and agent' '
	git venom-checkpoint >out 2>err &&
	test_must_be_empty err &&
	commit=$(git rev-parse refs/venom/checkpoints/default/1) &&
	short=$(echo "$commit" | cut -c1-10) &&
	echo "took checkpoint k1 of default (manual) at $short" >expect &&
	test_cmp expect out
'

test_expect_success 'the checkpoint commit holds the whole tree, minus ignored files' '
	git ls-tree -r --name-only refs/venom/checkpoints/default/1 >actual &&
	cat >expect <<-\EOF &&
	.gitignore
	a.txt
	result.txt
	src/deep/b.txt
	EOF
	test_cmp expect actual &&
	echo "one, edited" >expect &&
	git cat-file blob refs/venom/checkpoints/default/1:a.txt >actual &&
	test_cmp expect actual &&
	echo "agent output" >expect &&
	git cat-file blob refs/venom/checkpoints/default/1:result.txt >actual &&
	test_cmp expect actual
'

test_expect_success 'the commit: parent HEAD, fixed identity, RFC 4.1 trailers' '
	git rev-parse HEAD >expect &&
	git rev-parse refs/venom/checkpoints/default/1^ >actual &&
	test_cmp expect actual &&
	test_must_fail git rev-parse -q --verify refs/venom/checkpoints/default/1^2 &&
	git log -1 --format="%an <%ae>%n%cn <%ce>" refs/venom/checkpoints/default/1 >actual &&
	printf "venom <venom@localhost>\nvenom <venom@localhost>\n" >expect &&
	test_cmp expect actual &&
	git log -1 --format=%B refs/venom/checkpoints/default/1 >msg &&
	grep -x "venom checkpoint default/k1" msg &&
	grep -x "Venom-Agent: default" msg &&
	grep -x "Venom-Checkpoint: k1" msg &&
	grep -x "Venom-Reason: manual" msg &&
	! grep "^Venom-Turn:" msg
'

test_expect_success '--json: one object with the RFC 11.1 result and the 4.2 record' '
	echo more >>result.txt &&
	git venom-checkpoint --json >out.json 2>err &&
	test_must_be_empty err &&
	test_line_count = 1 out.json &&
	commit=$(git rev-parse refs/venom/checkpoints/default/2) &&
	tree=$(git rev-parse "refs/venom/checkpoints/default/2^{tree}") &&
	head=$(git rev-parse HEAD) &&
	test_json out.json \
		".agent == \"default\"" \
		".checkpoint == \"k2\"" \
		".reused == false" \
		".reason == \"manual\"" \
		".turn == null" \
		".through_turn == null" \
		".mid_turn == false" \
		".overlap == false" \
		"has(\"label\") | not" \
		"(.at | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$\"))" \
		".repos | length == 1" \
		".repos[0].repo == \".\"" \
		".repos[0].path == \"$TRASH_DIRECTORY\"" \
		".repos[0].commit == \"$commit\"" \
		".repos[0].tree == \"$tree\"" \
		".repos[0].head == \"$head\"" \
		".repos[0].branch == \"main\"" \
		".repos[0].skipped == []" \
		".repos[0].submodules == []"
'

test_expect_success 'the JSON keys come in the documented order' '
	jq -c "keys_unsorted" out.json >actual &&
	echo "[\"agent\",\"checkpoint\",\"reused\",\"reason\",\"turn\",\"through_turn\",\"at\",\"mid_turn\",\"overlap\",\"repos\"]" >expect &&
	test_cmp expect actual
'

test_expect_success '--reason and --label are recorded' '
	echo again >>result.txt &&
	git venom-checkpoint --reason takeover --label "before the risky bit" --json >out.json &&
	test_json out.json ".checkpoint == \"k3\"" ".reason == \"takeover\"" \
		".label == \"before the risky bit\"" &&
	git log -1 --format=%B refs/venom/checkpoints/default/3 >msg &&
	grep -x "Venom-Reason: takeover" msg
'

test_expect_success 'invariant 1: index bytes, HEAD, refs, stash, files and mtimes unchanged' '
	state="$VENOM_TEST_ROOT/inv" &&
	mkdir "$state" &&
	echo stash-me >>a.txt &&
	git stash -q &&
	echo "one, edited" >a.txt &&
	echo staged >staged.txt &&
	git add staged.txt &&
	echo "unstaged too" >>staged.txt &&
	echo agent-change >>result.txt &&
	index=$(git rev-parse --path-format=absolute --git-path index) &&
	GIT_OPTIONAL_LOCKS=0 git status --porcelain=v1 -uall --ignored >"$state/status" &&
	cp "$index" "$state/index" &&
	test_mtime "$index" >"$state/index-mtime" &&
	git for-each-ref >"$state/refs" &&
	git rev-parse HEAD >"$state/head" &&
	git symbolic-ref HEAD >"$state/sym" &&
	git stash list >"$state/stash" &&
	test_mtimes >"$state/mtimes" &&

	git venom-checkpoint --json >"$state/take.json" &&

	cmp "$index" "$state/index" &&
	test_mtime "$index" >"$state/actual" &&
	test_cmp "$state/index-mtime" "$state/actual" &&
	test_mtimes >"$state/actual" &&
	test_cmp "$state/mtimes" "$state/actual" &&
	git for-each-ref | grep -v "	refs/venom/checkpoints/default/4\$" >"$state/actual" &&
	test_cmp "$state/refs" "$state/actual" &&
	git rev-parse HEAD >"$state/actual" &&
	test_cmp "$state/head" "$state/actual" &&
	git symbolic-ref HEAD >"$state/actual" &&
	test_cmp "$state/sym" "$state/actual" &&
	git stash list >"$state/actual" &&
	test_cmp "$state/stash" "$state/actual" &&
	GIT_OPTIONAL_LOCKS=0 git status --porcelain=v1 -uall --ignored >"$state/actual" &&
	test_cmp "$state/status" "$state/actual"
'

test_expect_success 'the capture holds the working-tree content of a partly staged file' '
	git cat-file blob refs/venom/checkpoints/default/4:staged.txt >actual &&
	printf "staged\nunstaged too\n" >expect &&
	test_cmp expect actual &&
	git cat-file blob :staged.txt >actual &&
	echo staged >expect &&
	test_cmp expect actual
'

test_expect_success 'BR-52: a run from a subdirectory captures the whole worktree, and says so' '
	echo top-level-change >>a.txt &&
	(
		cd src/deep &&
		git venom-checkpoint >../../sub.out
	) &&
	head -n 1 sub.out | grep "^took checkpoint k5 of default (manual) at " &&
	sed -n 2p sub.out >actual &&
	echo "  the whole tree $TRASH_DIRECTORY was captured" >expect &&
	test_cmp expect actual &&
	git cat-file blob refs/venom/checkpoints/default/5:a.txt >actual &&
	tail -n 1 actual >last &&
	echo top-level-change >expect &&
	test_cmp expect last
'

test_expect_success 'a run from a subdirectory records the top of the tree as its path' '
	echo sub2 >>a.txt &&
	(cd src && git venom-checkpoint --json) >sub.json &&
	test_json sub.json ".repos[0].path == \"$TRASH_DIRECTORY\"" ".checkpoint == \"k6\""
'

test_expect_success 'git -C <path> venom-checkpoint works from anywhere' '
	echo from-outside >>a.txt &&
	(cd "$VENOM_TEST_ROOT" && git -C "$TRASH_DIRECTORY" venom-checkpoint --json) >c.json &&
	test_json c.json ".checkpoint == \"k7\"" ".repos[0].path == \"$TRASH_DIRECTORY\""
'

test_expect_success 'GIT_VENOM_AGENT picks the agent; each agent counts its own ids from k1' '
	GIT_VENOM_AGENT=claude-1 git venom-checkpoint --json >a.json &&
	test_json a.json ".agent == \"claude-1\"" ".checkpoint == \"k1\"" &&
	git rev-parse --verify refs/venom/checkpoints/claude-1/1 &&
	git venom-checkpoint --agent codex.2 --json >b.json &&
	test_json b.json ".agent == \"codex.2\"" ".checkpoint == \"k1\""
'

test_expect_success '--agent wins over GIT_VENOM_AGENT' '
	echo x >>result.txt &&
	GIT_VENOM_AGENT=claude-1 git venom-checkpoint --agent codex.2 --json >b.json &&
	test_json b.json ".agent == \"codex.2\"" ".checkpoint == \"k2\""
'

test_expect_success 'with several agents in the tree and none named, list is ambiguous (exit 2)' '
	test_expect_code 2 git venom-checkpoint list --json >err.json &&
	test_json err.json \
		".error.code == \"invalid_params.agent\"" \
		".error.data.candidates == [\"claude-1\", \"codex.2\", \"default\"]"
'

test_expect_success 'bad agent ids are invalid_params.agent (exit 2), and nothing is written' '
	git for-each-ref refs/venom >refs.before &&
	for id in Upper -lead "a/b" "a..b" "x.lock" "dot." "sp ace" ".hidden" \
		"$(printf "a%.0s" $(seq 1 65))"
	do
		test_expect_code 2 git venom-checkpoint --agent "$id" --json >err.json &&
		test_json err.json ".error.code == \"invalid_params.agent\"" || return 1
	done &&
	test_expect_code 2 env GIT_VENOM_AGENT=NOPE git venom-checkpoint --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.agent\"" ".error.data.agent == \"NOPE\"" &&
	git for-each-ref refs/venom >refs.after &&
	test_cmp refs.before refs.after
'

test_expect_success 'a 64-character agent id is accepted' '
	id=$(printf "a%.0s" $(seq 1 64)) &&
	git venom-checkpoint --agent "$id" --json >ok.json &&
	test_json ok.json ".agent == \"$id\""
'

test_expect_success 'errors without --json: git-style error: line on stderr, nothing on stdout' '
	test_expect_code 2 git venom-checkpoint --agent BAD >out 2>err &&
	test_must_be_empty out &&
	grep "^error: bad agent id: agent id \"BAD\" must match" err
'

test_expect_success 'a bad --reason is invalid_params.reason (exit 2) listing the choices' '
	test_expect_code 2 git venom-checkpoint --agent default --reason whenever --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.reason\"" \
		".error.data.choices == [\"turn_start\", \"turn_end\", \"manual\", \"takeover\", \"takeback\"]"
'

test_expect_success 'reasons only a rollback may give are refused' '
	for r in pre_rollback rollback; do
		test_expect_code 2 git venom-checkpoint --agent default --reason $r --json >err.json &&
		test_json err.json ".error.code == \"invalid_params.reason\"" || return 1
	done
'

test_expect_success '--reason fork without --fork-of is a usage error' '
	test_expect_code 2 git venom-checkpoint --agent default --reason fork --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\""
'

test_expect_success 'a bad --isolation is invalid_params.isolation (exit 2)' '
	test_expect_code 2 git venom-checkpoint --agent default --isolation sandbox --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.isolation\""
'

test_expect_success 'an unknown flag or subcommand is invalid_params.usage (exit 2)' '
	test_expect_code 2 git venom-checkpoint --frobnicate --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 2 git venom-checkpoint frobnicate --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 2 git venom-checkpoint frobnicate 2>err &&
	grep "^error: unknown subcommand \"frobnicate\"" err &&
	grep "^hint: usage: git venom-checkpoint" err
'

test_expect_success 'outside any repository: unsupported.checkpoint_no_repo, exit 10' '
	mkdir "$VENOM_TEST_ROOT/norepo" &&
	(
		cd "$VENOM_TEST_ROOT/norepo" &&
		if git rev-parse --git-dir >/dev/null 2>&1
		then
			echo "the temporary directory is inside a repository; cannot test" >&4
			exit 1
		fi &&
		test_expect_code 10 git venom-checkpoint --json >"$TRASH_DIRECTORY/err.json" &&
		test_expect_code 10 git venom-checkpoint list >"$TRASH_DIRECTORY/out" 2>"$TRASH_DIRECTORY/err"
	) &&
	test_json err.json \
		".error.code == \"unsupported.checkpoint_no_repo\"" \
		".error.data.path == \"$VENOM_TEST_ROOT/norepo\"" \
		"(.error.message | length) > 0" &&
	test_must_be_empty out &&
	grep "^error: .* is not in a git working tree" err &&
	grep "^hint: " err
'

test_expect_success 'a bare repository: unsupported.checkpoint_no_repo with why=bare, exit 10' '
	git init -q --bare "$VENOM_TEST_ROOT/bare.git" &&
	test_expect_code 10 git -C "$VENOM_TEST_ROOT/bare.git" venom-checkpoint --json >err.json &&
	test_json err.json \
		".error.code == \"unsupported.checkpoint_no_repo\"" \
		".error.data.why == \"bare\"" &&
	test_expect_code 10 git -C "$VENOM_TEST_ROOT/bare.git" venom-checkpoint 2>err &&
	grep "^error: .*bare repository" err &&
	git -C "$VENOM_TEST_ROOT/bare.git" for-each-ref refs/venom >refs &&
	test_must_be_empty refs
'

test_expect_success 'inside the .git directory there is no tree: exit 10' '
	(cd .git && test_expect_code 10 git venom-checkpoint --json) >err.json &&
	test_json err.json ".error.code == \"unsupported.checkpoint_no_repo\""
'

test_expect_success 'GIT_VENOM_TRACE=1 prints every git command on stderr, and nothing without it' '
	echo traced >>result.txt &&
	GIT_VENOM_TRACE=1 git venom-checkpoint --agent default --json >t.json 2>trace &&
	grep "^venom trace: git " trace &&
	grep "^venom trace: git update-ref " trace &&
	grep "^venom trace: git commit-tree " trace &&
	test_json t.json ".reused == false" &&
	echo untraced >>result.txt &&
	git venom-checkpoint --agent default --json >t.json 2>trace &&
	test_must_be_empty trace
'

test_done
