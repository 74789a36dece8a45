#!/usr/bin/env bash

test_description='git venom-checkpoint show and diff: records, files changed, patches'

. "$(dirname "$0")/test-lib.sh"

test_expect_success 'setup: a repository with history and three checkpoints' '
	test_commit initial keep.txt "keep" &&
	printf "1\n2\n3\n" >lines.txt &&
	echo gone >gone.txt &&
	git add lines.txt gone.txt &&
	test_commit more more.txt "more" &&
	git venom-checkpoint --reason turn_start --json >k1.json &&
	printf "1\ntwo\n3\n4\n" >lines.txt &&
	rm gone.txt &&
	echo fresh >new.txt &&
	printf "\000\001\002" >blob.bin &&
	git venom-checkpoint --reason turn_end --label "after t1" --json >k2.json &&
	echo later >>new.txt &&
	git venom-checkpoint --json >k3.json &&
	test_json k3.json ".checkpoint == \"k3\""
'

test_expect_success 'show --json: the listing item, since the previous checkpoint, and its files' '
	git venom-checkpoint show k2 --json >s.json &&
	jq -c "del(.since, .files)" s.json >actual &&
	git venom-checkpoint list --json >l.json &&
	jq -c ".checkpoints[] | select(.checkpoint == \"k2\") | {agent: \"default\"} + ." l.json >expect &&
	test_cmp expect actual &&
	test_json s.json \
		".agent == \"default\"" \
		".checkpoint == \"k2\"" \
		".label == \"after t1\"" \
		".since == \"k1\"" &&
	jq -c ".files[]" s.json >actual &&
	cat >expect <<-\EOF &&
	{"repo":".","path":"blob.bin","change":"create","added":0,"removed":0,"binary":true}
	{"repo":".","path":"gone.txt","change":"delete","added":0,"removed":1,"binary":false}
	{"repo":".","path":"lines.txt","change":"modify","added":2,"removed":1,"binary":false}
	{"repo":".","path":"new.txt","change":"create","added":1,"removed":0,"binary":false}
	EOF
	test_cmp expect actual
'

test_expect_success 'show of the first checkpoint compares with HEAD' '
	git venom-checkpoint show k1 --json >s.json &&
	short=$(git rev-parse --short=10 HEAD) &&
	test_json s.json ".since == \"HEAD $short\"" ".files == []"
'

# refs.ParseID reads a bare n as k<n>, and list --before 2 works, but
# Find looks the raw string up in the log.
test_expect_success 'show 2 means k2, as list --before 2 does' '
	git venom-checkpoint show 2 --json >s.json &&
	test_json s.json ".checkpoint == \"k2\""
'

test_expect_success 'show, human output' '
	git venom-checkpoint show k2 >out &&
	commit=$(git rev-parse refs/venom/checkpoints/default/2) &&
	head=$(git rev-parse HEAD) &&
	at=$(jq -r .at k2.json) &&
	cat >expect <<-EOF &&
	checkpoint k2 of default
	reason:       turn_end
	turn:         t1
	through turn: t1
	at:           $at
	label:        after t1
	tree:         $TRASH_DIRECTORY
	commit:       $commit
	head:         $head (main)

	changed since k1: 4 file(s)
	  create binary       blob.bin
	  delete +0 -1        gone.txt
	  modify +2 -1        lines.txt
	  create +1 -0        new.txt
	EOF
	test_cmp expect out
'

test_expect_success 'show: errors' '
	test_expect_code 3 git venom-checkpoint show k9 --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\"" ".error.data.checkpoint == \"k9\"" &&
	test_expect_code 2 git venom-checkpoint show x1 --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.checkpoint\"" &&
	test_expect_code 2 git venom-checkpoint show --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 2 git venom-checkpoint show k1 k2 --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 3 git venom-checkpoint show k9 >out 2>err &&
	test_must_be_empty out &&
	grep "^error: agent default has no checkpoint k9$" err &&
	grep "^hint: " err
'

test_expect_success 'diff FROM TO compares two checkpoints' '
	git venom-checkpoint diff k1 k2 --json >d.json &&
	test_json d.json ".from == \"k1\"" ".to == \"k2\"" "has(\"patch\") | not" &&
	jq -c ".files" d.json >actual &&
	git venom-checkpoint show k2 --json | jq -c ".files" >expect &&
	test_cmp expect actual
'

test_expect_success 'diff FROM alone compares with the current files, uncommitted and untracked' '
	echo "not yet captured" >untracked.txt &&
	git venom-checkpoint diff k3 --json >d.json &&
	test_json d.json ".from == \"k3\"" ".to == \"files\"" &&
	jq -c ".files[]" d.json >actual &&
	echo "{\"repo\":\".\",\"path\":\"untracked.txt\",\"change\":\"create\",\"added\":1,\"removed\":0,\"binary\":false}" >expect &&
	test_cmp expect actual
'

test_expect_success 'diff against the current files changes nothing: no ref, no log record, same index' '
	git for-each-ref >refs.out &&
	venom_log >log.out &&
	cp .git/index index.out &&
	git venom-checkpoint diff k1 --json >/dev/null &&
	git for-each-ref >actual &&
	test_cmp refs.out actual &&
	venom_log >actual &&
	test_cmp log.out actual &&
	cmp .git/index index.out
'

test_expect_success 'diff --path adds the patch of that path, as git diff prints it' '
	git venom-checkpoint diff k1 k2 --path lines.txt --json >d.json &&
	jq -j ".patch.text" d.json >actual &&
	git -c diff.noprefix=false diff refs/venom/checkpoints/default/1 refs/venom/checkpoints/default/2 -- lines.txt >expect &&
	test_cmp expect actual &&
	bytes=$(wc -c <expect | tr -d " ") &&
	test_json d.json ".patch.truncated == false" ".patch.bytes == $bytes"
'

test_expect_success 'diff, human output, with a patch' '
	git venom-checkpoint diff k1 k2 --path lines.txt >out &&
	head -n 5 out >actual &&
	cat >expect <<-\EOF &&
	k1..k2: 4 file(s)
	  create binary       blob.bin
	  delete +0 -1        gone.txt
	  modify +2 -1        lines.txt
	  create +1 -0        new.txt
	EOF
	test_cmp expect actual &&
	grep "^diff --git a/lines.txt b/lines.txt$" out &&
	grep "^+two$" out &&
	git venom-checkpoint diff k3 >out &&
	head -n 1 out >actual &&
	echo "k3..the current files: 1 file(s)" >expect &&
	test_cmp expect actual
'

test_expect_success 'diff: errors' '
	test_expect_code 2 git venom-checkpoint diff --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 2 git venom-checkpoint diff k1 k2 k3 --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\"" &&
	test_expect_code 3 git venom-checkpoint diff k1 k7 --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\"" ".error.data.checkpoint == \"k7\"" &&
	test_expect_code 3 git venom-checkpoint diff k8 --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\""
'

test_expect_success 'show and diff of a checkpoint whose ref is gone: not_found.checkpoint (exit 3)' '
	git update-ref -d refs/venom/checkpoints/default/3 &&
	test_expect_code 3 git venom-checkpoint show k3 --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\"" &&
	test_expect_code 3 git venom-checkpoint diff k3 --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\"" &&
	test_expect_code 3 git venom-checkpoint diff k1 k3 --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\""
'

test_expect_success 'a checkpoint of another worktree is not_found here, naming its tree' '
	git worktree add -q "$VENOM_TEST_ROOT/other" &&
	(cd "$VENOM_TEST_ROOT/other" && echo x >x.txt && git venom-checkpoint --agent wt --json) >w.json &&
	test_json w.json ".checkpoint == \"k1\"" &&
	test_expect_code 3 git venom-checkpoint show k1 --agent wt --json >err.json &&
	test_json err.json ".error.code == \"not_found.checkpoint\"" \
		".error.data.tree == \"$VENOM_TEST_ROOT/other\"" &&
	(cd "$VENOM_TEST_ROOT/other" && git venom-checkpoint show k1 --agent wt --json) >s.json &&
	test_json s.json ".checkpoint == \"k1\""
'

test_expect_success 'a checkpoint of an unborn HEAD is shown against the empty tree' '
	git init -q "$VENOM_TEST_ROOT/unborn" &&
	(
		cd "$VENOM_TEST_ROOT/unborn" &&
		echo a >a.txt &&
		git venom-checkpoint --json >"$VENOM_TEST_ROOT/u.json" &&
		git venom-checkpoint show k1 --json
	) >s.json &&
	test_json "$VENOM_TEST_ROOT/u.json" ".repos[0].head == null" &&
	test_json s.json ".since == \"the empty tree\"" \
		".files == [{\"repo\":\".\",\"path\":\"a.txt\",\"change\":\"create\",\"added\":1,\"removed\":0,\"binary\":false}]"
'

test_done
