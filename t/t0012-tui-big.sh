#!/usr/bin/env bash

test_description='git venom: a 10,000-path plan on 80x24 (folded directories, scrolling, the filter, the person'\''s path first) and its rollback'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-tui.sh"

# A turn of a1 that writes 10,000 files (a generator's output) under gen/a
# and gen/b and edits src/app.py; then a person edits notes.txt between
# turns. Rolling back to k1 deletes the 10,000 files. The turns come from
# a harness (as a hook reports them), so the agent has a conversation to
# rewind (an agent whose checkpoints were taken by hand has none).
# plan_k1_keep: from the agents screen, R on a1's k1, and keep the
# person's file.
plan_k1_keep () {
	tui_wait "› a1 " &&
	tui_keys Enter &&
	tui_wait "k1    turn_start" &&
	tui_keys Down &&
	tui_wait "›   k1" &&
	tui_keys R &&
	tui_wait "› keep those files" &&
	tui_keys Enter
}

test_expect_success 'setup: a turn that made 10,000 files, and a person'\''s edit' '
	mkdir "$TRASH_DIRECTORY/big" &&
	cd "$TRASH_DIRECTORY/big" &&
	git init -q &&
	# A capture of 10,000 new files takes a second or two alone, but
	# much longer on a machine shared with other builds: no timeout here
	# should fail this test.
	git config venom.checkpoints.timeout 600s &&
	mkdir src &&
	echo "print(1)" >src/app.py &&
	echo notes >notes.txt &&
	git add . &&
	test_tick &&
	git commit -q -m init &&
	git venom-checkpoint --agent a1 --reason turn_start --harness claude-code --harness-session s1 >/dev/null &&
	perl -e "
		for my \$d (qw(a b)) {
			mkdir \"gen\"; mkdir \"gen/\$d\" or die;
			for my \$i (0..4999) {
				open(my \$f, \">\", sprintf(\"gen/%s/%04d.txt\", \$d, \$i)) or die;
				print \$f \"\$d \$i\\n\";
				close(\$f);
			}
		}" &&
	echo "print(2)" >src/app.py &&
	git venom-checkpoint --agent a1 --reason turn_end --harness claude-code --harness-session s1 >/dev/null &&
	echo mine >notes.txt &&
	git venom-plan --agent a1 k1 --outside keep --json >"$TUI_DIR/plan.json" &&
	test_json "$TUI_DIR/plan.json" ".repos[0].files | length == 10001"
'

test_expect_success TMUX 'the plan of 10,001 paths fits 80x24 folded, the person'\''s path first; enter opens a folded directory, which scrolls' '
	cd "$TRASH_DIRECTORY/big" &&
	plan=$(jq -r .plan "$TUI_DIR/plan.json") &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k1_keep &&
	tui_wait "change:       10,001 paths: 1 modify, 10,000 delete" 120 &&
	tui_screen >"$TUI_DIR/s" &&
	test_line_count = 24 "$TUI_DIR/s" &&
	grep "^plan $plan: roll back a1 to k1" "$TUI_DIR/s" &&
	grep "^HEAD: *stays at " "$TUI_DIR/s" &&
	grep "^conversation: rewinds to before the first turn, dropping t1" "$TUI_DIR/s" &&
	grep -n "^! left    outside  notes.txt" "$TUI_DIR/s" | cut -d: -f1 >"$TUI_DIR/first" &&
	grep -n "^  delete  turn     gen/  (10,000 files)" "$TUI_DIR/s" | cut -d: -f1 >"$TUI_DIR/gen" &&
	test "$(cat "$TUI_DIR/first")" -lt "$(cat "$TUI_DIR/gen")" &&
	grep "^  modify  turn     src/app.py" "$TUI_DIR/s" &&
	sed -n 24p "$TUI_DIR/s" | grep "q quit" &&
	tui_keys Down &&
	tui_wait "  delete  turn     gen/  (10,000 files)" &&
	tui_keys Enter &&
	tui_wait "inside gen/: 10,000 paths (delete turn)" &&
	tui_wait "  delete  turn     gen/b/  (5,000 files)" &&
	tui_keys Enter &&
	tui_wait "inside gen/a/: 5,000 paths (delete turn)" &&
	tui_wait "  delete  turn     gen/a/0000.txt" &&
	tui_keys PageDown &&
	tui_gone "gen/a/0000.txt" &&
	tui_keys End &&
	tui_wait "  delete  turn     gen/a/4999.txt" &&
	tui_screen >"$TUI_DIR/end" &&
	sed -n 24p "$TUI_DIR/end" | grep "q quit" &&
	tui_keys Escape &&
	tui_wait "inside gen/: 10,000 paths" &&
	tui_keys Escape &&
	tui_gone "inside gen/" &&
	tui_wait "! left    outside  notes.txt"
'

# Each wait for a count names the filter text too: "2 of 10,002 paths"
# alone is a part of "10,002 of 10,002 paths", the screen before the keys
# arrive, so it would match too soon.
test_expect_success TMUX '/ filters the 10,001 paths; y still confirms the whole plan, and the tree is as at k1' '
	cd "$TRASH_DIRECTORY/big" &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k1_keep &&
	tui_wait "10,001 paths" 120 &&
	tui_keys / &&
	tui_wait "type to filter paths" &&
	tui_keys s r c / &&
	tui_wait "/src/   1 of 10,002 paths; y confirms them all" &&
	tui_screen >"$TUI_DIR/f" &&
	grep "^  modify  turn     src/app.py" "$TUI_DIR/f" &&
	! grep "gen/" "$TUI_DIR/f" &&
	tui_keys y &&
	tui_wait "/src/y" &&
	tui_keys BSpace &&
	tui_wait "/src/   1 of 10,002 paths" &&
	tui_keys Enter &&
	tui_wait "y confirm · " &&
	tui_keys Escape &&
	tui_wait "gen/  (10,000 files)" &&
	tui_keys / &&
	tui_wait "type to filter paths" &&
	tui_keys 4 9 9 9 &&
	tui_wait "/4999   2 of 10,002 paths" &&
	tui_screen >"$TUI_DIR/f" &&
	grep "^  delete  turn     gen/a/4999.txt" "$TUI_DIR/f" &&
	grep "^  delete  turn     gen/b/4999.txt" "$TUI_DIR/f" &&
	tui_keys Enter &&
	tui_wait "y confirm · " &&
	tui_keys y &&
	tui_wait "↺ Rolled back to k1 (before the first turn) · 10,001 files · conversation too" 300 &&
	test_path_is_missing gen &&
	echo "print(1)" >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" src/app.py &&
	echo mine >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" notes.txt
'

test_done
