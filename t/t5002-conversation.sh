#!/usr/bin/env bash

test_description='a Claude Code session through git venom-hook, rolled back with its conversation (RFC 8): the resume command, the binding, the files-only note'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# A rollback by an agent's tool subprocess is denied (RFC 11.4); these tests
# are the person, whatever harness runs the suite.
unset CLAUDE_CODE_CHILD_SESSION CLAUDECODE CLAUDE_CODE_SESSION_ID CODEX_THREAD_ID GEMINI_CLI GEMINI_SESSION_ID CURSOR_AGENT

FIX="$VENOM_SRC/harness/testdata/claude-code/session"
S=3f9c2a71-5d4e-4b8a-9c1f-2e7d6b5a4c30
A=claude-3f9c2a715d4e
# The uuid of each turn's last assistant line in transcript-<n>.jsonl.
U1=9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b13
U2=9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b23
U3=9b7e4c1a-3d2f-4e8b-a6c5-0d1e2f3a4b33

note_after () {
	echo "Note: the files were rolled back to their state after turn $1. Changes made after that point are gone, and what you remember of them may no longer be true. Read the files before you rely on them."
}

# session_repo NAME: a fresh repository (main worktree: guarded) with an
# empty transcript beside it; SESSION is unset.
session_repo () {
	case_repo "$1" guarded &&
	AG=$A &&
	unset SESSION &&
	TR="$OUT/transcript.jsonl" &&
	: >"$TR" &&
	echo "# greet" >README.md &&
	printf "def greet(name):\n    return 'hi ' + name\n" >greet.py &&
	git add . && git commit -qm init
}

# ev FIXTURE: the hook on one event of the session (placeholders filled
# in); exit 0, nothing on stderr, stdout in $OUT/hook.out, empty unless
# the caller checks it.
ev () {
	sed -e "s|{{CWD}}|$REPO|g" -e "s|{{TRANSCRIPT}}|$TR|g" -e "s|{{SESSION}}|${SESSION:-}|g" "$FIX/$1" |
	git venom-hook claude-code >"$OUT/hook.out" 2>"$OUT/hook.err" &&
	test_must_be_empty "$OUT/hook.err"
}

quiet_ev () {
	ev "$1" && test_must_be_empty "$OUT/hook.out"
}

# work N: turn N's edits, each with its tool's event.
work () {
	case $1 in
	1)
		mkdir -p tests &&
		printf 'from greet import greet\n\n\ndef test_greet():\n    assert greet("ann") == "hi ann"\n' >tests/test_greet.py &&
		quiet_ev PostToolUse-Write-1.json ;;
	2)
		printf "def greet(name):\n    return 'hello, ' + name + ', pleased to meet you'\n" >greet.py &&
		quiet_ev PostToolUse-Edit-2.json &&
		echo "- greet() is polite" >>CHANGELOG.md &&
		quiet_ev PostToolUse-Bash-2.json ;;
	3)
		printf 'import sys\nfrom greet import greet\n\nprint(greet(sys.argv[1]))\n' >cli.py &&
		quiet_ev PostToolUse-Write-3.json ;;
	esac
}

# turn N: prompt, work, the transcript catching up, Stop.
turn () {
	quiet_ev UserPromptSubmit-$1.json &&
	work $1 &&
	cat "$FIX/transcript-$1.jsonl" >>"$TR" &&
	quiet_ev Stop-$1.json
}

three_turns () {
	session_repo "$1" &&
	quiet_ev SessionStart.json &&
	turn 1 && turn 2 && turn 3
}

# ended T: the checkpoint that ended turn T of $A.
ended () {
	venom_log | jq -r --arg t "$1" --arg a "$A" 'select(.type == "turn.ended" and .agent == $a and .turn == $t) | .checkpoint'
}

test_expect_success 'a session of three turns: each Stop takes its own turn'"'"'s last assistant line' '
	three_turns main &&
	venom_log | jq -r "select(.type == \"turn.ended\") | [.agent, .turn, .checkpoint, .harness_session, .harness_end] | @tsv" >"$OUT/actual" &&
	printf "%s\t%s\t%s\t%s\t%s\n" $A t1 k2 $S $U1 $A t2 k3 $S $U2 $A t3 k4 $S $U3 >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success '--restore all two turns back: the plan names a new session, what it copies and the resume command' '
	cd "$TRASH_DIRECTORY/main" && OUT="$TRASH_DIRECTORY/main.out" &&
	plan k2 >"$OUT/plan.json" &&
	N=$(jq -r .conversation.harness_session "$OUT/plan.json") &&
	echo "$N" | grep -E "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$" &&
	test "$N" != $S &&
	test_json "$OUT/plan.json" ".conversation.rewinds == true" ".conversation.through_turn == \"t1\"" \
		".conversation.drops == [\"t2\", \"t3\"]" \
		".conversation.fork_source == \"$S\"" ".conversation.fork_at == \"$U1\"" \
		".conversation.resume == [\"claude\", \"--resume=$N\"]" \
		".conversation.resume_exec == [\"claude\", \"-p\", \"--resume=$N\"]" \
		"[.repos[0].files[] | \"\\(.change) \\(.class) \\(.path)\"] == [\"delete turn CHANGELOG.md\", \"delete agent cli.py\", \"modify agent greet.py\"]" &&
	git venom-plan --agent $A k2 >"$OUT/plan.txt" &&
	grep "^conversation: rewinds to t1, dropping t2, t3$" "$OUT/plan.txt" &&
	grep "^  the rollback forks the claude-code conversation through t1 first (claude -p --fork-session, no model call)$" "$OUT/plan.txt" &&
	grep "^  it continues in a new session $N: claude --resume=$N$" "$OUT/plan.txt" &&
	echo "$N" >"$OUT/new-session"
'

test_expect_success 'the real call copies the conversation with claude -p, then prints the command that resumes the copy' '
	cd "$TRASH_DIRECTORY/main" && OUT="$TRASH_DIRECTORY/main.out" && N=$(cat "$OUT/new-session") &&
	P=$(jq -r .plan "$OUT/plan.json") &&
	FAKE_CLAUDE_LOG="$OUT/fork-argv" git venom-rollback --agent $A k2 --plan $P >"$OUT/rollback.txt" &&
	printf "%s\n" -p "--resume=$S" "--resume-session-at=$U1" --fork-session "--session-id=$N" --output-format=json \
		"--settings={\"disableAllHooks\":true}" "/rename venom: rewound to after turn t1" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/fork-argv" &&
	sed -n "/^to resume the conversation as it was after t1:$/{n;p;n;p;}" "$OUT/rollback.txt" >"$OUT/actual" &&
	printf "  claude --resume=$N\n  in a script: claude -p --resume=$N <prompt>\n" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	grep "^the old session $S (claude-code) still remembers the dropped turns: close it; resumed, it is told once that the files were rolled back, and its turns are agent $A-old1.s$" "$OUT/rollback.txt" &&
	printf "def greet(name):\n    return '"'"'hi '"'"' + name\n" >"$OUT/expect" && test_cmp "$OUT/expect" greet.py &&
	test_path_is_missing cli.py && test_path_is_missing CHANGELOG.md && test_path_is_file tests/test_greet.py &&
	venom_log | jq -c "select(.type == \"agent.binding\") | {agent, harness, harness_session, fork_source, fork_at, confirmed}" >"$OUT/actual" &&
	{
		echo "{\"agent\":\"$A\",\"harness\":\"claude-code\",\"harness_session\":\"$N\",\"fork_source\":\"$S\",\"fork_at\":\"$U1\",\"confirmed\":null}" &&
		echo "{\"agent\":\"$A-old1\",\"harness\":\"claude-code\",\"harness_session\":\"$S\",\"fork_source\":null,\"fork_at\":null,\"confirmed\":true}"
	} >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success 'that command, pasted into a shell, gives claude exactly the resume argv' '
	cd "$TRASH_DIRECTORY/main" && OUT="$TRASH_DIRECTORY/main.out" && N=$(cat "$OUT/new-session") &&
	mkdir -p "$OUT/fakebin" &&
	printf "#!/bin/sh\nprintf \"%%s\\\\n\" \"\$0\" \"\$@\" >\"\$CLAUDE_ARGV\"\n" >"$OUT/fakebin/claude" &&
	chmod +x "$OUT/fakebin/claude" &&
	sed -n "/^to resume/{n;p;}" "$OUT/rollback.txt" >"$OUT/pasted" &&
	PATH="$OUT/fakebin:$PATH" CLAUDE_ARGV="$OUT/argv" sh "$OUT/pasted" &&
	printf "%s\n" "$OUT/fakebin/claude" "--resume=$N" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/argv"
'

test_expect_success 'a fork claude refuses changes no file: not_found.harness_session, recorded on the rollback'"'"'s end' '
	three_turns refused &&
	plan k2 >"$OUT/plan.json" && P=$(jq -r .plan "$OUT/plan.json") &&
	cp greet.py "$OUT/greet.before" &&
	FAKE_CLAUDE_FAIL=no-session venom_fails not_found.harness_session "$OUT/e.json" git venom-rollback --agent $A k2 --plan $P --json &&
	test_json "$OUT/e.json" ".error.data.session == \"$S\"" ".error.data.safety == \"k5\"" &&
	test_cmp "$OUT/greet.before" greet.py && test_path_is_file cli.py && test_path_is_file CHANGELOG.md &&
	venom_log | jq -r "select(.type == \"rollback.ended\") | .code" >"$OUT/actual" &&
	echo not_found.harness_session >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	test -z "$(venom_log | jq -r "select(.type == \"agent.binding\")")"
'

test_expect_success 'the forked session starts: the binding is confirmed and its prompt is the same agent'"'"'s t4' '
	cd "$TRASH_DIRECTORY/main" && OUT="$TRASH_DIRECTORY/main.out" && TR="$OUT/transcript.jsonl" &&
	SESSION=$(cat "$OUT/new-session") && REPO=$PWD &&
	quiet_ev SessionStart-fork.json &&
	venom_log | jq -c "select(.type == \"agent.binding\") | {agent, harness_session, confirmed}" >"$OUT/actual" &&
	printf "{\"agent\":\"%s\",\"harness_session\":\"%s\",\"confirmed\":%s}\n" $A $SESSION null $A-old1 $S true $A $SESSION true >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	quiet_ev UserPromptSubmit-fork.json &&
	venom_log | jq -r "select(.type == \"turn.started\") | [.agent, .turn, .harness_session] | @tsv" >"$OUT/actual" &&
	printf "%s\t%s\t%s\n" $A t1 $S $A t2 $S $A t3 $S $A t4 $SESSION >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	venom_log | jq -r "select(.type == \"agent.registered\") | .agent" >"$OUT/actual" &&
	echo $A >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success '--restore files: the note is in the result, printed at the next prompt once, then never' '
	three_turns files &&
	rb k2 --restore files >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".restore == \"files\"" ".conversation.rewinds == false" ".conversation.drops == []" \
		"has(\"conversation\") and (.conversation | has(\"resume\") | not)" &&
	note_after t1 >"$OUT/expect" &&
	jq -r .note "$OUT/r.json" >"$OUT/actual" && test_cmp "$OUT/expect" "$OUT/actual" &&
	ev UserPromptSubmit-4.json && test_cmp "$OUT/expect" "$OUT/hook.out" &&
	cat "$FIX/transcript-4.jsonl" >>"$TR" &&
	quiet_ev Stop-4.json &&
	quiet_ev UserPromptSubmit-5.json &&
	venom_log | jq -r "select(.type | startswith(\"note.\")) | .type" >"$OUT/actual" &&
	printf "%s\n" note.pending note.delivered >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success 'an interrupted turn is ended by the next prompt; a plan before any new prompt is turn_running, and its hint ends the turn' '
	session_repo interrupt &&
	turn 1 &&
	quiet_ev UserPromptSubmit-2.json && work 2 &&
	quiet_ev UserPromptSubmit-3.json && work 3 &&
	venom_log | jq -c "select(.type == \"turn.ended\") | {turn, synthetic}" >"$OUT/actual" &&
	printf "%s\n" "{\"turn\":\"t1\",\"synthetic\":null}" "{\"turn\":\"t2\",\"synthetic\":true}" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	venom_fails conflict.turn_running "$OUT/e.json" plan k2 &&
	test_json "$OUT/e.json" ".error.data == {agent: \"$A\", turn: \"t3\"}" &&
	test_expect_code 5 git venom-plan --agent $A k2 2>"$OUT/err" &&
	grep "^hint: .*git venom-checkpoint --agent $A --reason turn_end" "$OUT/err" &&
	git venom-checkpoint --agent $A --reason turn_end --json >"$OUT/te.json" &&
	test_json "$OUT/te.json" ".turn == \"t3\"" &&
	plan k2 --outside overwrite >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".conversation.drops == [\"t2\", \"t3\"]"
'

# --- RFC 8 and DESIGN.md section 6 corners --

# An interrupt fires no hook: the next prompt ends the turn, but cannot say
# when it really ended, and a person who pressed Esc often fixes files by hand
# before typing again. So the window from the turn's start to the next
# prompt is a gap and its paths are outside (RFC 7.3, conservative; RFC 3's
# synthetic end has a capture of its own only where something sees it).
# The next turn's own edits (cli.py, in t3) stay the agent's.
test_expect_success 'an interrupted turn'"'"'s paths are outside: the next prompt cannot say when it ended (RFC 7.3)' '
	cd "$TRASH_DIRECTORY/interrupt" && OUT="$TRASH_DIRECTORY/interrupt.out" &&
	venom_fails conflict.outside_edits "$OUT/e2.json" plan k2 &&
	test_json "$OUT/e2.json" ".error.data.repos[0].paths | sort == [\"CHANGELOG.md\", \"greet.py\"]" &&
	plan k2 --outside keep >"$OUT/plan2.json" &&
	test_json "$OUT/plan2.json" "[.repos[0].files[] | select(.path == \"cli.py\") | .class] == [\"agent\"]"
'

test_expect_success 'after a --restore all, going forward again with --restore all is refused (RFC 8: conversation false, dropped_turn)' '
	three_turns forward &&
	rb k2 >"$OUT/r.json" &&
	git venom-checkpoint list --agent $A --json >"$OUT/list.json" &&
	test_json "$OUT/list.json" "[.checkpoints[] | select(.reused | not) | select(.checkpoint == \"k3\" or .checkpoint == \"k4\") | .conversation] == [false, false]" &&
	venom_fails conflict.checkpoint_files_only "$OUT/e.json" plan k4 &&
	test_json "$OUT/e.json" ".error.data.why == \"dropped_turn\""
'

test_expect_success 'a capture right after a rewind goes with the rewound conversation (through_turn t1, not a dropped turn)' '
	three_turns after &&
	rb k2 >"$OUT/r.json" &&
	echo "# a person" >>README.md &&
	git venom-checkpoint --agent $A --label after --json >"$OUT/k.json" &&
	test_json "$OUT/k.json" ".through_turn == \"t1\""
'

test_expect_success 'the old session, still prompting after a --restore all, is told the files changed, once, as an agent of its own (issue 14 item 7)' '
	three_turns old &&
	rb k2 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".conversation.old_sessions == [{\"harness\": \"claude-code\", \"session\": \"$S\", \"agent\": \"$A-old1\"}]" &&
	ev UserPromptSubmit-4.json &&
	note_after t1 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/hook.out" &&
	cat "$FIX/transcript-4.jsonl" >>"$TR" &&
	quiet_ev Stop-4.json &&
	quiet_ev UserPromptSubmit-5.json &&
	venom_log | jq -r "select(.type == \"turn.started\") | [.agent, .turn, .harness_session] | @tsv" >"$OUT/actual" &&
	printf "%s\t%s\t%s\n" $A t1 $S $A t2 $S $A t3 $S $A-old1 t1 $S $A-old1 t2 $S >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success '--restore all to before the first turn: the old session is told, as an agent of its own, and the output says to start a new session (issue 14 item 2)' '
	three_turns first &&
	plan k1 >"$OUT/plan.json" && P=$(jq -r .plan "$OUT/plan.json") &&
	test_json "$OUT/plan.json" ".conversation.rewinds == true" ".conversation.through_turn == null" \
		".conversation.drops == [\"t1\", \"t2\", \"t3\"]" "(.conversation | has(\"resume\")) | not" \
		".conversation.old_sessions == [{\"harness\": \"claude-code\", \"session\": \"$S\", \"agent\": \"$A-old1\"}]" &&
	FAKE_CLAUDE_LOG="$OUT/fork-argv" git venom-rollback --agent $A k1 --plan $P >"$OUT/rollback.txt" &&
	test_path_is_missing "$OUT/fork-argv" &&
	grep "^the conversation went back to before the first turn: to go on, start a new session (not a resume of the old one):$" "$OUT/rollback.txt" &&
	grep "^  claude$" "$OUT/rollback.txt" && grep "^  in a script: claude -p <prompt>$" "$OUT/rollback.txt" &&
	grep "^the old session $S (claude-code) still remembers the dropped turns" "$OUT/rollback.txt" &&
	ev UserPromptSubmit-4.json &&
	grep "^Note: the files were rolled back to their state before your first turn\." "$OUT/hook.out" &&
	venom_log | jq -r "select(.type == \"turn.started\") | .agent" | tail -n 1 >"$OUT/actual" &&
	echo $A-old1 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success 'a fork with one turn of its own cannot rewind to its k1 (why fork), nor says there is nothing to rewind' '
	session_repo fork &&
	turn 1 &&
	git venom-checkpoint --agent f1 --fork-of $A --through-turn t1 --json >"$OUT/fork.json" &&
	git venom-checkpoint --agent f1 --reason turn_start --json >/dev/null &&
	echo fork >fork.txt &&
	git venom-checkpoint --agent f1 --reason turn_end --json >/dev/null &&
	venom_fails conflict.checkpoint_files_only "$OUT/e.json" git venom-plan --agent f1 k1 --outside overwrite --json &&
	test_json "$OUT/e.json" ".error.data.why == \"fork\""
'

test_expect_success 'a harness_end the Stop could not resolve yet is resolved again at rollback time (issue 5)' '
	session_repo lag &&
	turn 1 &&
	quiet_ev UserPromptSubmit-2.json && work 2 &&
	sed -e "s|{{CWD}}|$REPO|g" -e "s|{{TRANSCRIPT}}|$TR|g" "$FIX/Stop-2.json" | git venom-hook claude-code 2>"$OUT/stop.err" &&
	grep "harness_end" "$OUT/stop.err" &&
	venom_log | grep "\"type\":\"turn.ended\"" | tail -n 1 >"$OUT/ended.json" &&
	test_json "$OUT/ended.json" ".harness_end == null and .harness_end_pending.after == \"$U1\"" &&
	cat "$FIX/transcript-2.jsonl" >>"$TR" &&
	turn 3 &&
	plan $(ended t2) >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".conversation.fork_at == \"$U2\""
'

test_done
