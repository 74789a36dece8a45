#!/usr/bin/env bash

test_description='the way back after a rollback that did not end as planned: every command venom prints for it works as printed (issue 13 item 8)'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# undo_cmd FILE: the command in FILE's first `...` (a hint line).
undo_cmd () {
	sed -n 's/^[^`]*`\([^`]*\)`.*/\1/p' "$1" | head -n 1
}

# run_printed CMD NAME: runs the plan CMD as printed (human output, in
# $OUT/NAME.plan), then the rollback command the plan prints to confirm
# it, as printed ($OUT/NAME.rb).
run_printed () {
	eval "$1" >"$OUT/$2.plan" 2>"$OUT/$2.plan.err" || {
		echo >&4 "the printed command failed: $1"
		cat "$OUT/$2.plan" "$OUT/$2.plan.err" >&4
		return 1
	}
	_rp_confirm=$(sed -n 's/^to do it: //p' "$OUT/$2.plan") &&
	test -n "$_rp_confirm" &&
	eval "$_rp_confirm" >"$OUT/$2.rb" 2>"$OUT/$2.rb.err" || {
		echo >&4 "the command the plan printed failed: $_rp_confirm"
		cat "$OUT/$2.rb" "$OUT/$2.rb.err" >&4
		return 1
	}
}

# A guarded tree (the main worktree: in_place) where turn t1 of $AG
# modified a.txt, deleted b.txt and created c.txt and sub/d.txt.
setup_guarded () {
	case_repo "$1" guarded &&
	echo a >a.txt && echo b >b.txt && git add . && git commit -qm init &&
	K1=$(ts) &&
	echo a2 >a.txt && rm b.txt && echo c >c.txt && mkdir sub && echo d >sub/d.txt &&
	K2=$(te)
}

for fp in rollback.deleted rollback.written
do
	test_expect_success "an interrupted rollback ($fp) in a guarded tree: the doctor's and the warning's command brings the tree back as it was" '
		setup_guarded killed-$fp &&
		tree_state >"$OUT/tree.before" &&
		P=$(plan $K1 | jq -r .plan) &&
		test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT='$fp' \
			git venom-rollback --agent $AG $K1 --plan $P --json >/dev/null 2>&1 &&
		tree_state >"$OUT/tree.killed" &&
		! test_cmp "$OUT/tree.before" "$OUT/tree.killed" >/dev/null 2>&1 &&
		SAFE=$(venom_log | jq -r "select(.type == \"rollback.started\") | .safety") &&
		git venom-doctor --json >"$OUT/doctor.json" &&
		jq -r ".checks[] | select(.id == \"checkpoints.rollbacks\") | .fix" "$OUT/doctor.json" >"$OUT/fix" &&
		DOCTOR=$(sed "s/.*confirm it: //" "$OUT/fix") &&
		test "$DOCTOR" = "git venom-plan --agent $AG $SAFE --restore files --outside overwrite" &&
		# The plan the doctor names closes the interrupted rollback, and
		# its warning names the same command.
		run_printed "$DOCTOR" doctor &&
		grep "failed.rollback_interrupted" "$OUT/doctor.plan.err" &&
		grep "^hint: " "$OUT/doctor.plan.err" >"$OUT/hint" &&
		test "$(undo_cmd "$OUT/hint")" = "$DOCTOR" &&
		tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after" &&
		git venom-doctor --json >"$OUT/doctor2.json" &&
		test_json "$OUT/doctor2.json" ".checks[] | select(.id == \"checkpoints.rollbacks\") | .level == \"ok\""
	'
done

test_expect_success 'a killed rollback the next plan closed: the doctor still says the tree was never put back, with the command that does it' '
	setup_guarded closed-killed &&
	tree_state >"$OUT/tree.before" &&
	P=$(plan $K1 | jq -r .plan) &&
	test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT=rollback.written \
		git venom-rollback --agent $AG $K1 --plan $P --json >/dev/null 2>&1 &&
	SAFE=$(venom_log | jq -r "select(.type == \"rollback.started\") | .safety") &&
	# A plan closes it (its warning, which a harness may have swallowed).
	plan $K1 >/dev/null 2>"$OUT/close.err" &&
	grep "failed.rollback_interrupted" "$OUT/close.err" &&
	git venom-doctor --json >"$OUT/doctor.json" &&
	test_json "$OUT/doctor.json" ".checks[] | select(.id == \"checkpoints.rollbacks\") | .level == \"warn\"" &&
	DOCTOR=$(jq -r ".checks[] | select(.id == \"checkpoints.rollbacks\") | .fix" "$OUT/doctor.json" | sed "s/.*confirm it: //") &&
	test "$DOCTOR" = "git venom-plan --agent $AG $SAFE --restore files --outside overwrite" &&
	run_printed "$DOCTOR" closed &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after" &&
	git venom-doctor --json >"$OUT/doctor2.json" &&
	test_json "$OUT/doctor2.json" ".checks[] | select(.id == \"checkpoints.rollbacks\") | .level == \"ok\""
'

test_expect_success 'the command the doctor prints for an interrupted rollback of another worktree runs it there' '
	setup_guarded other &&
	git worktree add -q --detach "../other wt" &&
	(
		cd "../other wt" &&
		K1=$(ts) && echo wt2 >a.txt && K2=$(te) &&
		P=$(plan $K1 --restore files | jq -r .plan) &&
		test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT=rollback.written \
			git venom-rollback --agent $AG $K1 --restore files --plan $P --json >/dev/null 2>&1
	) &&
	test "$(cat "../other wt/a.txt")" = a &&
	git venom-doctor --json >"$OUT/doctor.json" &&
	DOCTOR=$(jq -r ".checks[] | select(.id == \"checkpoints.rollbacks\") | .fix" "$OUT/doctor.json" | sed "s/.*confirm it: //") &&
	WT=$(cd "../other wt" && pwd -P) &&
	test "$DOCTOR" = "cd '\''$WT'\'' && git venom-plan --agent $AG k5 --restore files --outside overwrite" &&
	(run_printed "$DOCTOR" other) &&
	test "$(cat "../other wt/a.txt")" = wt2
'

test_expect_success 'failed.rollback_undone: the hint names a command that works as printed' '
	setup_guarded undone &&
	echo "model.dat filter=fake" >.gitattributes && echo v1 >model.dat &&
	git config filter.fake.clean cat && git config filter.fake.smudge cat &&
	K3=$(ck --reason manual) && echo v2 >model.dat && K4=$(ck --reason manual) &&
	git config filter.fake.required true && git config filter.fake.smudge false &&
	tree_state >"$OUT/tree.before" &&
	P=$(plan $K3 --outside overwrite --restore files | jq -r .plan) &&
	test_expect_code 1 git venom-rollback --agent $AG $K3 --outside overwrite --restore files --plan $P 2>"$OUT/err" &&
	grep "^error: the rollback failed and was undone" "$OUT/err" &&
	grep "^hint: " "$OUT/err" >"$OUT/hint" &&
	CMD=$(undo_cmd "$OUT/hint") &&
	SAFE=$(venom_log | jq -r "select(.type == \"rollback.started\") | .safety") &&
	test "$CMD" = "git venom-plan --agent $AG $SAFE --restore files --outside overwrite" &&
	run_printed "$CMD" undone &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after"
'

# The rollback's own checkpoint (RFC 7.4 step 6) makes the window from the
# safety checkpoint to it a rollback window; when its capture fails (here
# a clean filter that fails once, on the bytes the rollback wrote), there
# is none, and in a guarded tree every path the rollback wrote is outside
# to the undo's plan. The undo the result prints must work as printed.
test_expect_success 'a rollback whose own checkpoint could not be taken: the undo it prints works as printed' '
	case_repo noafter guarded &&
	echo "f.txt filter=once" >.gitattributes && echo base >base.txt && git add . && git commit -qm init &&
	echo "FAILME one" >f.txt && K1=$(ts) && echo two >f.txt && K2=$(te) &&
	cat >"$OUT/clean.sh" <<-EOF &&
	#!/bin/sh
	c=\$(cat)
	case "\$c" in *FAILME*) if test -f "$OUT/fail-once"; then rm -f "$OUT/fail-once"; exit 1; fi ;; esac
	printf "%s\\n" "\$c"
	EOF
	chmod +x "$OUT/clean.sh" &&
	git config filter.once.clean "\"$OUT/clean.sh\"" && git config filter.once.smudge cat &&
	git config filter.once.required true &&
	tree_state >"$OUT/tree.before" &&
	P=$(plan $K1 --restore files | jq -r .plan) &&
	: >"$OUT/fail-once" &&
	git venom-rollback --agent $AG $K1 --restore files --plan $P >"$OUT/rb" 2>"$OUT/rb.err" &&
	test_path_is_missing "$OUT/fail-once" &&
	grep "^warning: the rollback.s own checkpoint could not be taken" "$OUT/rb" &&
	test "$(cat f.txt)" = "FAILME one" &&
	CMD=$(sed -n "/to undo:\$/{n;s/^  //p;}" "$OUT/rb") &&
	SAFE=$(venom_log | jq -r "select(.type == \"rollback.started\") | .safety") &&
	test "$CMD" = "git venom-plan --agent $AG $SAFE --restore files --outside overwrite" &&
	run_printed "$CMD" noafter &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after"
'

# An agent archived after its rollback was interrupted can no longer be
# rolled back (conflict.invalid_transition), so the way back the doctor
# and the warning print would fail as printed: clean refuses it until a
# plan has closed the rollback record (RFC 7.6).
test_expect_success 'clean refuses an agent whose rollback was interrupted, and the way back still works as printed' '
	setup_guarded archived &&
	tree_state >"$OUT/tree.before" &&
	P=$(plan $K1 | jq -r .plan) &&
	test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT=rollback.written \
		git venom-rollback --agent $AG $K1 --plan $P --json >/dev/null 2>&1 &&
	venom_fails conflict.rollback_running "$OUT/clean.json" git venom-checkpoint clean --agent $AG --json &&
	test_expect_code 5 git venom-checkpoint clean --agent $AG 2>"$OUT/clean.err" &&
	grep "^hint: " "$OUT/clean.err" >"$OUT/hint" &&
	CMD=$(undo_cmd "$OUT/hint") &&
	DOCTOR=$(git venom-doctor --json | jq -r ".checks[] | select(.id == \"checkpoints.rollbacks\") | .fix" | sed "s/.*confirm it: //") &&
	test "$CMD" = "$DOCTOR" &&
	run_printed "$CMD" archived &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after" &&
	git venom-checkpoint clean --agent $AG --json >"$OUT/clean2.json" &&
	test_json "$OUT/clean2.json" ".agent == \"$AG\""
'


test_expect_success 'a rollback that holds its lock is running, not interrupted: the doctor gives no undo for it' '
	setup_guarded running &&
	P=$(plan $K1 | jq -r .plan) &&
	test_expect_code 137 env GIT_VENOM_TEST_FAILPOINT=rollback.written \
		git venom-rollback --agent $AG $K1 --plan $P --json >/dev/null 2>&1 &&
	lock=$(ls .git/venom/locks/rollback-*.lock) || return 1
	# a process that holds the rollback lock, as the running rollback does
	perl -MFcntl=:flock -e "open(F, \">>\", \$ARGV[0]) or die; flock(F, LOCK_EX) or die; \$| = 1; print \"held\n\"; sleep 30" "$lock" >"$OUT/held" &
	holder=$!
	test -n "$holder" &&
	test_when_finished "kill $holder 2>/dev/null || :" &&
	for i in 1 2 3 4 5 6 7 8 9 10; do test -s "$OUT/held" && break; sleep 0.2; done &&
	test -s "$OUT/held" &&
	git venom-doctor --json >"$OUT/doctor.json" &&
	test_json "$OUT/doctor.json" ".checks[] | select(.id == \"checkpoints.rollbacks\") | .level == \"ok\"" \
		".checks[] | select(.id == \"checkpoints.rollbacks\") | .message | test(\"running now: $AG to $K1\")" &&
	kill $holder || return 1
	wait $holder 2>/dev/null
	git venom-doctor --json >"$OUT/doctor2.json" &&
	test_json "$OUT/doctor2.json" ".checks[] | select(.id == \"checkpoints.rollbacks\") | .level == \"warn\""
'

test_done
