#!/usr/bin/env bash

test_description='git venom-hook: harness events become turns, checkpoints and edit records; install and uninstall'

. "$(dirname "$0")/test-lib.sh"

FIXTURES="$VENOM_SRC/harness/testdata"
CLAUDE=claude-0d3c8b1e7f2a

# ev HARNESS FIXTURE: the fixture with {{CWD}} and {{TRANSCRIPT}} filled in,
# on stdout.
ev () {
	sed -e "s|{{CWD}}|$PWD|g" -e "s|{{TRANSCRIPT}}|$PWD/transcript.jsonl.out|g" "$FIXTURES/$1/$2"
}

# hook HARNESS FIXTURE: runs the hook on the fixture; its stdout in
# hook.out, its stderr in hook.err; fails unless it exits 0.
hook () {
	ev "$1" "$2" | git venom-hook "$1" >hook.out 2>hook.err
}

# logged TYPE prints the log records of that type, compact, one a line.
logged () {
	venom_log | jq -c "select(.type == \"$1\")"
}

test_expect_success 'setup' '
	test_commit initial README.md "hello" &&
	test_commit util src/util.py "a" &&
	cp "$FIXTURES/claude-code/transcript.jsonl" transcript.jsonl.out
'

test_expect_success 'a prompt opens a turn with a turn_start checkpoint, saying nothing on stdout' '
	hook claude-code SessionStart.json &&
	test_must_be_empty hook.out &&
	hook claude-code UserPromptSubmit.json &&
	test_must_be_empty hook.out &&
	test_must_be_empty hook.err &&
	logged turn.started >started.out &&
	test_line_count = 1 started.out &&
	jq -e ".agent == \"$CLAUDE\" and .turn == \"t1\" and .checkpoint == \"k1\" and .harness == \"claude-code\"" started.out &&
	git rev-parse --verify "$(venom_ref $CLAUDE k1)"
'

test_expect_success 'edit tools become edit records of the open turn; a shell command does not' '
	mkdir -p src &&
	echo "def factorial(n): ..." >src/factorial.py &&
	hook claude-code PostToolUse-Write.json &&
	echo "hello, world" >README.md &&
	hook claude-code PostToolUse-Edit.json &&
	echo "x = 2" >app.py &&
	hook claude-code PostToolUse-Bash.json &&
	test_must_be_empty hook.out &&
	logged edit | jq -r "[.turn] + .paths | join(\" \")" >actual &&
	printf "t1 src/factorial.py\nt1 README.md\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'Stop ends the turn with the transcript'"'"'s last assistant uuid' '
	hook claude-code Stop.json &&
	test_must_be_empty hook.out &&
	logged turn.ended >ended.out &&
	jq -e ".turn == \"t1\" and .checkpoint == \"k2\" and .harness_end == \"a3\" and .harness_turn == \"6f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f\"" ended.out &&
	git show "$(venom_ref $CLAUDE k2):app.py" >actual &&
	echo "x = 2" >expect &&
	test_cmp expect actual
'

test_expect_success 'an interrupted turn (no Stop) is ended by the next prompt' '
	hook claude-code UserPromptSubmit.json &&
	echo more >>README.md &&
	hook claude-code UserPromptSubmit.json &&
	logged turn.ended | tail -n 1 >last.out &&
	jq -e ".turn == \"t2\" and .synthetic == true" last.out &&
	hook claude-code SessionEnd.json &&
	logged turn.ended | tail -n 1 >last.out &&
	jq -e ".turn == \"t3\" and (.synthetic | not)" last.out
'

test_expect_success 'git venom-checkpoint list shows the session'"'"'s checkpoints' '
	git venom-checkpoint list --agent $CLAUDE --json >list.json &&
	test_json list.json "[.checkpoints[] | select(.reused | not) | .checkpoint] == [\"k3\", \"k2\", \"k1\"]"
'

test_expect_success 'a second session in the tree is a second agent' '
	ev claude-code UserPromptSubmit.json | sed "s/0d3c8b1e-7f2a/9a8b7c6d-5e4f/" | git venom-hook claude-code &&
	logged agent.registered | jq -r .agent | sort >actual &&
	printf "%s\n" claude-0d3c8b1e7f2a claude-9a8b7c6d5e4f >expect &&
	test_cmp expect actual
'

test_expect_success 'malformed input: exit 0, a message, and a checkpoint.failed' '
	ev claude-code malformed-truncated.json | git venom-hook claude-code >hook.out 2>hook.err &&
	test_must_be_empty hook.out &&
	grep "malformed hook event" hook.err &&
	logged checkpoint.failed | tail -n 1 | jq -e ".code == \"invalid_params.hook_event\""
'

test_expect_success 'outside any repository: exit 0 and a message' '
	(
		cd "$VENOM_TEST_ROOT" &&
		echo "{\"session_id\":\"s\",\"cwd\":\"$VENOM_TEST_ROOT\",\"hook_event_name\":\"UserPromptSubmit\"}" |
		git venom-hook claude-code >out 2>err &&
		test_must_be_empty out &&
		grep "not in a git working tree" err
	)
'

test_expect_success 'an unknown harness still exits 0' '
	echo "{}" | git venom-hook vim >hook.out 2>hook.err &&
	test_must_be_empty hook.out &&
	grep "unknown harness" hook.err
'

test_expect_success 'venom.checkpoints.enabled=false: no checkpoint, no edit record' '
	venom_log >before.out &&
	ev claude-code UserPromptSubmit.json | git -c venom.checkpoints.enabled=false venom-hook claude-code &&
	ev claude-code PostToolUse-Write.json | git -c venom.checkpoints.enabled=false venom-hook claude-code &&
	ev claude-code Stop.json | git -c venom.checkpoints.enabled=false venom-hook claude-code &&
	venom_log >after.out &&
	test_cmp before.out after.out
'

test_expect_success 'Codex: apply_patch paths come from the patch headers' '
	hook codex UserPromptSubmit.json &&
	hook codex PostToolUse-apply_patch.json &&
	test_must_be_empty hook.out &&
	logged edit | tail -n 1 | jq -r ".paths | join(\" \")" >actual &&
	echo "docs/new_name.md docs/old_name.md obsolete.txt src/app.py src/new_module.py" >expect &&
	test_cmp expect actual &&
	hook codex Stop.json &&
	test_must_be_empty hook.out &&
	logged turn.ended | tail -n 1 | jq -e ".agent == \"codex-9690b4ce6b9e\" and .harness_turn == \"019dba93-9a01-7c11-8e2f-0a1b2c3d4e5f\""
'

test_expect_success 'Gemini CLI and Cursor: turns and edits; Cursor gets {} on stdout' '
	hook gemini BeforeAgent.json &&
	test_must_be_empty hook.out &&
	hook gemini AfterTool-replace.json &&
	hook gemini AfterAgent.json &&
	logged edit | tail -n 1 | jq -e ".agent == \"gemini-8c2f6e1a5b3d\" and .paths == [\"README.md\"]" &&
	hook cursor beforeSubmitPrompt.json &&
	echo "{}" >expect &&
	test_cmp expect hook.out &&
	hook cursor afterFileEdit.json &&
	test_cmp expect hook.out &&
	hook cursor stop.json &&
	test_cmp expect hook.out &&
	logged turn.ended | tail -n 1 | jq -e ".agent == \"cursor-668320d22fd3\""
'

test_expect_success 'parallel hooks lose no record and tear none' '
	hook claude-code UserPromptSubmit.json &&
	before=$(venom_log | wc -l) &&
	i=0 &&
	while test $i -lt 24; do
		ev claude-code PostToolUse-Write.json | sed "s|src/factorial.py|gen/f$i.py|" |
			git venom-hook claude-code >>par.out 2>&1 &
		i=$((i + 1))
	done &&
	wait &&
	test_must_be_empty par.out &&
	after=$(venom_log | wc -l) &&
	test $((after - before)) = 24 &&
	venom_log | jq -r .seq >seqs.out &&
	sort -n seqs.out | uniq >uniq.out &&
	test_cmp seqs.out uniq.out &&
	venom_log | jq -r "select(.type == \"edit\") | .paths[]" | grep -c "^gen/f" >count.out &&
	echo 24 >expect &&
	test_cmp expect count.out
'

test_expect_success 'checkpoint edit: paths relative to the current directory; outside refused' '
	(cd src && git venom-checkpoint edit --agent $CLAUDE --path util.py --path ../README.md --json) >edit.json &&
	test_json edit.json ".paths == [\"README.md\", \"src/util.py\"]" ".agent == \"$CLAUDE\"" &&
	test_expect_code 2 git venom-checkpoint edit --agent $CLAUDE --path /etc/hosts --json >err.json &&
	test_json err.json ".error.code == \"invalid_params.path\""
'

test_expect_success 'install keeps the person'"'"'s hooks, is idempotent, and uninstall restores the file' '
	mkdir -p .claude &&
	cat >.claude/settings.local.json <<-\EOF &&
	{
	  "hooks": {
	    "Stop": [
	      {
	        "hooks": [
	          {
	            "type": "command",
	            "command": "say done"
	          }
	        ]
	      }
	    ]
	  },
	  "model": "opus"
	}
	EOF
	cp .claude/settings.local.json orig.out &&
	git venom-hook install claude-code >install.out &&
	grep "^wrote .*/.claude/settings.local.json (local scope):" install.out &&
	jq -e ".model == \"opus\" and (.hooks.Stop | length == 2) and .hooks.Stop[0].hooks[0].command == \"say done\"" .claude/settings.local.json &&
	cp .claude/settings.local.json installed.out &&
	git venom-hook install claude-code >again.out &&
	grep "^already installed" again.out &&
	test_cmp installed.out .claude/settings.local.json &&
	git venom-hook uninstall claude-code >uninstall.out &&
	grep "^removed 7 git venom-hook claude-code entries" uninstall.out &&
	test_cmp orig.out .claude/settings.local.json
'

test_expect_success 'install codex names the trust step; a scope it lacks is refused' '
	git venom-hook install codex >install.out &&
	grep "/hooks" install.out &&
	test_path_is_file .codex/hooks.json &&
	test_expect_code 2 git venom-hook install codex --scope local 2>err &&
	grep "no .local. settings scope" err
'

# git exports a relative GIT_DIR (.git) to hooks. When the hook runs with it
# and the event's cwd is a subdirectory, GIT_DIR is relative to where it was
# set, not to the event's cwd.
test_expect_success 'a relative GIT_DIR is the hook'"'"'s, not relative to the event'"'"'s cwd' '
	git init -q reldir &&
	(
		cd reldir &&
		mkdir sub && echo a >sub/a && git add . &&
		git -c user.name=a -c user.email=a@b commit -qm i &&
		sed -e "s|{{CWD}}|$PWD/sub|g" -e "s|{{TRANSCRIPT}}|$PWD/t.jsonl|g" "$FIXTURES/claude-code/UserPromptSubmit.json" |
		GIT_DIR=.git git venom-hook claude-code >out 2>err &&
		test_must_be_empty err &&
		venom_log | jq -c "select(.type == \"turn.started\") | {agent, turn}" >actual &&
		echo "{\"agent\":\"$CLAUDE\",\"turn\":\"t1\"}" >expect &&
		test_cmp expect actual
	)
'

# A harness that closed its end of the hook's stdout must not kill it with
# SIGPIPE: exit 0, and the event is handled (Cursor always writes a JSON
# object, so its hook writes to stdout on every event).
test_expect_success 'a harness that stopped reading neither kills the hook nor loses the event' '
	git init -q pipes &&
	(
		cd pipes &&
		echo a >a && git add a && git -c user.name=a -c user.email=a@b commit -qm i &&
		sed -e "s|{{CWD}}|$PWD|g" "$FIXTURES/cursor/beforeSubmitPrompt.json" >ev.json &&
		{ git-venom-hook cursor <ev.json 2>err; echo $? >rc; } | (exec <&-; sleep 1) &&
		echo 0 >expect && test_cmp expect rc &&
		venom_log | jq -r "select(.type == \"turn.started\") | .turn" >actual &&
		echo t1 >expect &&
		test_cmp expect actual
	)
'

test_done
