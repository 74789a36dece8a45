#!/usr/bin/env bash

test_description='field cases L, M of CASES.md: concurrency and locking, crashes mid-capture and mid-rollback'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# log_types prints the type of every log record, one a line.
log_types () {
	venom_log | jq -r .type
}

# --- L. Concurrency and locking ----------------------------------------------

br42_setup () {
	case_repo $1 &&
	echo a >a.txt && git add . && git commit -qm init && INIT=$(git rev-parse HEAD) &&
	K1=$(ts) && echo new >created.txt && echo a2 >a.txt && git add -A && git commit -qm agent &&
	AGENT=$(git rev-parse HEAD) && K2=$(te)
}

test_expect_success 'BR-42: a held index.lock when HEAD would move is conflict.index_locked before anything is written' '
	br42_setup br42 &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].head.moves == true" &&
	P=$(jq -r .plan "$OUT/plan.json") &&
	LOCK=$(git rev-parse --path-format=absolute --git-path index.lock) &&
	echo "someone else" >"$LOCK" &&
	tree_state >"$OUT/tree.0" && refs_state >"$OUT/refs.0" && log_types >"$OUT/log.0" && I0=$(index_hash) &&
	venom_fails conflict.index_locked "$OUT/r.json" git venom-rollback --agent $AG $K1 --plan $P --json &&
	test_json "$OUT/r.json" ".error.data.repo == \".\"" &&
	venom_fails conflict.index_locked "$OUT/p.json" plan $K1 &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	refs_state >"$OUT/refs.1" && test_cmp "$OUT/refs.0" "$OUT/refs.1" &&
	log_types >"$OUT/log.1" && test_cmp "$OUT/log.0" "$OUT/log.1" &&
	test "$(index_hash)" = "$I0" &&
	test "$(git log -1 --format=%s)" = agent && test -f created.txt && grep -x a2 a.txt &&
	test "$(cat "$LOCK")" = "someone else"
'

test_expect_success 'BR-42: with --keep-head the index is not written, so a held lock is no obstacle and stays' '
	cd "$TRASH_DIRECTORY/br42" && OUT="$TRASH_DIRECTORY/br42.out" &&
	LOCK=$(git rev-parse --path-format=absolute --git-path index.lock) &&
	rb $K1 --keep-head >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" ".repos[0].head.moves == false" &&
	test "$(git rev-parse HEAD)" = "$AGENT" &&
	test_path_is_missing created.txt && grep -x a a.txt &&
	test "$(cat "$LOCK")" = "someone else"
'

test_expect_success 'BR-42: a write that fails after the deletions is undone: failed.rollback_undone, tree, HEAD and index as before' '
	case_repo br42w &&
	printf "*.dat filter=fake\n" >.gitattributes &&
	git config filter.fake.clean cat && git config filter.fake.smudge cat && git config filter.fake.required true &&
	echo v1 >model.dat && echo a >a.txt && git add . && git commit -qm init &&
	K1=$(ts) && echo new >created.txt && echo v2 >model.dat && git add -A && git commit -qm agent &&
	AGENT=$(git rev-parse HEAD) && K2=$(te) &&
	git config filter.fake.smudge false &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].head.moves == true" \
		".repos[0].files == [{path: \"created.txt\", change: \"delete\", class: \"turn\"}, {path: \"model.dat\", change: \"modify\", class: \"turn\"}]" &&
	tree_state >"$OUT/tree.0" && I0=$(index_hash) &&
	venom_fails failed.rollback_undone "$OUT/r.json" \
		git venom-rollback --agent $AG $K1 --plan "$(jq -r .plan "$OUT/plan.json")" --json &&
	test_json "$OUT/r.json" ".error.data.safety | test(\"^k[0-9]+$\")" &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	test "$(cat created.txt)" = new &&
	test "$(git rev-parse HEAD)" = "$AGENT" && test "$(git symbolic-ref HEAD)" = refs/heads/main &&
	test "$(index_hash)" = "$I0" &&
	test_path_is_missing "$(git rev-parse --git-path index.lock)"
'

test_expect_success 'BR-43: another agent'"'"'s live turn in the tree is conflict.tree_shared; after it settles, its window is outside' '
	case_repo br43 guarded &&
	echo a >a.txt && echo b >b.txt && git add . && git commit -qm init &&
	K1=$(AG=a1 ts) &&
	echo a1-edit >>a.txt &&
	AG=a2 ts >/dev/null && echo a2-edit >>b.txt &&
	K2=$(AG=a1 te) &&
	venom_fails conflict.tree_shared "$OUT/shared.json" plan $K1 &&
	test_json "$OUT/shared.json" ".error.data.agents == [\"a2\"]" &&
	AG=a2 te >/dev/null &&
	# RFC 7.3: a window shared with another agent'"'"'s turn is a gap, so
	# both edits of that window are outside (the case'"'"'s script expected
	# a.txt restored; the RFC wins).
	venom_fails conflict.outside_edits "$OUT/outside.json" plan $K1 &&
	test_json "$OUT/outside.json" ".error.data.repos == [{repo: \".\", paths: [\"a.txt\", \"b.txt\"], changes: [\"modify\", \"modify\"]}]" &&
	rb $K1 --outside keep >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".shared_with == [\"a2\"]" ".repos[0].files == []" \
		".repos[0].left == [{path: \"a.txt\", reason: \"outside\"}, {path: \"b.txt\", reason: \"outside\"}]" &&
	grep a2-edit b.txt && grep a1-edit a.txt
'

test_expect_success 'BR-43: a1'"'"'s edit before a2 started is restored, a2'"'"'s is kept, and a2 gets the note' '
	case_repo br43m guarded &&
	echo a >a.txt && echo b >b.txt && git add . && git commit -qm init &&
	K1=$(AG=a1 ts) &&
	echo a1-edit >>a.txt &&
	AG=a1 ck --reason manual >/dev/null &&
	AG=a2 ts >/dev/null && echo a2-edit >>b.txt &&
	K2=$(AG=a1 te) && AG=a2 te >/dev/null &&
	venom_fails conflict.outside_edits "$OUT/outside.json" plan $K1 &&
	test_json "$OUT/outside.json" ".error.data.repos == [{repo: \".\", paths: [\"b.txt\"], changes: [\"modify\"]}]" &&
	rb $K1 --outside keep >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".shared_with == [\"a2\"]" \
		".repos[0].files == [{path: \"a.txt\", change: \"modify\", class: \"turn\"}]" \
		".repos[0].left == [{path: \"b.txt\", reason: \"outside\"}]" ".exact == true" &&
	grep a2-edit b.txt && ! grep a1-edit a.txt &&
	venom_log | jq -r "select(.type == \"note.pending\") | .agent" >"$OUT/noted" &&
	grep -x a2 "$OUT/noted"
'

test_expect_success 'BR-44: concurrent captures of one agent never hand out an id twice or overwrite a ref' '
	case_repo br44 &&
	echo line1 >f.txt && git add . && git commit -qm init &&
	K1=$(ts) && echo line2 >>f.txt &&
	for i in 1 2 3 4 5 6 7 8; do
		git venom-checkpoint --agent $AG --reason manual --json >"$OUT/cap$i.json" &
	done &&
	wait &&
	for i in 1 2 3 4 5 6 7 8; do
		test_json "$OUT/cap$i.json" ".checkpoint | test(\"^k[0-9]+$\")" || return 1
	done &&
	cat "$OUT"/cap?.json | jq -r .checkpoint | sort -u >"$OUT/ids" &&
	test_line_count = 1 "$OUT/ids" &&
	venom_log | jq -r "select(.type == \"checkpoint.taken\") | .checkpoint" | sort | uniq -d >"$OUT/dups" &&
	test_must_be_empty "$OUT/dups" &&
	git for-each-ref --format="%(objecttype)" refs/venom >"$OUT/types" && ! grep -v commit "$OUT/types" &&
	venom_fails conflict.turn_running "$OUT/running.json" plan $K1 &&
	K2=$(te) &&
	git venom-checkpoint list --agent $AG --json >"$OUT/list.json" &&
	test_json "$OUT/list.json" "[.checkpoints[] | select(.missing == true)] == []"
'

test_expect_success 'BR-44: a rollback racing a capture either runs or is conflict.checkpoint_pending, never half' '
	cd "$TRASH_DIRECTORY/br44" && OUT="$TRASH_DIRECTORY/br44.out" &&
	P=$(plan $K1 | jq -r .plan) &&
	tree_state >"$OUT/tree.0" &&
	{ git venom-checkpoint --agent $AG --reason manual --json >"$OUT/racer.json" & } &&
	git venom-rollback --agent $AG $K1 --plan $P --json >"$OUT/r.json"
	rc=$? &&
	wait &&
	test_json "$OUT/racer.json" ".checkpoint | test(\"^k[0-9]+$\")" &&
	if test $rc = 0
	then
		test_json "$OUT/r.json" ".exact == true" && echo line1 >"$OUT/expect" && test_cmp "$OUT/expect" f.txt
	else
		test $rc = 5 && test_json "$OUT/r.json" ".error.code == \"conflict.checkpoint_pending\"" &&
		tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
		rb $K1 >"$OUT/r.json" && echo line1 >"$OUT/expect" && test_cmp "$OUT/expect" f.txt
	fi
'

test_expect_success 'BR-44: losing the scratch dir loses nothing; a lost or moved ref is not_found.checkpoint, never an empty tree' '
	cd "$TRASH_DIRECTORY/br44" && OUT="$TRASH_DIRECTORY/br44.out" &&
	K3=$(ts) && echo line3 >>f.txt && K4=$(te) &&
	rm -rf "$(git rev-parse --path-format=absolute --git-path venom/tmp)" &&
	plan $K3 >"$OUT/plan.json" && test_json "$OUT/plan.json" ".plan | startswith(\"p2-\")" &&
	tree_state >"$OUT/tree.0" &&
	git update-ref -d "$(ref $K3)" &&
	venom_fails not_found.checkpoint "$OUT/gone.json" plan $K3 &&
	test_json "$OUT/gone.json" ".error.data.checkpoint == \"$K3\"" &&
	venom_fails not_found.checkpoint "$OUT/gone2.json" git venom-rollback --agent $AG $K3 --plan p1-0000000000000000 --json &&
	git update-ref "$(ref $K1)" "$(ref $K4)" &&
	venom_fails not_found.checkpoint "$OUT/moved.json" plan $K1 &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	grep -x line1 f.txt
'

test_expect_success 'BR-46: the person'"'"'s checkout.workers does not make a half-restored tree' '
	case_repo br46 &&
	mkdir -p a/b c &&
	for i in $(seq 1 200); do echo $i >a/b/f$i && echo $i >c/g$i || return 1; done &&
	git add . && git commit -qm init &&
	git config checkout.workers 8 && git config checkout.thresholdForParallelism 1 &&
	K1=$(ts) && rm -rf a c && K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" ".repos[0].files | length == 400" &&
	git ls-files >"$OUT/tracked" && (find a c -type f | sort) >"$OUT/found" &&
	sort "$OUT/tracked" >"$OUT/tracked.sorted" && test_cmp "$OUT/tracked.sorted" "$OUT/found" &&
	git status --porcelain >"$OUT/status" && test_must_be_empty "$OUT/status"
'

# --- M. Crash mid-restore and integrity --------------------------------------

# The failpoints of a step, from the source: a new step cannot be missed.
failpoints () {
	grep -rhoE "failpoint\\.Hit\\(\"$1[^\"]*\"\\)" --include="*.go" --exclude="*_test.go" "$VENOM_SRC" |
	sed "s/failpoint.Hit(\"//; s/\")//" | sort -u
}

test_expect_success 'BR-47: a capture killed at any step leaves no renamed .git and no lock in the person'"'"'s .git' '
	case_repo br47 &&
	echo a >a && git add . && git commit -qm init &&
	git init -q nested && echo n >nested/n && git -C nested add n && git -C nested commit -qm n &&
	for i in $(seq 1 40); do random_bytes 20000 blob$i $i || return 1; done &&
	K1=$(ts) &&
	failpoints "capture\\." >"$OUT/fps" && failpoints "journal\\." >>"$OUT/fps" &&
	test_line_count -ge 5 "$OUT/fps" &&
	n=0 &&
	for fp in $(cat "$OUT/fps"); do
		n=$((n + 1)) && echo x$n >>blob1 &&
		test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT=$fp git venom-checkpoint --agent $AG --reason manual --json >/dev/null 2>&1 &&
		test -d .git && test -d nested/.git &&
		git status --porcelain >/dev/null && git -C nested status >/dev/null &&
		(find . -name ".git_*"; find .git nested/.git -name "*.lock" ! -path "*/venom/locks/*") >"$OUT/leftovers" &&
		test_must_be_empty "$OUT/leftovers" &&
		git venom-checkpoint list --agent $AG --json >"$OUT/list.json" || {
			echo >&4 "after a kill at $fp"
			return 1
		}
	done &&
	venom_fails conflict.turn_running "$OUT/running.json" plan $K1 &&
	K3=$(te) &&
	git show "$(ref $K3):blob1" >"$OUT/blob1" && test_cmp blob1 "$OUT/blob1" &&
	rb $K1 >"$OUT/r.json" && test_json "$OUT/r.json" ".exact == true" &&
	git show "$(ref $K1):blob1" >"$OUT/blob1.k1" && test_cmp "$OUT/blob1.k1" blob1 && test_path_is_dir nested/.git
'

br47_setup () {
	case_repo $1 &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts) && echo new >created.txt && echo a2 >a && git add -A && git commit -qm agent &&
	AGENT=$(git rev-parse HEAD) && echo u >u.txt && K2=$(te)
}

test_expect_success 'BR-47: a rollback killed at any step is closed as failed.rollback_interrupted, never resumed; the safety checkpoint brings the tree back' '
	# The steps of a submodule (rollback.sub-*) are not in this tree of one
	# repository: rollback/crash_test.go TestFailpointsWithSubmodules
	# kills at each of them.
	failpoints "rollback\\." | grep -v "^rollback\\.sub-" >"$TRASH_DIRECTORY/rollback.fps" &&
	test_line_count -ge 5 "$TRASH_DIRECTORY/rollback.fps" &&
	for fp in $(cat "$TRASH_DIRECTORY/rollback.fps"); do
		br47_setup br47-$fp &&
		tree_state >"$OUT/tree.before" && git status --porcelain >"$OUT/status.before" &&
		P=$(plan $K1 | jq -r .plan) &&
		test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT=$fp git venom-rollback --agent $AG $K1 --plan $P --json >/dev/null 2>&1 &&
		test_path_is_missing .git/index.lock &&
		SAFE=$(venom_log | jq -r "select(.type == \"checkpoint.taken\" and .reason == \"pre_rollback\") | .checkpoint") &&
		test -n "$SAFE" &&
		tree_state >"$OUT/tree.killed" &&
		plan $K1 >"$OUT/next.json" 2>"$OUT/next.err" &&
		tree_state >"$OUT/tree.next" && test_cmp "$OUT/tree.killed" "$OUT/tree.next" &&
		if venom_log | jq -e "select(.type == \"rollback.started\")" >/dev/null
		then
			venom_log | jq -c "select(.type == \"rollback.ended\") | {ok, code, safety}" >"$OUT/ended" &&
			echo "{\"ok\":false,\"code\":\"failed.rollback_interrupted\",\"safety\":\"$SAFE\"}" >"$OUT/expect" &&
			test_cmp "$OUT/expect" "$OUT/ended" &&
			grep "failed.rollback_interrupted" "$OUT/next.err" && grep "$SAFE" "$OUT/next.err"
		fi &&
		git venom-checkpoint list --agent $AG --json >"$OUT/list.json" &&
		test_json "$OUT/list.json" "[.checkpoints[].checkpoint] | index(\"$SAFE\") != null" &&
		rb $SAFE --restore files >"$OUT/undo.json" &&
		tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after" &&
		test "$(git rev-parse HEAD)" = $AGENT && test "$(git symbolic-ref HEAD)" = refs/heads/main &&
		git status --porcelain >"$OUT/status.after" && test_cmp "$OUT/status.before" "$OUT/status.after" || {
			echo >&4 "after a kill at $fp"
			return 1
		}
	done
'

test_expect_success 'BR-47: git venom-rollback killed with SIGKILL takes its git-venom-rollback child with it' '
	# git runs git-venom-rollback as a child and waits for it; a SIGKILL
	# cannot be passed on, and the child used to go on writing. Killed
	# here at the first batch written, through the exec failpoint, by pid
	# (the test shell writes git'"'"'s pid once it has started it).
	br47_setup br47-git-killed &&
	tree_state >"$OUT/tree.before" &&
	P=$(plan $K1 | jq -r .plan) &&
	rm -f "$OUT/git.pid" &&
	(
		# A job of its own, as a shell with job control runs the command
		# a person types: git leads its process group.
		set -m
		GIT_VENOM_TEST_FAILPOINT=rollback.batch-written:exec \
		GIT_VENOM_TEST_FAILPOINT_EXEC="echo \$PPID >\"$OUT/child.pid\"; while ! test -s \"$OUT/git.pid\"; do sleep 0.01; done; kill -9 \$(cat \"$OUT/git.pid\")" \
		git venom-rollback --agent $AG $K1 --plan $P --json >"$OUT/killed.json" 2>&1 &
		echo $! >"$OUT/git.pid"
		wait $!
		test $? = 137
	) &&
	# The child goes with git: its parent-death signal arrives a moment
	# after git is gone (longer on a loaded machine, where a command run
	# at once could still find its lock held), so wait for it, 10 s at
	# most; gone, or a zombie no one has reaped yet, it holds no lock.
	test -s "$OUT/child.pid" &&
	child=$(cat "$OUT/child.pid") &&
	i=0 &&
	while st=$(ps -o stat= -p "$child" 2>/dev/null) && test -n "$st" && test "${st#Z}" = "$st" && test $i -lt 500
	do
		i=$((i + 1)) && sleep 0.02
	done &&
	! { st=$(ps -o stat= -p "$child" 2>/dev/null) && test -n "$st" && test "${st#Z}" = "$st"; } &&
	# The next command finds the tree unlocked, and closes the rollback as
	# killed (an orphan that went on would have ended it itself, ok).
	plan $K1 >"$OUT/next.json" 2>"$OUT/next.err" &&
	grep "failed.rollback_interrupted" "$OUT/next.err" &&
	venom_log | jq -c "select(.type == \"rollback.ended\") | {ok, code}" >"$OUT/ended" &&
	echo "{\"ok\":false,\"code\":\"failed.rollback_interrupted\"}" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/ended" &&
	tree_state >"$OUT/tree.next" && ! test_cmp "$OUT/tree.before" "$OUT/tree.next" >/dev/null
'

test_expect_success 'BR-47: a checkpoint a git hook starts in the background outlives the hook' '
	# The hook'"'"'s shell is the checkpoint'"'"'s parent, not git: its end must
	# not take the checkpoint with it (GIT_EXEC_PATH is set all the same).
	case_repo br47-hook-bg &&
	echo a >a && git add a && git commit -qm init &&
	{
		echo "#!/bin/sh" &&
		echo "GIT_VENOM_TEST_FAILPOINT=capture.status-done:exec GIT_VENOM_TEST_FAILPOINT_EXEC=\"sleep 1\" git-venom-checkpoint --agent me --label \"after commit\" >\"$OUT/bg.out\" 2>&1 &" &&
		echo "echo \$! >\"$OUT/bg.pid\"" &&
		echo "sleep 0.3 # the hook'"'"'s other work, done before the checkpoint"
	} >.git/hooks/post-commit &&
	chmod +x .git/hooks/post-commit &&
	echo b >b && git add b &&
	( set -m; git commit -qm two & wait $! ) &&
	test -s "$OUT/bg.pid" &&
	while kill -0 $(cat "$OUT/bg.pid") 2>/dev/null; do sleep 0.1; done &&
	grep "took checkpoint k1 of me" "$OUT/bg.out" &&
	git venom-checkpoint list --agent me >"$OUT/bg.list" &&
	grep "after commit" "$OUT/bg.list"
'

test_expect_success 'BR-48: a stale lock on the next checkpoint ref never lets a rollback write without a safety ref' '
	case_repo br48 &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts) && echo precious >>a && echo new >n && K2=$(te) &&
	P=$(plan $K1 | jq -r .plan) &&
	next=$(( ${K2#k} + 1 )) &&
	mkdir -p .git/refs/venom/checkpoints/$AG && : >.git/refs/venom/checkpoints/$AG/$next.lock &&
	tree_state >"$OUT/tree.0" &&
	git venom-rollback --agent $AG $K1 --plan $P --json >"$OUT/r.json"
	rc=$? &&
	if test $rc = 0
	then
		SAFE=$(jq -r .safety "$OUT/r.json") &&
		test "$SAFE" != "k$next" &&
		git show "$(ref $SAFE):a" >"$OUT/a" && printf "a\nprecious\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/a" &&
		git show "$(ref $SAFE):n" >"$OUT/n" && echo new >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/n" &&
		venom_log | jq -r "select(.type == \"checkpoint.taken\" and .reason == \"pre_rollback\") | .checkpoint" >"$OUT/logged" &&
		echo $SAFE >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/logged"
	else
		test_json "$OUT/r.json" ".error.code | startswith(\"failed.\")" &&
		tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1"
	fi &&
	test_path_is_file .git/refs/venom/checkpoints/$AG/$next.lock
'

test_expect_success SANITY 'BR-48: when no object can be written, the rollback fails with nothing changed' '
	case_repo br48ro &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts) && echo precious >>a && echo new >n && K2=$(te) &&
	P=$(plan $K1 | jq -r .plan) &&
	tree_state >"$OUT/tree.0" && refs_state >"$OUT/refs.0" &&
	chmod a-w .git/objects/* .git/objects &&
	test_when_finished "chmod -R u+w .git/objects" &&
	git venom-rollback --agent $AG $K1 --plan $P --json >"$OUT/r.json"
	rc=$? &&
	chmod -R u+w .git/objects &&
	test $rc = 1 && test_json "$OUT/r.json" ".error.code == \"failed.checkpoint_git\"" &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	refs_state >"$OUT/refs.1" && test_cmp "$OUT/refs.0" "$OUT/refs.1" &&
	! venom_log | jq -e "select(.type == \"rollback.started\")" >/dev/null
'

test_done
