#!/usr/bin/env bash

test_description='field cases P, Q of CASES.md: files and conversation go together; a person'"'"'s edits are never overwritten unasked'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# The RFC 11.5 default note, with {when} filled in.
default_note () {
	echo "Note: the files were rolled back to their state $1. Changes made after that point are gone, and what you remember of them may no longer be true. Read the files before you rely on them."
}

log_types () {
	venom_log | jq -r .type
}

# --- P. Conversation / file mismatch -----------------------------------------

# The agents of these cases have a conversation: their turns come from a
# harness (--harness, as a hook gives it). An agent whose checkpoints were
# taken by hand has none (t0022).
HARNESS="--harness claude-code --harness-session s1"

test_expect_success 'BR-58: files only must be asked for, and then the agent is told (the note)' '
	case_repo br58 &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts $HARNESS) && echo "def calculate_tax(): pass" >tax.py && K2=$(te $HARNESS) &&
	plan $K1 >"$OUT/default.json" &&
	test_json "$OUT/default.json" ".restore == \"all\"" ".conversation | {rewinds, through_turn, drops} == {rewinds: true, through_turn: null, drops: [\"t1\"]}" &&
	rb $K1 --restore files >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".restore == \"files\"" ".conversation.rewinds == false" ".conversation.drops == []" \
		".repos[0].files == [{path: \"tax.py\", change: \"delete\", class: \"turn\"}]" &&
	test_path_is_missing tax.py &&
	jq -r .note "$OUT/r.json" >"$OUT/note" &&
	default_note "before your first turn" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/note" &&
	venom_log | jq -r "select(.type == \"note.pending\") | [.agent, .text] | @tsv" >"$OUT/pending" &&
	printf "a1\t%s\n" "$(default_note "before your first turn")" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/pending"
'

test_expect_success 'BR-58: restore=all on a harness that cannot rewind is unsupported.harness_capability, data.fix --restore=files, nothing changed' '
	case_repo br58h &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts --harness gemini) && echo b >>a && K2=$(te --harness gemini) &&
	K3=$(ts --harness gemini) && echo c >>a && K4=$(te --harness gemini) &&
	tree_state >"$OUT/tree.0" && refs_state >"$OUT/refs.0" && log_types >"$OUT/log.0" &&
	venom_fails unsupported.harness_capability "$OUT/e.json" plan $K2 --restore all &&
	test_json "$OUT/e.json" ".error.data.fix == \"--restore=files\"" &&
	venom_fails unsupported.harness_capability "$OUT/e2.json" \
		git venom-rollback --agent $AG $K2 --plan p1-0000000000000000 --json &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	refs_state >"$OUT/refs.1" && test_cmp "$OUT/refs.0" "$OUT/refs.1" &&
	log_types >"$OUT/log.1" && test_cmp "$OUT/log.0" "$OUT/log.1" &&
	rb $K2 --restore files >"$OUT/r.json" &&
	jq -r .note "$OUT/r.json" >"$OUT/note" &&
	default_note "after turn t1" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/note" &&
	printf "a\nb\n" >"$OUT/expect" && test_cmp "$OUT/expect" a &&
	echo d >>a &&
	git config venom.checkpoints.rollbackNote "Files reset {when}; reread them." &&
	rb $K2 --restore files >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" ".note == \"Files reset after turn t1; reread them.\""
'

test_expect_success 'BR-59: changes made by shell commands are all planned (class turn) and restored' '
	case_repo br59 &&
	printf "x = 1\n" >app.py && git add . && git commit -qm init &&
	K1=$(ts) &&
	perl -i -pe "s/x = 1/x = 2/" app.py &&
	perl -e "open(my \$f, \">\", \"gen.py\"); print \$f \"y = 3\\n\"" &&
	cat >notes.md <<-\EOF &&
	written by a heredoc
	EOF
	K2=$(te) &&
	plan $K1 >"$OUT/plan.json" &&
	jq -r ".repos[0].files[] | \"\\(.path) \\(.change) \\(.class)\"" "$OUT/plan.json" >"$OUT/actual" &&
	printf "%s\n" "app.py modify turn" "gen.py delete turn" "notes.md delete turn" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	rb $K1 >"$OUT/r.json" && test_json "$OUT/r.json" ".exact == true" &&
	printf "x = 1\n" >"$OUT/expect" && test_cmp "$OUT/expect" app.py &&
	test_path_is_missing gen.py && test_path_is_missing notes.md
'

test_expect_success 'BR-59: a path an edit call names is class agent; the shell'"'"'s changes stay turn' '
	case_repo br59e &&
	printf "x = 1\n" >app.py && echo doc >README.md && git add . && git commit -qm init &&
	K1=$(ts) &&
	echo "edited by a tool" >>README.md &&
	git venom-checkpoint edit --agent $AG --path README.md --json >"$OUT/edit.json" &&
	perl -i -pe "s/x = 1/x = 2/" app.py &&
	K2=$(te) &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" \
		".repos[0].files == [{path: \"README.md\", change: \"modify\", class: \"agent\"}, {path: \"app.py\", change: \"modify\", class: \"turn\"}]"
'

test_expect_success 'BR-60: restore=all is all or nothing: a failed rewind writes no file and changes no binding' '
	case_repo br60 &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts $HARNESS) && echo b >>a && K2=$(te $HARNESS) &&
	tree_state >"$OUT/tree.0" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".conversation.rewinds == true" &&
	P=$(jq -r .plan "$OUT/plan.json") &&
	venom_fails conflict.harness_fork_refused "$OUT/r.json" \
		env GIT_VENOM_TEST_HARNESS_REWIND=fail git venom-rollback --agent $AG $K1 --plan $P --json &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	test "$(tail -n 1 a)" = b &&
	venom_log | jq -c "select(.type == \"agent.binding\")" >"$OUT/bindings" && test_must_be_empty "$OUT/bindings" &&
	venom_log | jq -c "select(.type == \"rollback.ended\") | {ok, code}" >"$OUT/ended" &&
	echo "{\"ok\":false,\"code\":\"conflict.harness_fork_refused\"}" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ended"
'

test_expect_success 'BR-60: with Claude Code'"'"'s ids the rewind is named before any file moves; a refusal changes nothing' '
	case_repo br60c &&
	echo a >a && git add . && git commit -qm init &&
	H="--harness claude-code --harness-session S1" &&
	K1=$(ts $H) && echo b >>a && K2=$(te $H --harness-end U1) &&
	K3=$(ts $H) && echo c >>a && K4=$(te $H --harness-end U2) &&
	tree_state >"$OUT/tree.0" &&
	P=$(plan $K2 | jq -r .plan) &&
	venom_fails conflict.harness_fork_refused "$OUT/refused.json" \
		env GIT_VENOM_TEST_HARNESS_REWIND=fail git venom-rollback --agent $AG $K2 --plan $P --json &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	venom_log | jq -c "select(.type == \"agent.binding\")" >"$OUT/bindings" && test_must_be_empty "$OUT/bindings" &&
	rb $K2 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" ".conversation.rewinds == true" ".conversation.through_turn == \"t1\"" \
		".conversation.drops == [\"t2\"]" ".conversation.harness_session | test(\"^[0-9a-f-]{36}$\")" &&
	S=$(jq -r .conversation.harness_session "$OUT/r.json") &&
	test_json "$OUT/r.json" ".conversation.fork_source == \"S1\"" ".conversation.fork_at == \"U1\"" \
		".conversation.resume == [\"claude\", \"--resume=$S\"]" &&
	printf "a\nb\n" >"$OUT/expect" && test_cmp "$OUT/expect" a &&
	venom_log | jq -c "select(.type == \"agent.binding\") | {agent, harness, harness_session, fork_source, fork_at}" >"$OUT/binding" &&
	{
		echo "{\"agent\":\"$AG\",\"harness\":\"claude-code\",\"harness_session\":\"$S\",\"fork_source\":\"S1\",\"fork_at\":\"U1\"}" &&
		echo "{\"agent\":\"$AG-old1\",\"harness\":\"claude-code\",\"harness_session\":\"S1\",\"fork_source\":null,\"fork_at\":null}"
	} >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/binding"
'

# --- Q. Person's edits overwritten -------------------------------------------

br62_setup () {
	case_repo $1 guarded &&
	echo app >app.js && echo readme >README.md && git add . && git commit -qm init &&
	K1=$(ts) && echo agent >>app.js && K2=$(te) &&
	echo "person edit" >>README.md && mkdir notes && echo todo >notes/todo.md
}

test_expect_success 'BR-62: in a guarded tree a person'"'"'s edits are refused by default, kept with --outside keep' '
	br62_setup br62 &&
	cp README.md "$OUT/readme.person" &&
	tree_state >"$OUT/tree.0" &&
	venom_fails conflict.outside_edits "$OUT/refused.json" plan $K1 &&
	test_json "$OUT/refused.json" ".error.data.repos == [{repo: \".\", paths: [\"README.md\", \"notes/todo.md\"], changes: [\"modify\", \"delete\"]}]" &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	I0=$(index_hash) &&
	rb $K1 --outside keep >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"app.js\", change: \"modify\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"README.md\", reason: \"outside\"}, {path: \"notes/todo.md\", reason: \"outside\"}]" &&
	test_cmp "$OUT/readme.person" README.md && test "$(cat notes/todo.md)" = todo &&
	echo app >"$OUT/expect" && test_cmp "$OUT/expect" app.js &&
	test "$(index_hash)" = "$I0"
'

test_expect_success 'BR-62: --outside overwrite restores them too, and the safety checkpoint holds them' '
	cd "$TRASH_DIRECTORY/br62" && OUT="$TRASH_DIRECTORY/br62.out" &&
	rb $K1 --outside overwrite >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" \
		".repos[0].files == [{path: \"README.md\", change: \"modify\", class: \"outside\"}, {path: \"notes/todo.md\", change: \"delete\", class: \"outside\"}]" &&
	echo readme >"$OUT/expect" && test_cmp "$OUT/expect" README.md && test_path_is_missing notes &&
	SAFE=$(jq -r .safety "$OUT/r2.json") &&
	git show "$(ref $SAFE):README.md" >"$OUT/actual" && test_cmp "$OUT/readme.person" "$OUT/actual" &&
	git show "$(ref $SAFE):notes/todo.md" >"$OUT/actual" && echo todo >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success 'BR-62: an agent may dry-run but never make the real call in a guarded tree (denied.agent_caller)' '
	br62_setup br62a &&
	tree_state >"$OUT/tree.0" && refs_state >"$OUT/refs.0" && log_types >"$OUT/log.0" &&
	env GIT_VENOM_CALLER=agent git venom-plan --agent $AG $K1 --outside keep --json >"$OUT/agent-plan.json" &&
	P=$(jq -r .plan "$OUT/agent-plan.json") &&
	venom_fails denied.agent_caller "$OUT/denied.json" \
		env GIT_VENOM_CALLER=agent git venom-rollback --agent $AG $K1 --outside keep --plan $P --json &&
	venom_fails denied.agent_caller "$OUT/denied2.json" \
		env CLAUDE_CODE_CHILD_SESSION=1 git venom-rollback --agent $AG $K1 --outside overwrite --plan x --json &&
	venom_fails denied.agent_caller "$OUT/denied3.json" \
		env CODEX_THREAD_ID=t git venom-rollback --agent $AG $K1 --outside keep --plan $P --json &&
	venom_fails conflict.rollback_stale "$OUT/stale.json" \
		git venom-rollback --agent $AG $K1 --outside overwrite --plan x --json &&
	test_json "$OUT/stale.json" ".error.data.checkpoint == \"$K1\"" &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	refs_state >"$OUT/refs.1" && test_cmp "$OUT/refs.0" "$OUT/refs.1" &&
	log_types >"$OUT/log.1" && test_cmp "$OUT/log.0" "$OUT/log.1"
'

test_expect_success 'BR-63: the safety checkpoint holds the person'"'"'s edit; rolling back to it is the redo' '
	case_repo br63 &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts) && echo "agent v1" >feature.py && K2=$(te) &&
	echo "# person tweak" >>feature.py && cp feature.py "$OUT/feature.before" &&
	tree_state >"$OUT/tree.before" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"feature.py\", change: \"delete\", class: \"outside\"}]" &&
	test_path_is_missing feature.py &&
	SAFE=$(jq -r .safety "$OUT/r.json") &&
	rb $SAFE --restore files >"$OUT/redo.json" &&
	test_json "$OUT/redo.json" ".exact == true" &&
	test_cmp "$OUT/feature.before" feature.py &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after"
'

test_expect_success 'BR-63: safety checkpoints outlive keep and agent clean (keepSafety)' '
	cd "$TRASH_DIRECTORY/br63" && OUT="$TRASH_DIRECTORY/br63.out" &&
	git config venom.checkpoints.keep 1 &&
	git venom-checkpoint prune --agent $AG --json >"$OUT/prune.json" &&
	git cat-file -e "$(ref $SAFE)" &&
	git venom-checkpoint clean --agent $AG --json >"$OUT/clean.json" &&
	test_json "$OUT/clean.json" "[.checkpoints[].kept[]] | index(\"$SAFE\") != null" &&
	git show "$(ref $SAFE):feature.py" >"$OUT/actual" && test_cmp "$OUT/feature.before" "$OUT/actual" &&
	venom_fails conflict.invalid_transition "$OUT/archived.json" plan $SAFE --restore files
'

test_expect_success 'BR-66: a plan gone stale is conflict.rollback_stale, nothing written, the checkpoint stays; a rerun is a no-op' '
	case_repo br66 &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts) && echo agent >>a && K2=$(te) &&
	P=$(plan $K1 | jq -r .plan) &&
	echo "editor save" >>a &&
	tree_state >"$OUT/tree.0" && refs_state >"$OUT/refs.0" && log_types >"$OUT/log.0" &&
	venom_fails conflict.rollback_stale "$OUT/stale.json" git venom-rollback --agent $AG $K1 --plan $P --json &&
	test_json "$OUT/stale.json" ".error.data.checkpoint == \"$K1\"" &&
	tree_state >"$OUT/tree.1" && test_cmp "$OUT/tree.0" "$OUT/tree.1" &&
	refs_state >"$OUT/refs.1" && test_cmp "$OUT/refs.0" "$OUT/refs.1" &&
	log_types >"$OUT/log.1" && test_cmp "$OUT/log.0" "$OUT/log.1" &&
	grep "editor save" a &&
	P2=$(plan $K1 --outside keep | jq -r .plan) &&
	venom_fails conflict.rollback_stale "$OUT/stale2.json" git venom-rollback --agent $AG $K1 --plan $P2 --json &&
	git venom-checkpoint list --agent $AG --json >"$OUT/list.json" &&
	test_json "$OUT/list.json" "[.checkpoints[].checkpoint] | index(\"$K1\") != null" &&
	rb $K1 >"$OUT/r1.json" &&
	test_json "$OUT/r1.json" ".exact == true" &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" a &&
	rb $K1 >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" ".repos[0].files == []" ".repos[0].left == []" ".exact == true" &&
	git venom-checkpoint list --agent $AG --json >"$OUT/list2.json" &&
	for k in $K1 $K2 $(jq -r ".safety, .after" "$OUT/r1.json"); do
		test_json "$OUT/list2.json" "[.checkpoints[].checkpoint] | index(\"$k\") != null" || return 1
	done
'

test_done
