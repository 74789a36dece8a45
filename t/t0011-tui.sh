#!/usr/bin/env bash

test_description='git venom: the TUI in a pseudo-terminal (tmux): agents, checkpoints, diffs, a plan confirmed by quoting it, refusals and choices, stale plans, the undo'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-tui.sh"

SESSION=11111111-2222-3333-4444-555555555555

# tui_repo NAME HARNESS makes "$TRASH_DIRECTORY/NAME" and cds into it: a
# commit, then two turns of agent a1 on HARNESS with the harness ids a
# rewind needs:
#	k1 turn_start t1   src/app.py v1, notes.txt
#	k2 turn_end   t1   src/app.py v2, out.txt created
#	k3 turn_end   t2   src/app.py v3, gen/g.txt created
# (t2's turn_start reuses k2). The main worktree: a guarded tree, unless
# the third argument is "unguarded" (a1 registers --isolation worktree).
tui_repo () {
	mkdir "$TRASH_DIRECTORY/$1" &&
	cd "$TRASH_DIRECTORY/$1" &&
	git init -q &&
	mkdir src &&
	echo 'print("v1")' >src/app.py &&
	echo notes >notes.txt &&
	git add . &&
	test_tick &&
	git commit -q -m init &&
	h="--agent a1 --harness $2 --harness-session $SESSION" &&
	iso= &&
	if test "${3:-}" = unguarded; then
		iso="--isolation worktree"
	fi &&
	git venom-checkpoint $h $iso --reason turn_start --harness-turn u1 >/dev/null &&
	echo 'print("v2")' >src/app.py &&
	echo out >out.txt &&
	git venom-checkpoint $h --reason turn_end --harness-end e1 >/dev/null &&
	git venom-checkpoint $h --reason turn_start --harness-turn u2 >/dev/null &&
	echo 'print("v3")' >src/app.py &&
	mkdir gen &&
	echo g >gen/g.txt &&
	git venom-checkpoint $h --reason turn_end --harness-end e2 >/dev/null
}

# state prints what a test compares before and after: every file of the
# tree with its content, the venom refs, and the log's record count.
state () {
	find . -path ./.git -prune -o -type f -print | LC_ALL=C sort | while read -r f; do
		printf '%s: %s\n' "$f" "$(cat "$f")"
	done &&
	git for-each-ref refs/venom &&
	venom_log | wc -l | tr -d ' '
}

# open_list: from the agents screen, open a1's checkpoints; cursor_to K
# moves the cursor there (k3 is the first row, k2 the second, k1 the
# third).
open_list () {
	tui_wait "› a1 " &&
	tui_keys Enter &&
	tui_wait "k1    turn_start"
}

# plan_k2: from the agents screen, R on a1's k2.
plan_k2 () {
	open_list &&
	cursor_to k2 &&
	tui_keys R
}

cursor_to () {
	case "$1" in
	k3) ;;
	k2) tui_keys Down && tui_wait "›   k2" ;;
	k1) tui_keys Down Down && tui_wait "›   k1" ;;
	esac
}

test_expect_success 'without a terminal on stdout git venom refuses, pointing at the CLI' '
	tui_repo plain claude-code &&
	test_expect_code 10 git venom >"$TUI_DIR/out" 2>"$TUI_DIR/err" </dev/null &&
	test_must_be_empty "$TUI_DIR/out" &&
	grep "^error: git venom is a terminal UI, and stdout is not a terminal" "$TUI_DIR/err" &&
	grep "^hint: .*git venom-plan <k>, then git venom-rollback <k> --plan <id>" "$TUI_DIR/err" &&
	GIT_VENOM_TRACE=1 git venom >/dev/null 2>"$TUI_DIR/err" </dev/null ;
	grep "^trace: code unsupported.terminal" "$TUI_DIR/err"
'

test_expect_success TMUX 'the agents screen lists a1 with its harness, turn, last checkpoint and guard; the list is newest first; looking (and y without a plan) writes nothing' '
	tui_repo list claude-code &&
	state >"$TUI_DIR/before" &&
	test_when_finished tui_stop &&
	tui_start &&
	tui_wait "› a1 " &&
	tui_screen >"$TUI_DIR/agents" &&
	grep "^› a1  *claude-code  *-  *k3 [0-9]*[smhd] ago  *guarded" "$TUI_DIR/agents" &&
	grep "enter checkpoints" "$TUI_DIR/agents" &&
	tui_keys Enter &&
	tui_wait "k1    turn_start" &&
	tui_screen >"$TUI_DIR/list" &&
	grep "git venom · a1 · claude-code · guarded" "$TUI_DIR/list" &&
	grep -n "k[0-9]  " "$TUI_DIR/list" | sed "s/^\([0-9]*\):.*\(k[0-9]\).*/\2/" >"$TUI_DIR/order" &&
	printf "k3\nk2\nk1\n" >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" "$TUI_DIR/order" &&
	grep "^›   k3    turn_end     t2   2 files " "$TUI_DIR/list" &&
	grep "^    k2    turn_end     t1   2 files " "$TUI_DIR/list" &&
	grep "^    k1    turn_start   t1   0 files " "$TUI_DIR/list" &&
	# No plan is shown, so y says yes to nothing.
	tui_keys y &&
	test_expect_code 0 tui_quit >"$TUI_DIR/code" &&
	echo 0 >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" "$TUI_DIR/code" &&
	state >"$TUI_DIR/after" &&
	test_cmp "$TUI_DIR/before" "$TUI_DIR/after"
'

test_expect_success TMUX 'k takes a manual checkpoint, shown at the top of the list' '
	tui_repo manual claude-code &&
	echo mine >notes.txt &&
	test_when_finished tui_stop &&
	tui_start &&
	open_list &&
	tui_keys k &&
	tui_wait "took checkpoint k4 of a1 (manual)" &&
	tui_wait "›   k4    manual       -    1 file" &&
	git venom-checkpoint list --agent a1 >"$TUI_DIR/cli" &&
	grep "^k4  *manual " "$TUI_DIR/cli" &&
	tui_keys k &&
	tui_wait "reused (nothing changed since it) checkpoint k4" &&
	echo mine >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" notes.txt
'

test_expect_success TMUX 'Enter on a checkpoint: its diff against the previous one and the files now; Enter on a file: its patch in git colours' '
	tui_repo diff claude-code &&
	state >"$TUI_DIR/before" &&
	test_when_finished tui_stop &&
	tui_start &&
	open_list &&
	cursor_to k2 &&
	tui_keys Enter &&
	tui_wait "k2 → the files now: 2 files" &&
	tui_screen >"$TUI_DIR/diff" &&
	grep "^since k1: 2 files" "$TUI_DIR/diff" &&
	grep "^› create +1 -0 *out.txt" "$TUI_DIR/diff" &&
	grep "^  modify +1 -1 *src/app.py" "$TUI_DIR/diff" &&
	grep "^  create +1 -0 *gen/g.txt" "$TUI_DIR/diff" &&
	tui_keys Down &&
	tui_wait "› modify +1 -1        src/app.py" &&
	tui_keys Enter &&
	tui_wait "+print(\"v2\")" &&
	tui_screen >"$TUI_DIR/patch" &&
	grep "^-print(\"v1\")" "$TUI_DIR/patch" &&
	grep "^@@ -1 +1 @@" "$TUI_DIR/patch" &&
	grep "src/app.py · a1 · k2 (turn_end, t1) · since k1" "$TUI_DIR/patch" &&
	tui_screen -e >"$TUI_DIR/patch.e" &&
	grep "$(printf "\033")\[32m+print" "$TUI_DIR/patch.e" &&
	grep "$(printf "\033")\[31m-print" "$TUI_DIR/patch.e" &&
	tui_keys Escape &&
	tui_wait "since k1: 2 files" &&
	tui_keys Tab &&
	tui_wait "› create +1 -0        gen/g.txt" &&
	tui_keys Enter &&
	tui_wait "+g" &&
	tui_wait "gen/g.txt · a1 · k2 (turn_end, t1) · k2 → the files now" &&
	state >"$TUI_DIR/after" &&
	test_cmp "$TUI_DIR/before" "$TUI_DIR/after"
'

test_expect_success TMUX 'R shows the dry run as a confirmation screen with the plan id the CLI makes; esc leaves the tree as it is' '
	tui_repo plan claude-code &&
	git venom-plan --agent a1 k2 --json >"$TUI_DIR/plan.json" &&
	plan=$(jq -r .plan "$TUI_DIR/plan.json") &&
	state >"$TUI_DIR/before" &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k2 &&
	tui_wait "plan $plan: roll back a1 to k2 (guarded tree: HEAD and the index" &&
	tui_screen >"$TUI_DIR/plan" &&
	grep "^change: *2 paths: 1 modify, 1 delete" "$TUI_DIR/plan" &&
	grep "^  delete  turn     gen/g.txt" "$TUI_DIR/plan" &&
	grep "^  modify  turn     src/app.py" "$TUI_DIR/plan" &&
	grep "^HEAD: *stays at $(git rev-parse --short=10 HEAD)" "$TUI_DIR/plan" &&
	grep "^conversation: rewinds to t1, dropping t2" "$TUI_DIR/plan" &&
	tui_joined | grep -F "the rollback forks the claude-code conversation through t1 first (claude -p --fork-session, no model call)" &&
	tui_joined | grep -E "it continues in a new session ([0-9a-f-]{36}): claude --resume=\1 " &&
	grep "^y confirms: git venom-rollback --agent a1 k2 --plan $plan\$" "$TUI_DIR/plan" &&
	tui_keys Escape &&
	tui_wait "k1    turn_start" &&
	state >"$TUI_DIR/after" &&
	test_cmp "$TUI_DIR/before" "$TUI_DIR/after"
'

# The next test goes on from this one's screen, so this one leaves the TUI
# running; the next one ends it.
test_expect_success TMUX 'y confirms by quoting the plan: the transcript row, the resume command, and the tree as at k2' '
	tui_repo confirm claude-code &&
	tui_start &&
	plan_k2 &&
	tui_wait "conversation: rewinds to t1" &&
	tui_keys y &&
	tui_wait "↺ Rolled back to k2 (after t1) · 2 files · conversation too · undo: k4" &&
	tui_screen >"$TUI_DIR/result" &&
	grep "^  ▸ dropped t2" "$TUI_DIR/result" &&
	grep "^  delete  turn     gen/g.txt" "$TUI_DIR/result" &&
	grep "^conversation: rewound to t1, dropping t2" "$TUI_DIR/result" &&
	grep "^verified: the tree is as planned (k5)" "$TUI_DIR/result" &&
	session=$(venom_log | jq -r "select(.type == \"agent.binding\" and .fork_source != null) | .harness_session" | tail -n 1) &&
	tui_joined | grep -F "to resume the conversation as it was after t1: claude --resume=$session in a script: claude -p --resume=$session <prompt> the old session $SESSION (claude-code) still remembers the dropped turns" &&
	echo "print(\"v2\")" >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" src/app.py &&
	test_path_is_missing gen/g.txt &&
	test_path_is_file out.txt &&
	venom_log | jq -s -e "map(select(.type == \"rollback.ended\")) | length == 1 and .[0].ok" >/dev/null
'

test_expect_success TMUX 'u plans the undo, and y puts the tree back as it was before the rollback' '
	cd "$TRASH_DIRECTORY/confirm" &&
	test_when_finished tui_stop &&
	tui_keys u &&
	tui_wait "the undo: back to the safety checkpoint k4, files only" &&
	tui_wait "conversation: stays; the agent is told the files were rolled back" &&
	tui_screen >"$TUI_DIR/undo" &&
	grep "^  modify  turn     src/app.py" "$TUI_DIR/undo" &&
	grep "^  create  turn     gen/g.txt" "$TUI_DIR/undo" &&
	tui_keys y &&
	tui_wait "↺ Rolled back to k4 (after t2) · 2 files · files only · undo: k6" &&
	echo "print(\"v3\")" >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" src/app.py &&
	echo g >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" gen/g.txt
'

test_expect_success TMUX 'a person'\''s edit between turns: the refusal offers keep those files (the default), and keeping keeps it' '
	tui_repo keep claude-code &&
	echo mine >notes.txt &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k2 &&
	tui_wait "Paths changed outside the agent'\''s turns (a person, or a gap):" &&
	tui_screen >"$TUI_DIR/choice" &&
	grep "^  ! notes.txt" "$TUI_DIR/choice" &&
	grep "^› keep those files" "$TUI_DIR/choice" &&
	grep "^  overwrite them" "$TUI_DIR/choice" &&
	test_path_is_file gen/g.txt &&
	tui_keys Enter &&
	tui_wait "left:         1 path as it is: 1 outside (!)" &&
	tui_screen >"$TUI_DIR/plan" &&
	grep "^! left    outside  notes.txt" "$TUI_DIR/plan" &&
	tui_joined | grep "git venom-rollback --agent a1 k2 --plan p[0-9]-[0-9a-f]* --outside keep" &&
	tui_keys y &&
	tui_wait "↺ Rolled back to k2 (after t1) · 2 files · conversation too" &&
	echo mine >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" notes.txt &&
	test_path_is_missing gen/g.txt
'

test_expect_success TMUX 'the refusal'\''s other choice, overwrite them, restores the person'\''s file too' '
	tui_repo overwrite claude-code &&
	echo mine >notes.txt &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k2 &&
	tui_wait "› keep those files" &&
	tui_keys Down &&
	tui_wait "› overwrite them" &&
	tui_keys Enter &&
	tui_wait "by class:     1 outside (!), 2 turn" &&
	tui_screen >"$TUI_DIR/plan" &&
	grep "^! modify  outside  notes.txt" "$TUI_DIR/plan" &&
	tui_joined | grep "git venom-rollback --agent a1 k2 --plan p[0-9]-[0-9a-f]* --outside overwrite" &&
	tui_keys y &&
	tui_wait "↺ Rolled back to k2 (after t1) · 3 files · conversation too" &&
	echo notes >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" notes.txt &&
	git venom-checkpoint show k4 --json >"$TUI_DIR/k4.json" &&
	test_json "$TUI_DIR/k4.json" ".reason == \"pre_rollback\"" &&
	git cat-file blob refs/venom/checkpoints/a1/4:notes.txt >"$TUI_DIR/saved" &&
	echo mine >"$TUI_DIR/expect" &&
	test_cmp "$TUI_DIR/expect" "$TUI_DIR/saved"
'

# In an unguarded tree, so that the file made after the plan is kept (a
# file no checkpoint held) and the new plan needs no choice.
test_expect_success TMUX 'a stale plan is refused as on the CLI (nothing changes) and the screen shows the new dry run' '
	tui_repo stale claude-code unguarded &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k2 &&
	tui_wait "conversation: rewinds to t1" &&
	old=$(tui_screen | sed -n "s/^plan \(p[0-9]-[0-9a-f]*\): roll back .*/\1/p") &&
	test -n "$old" &&
	echo late >late.txt &&
	state >"$TUI_DIR/before" &&
	tui_keys y &&
	tui_wait "plan $old is stale" &&
	tui_wait "! left    outside  late.txt  (created after the last checkpoint)" &&
	new=$(tui_screen | sed -n "s/^plan \(p[0-9]-[0-9a-f]*\): roll back .*/\1/p") &&
	test -n "$new" &&
	test "$new" != "$old" &&
	state >"$TUI_DIR/after" &&
	test_cmp "$TUI_DIR/before" "$TUI_DIR/after" &&
	git venom-plan --agent a1 k2 --json >"$TUI_DIR/plan.json" &&
	test_json "$TUI_DIR/plan.json" ".plan == \"$new\"" &&
	tui_keys y &&
	tui_wait "↺ Rolled back to k2 (after t1)" &&
	test_path_is_missing gen/g.txt &&
	test_path_is_file late.txt
'

test_expect_success TMUX 'a harness without rewind (Gemini CLI) offers the files only, and says the model will be told' '
	tui_repo gemini gemini &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k2 &&
	tui_wait "› files only" &&
	tui_screen >"$TUI_DIR/choice" &&
	grep "cannot be rewound to t1" "$TUI_DIR/choice" &&
	grep "the model will be told" "$TUI_DIR/choice" &&
	tui_keys Enter &&
	tui_wait "conversation: stays; the agent is told the files were rolled back" &&
	tui_joined | grep -F "the model will be told: Note: the files were rolled back to their state after turn t1." &&
	tui_joined | grep "git venom-rollback --agent a1 k2 --plan p[0-9]-[0-9a-f]* --restore files" &&
	tui_keys y &&
	tui_wait "↺ Rolled back to k2 (after t1) · 2 files · files only · undo: k4" &&
	tui_wait "the model will be told: Note: the files were rolled back" &&
	test_path_is_missing gen/g.txt &&
	venom_log | jq -s -e "map(select(.type == \"note.pending\")) | length == 1 and .[0].agent == \"a1\"" >/dev/null
'

test_expect_success TMUX 'an agent caller may look, but y on a guarded tree is denied.agent_caller and changes nothing' '
	tui_repo agent claude-code &&
	state >"$TUI_DIR/before" &&
	test_when_finished tui_stop &&
	tui_start GIT_VENOM_CALLER=agent &&
	plan_k2 &&
	tui_wait "conversation: rewinds to t1" &&
	tui_keys y &&
	tui_wait "error (denied.agent_caller): an agent may not roll back a guarded tree" &&
	state >"$TUI_DIR/after" &&
	test_cmp "$TUI_DIR/before" "$TUI_DIR/after" &&
	! venom_log | grep rollback.started
'

# sgr FILE: the lines of FILE with a colour in an escape sequence
# (foreground 30-37, 90-97 or 38;5;n); bold, faint and reverse are not.
sgr_colour () {
	grep -E "$(printf "\033")\[([0-9]+;)*(3[0-7]|9[0-7]|38;5;[0-9]+)(;[0-9]+)*m" "$1"
}

# no_colour_anywhere: the choice, the plan and a patch, each without a
# colour (after tui_start with NO_COLOR or CI set). The Down waits for
# both parts of the diff: a key sent while they load moves no cursor.
no_colour_anywhere () {
	plan_k2 &&
	tui_wait "  ! notes.txt" &&
	tui_screen -e >"$TUI_DIR/plain" &&
	! sgr_colour "$TUI_DIR/plain" &&
	tui_keys Enter &&
	tui_wait "! left    outside  notes.txt" &&
	tui_screen -e >"$TUI_DIR/plain" &&
	! sgr_colour "$TUI_DIR/plain" &&
	tui_keys Escape &&
	tui_wait "k1    turn_start" &&
	tui_keys Enter &&
	tui_wait "since k1: 2 files" &&
	tui_wait "k2 → the files now: 3 files" &&
	tui_keys Down &&
	tui_wait "› modify" &&
	tui_keys Enter &&
	tui_wait "+print(\"v2\")" &&
	tui_screen -e >"$TUI_DIR/plain" &&
	! sgr_colour "$TUI_DIR/plain"
}

test_expect_success TMUX 'the person'\''s paths are in gold; with NO_COLOR or CI set nothing has a colour' '
	tui_repo colour claude-code &&
	echo mine >notes.txt &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k2 &&
	tui_wait "  ! notes.txt" &&
	tui_screen -e >"$TUI_DIR/colour" &&
	grep "! notes.txt" "$TUI_DIR/colour" >"$TUI_DIR/line" &&
	grep "$(printf "\033")\[[0-9;]*38;5;220m" "$TUI_DIR/line" &&
	tui_stop &&
	tui_start NO_COLOR=1 &&
	no_colour_anywhere &&
	tui_stop &&
	tui_start CI=true &&
	no_colour_anywhere
'

test_expect_success TMUX 'on 80x24 the confirmation screen fits: header on the first row, keys on the last, the plan id whole' '
	tui_repo small claude-code &&
	plan=$(git venom-plan --agent a1 k2 --json | jq -r .plan) &&
	test_when_finished tui_stop &&
	tui_start &&
	plan_k2 &&
	tui_wait "plan $plan" &&
	tui_screen >"$TUI_DIR/s" &&
	test_line_count = 24 "$TUI_DIR/s" &&
	sed -n 1p "$TUI_DIR/s" | grep "^ git venom · a1 · plan to roll back to k2" &&
	sed -n 24p "$TUI_DIR/s" | grep "^y confirm · .* · esc back · q quit" &&
	sed -n 22p "$TUI_DIR/s" | grep "^y confirms: git venom-rollback --agent a1 k2 --plan $plan\$" &&
	sed -n 2p "$TUI_DIR/s" | grep "^plan $plan: roll back a1 to k2" &&
	perl -CSD -ne "chomp; exit 1 if length > 80" "$TUI_DIR/s"
'

test_expect_success TMUX 'wider, the same screen uses the room: 120x40' '
	cd "$TRASH_DIRECTORY/small" &&
	plan=$(git venom-plan --agent a1 k2 --json | jq -r .plan) &&
	test_when_finished tui_stop &&
	TUI_W=120 TUI_H=40 tui_start &&
	plan_k2 &&
	tui_wait "plan $plan" &&
	tui_screen >"$TUI_DIR/s" &&
	test_line_count = 40 "$TUI_DIR/s" &&
	sed -n 40p "$TUI_DIR/s" | grep "q quit" &&
	grep "^plan $plan: roll back a1 to k2 (guarded tree: HEAD and the index stay)\$" "$TUI_DIR/s" &&
	grep "^y confirms: git venom-rollback --agent a1 k2 --plan $plan\$" "$TUI_DIR/s" &&
	tui_joined | grep -E "it continues in a new session ([0-9a-f-]{36}): claude --resume=\1 "
'


test_expect_success TMUX 'Enter on a checkpoint of a tree with a submodule: each list says which submodules changed inside' '
	mkdir "$TRASH_DIRECTORY/subs.lib" && (cd "$TRASH_DIRECTORY/subs.lib" && git init -q && echo l1 >l && git add l && test_tick && git commit -qm l) &&
	mkdir "$TRASH_DIRECTORY/subs" && cd "$TRASH_DIRECTORY/subs" && git init -q &&
	echo a >a && git add a && test_tick && git commit -qm a &&
	git -c protocol.file.allow=always submodule add -q "$TRASH_DIRECTORY/subs.lib" lib && test_tick && git commit -qm lib &&
	git venom-checkpoint --agent a1 --reason turn_start >/dev/null &&
	echo l2 >lib/l &&
	git venom-checkpoint --agent a1 --reason turn_end >/dev/null &&
	echo l3 >lib/l && echo a2 >a &&
	test_when_finished tui_stop &&
	tui_start &&
	tui_wait "› a1 " && tui_keys Enter && tui_wait "k1    turn_start" &&
	tui_keys Enter &&
	tui_wait "k2 → the files now: 1 file, and files inside submodule lib" &&
	tui_screen >"$TUI_DIR/diff" &&
	grep "^since k1: 0 files, and files inside submodule lib$" "$TUI_DIR/diff" &&
	grep "^› modify +1 -1 *a$" "$TUI_DIR/diff"
'

test_done
