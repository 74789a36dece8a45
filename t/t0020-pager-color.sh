#!/usr/bin/env bash

test_description='the pager and colour as git has them: only on a terminal, never in --json'

. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-terminal.sh"

# test-lib sets GIT_PAGER=cat and TERM=dumb for every test; these tests
# choose their own.
unset GIT_PAGER
TERM=xterm
export TERM

ESC=$(printf '\033')

test_expect_success 'setup: a turn, and a person editing between turns' '
	test_commit base notes.md "notes" &&
	git venom-checkpoint --agent a1 --reason turn_start >/dev/null &&
	echo "agent" >agent.txt &&
	git venom-checkpoint --agent a1 --reason turn_end >/dev/null &&
	echo "a person" >>notes.md
'

test_expect_success 'not on a terminal: no pager and no colour' '
	GIT_PAGER="cat >pager.out" git venom-plan --agent a1 k1 --outside overwrite >out &&
	test_path_is_missing pager.out &&
	! grep "$ESC" out &&
	grep "^! modify  outside  notes.md$" out
'

test_expect_success TTY 'on a terminal the plan goes through GIT_PAGER, in colour, outside in gold' '
	test_terminal env GIT_PAGER="cat >pager.out" git venom-plan --agent a1 k1 --outside overwrite >out &&
	test_must_be_empty out &&
	grep "^${ESC}\[1mplan p[12]-" pager.out &&
	grep "^${ESC}\[38;5;178m! modify  outside  notes.md${ESC}\[m$" pager.out &&
	grep "^  ${ESC}\[31mdelete${ESC}\[m  turn     agent.txt$" pager.out
'

test_expect_success TTY 'the pager gets LESS=FRX and LV=-c unless they are set, and GIT_PAGER_IN_USE' '
	test_terminal env GIT_PAGER="env >pager.out; cat >/dev/null" git venom-plan --agent a1 k1 --outside keep >out &&
	grep "^LESS=FRX$" pager.out &&
	grep "^LV=-c$" pager.out &&
	grep "^GIT_PAGER_IN_USE=true$" pager.out &&
	test_terminal env LESS=R GIT_PAGER="env >pager.out; cat >/dev/null" git venom-plan --agent a1 k1 --outside keep >out &&
	grep "^LESS=R$" pager.out
'

test_expect_success TTY 'the pager is git'"'"'s: GIT_PAGER, then core.pager, then PAGER' '
	rm -f pager.out core.out env.out &&
	test_terminal env PAGER="cat >env.out" git -c core.pager="cat >core.out" venom-plan --agent a1 k1 --outside keep >out &&
	test_path_is_file core.out && test_path_is_missing env.out &&
	rm -f core.out &&
	test_terminal env PAGER="cat >env.out" git-venom-plan --agent a1 k1 --outside keep >out &&
	test_path_is_file env.out &&
	grep "^${ESC}\[1mplan p[12]-" env.out
'

test_expect_success TTY '--no-pager, git --no-pager and pager.venom-plan=false print to the terminal' '
	rm -f pager.out &&
	test_terminal env GIT_PAGER="cat >pager.out" git venom-plan --no-pager --agent a1 k1 --outside keep >out &&
	test_path_is_missing pager.out &&
	grep "^${ESC}\[1mplan p[12]-" out &&
	test_terminal env GIT_PAGER="cat >pager.out" git --no-pager venom-plan --agent a1 k1 --outside keep >out &&
	test_path_is_missing pager.out &&
	grep "plan p[12]-" out &&
	test_terminal env GIT_PAGER="cat >pager.out" git -c pager.venom-plan=false venom-plan --agent a1 k1 --outside keep >out &&
	test_path_is_missing pager.out &&
	grep "plan p[12]-" out
'

test_expect_success TTY 'pager.venom-plan names a pager of its own; git -p pages once' '
	rm -f pager.out own.out &&
	git config pager.venom-plan "cat >own.out" &&
	test_terminal env GIT_PAGER="cat >pager.out" git-venom-plan --agent a1 k1 --outside keep >out &&
	test_path_is_file own.out && test_path_is_missing pager.out &&
	git config --unset pager.venom-plan &&
	rm -f own.out &&
	test_terminal env GIT_PAGER="cat >pager.out" git -p venom-checkpoint list --agent a1 >out &&
	test_line_count = 2 pager.out &&
	grep "^k2 " pager.out
'

test_expect_success TTY 'the rollback pages only when asked (-p), a real call being an action' '
	rm -f pager.out &&
	test_terminal env GIT_PAGER="cat >pager.out" git venom-rollback --agent a1 k1 --dry-run --outside keep --no-pager >out &&
	test_path_is_missing pager.out &&
	P=$(git venom-plan --agent a1 k1 --outside keep --json | jq -r .plan) &&
	test_terminal env GIT_PAGER="cat >pager.out" git venom-rollback --agent a1 k1 --plan $P --outside keep >out &&
	test_path_is_missing pager.out &&
	grep "^${ESC}\[1mrolled back a1 to k1" out &&
	test_terminal env GIT_PAGER="cat >pager.out" git venom-checkpoint list -p --agent a1 >out &&
	grep "pre_rollback" pager.out
'

test_expect_success TTY 'colour follows --color, NO_COLOR, color.venom, color.ui and TERM' '
	test_terminal git venom-plan --no-pager --agent a1 k3 --restore files --outside keep >out &&
	grep "$ESC" out &&
	test_terminal env NO_COLOR=1 git venom-plan --no-pager --agent a1 k3 --restore files --outside keep >out &&
	! grep "$ESC" out &&
	test_terminal env NO_COLOR=1 git venom-plan --color=always --no-pager --agent a1 k3 --restore files --outside keep >out &&
	grep "$ESC" out &&
	test_terminal git -c color.ui=never venom-plan --no-pager --agent a1 k3 --restore files --outside keep >out &&
	! grep "$ESC" out &&
	test_terminal git -c color.ui=never -c color.venom=auto venom-plan --no-pager --agent a1 k3 --restore files --outside keep >out &&
	grep "$ESC" out &&
	test_terminal git -c color.venom=false venom-plan --no-pager --agent a1 k3 --restore files --outside keep >out &&
	! grep "$ESC" out &&
	test_terminal git venom-plan --no-color --no-pager --agent a1 k3 --restore files --outside keep >out &&
	! grep "$ESC" out &&
	test_terminal env TERM=dumb git venom-plan --no-pager --agent a1 k3 --restore files --outside keep >out &&
	! grep "$ESC" out
'

test_expect_success TTY 'color.venom.<slot> is read in git'"'"'s colour syntax' '
	echo "again" >>notes.md &&
	test_terminal git -c color.venom.outside="bold blue" venom-plan --no-pager --agent a1 k3 --outside overwrite --restore files >out &&
	grep "^${ESC}\[1;34m! modify  outside  notes.md${ESC}\[m$" out
'

test_expect_success TTY '--json on a terminal: no pager, no colour, one object' '
	rm -f pager.out &&
	test_terminal env GIT_PAGER="cat >pager.out" git venom-plan --color=always --agent a1 k3 --restore files --outside keep --json >out &&
	test_path_is_missing pager.out &&
	! grep "$ESC" out &&
	jq -e ".dry_run == true" out
'

test_expect_success '--color=always colours into a file; a bad --color is a usage error' '
	git venom-plan --color=always --agent a1 k3 --restore files --outside keep >out &&
	grep "$ESC" out &&
	test_expect_code 2 git venom-plan --color=sometimes --agent a1 k3 2>err &&
	grep "^error: --color must be auto, always or never" err
'

test_done
