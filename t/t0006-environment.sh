#!/usr/bin/env bash

test_description='git venom-checkpoint under hooks, rebase -x, exported GIT_* variables, crashes, locks and concurrency'

. "$(dirname "$0")/test-lib.sh"

take () {
	git venom-checkpoint --agent a "$@" --json >take.json
}

test_expect_success 'setup' '
	test_commit one &&
	test_commit two &&
	test_commit three
'

test_expect_success 'a capture from a pre-commit hook (GIT_INDEX_FILE exported) works and leaves the commit alone' '
	write_hook () {
		mkdir -p .git/hooks &&
		printf "#!/bin/sh\n%s\n" "$1" >.git/hooks/pre-commit &&
		chmod +x .git/hooks/pre-commit
	} &&
	write_hook "env >\"\$VENOM_TEST_ROOT/hook-env\"; exec git venom-checkpoint --agent hook --json >\"\$VENOM_TEST_ROOT/hook.json\"" &&
	test_when_finished "rm -f .git/hooks/pre-commit" &&
	echo staged >hooked.txt &&
	git add hooked.txt &&
	echo "not staged" >>hooked.txt &&
	echo untracked >loose.txt &&
	test_tick &&
	git commit -q -m hooked &&
	grep "^GIT_INDEX_FILE=" "$VENOM_TEST_ROOT/hook-env" &&
	test_json "$VENOM_TEST_ROOT/hook.json" ".agent == \"hook\"" ".checkpoint == \"k1\"" &&
	git cat-file blob refs/venom/checkpoints/hook/1:hooked.txt >actual &&
	printf "staged\nnot staged\n" >expect &&
	test_cmp expect actual &&
	git cat-file blob refs/venom/checkpoints/hook/1:loose.txt &&
	git cat-file blob HEAD:hooked.txt >actual &&
	echo staged >expect &&
	test_cmp expect actual &&
	test_must_fail git cat-file -e HEAD:loose.txt &&
	git diff --cached --quiet
'

test_expect_success 'git rebase -x can take a checkpoint at each step' '
	git checkout -q -- hooked.txt &&
	rm loose.txt &&
	test_tick &&
	git rebase -q -x "git venom-checkpoint --agent rb --label step >/dev/null" HEAD~3 &&
	git venom-checkpoint list --agent rb --json >l.json &&
	test_json l.json ".checkpoints | length == 3" &&
	for n in 1 2 3; do
		git rev-parse refs/venom/checkpoints/rb/$n^ || return 1
	done >parents.out &&
	git rev-list --reverse HEAD~3..HEAD >expect &&
	test_cmp expect parents.out
'

test_expect_success 'an exported GIT_INDEX_FILE is not used and not created' '
	echo x >>one.t &&
	GIT_INDEX_FILE="$VENOM_TEST_ROOT/bogus-index" take &&
	test_path_is_missing "$VENOM_TEST_ROOT/bogus-index" &&
	git cat-file blob refs/venom/checkpoints/a/1:one.t >actual &&
	test_cmp one.t actual
'

test_expect_success 'git --git-dir/--work-tree from elsewhere names the tree' '
	echo y >>one.t &&
	(cd "$VENOM_TEST_ROOT" && git --git-dir="$TRASH_DIRECTORY/.git" --work-tree="$TRASH_DIRECTORY" venom-checkpoint --agent a --json) >take.json &&
	test_json take.json ".checkpoint == \"k2\"" ".repos[0].path == \"$TRASH_DIRECTORY\""
'

test_expect_success 'venom.checkpoints.enabled=false stops automatic capture only; an explicit one works' '
	echo z >>one.t &&
	git -c venom.checkpoints.enabled=false venom-checkpoint --agent a --json >take.json &&
	test_json take.json ".checkpoint == \"k3\"" ".reused == false"
'

test_expect_success 'a capture leaves no private index behind' '
	tmp=$(git rev-parse --path-format=absolute --git-path venom/tmp) &&
	find "$tmp" -type f >left.out &&
	test_must_be_empty left.out
'

# A crash at each step of a capture (GIT_VENOM_TEST_FAILPOINT kills the
# process with SIGKILL there; git reports exit 137) must leave the user's
# state as it was, and the next capture must work and never reuse an id.
for step in capture.index-copied capture.status-done capture.index-updated \
	capture.commit-made capture.ref-created journal.before-append
do
	test_expect_success "a crash at $step changes nothing the user sees; the next capture works" '
		echo "before $step" >>one.t &&
		cp .git/index index.out &&
		git rev-parse HEAD >head.out &&
		git for-each-ref refs/heads refs/tags >refs.out &&
		git venom-checkpoint list --agent a --json >before.json &&
		test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT=$step git venom-checkpoint --agent a --json &&
		cmp .git/index index.out &&
		git rev-parse HEAD >actual &&
		test_cmp head.out actual &&
		git for-each-ref refs/heads refs/tags >actual &&
		test_cmp refs.out actual &&
		git venom-checkpoint list --agent a --json >after.json &&
		jq -c .checkpoints before.json >expect &&
		jq -c .checkpoints after.json >actual &&
		test_cmp expect actual &&
		take &&
		test_json take.json ".reused == false" &&
		k=$(jq -r ".checkpoint | ltrimstr(\"k\")" take.json) &&
		git rev-parse refs/venom/checkpoints/a/$k >expect &&
		jq -r ".repos[0].commit" take.json >actual &&
		test_cmp expect actual &&
		git venom-checkpoint list --agent a --json >l.json &&
		jq -r ".checkpoints[].checkpoint" l.json | sort | uniq -d >dups.out &&
		test_must_be_empty dups.out
	'
done

# A killed capture cannot remove its private index; a later capture removes
# such leftovers once they were made an hour ago (a younger one may belong
# to a capture that is still running). Made: the ctime, since a private
# index keeps the user's index mtime on purpose; an old mtime alone keeps
# it. A ctime cannot be set back, so the hour is lowered for the test.
test_expect_success 'private indexes left by crashed captures are removed once made an hour ago' '
	tmp=$(git rev-parse --path-format=absolute --git-path venom/tmp) &&
	find "$tmp" -type f >crashed.out &&
	test_line_count = 3 crashed.out &&
	find "$tmp" -type f -exec touch -t 200001010000 {} + &&
	echo after-crashes >>one.t &&
	take &&
	find "$tmp" -type f >kept.out &&
	test_cmp crashed.out kept.out &&
	echo again >>one.t &&
	(export GIT_VENOM_TEST_TMP_AGE=0s && take) &&
	find "$tmp" -type f >left.out &&
	test_must_be_empty left.out
'

test_expect_success 'a torn last log line is ignored by readers and cut off by the next append' '
	log=$(git rev-parse --path-format=absolute --git-common-dir)/venom/log.jsonl &&
	printf "{\"seq\":99999,\"type\":\"checkpoint.tak" >>"$log" &&
	git venom-checkpoint list --agent a --json >l.json &&
	test_json l.json ".checkpoints | length > 0" &&
	echo torn >>one.t &&
	take &&
	test_json take.json ".reused == false" &&
	jq -c . "$log" >/dev/null &&
	! grep -F "\"seq\":99999" "$log"
'

# The lock an agent's captures take is an OS advisory lock on a file under
# <git common dir>/venom/locks/ (DESIGN.md section 2). Holding it from
# another process makes the next capture wait, deterministically, until
# venom.checkpoints.timeout runs out.
hold_lock () {
	lockfile=$(git rev-parse --path-format=absolute --git-common-dir)/venom/locks/agent-$1.lock
	rm -f "$VENOM_TEST_ROOT/locked" "$VENOM_TEST_ROOT/release"
	perl -e '
		use Fcntl qw(:flock);
		open(my $f, ">>", $ARGV[0]) or die "open: $!";
		flock($f, LOCK_EX) or die "flock: $!";
		open(my $r, ">", $ARGV[1]) or die; close($r);
		for (1..600) { last if -e $ARGV[2]; select(undef, undef, undef, 0.1); }
	' "$lockfile" "$VENOM_TEST_ROOT/locked" "$VENOM_TEST_ROOT/release" &
	lock_pid=$!
	while ! test -e "$VENOM_TEST_ROOT/locked"; do
		kill -0 $lock_pid 2>/dev/null || return 1
		sleep 0.1 2>/dev/null || sleep 1
	done
}

release_lock () {
	: >"$VENOM_TEST_ROOT/release"
	wait $lock_pid
}

test_expect_success 'a capture that cannot get its lock in time is timeout.checkpoint (exit 7), and logged' '
	hold_lock a &&
	test_when_finished release_lock &&
	echo waiting >>one.t &&
	git venom-checkpoint list --agent a --json >l.json &&
	test_json l.json ".pending == true" &&
	test_expect_code 7 git -c venom.checkpoints.timeout=1s venom-checkpoint --agent a --json >err.json &&
	test_json err.json ".error.code == \"timeout.checkpoint\"" ".error.data.repo == \".\"" &&
	venom_log | tail -n 1 >last &&
	test_json last ".type == \"checkpoint.failed\"" ".agent == \"a\"" ".code == \"timeout.checkpoint\""
'

test_expect_success 'once the lock is free, pending is false and captures work' '
	git venom-checkpoint list --agent a --json >l.json &&
	test_json l.json ".pending == false" &&
	take &&
	test_json take.json ".reused == false"
'

test_expect_success 'another agent is not held up by that lock' '
	hold_lock a &&
	test_when_finished release_lock &&
	git -c venom.checkpoints.timeout=30s venom-checkpoint --agent other --json >o.json &&
	test_json o.json ".agent == \"other\"" ".checkpoint == \"k1\""
'

test_expect_success 'two agents capturing at once, four times each: one checkpoint and three reuses each' '
	echo concurrent >conc.txt &&
	for i in 1 2 3 4; do
		git venom-checkpoint --agent p --json >p$i.json &
		git venom-checkpoint --agent q --json >q$i.json &
	done &&
	wait &&
	for x in p q; do
		cat ${x}1.json ${x}2.json ${x}3.json ${x}4.json >all.out &&
		jq -s -c "[.[] | .checkpoint] | unique" all.out >actual &&
		echo "[\"k1\"]" >expect &&
		test_cmp expect actual &&
		jq -s "[.[] | select(.reused == false)] | length" all.out >actual &&
		echo 1 >expect &&
		test_cmp expect actual || return 1
	done &&
	git for-each-ref refs/venom/checkpoints/p refs/venom/checkpoints/q >refs.out &&
	test_line_count = 2 refs.out
'

test_expect_success 'one agent capturing different trees at once: distinct ids, each ref as logged' '
	for i in 1 2 3 4 5 6; do
		(echo $i >>conc.txt && git venom-checkpoint --agent r --json >r$i.json) &
	done &&
	wait &&
	cat r1.json r2.json r3.json r4.json r5.json r6.json >all.out &&
	jq -s "[.[] | select(.reused == false) | .checkpoint] | length" all.out >made.out &&
	jq -s "[.[] | select(.reused == false) | .checkpoint] | unique | length" all.out >actual &&
	test_cmp made.out actual &&
	git for-each-ref refs/venom/checkpoints/r | wc -l | tr -d " " >actual &&
	test_cmp made.out actual &&
	git venom-checkpoint list --agent r --json >l.json &&
	jq -r ".checkpoints[] | \"\(.checkpoint | ltrimstr(\"k\")) \(.repos[0].commit)\"" l.json >logged.out &&
	while read n commit; do
		test "$(git rev-parse refs/venom/checkpoints/r/$n)" = "$commit" || return 1
	done <logged.out &&
	venom_log >log.out &&
	jq -r .seq log.out >seqs.out &&
	sort -n -u seqs.out >actual &&
	test_cmp seqs.out actual
'

# sub/ holds a tracked file: run from a folder that holds none, every
# command is refused (unsupported.checkpoint_no_repo, why not_tracked).
test_expect_success 'edit records the paths an edit tool wrote, in the open turn' '
	take --reason turn_start &&
	turn=$(jq -r .turn take.json) &&
	mkdir -p sub && echo t >sub/tracked.c && git add sub/tracked.c &&
	(cd sub && git venom-checkpoint edit --agent a --path x.c --path "$TRASH_DIRECTORY/one.t" --json) >e.json &&
	test_json e.json ".agent == \"a\"" ".turn == \"$turn\"" \
		".paths == [\"one.t\", \"sub/x.c\"]" ".path == \"$TRASH_DIRECTORY\"" &&
	venom_log | tail -n 1 >last &&
	test_json last ".type == \"edit\"" ".paths == [\"one.t\", \"sub/x.c\"]"
'

test_expect_success 'edit: a path outside the tree is invalid_params.path; no --path is a usage error' '
	test_expect_code 2 git venom-checkpoint edit --agent a --path /etc/hosts --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.path\"" &&
	test_expect_code 2 git venom-checkpoint edit --agent a --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.usage\""
'

test_done
