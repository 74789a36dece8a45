#!/usr/bin/env bash

test_description='the plan and the rollback a person reads: a summary, folded directories, the person first, lines that fit'

. "$(dirname "$0")/test-lib.sh"

# plan_text K ARGS...: the plan's text with the plan id made stable.
plan_text () {
	git venom-plan --agent a1 "$@" | sed "s/p1-[0-9a-f]\{16\}/p1-X/g; s/p2-[0-9a-f]\{16,\}/p2-X/g"
}

test_expect_success 'setup: a turn deletes a 4,603-file directory and generates 5,000 files; a person edits one' '
	perl -e "
		mkdir q(test); mkdir q(test/built-ins); mkdir q(test/built-ins/Temporal);
		for my \$d (qw(Duration Instant PlainDate)) { mkdir qq(test/built-ins/Temporal/\$d) }
		for my \$i (1..4603) {
			my \$d = (qw(Duration Instant PlainDate))[\$i % 3];
			open my \$f, q(>), qq(test/built-ins/Temporal/\$d/t\$i.js) or die; print \$f qq(\$i\n);
		}
	" &&
	echo "length" >array-length.js &&
	echo "# notes" >zz-notes.md &&
	git add -A && test_tick && git commit -q -m test262 &&
	git venom-checkpoint --agent a1 --reason turn_start --json >k1.json &&
	rm -r test/built-ins/Temporal &&
	perl -e "
		mkdir q(harness); mkdir q(harness/gen);
		for my \$i (1..5000) {
			my \$d = q(harness/gen/) . (\$i % 7); mkdir \$d;
			open my \$f, q(>), qq(\$d/g\$i.js) or die; print \$f qq(\$i\n);
		}
	" &&
	echo "length 2" >array-length.js &&
	git venom-checkpoint --agent a1 --reason turn_end --json >k2.json &&
	echo "a person was here" >>zz-notes.md
'

test_expect_success 'the plan of ten thousand paths: the summary, then a few rows, the person first' '
	plan_text k1 --outside overwrite >out &&
	cat >expect <<-\EOF &&
	plan p2-X: roll back a1 to k1 (guarded tree: HEAD and the index stay)
	change:       9,605 paths: 4,603 create, 2 modify, 5,000 delete
	by class:     1 outside (!), 9,604 turn
	HEAD:         stays at 9f0b7c1c63
	conversation: none: no harness reported a turn of this agent (its checkpoints were taken by hand)

	! modify  outside  zz-notes.md
	  modify  turn     array-length.js
	  delete  turn     harness/gen/  (5,000 files)
	  create  turn     test/built-ins/Temporal/  (4,603 files)

	to do it: git venom-rollback --agent a1 k1 --plan p2-X --outside overwrite
	EOF
	HEAD=$(git rev-parse --short=10 HEAD) &&
	sed "s/9f0b7c1c63/$HEAD/" expect >expect.out &&
	test_cmp expect.out out
'

test_expect_success 'with --outside keep the person stays first, as a path left as it is' '
	plan_text k1 --outside keep >out &&
	sed -n "/^left:/p; /^!/p" out >actual &&
	cat >expect <<-\EOF &&
	left:         1 path as it is: 1 outside (!)
	! left    outside  zz-notes.md
	EOF
	test_cmp expect actual
'

test_expect_success 'no line is wider than COLUMNS; the path loses its start, its end stays' '
	COLUMNS=40 git venom-plan --agent a1 k1 --outside overwrite >out &&
	awk "length(\$0) > 40 && !/^to do it:/ { print; bad = 1 } END { exit bad }" out &&
	grep "^  create  turn     \.\.\..*Temporal/  (4,603)$" out &&
	COLUMNS=200 git venom-plan --agent a1 k1 --outside overwrite >out &&
	grep "^  create  turn     test/built-ins/Temporal/  (4,603 files)$" out
'

test_expect_success 'the JSON keeps every path' '
	git venom-plan --agent a1 k1 --outside overwrite --json >plan.json &&
	test_json plan.json ".repos[0].files | length == 9605"
'

test_expect_success 'the rollback prints the same few rows, not ten thousand lines' '
	P=$(jq -r .plan plan.json) &&
	git venom-rollback --agent a1 k1 --plan $P --outside overwrite >out &&
	test_line_count -lt 20 out &&
	grep "^rolled back a1 to k1$" out &&
	grep "^changed:      9,605 paths: 4,603 create, 2 modify, 5,000 delete$" out &&
	grep "^  delete  turn     harness/gen/  (5,000 files)$" out &&
	grep "^! modify  outside  zz-notes.md$" out &&
	grep "^verified: the tree is as planned (k4)$" out &&
	test_path_is_file test/built-ins/Temporal/Instant/t1.js &&
	test_path_is_missing harness
'

test_expect_success 'a person saving while the rollback runs: the summary counts what was left and kept, the person first, each command works' '
	git init -q saves && (
		cd saves &&
		for i in 1 2 3 4 5 6 7 8; do echo "v$i" >f$i.txt || return 1; done &&
		git add -A && test_tick && git commit -q -m init &&
		git venom-checkpoint --agent b1 --reason turn_start --json >../b-k1.json &&
		echo "agent" >>f1.txt &&
		for i in 1 2 3 4 5 6 7; do echo "new $i" >n$i.txt || return 1; done &&
		git venom-checkpoint --agent b1 --reason turn_end --json >../b-k2.json &&
		K=$(jq -r .checkpoint ../b-k1.json) &&
		P=$(git venom-plan --agent b1 $K --json | jq -r .plan) &&
		# While it runs, a person saves into each file the rollback moved
		# out of the way (its new files, deleted) and into f1.txt before
		# it is written.
		GIT_VENOM_TEST_FAILPOINT=rollback.deleted:exec \
		GIT_VENOM_TEST_FAILPOINT_EXEC="for f in .git/venom/tmp/backup-*/[0-9]*; do echo saved >>\"\$f\"; done; echo mine >>f1.txt" \
			git venom-rollback --agent b1 $K --plan $P >../saves.out 2>../saves.err
	) &&
	sed -n "/^left:/p; /^rescued:/p" saves.out >actual &&
	cat >expect <<-\EOF &&
	left:         1 path as it is: 1 changed_during_rollback (!)
	rescued:      7 saves made while it ran into files it replaced, kept out of the tree: n1.txt, n2.txt, n3.txt and 4 more
	EOF
	test_cmp expect actual &&
	sed -n "/^$/,/^$/p" saves.out | sed -n 2p >first &&
	grep "^! left    changed_during_rollback  f1.txt" first &&
	grep "^kept 7 save(s) made while the rollback ran" saves.out &&
	sed -n "/^kept 7 save/,/more:/p" saves.out | sed 1d >rescued.lines &&
	test_line_count = 6 rescued.lines &&
	grep "^    and 2 more: git diff --name-only .refs/venom/rescued/b1/[0-9]*^. refs/venom/rescued/b1/[0-9]*$" rescued.lines &&
	(
		cd saves &&
		sed -n "s/^    [^:]*: git show /git show /p" ../rescued.lines >../shows &&
		test_line_count = 5 ../shows &&
		while read -r cmd; do
			eval "$cmd" >../shown || return 1
			test "$(tail -n 1 ../shown)" = saved || return 1
		done <../shows &&
		eval "$(sed -n "s/^    and 2 more: //p" ../rescued.lines)" >../names &&
		printf "n%s.txt\n" 1 2 3 4 5 6 7 >../expect.names &&
		test_cmp ../expect.names ../names &&
		grep "^mine$" f1.txt
	)
'

test_expect_success 'a rewind'"'"'s lines wrap within COLUMNS too; commands stay whole on a line of their own' '
	git init -q conv && (
		cd conv &&
		echo a >a && git add a && test_tick && git commit -q -m init &&
		git venom-checkpoint --agent c1 --reason turn_start --harness claude-code --harness-session s1 >/dev/null &&
		echo b >b &&
		git venom-checkpoint --agent c1 --reason turn_end --harness claude-code --harness-session s1 >/dev/null &&
		COLUMNS=60 git venom-plan --agent c1 k1 >../conv.plan &&
		P=$(sed -n "s/^to do it: .* --plan \([^ ]*\).*/\1/p" ../conv.plan) &&
		COLUMNS=60 git venom-rollback --agent c1 k1 --plan $P >../conv.out
	) &&
	grep "^  the old session s1 (claude-code) stays as it is; resumed,$" conv.plan &&
	awk "length(\$0) > 60 && !/^to do it:/ { print; bad = 1 } END { exit bad }" conv.plan &&
	awk "length(\$0) > 60 && !/^  (git|claude) / { print; bad = 1 } END { exit bad }" conv.out &&
	grep "^  git venom-plan --agent c1 k3 --restore files$" conv.out
'

test_expect_success 'a turn that made 60 directories under one: the plan folds that one, a plan narrowed to it shows them' '
	git init -q onedir && (
		cd onedir &&
		echo a >a && git add a && test_tick && git commit -q -m init &&
		git venom-checkpoint --agent d1 --reason turn_start >/dev/null &&
		for i in $(seq 10 69); do mkdir -p gen/d$i && echo 1 >gen/d$i/a && echo 2 >gen/d$i/b || return 1; done &&
		git venom-checkpoint --agent d1 --reason turn_end >/dev/null &&
		git venom-plan --agent d1 k1 >../onedir.plan &&
		git venom-plan --agent d1 k1 -- gen >../onedir-narrowed.plan
	) &&
	sed -n "/^$/,/^$/p" onedir.plan | grep -v "^$" >rows &&
	echo "  delete  turn     gen/  (120 files)" >expect &&
	test_cmp expect rows &&
	grep "^  delete  turn     gen/d10/  (2 files)$" onedir-narrowed.plan &&
	grep -c "^  delete  turn     gen/d[0-9]*/  (2 files)$" onedir-narrowed.plan >count &&
	echo 60 >expect && test_cmp expect count
'

test_done
