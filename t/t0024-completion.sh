#!/usr/bin/env bash

test_description='shell completion: bash (alone and through git'"'"'s) and zsh complete subcommands, options, agents, checkpoints'

. "$(dirname "$0")/test-lib.sh"

BASH_COMP="$VENOM_SRC/completion/git-venom.bash"
ZSH_COMP="$VENOM_SRC/completion/zsh"

# git's own bash completion, where the usual installs put it.
for _f in /usr/share/bash-completion/completions/git \
	/usr/local/share/bash-completion/completions/git \
	/opt/homebrew/etc/bash_completion.d/git-completion.bash \
	/usr/local/etc/bash_completion.d/git-completion.bash \
	/Library/Developer/CommandLineTools/usr/share/git-core/git-completion.bash \
	"$(git --exec-path)/../../share/git-core/contrib/completion/git-completion.bash"; do
	if test -f "$_f"; then
		GIT_COMPLETION=$_f
		test_set_prereq GIT_COMPLETION
		break
	fi
done
if command -v zsh >/dev/null 2>&1 && zsh -f -c 'zmodload zsh/zpty' 2>/dev/null; then
	test_set_prereq ZSH
fi

# bcomp WORDS...: what the bash completion offers for the command line
# WORDS (the last one being completed), one a line, sorted. With
# GIT=1 it goes through git's completion (git venom-... <TAB>).
bcomp () {
	bash -c '
		if test -n "$GIT"; then . "$GIT_COMPLETION"; fi
		. "$BASH_COMP"
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
		if test -n "$GIT"; then
			__git_wrap__git_main
		else
			case "$1:$2" in
			git-venom:* | *:venom) f=_git_venom ;;
			git-venom-*) f=_git_venom_${1#git-venom-} ;;
			*) f=_git_venom_${2#venom-} ;;
			esac
			$f
		fi
		printf "%s\n" "${COMPREPLY[@]}"
	' bcomp "$@" | sed "s/ *$//" | sort
}
export BASH_COMP GIT_COMPLETION

test_expect_success 'setup: two agents with checkpoints' '
	test_commit base a.txt a &&
	git venom-checkpoint --agent a1 --json >/dev/null &&
	echo b >b.txt &&
	git venom-checkpoint --agent a1 --json >/dev/null &&
	git venom-checkpoint --agent zed --json >/dev/null
'

test_expect_success 'bash: subcommands, options and their values' '
	bcomp git venom-checkpoint "" >actual &&
	printf "%s\n" clean diff edit list prune show >expect && test_cmp expect actual &&
	bcomp git venom-checkpoint l >actual && echo list >expect && test_cmp expect actual &&
	bcomp git venom-checkpoint --agent a1 s >actual && echo show >expect && test_cmp expect actual &&
	bcomp git venom-plan --outside "" >actual &&
	printf "%s\n" keep overwrite refuse >expect && test_cmp expect actual &&
	bcomp git-venom-plan --kee >actual && echo --keep-head >expect && test_cmp expect actual &&
	bcomp git venom-rollback --dr >actual && echo --dry-run >expect && test_cmp expect actual &&
	bcomp git venom-plan --color = "" >actual &&
	printf "%s\n" always auto never >expect && test_cmp expect actual
'

test_expect_success 'bash: agent ids and checkpoint ids from the refs' '
	bcomp git venom-plan --agent "" >actual &&
	printf "%s\n" a1 zed >expect && test_cmp expect actual &&
	bcomp git venom-plan --agent=z >actual && echo --agent=zed >expect && test_cmp expect actual &&
	bcomp git venom-plan --agent a1 "" >actual &&
	printf "%s\n" k1 k2 >expect && test_cmp expect actual &&
	bcomp git venom-checkpoint show --agent zed "" >actual &&
	echo k1 >expect && test_cmp expect actual &&
	bcomp git venom-checkpoint --agent a1 diff k1 "" >actual &&
	printf "%s\n" k1 k2 >expect && test_cmp expect actual &&
	bcomp git venom-plan k1 -- a. >actual && echo a.txt >expect && test_cmp expect actual
'

test_expect_success 'bash: every option each command lists in -h is completed' '
	for cmd in "venom-checkpoint" "venom-checkpoint list" "venom-checkpoint show" "venom-checkpoint diff" \
		"venom-checkpoint edit" "venom-checkpoint prune" "venom-checkpoint clean" "venom-plan" "venom-rollback" "venom-doctor"; do
		git $cmd -h | sed -n "s/^ *\(-[a-zA-Z], \)*\(--[a-z][a-z-]*\).*/\2/p" >flags.out
		test -s flags.out &&
		bcomp git $cmd -- >/dev/null &&
		bcomp git $cmd - >offered.out &&
		while read flag; do
			grep -x -e "$flag" -e "$flag=" offered.out >/dev/null || {
				echo >&4 "git $cmd: $flag is not completed"
				return 1
			}
		done <flags.out || return 1
	done
'

test_expect_success 'bash: git venom (the terminal UI): its options and agents, no arguments' '
	bcomp git venom - >actual &&
	printf "%s\n" --agent --directory --help -C -h >expect && test_cmp expect actual &&
	bcomp git venom --agent "" >actual &&
	printf "%s\n" a1 zed >expect && test_cmp expect actual &&
	bcomp git-venom --agent=a >actual && echo --agent=a1 >expect && test_cmp expect actual &&
	bcomp git venom --agent a1 "" >actual &&
	printf "%s\n" --agent --directory --help -C -h >expect && test_cmp expect actual
'

test_expect_success GIT_COMPLETION 'bash through git'"'"'s completion: git venom-<TAB>, then options and ids' '
	GIT=1 bcomp git venom- >actual &&
	printf "%s\n" venom-checkpoint venom-doctor venom-hook venom-plan venom-rollback >expect &&
	test_cmp expect actual &&
	GIT=1 bcomp git venom-plan --ag >actual && echo --agent >expect && test_cmp expect actual &&
	GIT=1 bcomp git venom-plan --agent zed "" >actual && echo k1 >expect && test_cmp expect actual &&
	GIT=1 bcomp git venom-checkpoint --agent a1 l >actual && echo list >expect && test_cmp expect actual &&
	GIT=1 bcomp git venom --ag >actual && echo --agent >expect && test_cmp expect actual &&
	GIT=1 bcomp git venom --agent "" >actual &&
	printf "%s\n" a1 zed >expect && test_cmp expect actual
'

# zcomp LINE: what zsh shows after LINE and a TAB.
zcomp () {
	TERM=xterm zsh -f "$TEST_DIRECTORY/lib-zsh-complete.zsh" "$ZSH_COMP" "$1"
}

test_expect_success ZSH 'zsh: git venom-<TAB> lists the commands with their descriptions' '
	zcomp "git venom-" >out &&
	grep "^venom-plan  *-- show what going back to a checkpoint would change$" out &&
	grep "^venom-checkpoint  *-- " out &&
	grep "^venom-rollback  *-- " out
'

test_expect_success ZSH 'zsh: options, values, subcommands, agents and checkpoints' '
	zcomp "git venom-pl" >out && grep "git venom-plan $" out &&
	zcomp "git-venom-plan --kee" >out && grep "git-venom-plan --keep-head $" out &&
	zcomp "git venom-plan --outside " >out && grep "keep  *overwrite  *refuse" out &&
	zcomp "git venom-checkpoint l" >out && grep "git venom-checkpoint list $" out &&
	zcomp "git venom-checkpoint list --li" >out && grep "git venom-checkpoint list --limit=$" out &&
	zcomp "git venom-plan --agent z" >out && grep "git venom-plan --agent zed $" out &&
	zcomp "git venom-checkpoint show --agent zed " >out && grep "git venom-checkpoint show --agent zed k1 $" out &&
	zcomp "git venom-checkpoint --agent zed show " >out && grep "git venom-checkpoint --agent zed show k1 $" out
'

test_expect_success ZSH 'zsh: git venom (the terminal UI) is a command, with its options and agents' '
	zcomp "git venom" >out &&
	grep "^venom  *-- the terminal UI: " out &&
	zcomp "git venom --ag" >out && grep "git venom --agent=$" out &&
	zcomp "git venom --agent z" >out && grep "git venom --agent zed $" out &&
	zcomp "git-venom --ag" >out && grep "git-venom --agent=$" out
'

test_done
