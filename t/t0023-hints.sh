#!/usr/bin/env bash

test_description='every hint a plan or rollback prints is a command that works as printed; a refusal is short; the plan says what stays when HEAD stays'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# hint_commands FILE: the commands the hint lines of FILE (stderr) end with.
hint_commands () {
	sed -n 's/^hint: .*: \(git venom-.*\)$/\1/p' "$1"
}

# run_hints FILE: runs every command hint_commands finds, as printed; each
# must succeed. At least one must be there.
run_hints () {
	hint_commands "$1" >"$OUT/cmds" &&
	test -s "$OUT/cmds" &&
	while read -r _cmd; do
		eval "$_cmd" >"$OUT/hint.out" 2>&1 || {
			echo >&4 "the hint does not work as printed: $_cmd"
			cat "$OUT/hint.out" >&4
			return 1
		}
	done <"$OUT/cmds"
}

# a2's turn ran between a1's, so what it wrote is outside to a1 (a gap).
test_expect_success 'setup: two agents share a tree; a person edits a file between turns' '
	case_repo two guarded &&
	echo base >notes.md && git add . && git commit -q -m base &&
	AG=a1 && ts >/dev/null && echo one >a1.txt && te >/dev/null &&
	AG=a2 && ts >/dev/null && echo two >a2.txt && te >/dev/null &&
	echo "a person" >>notes.md
'

test_expect_success 'no --agent with two agents here: the hints name each, and work' '
	cd "$TRASH_DIRECTORY/two" && OUT="$TRASH_DIRECTORY/two.out" &&
	test_expect_code 2 git venom-plan k1 2>"$OUT/err" &&
	grep "^hint: the checkpoints of a1: git venom-checkpoint list --agent a1$" "$OUT/err" &&
	grep "^hint: the checkpoints of a2: git venom-checkpoint list --agent a2$" "$OUT/err" &&
	run_hints "$OUT/err"
'

test_expect_success 'conflict.outside_edits: the paths in a few lines, and the two plans, with the choices given, that work' '
	cd "$TRASH_DIRECTORY/two" && OUT="$TRASH_DIRECTORY/two.out" &&
	test_expect_code 5 git venom-plan --agent a1 k1 --restore files 2>"$OUT/err" &&
	cat >"$OUT/expect" <<-\EOF &&
	error: 2 path(s) changed outside the agent'"'"'s turns; choose --outside=keep or --outside=overwrite
	hint: changed outside the agent'"'"'s turns (a person'"'"'s edits, or a gap'"'"'s): 2 paths
	hint:   ! delete  outside  a2.txt
	hint:   ! modify  outside  notes.md
	hint: to keep them as they are: git venom-plan --agent a1 k1 --restore files --outside keep
	hint: to restore them too (their content stays in the safety checkpoint): git venom-plan --agent a1 k1 --restore files --outside overwrite
	EOF
	test_cmp "$OUT/expect" "$OUT/err" &&
	run_hints "$OUT/err"
'

test_expect_success 'a refusal over thousands of paths stays short: a few rows, directories folded' '
	cd "$TRASH_DIRECTORY/two" && OUT="$TRASH_DIRECTORY/two.out" &&
	perl -e "mkdir q(gen); for my \$d (1..9) { mkdir qq(gen/\$d); for my \$i (1..300) { open my \$f, q(>), qq(gen/\$d/\$i.o) or die } }" &&
	AG=a1 && K=$(ts) && te >/dev/null &&
	rm -r gen && echo more >>notes.md && echo x >x.txt && echo y >y.txt &&
	test_expect_code 5 git venom-plan --agent a1 $K 2>"$OUT/err" &&
	test_line_count -le 9 "$OUT/err" &&
	test $(wc -c <"$OUT/err") -lt 1000 &&
	grep "^error: 2703 path(s)" "$OUT/err" &&
	grep "^hint:   ! create  outside  gen/  (2,700 files)$" "$OUT/err" &&
	run_hints "$OUT/err" &&
	venom_fails conflict.outside_edits "$OUT/e.json" git venom-plan --agent a1 $K --json &&
	test_json "$OUT/e.json" ".error.data.repos[0].paths | length == 2703" ".error.data.repos[0].changes | length == 2703"
'

test_expect_success 'a harness that cannot rewind: the hint restores the files alone, and works' '
	case_repo gem guarded &&
	echo a >a && git add . && git commit -q -m a &&
	H="--harness gemini --harness-session s" &&
	ts $H >/dev/null && echo b >>a && te $H >/dev/null &&
	ts $H >/dev/null && echo c >>a && te $H >/dev/null &&
	test_expect_code 10 git venom-plan --agent a1 k2 2>"$OUT/err" &&
	grep "^hint: to restore the files alone (the agent is told at its next prompt): git venom-plan --agent a1 k2 --restore files$" "$OUT/err" &&
	run_hints "$OUT/err"
'

test_expect_success 'a stale plan: the hint is the plan again with the same choices' '
	cd "$TRASH_DIRECTORY/gem" && OUT="$TRASH_DIRECTORY/gem.out" &&
	P=$(git venom-plan --agent a1 k2 --restore files --json | jq -r .plan) &&
	echo "an editor saved" >>a &&
	test_expect_code 5 git venom-rollback --agent a1 k2 --restore files --outside keep --plan $P 2>"$OUT/err" &&
	grep "^hint: read the new plan before you confirm it: git venom-plan --agent a1 k2 --restore files --outside keep$" "$OUT/err" &&
	run_hints "$OUT/err"
'

test_expect_success 'a turn still open: the hint ends it, and the plan works after' '
	cd "$TRASH_DIRECTORY/gem" && OUT="$TRASH_DIRECTORY/gem.out" &&
	ts --harness gemini >/dev/null &&
	test_expect_code 5 git venom-plan --agent a1 k2 --restore files --outside keep 2>"$OUT/err" &&
	run_hints "$OUT/err" &&
	git venom-plan --agent a1 k2 --restore files --outside keep >/dev/null
'

test_expect_success 'an unknown checkpoint: the hint lists the agent'"'"'s' '
	cd "$TRASH_DIRECTORY/gem" && OUT="$TRASH_DIRECTORY/gem.out" &&
	test_expect_code 3 git venom-plan --agent a1 k99 2>"$OUT/err" &&
	run_hints "$OUT/err" &&
	test_expect_code 3 git venom-plan --agent nobody k1 2>"$OUT/err" &&
	grep "^hint: the checkpoints of a1: git venom-checkpoint list --agent a1$" "$OUT/err" &&
	run_hints "$OUT/err"
'

test_expect_success 'HEAD moved in an unguarded tree: the hint keeps HEAD, and works' '
	case_repo moved &&
	echo a >a && git add . && git commit -q -m a &&
	ts >/dev/null && echo b >>a && te >/dev/null &&
	git checkout -q -b other && echo c >c && git add c && git commit -q -m c &&
	test_expect_code 5 git venom-plan --agent a1 k1 2>"$OUT/err" &&
	grep "^hint: to restore the files and leave HEAD where it is: git venom-plan --agent a1 k1 --keep-head$" "$OUT/err" &&
	run_hints "$OUT/err"
'

test_expect_success 'when HEAD stays in a guarded tree, the plan says the agent'"'"'s commits stay, as uncommitted reversals' '
	case_repo commits guarded &&
	echo a >a && git add . && git commit -q -m a &&
	ts >/dev/null &&
	echo b >>a && git commit -q -a -m b && echo c >>a && git commit -q -a -m c &&
	te >/dev/null &&
	git venom-plan --agent a1 k1 >"$OUT/plan.txt" &&
	grep "^HEAD:         stays at [0-9a-f]*, so the 2 commits made since k1 stay; the files going back show their changes as uncommitted reversals$" "$OUT/plan.txt" &&
	plan k1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].head.since == 2" ".repos[0].head.moves == false" &&
	rb k1 >"$OUT/rb.json" &&
	test "$(git rev-list --count HEAD)" = 3 &&
	git status --porcelain >"$OUT/status" &&
	echo " M a" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/status" &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" a
'

test_done
