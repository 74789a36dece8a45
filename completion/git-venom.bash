# bash completion for git-venom: git venom-checkpoint, venom-plan,
# venom-rollback, venom-doctor, venom-hook and git venom (the terminal UI).
#
# `make install` puts this file in $(PREFIX)/share/bash-completion/completions
# under each command's name (git-venom-plan, ..., and git-venom).
# bash-completion loads it from there by name: for `git-venom-plan <TAB>`,
# and for `git venom-plan <TAB>` through git's own completion, which calls
# _completion_loader "git-venom-plan" and then the function
# _git_venom_plan (for `git venom <TAB>`, "git-venom" and _git_venom).
# Sourcing it by hand (`. git-venom.bash`) works too.
#
# It completes subcommands, options and their values, agent ids and
# checkpoint ids (from the refs under refs/venom/checkpoints, which mirror
# the log: a checkpoint that is pruned or archived has no ref), and paths
# after --. It needs nothing but bash and git.

# __git_venom_refs: "agent/n" for each checkpoint ref of this repository.
__git_venom_refs () {
	git for-each-ref --format='%(refname)' refs/venom/checkpoints/ 2>/dev/null |
		sed -n 's|^refs/venom/checkpoints/\([^/]*\)/\([0-9][0-9]*\)$|\1/\2|p'
}

# __git_venom_agents: the agents with checkpoints here, one a line.
__git_venom_agents () {
	__git_venom_refs | sed 's|/.*||' | sort -u
}

# __git_venom_checkpoints AGENT: AGENT's checkpoint ids (k<n>), newest
# first; every agent's when AGENT is empty and several have some.
__git_venom_checkpoints () {
	local agent=${1:-${GIT_VENOM_AGENT:-}}
	if test -n "$agent"; then
		__git_venom_refs | sed -n "s|^$agent/|k|p"
	else
		__git_venom_refs | sed 's|^.*/|k|'
	fi | sort -t k -k 2 -n -r -u
}

# __git_venom_reply WORDS CUR: COMPREPLY from WORDS (white-space
# separated; ids and options hold none) that start with CUR.
__git_venom_reply () {
	COMPREPLY=($(compgen -P "${pre-}" -W "$1" -- "$2"))
}

# The options of each command and subcommand (the t/ suite checks these
# against each one's -h).
__git_venom_out_opts="--color --color= --no-color -p --paginate --no-pager"
__git_venom_take_opts="--agent --reason --label --isolation --turn --fork-of --through-turn --harness --harness-session --harness-turn --harness-end --json -C --directory -h --help"
__git_venom_list_opts="--agent --turn --before --limit --json -C --directory $__git_venom_out_opts -h --help"
__git_venom_show_opts="--agent --json -C --directory $__git_venom_out_opts -h --help"
__git_venom_diff_opts="--agent --path --stat --name-only -z --null --json -C --directory $__git_venom_out_opts -h --help"
__git_venom_edit_opts="--agent --path --json -C --directory -h --help"
__git_venom_prune_opts="--agent --all --json -C --directory -h --help"
__git_venom_clean_opts="--agent --json -C --directory -h --help"
__git_venom_plan_opts="--agent --restore --outside --keep-head --name-status -z --null --json -C --directory $__git_venom_out_opts -h --help"
__git_venom_rollback_opts="$__git_venom_plan_opts --plan --dry-run"
__git_venom_doctor_opts="--json -C --directory -h --help"
__git_venom_hook_opts="--agent --scope --json -C --directory -h --help"
__git_venom_venom_opts="--agent -C --directory -h --help"

# __git_venom_complete CMD: completes the words of git venom-CMD, whether
# typed as `git venom-CMD ...` or `git-venom-CMD ...`; CMD "venom" is the
# terminal UI, `git venom` (git-venom).
__git_venom_complete () {
	local cmd=$1 i start= w sub= agent= dashdash= npos=0 eq= name=venom-$1
	test "$cmd" = venom && name=venom
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	test "$COMP_CWORD" -gt 0 && prev=${COMP_WORDS[COMP_CWORD-1]}
	# bash splits --agent=x at "=" (COMP_WORDBREAKS): complete the value.
	if test "$cur" = "="; then
		prev=${COMP_WORDS[COMP_CWORD-1]} cur= eq=1
	elif test "$prev" = "=" && test "$COMP_CWORD" -gt 1; then
		prev=${COMP_WORDS[COMP_CWORD-2]} eq=1
	fi
	# An --opt=value word bash did not split (= not in COMP_WORDBREAKS).
	local pre=
	case "$cur" in
	--*=*) prev=${cur%%=*} pre=${cur%%=*}= cur=${cur#*=} eq=1 ;;
	esac
	for ((i = 0; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if test -z "$start"; then
			case "$w" in
			"$name" | git-"$name" | */git-"$name") start=$i ;;
			esac
			continue
		fi
		case "$w" in
		--) dashdash=1 ;;
		--agent) agent=${COMP_WORDS[i+1]}; test "$agent" = "=" && agent=${COMP_WORDS[i+2]} ;;
		--agent=*) agent=${w#--agent=} ;;
		-*) ;;
		=) ;;
		*)
			case "${COMP_WORDS[i-1]}" in
			--agent | --reason | --label | --isolation | --turn | --fork-of | --through-turn | --harness | \
			--harness-session | --harness-turn | --harness-end | --before | --limit | --path | -C | --directory | \
			--restore | --outside | --plan | --scope | --color | =) ;;
			*)
				if test -z "$dashdash"; then
					if test "$cmd" = checkpoint && test -z "$sub"; then
						sub=$w
					else
						npos=$((npos + 1))
					fi
				fi
				;;
			esac
			;;
		esac
	done
	if test -n "$dashdash"; then
		COMPREPLY=($(compgen -f -- "$cur"))
		return
	fi
	case "$prev" in
	--agent | --fork-of) __git_venom_reply "$(__git_venom_agents)" "$cur"; return ;;
	--before) __git_venom_reply "$(__git_venom_checkpoints "$agent")" "$cur"; return ;;
	--reason) __git_venom_reply "turn_start turn_end manual takeover takeback fork" "$cur"; return ;;
	--isolation) __git_venom_reply "in_place worktree copy" "$cur"; return ;;
	--harness) __git_venom_reply "claude-code codex gemini cursor" "$cur"; return ;;
	--restore) __git_venom_reply "all files" "$cur"; return ;;
	--outside) __git_venom_reply "refuse keep overwrite" "$cur"; return ;;
	--color) test -n "$eq" && { __git_venom_reply "auto always never" "$cur"; return; } ;;
	--scope) __git_venom_reply "project local user" "$cur"; return ;;
	--path) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-C | --directory) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--label | --turn | --through-turn | --harness-session | --harness-turn | --harness-end | --limit | --plan) return ;;
	esac
	local opts
	case "$cmd" in
	checkpoint)
		case "$sub" in
		"") opts=$__git_venom_take_opts
			case "$cur" in
			-*) ;;
			*) __git_venom_reply "list show diff edit prune clean" "$cur"; return ;;
			esac ;;
		list | show | diff | edit | prune | clean)
			eval "opts=\$__git_venom_${sub}_opts"
			case "$sub:$cur" in
			show:[!-]* | diff:[!-]* | show: | diff:)
				if test "$sub" = show && test $npos -ge 1; then return; fi
				if test "$sub" = diff && test $npos -ge 2; then return; fi
				__git_venom_reply "$(__git_venom_checkpoints "$agent")" "$cur"; return ;;
			esac ;;
		*) return ;;
		esac ;;
	plan | rollback)
		eval "opts=\$__git_venom_${cmd}_opts"
		case "$cur" in
		-*) ;;
		*) test $npos -ge 1 && return
			__git_venom_reply "$(__git_venom_checkpoints "$agent")" "$cur"; return ;;
		esac ;;
	doctor) opts=$__git_venom_doctor_opts ;;
	venom)
		# The terminal UI takes no arguments, so no "--" either.
		__git_venom_reply "$__git_venom_venom_opts" "$cur"; return ;;
	hook)
		opts=$__git_venom_hook_opts
		case "$cur" in
		-*) ;;
		*) __git_venom_reply "install uninstall claude-code codex gemini cursor" "$cur"; return ;;
		esac ;;
	esac
	__git_venom_reply "$opts --" "$cur"
}

# The functions git's completion calls for `git venom-<cmd> <TAB>` and
# `git venom <TAB>`, and bash's for `git-venom-<cmd> <TAB>`.
_git_venom_checkpoint () { __git_venom_complete checkpoint; }
_git_venom_plan () { __git_venom_complete plan; }
_git_venom_rollback () { __git_venom_complete rollback; }
_git_venom_doctor () { __git_venom_complete doctor; }
_git_venom_hook () { __git_venom_complete hook; }
_git_venom () { __git_venom_complete venom; }

complete -o bashdefault -o default -F _git_venom_checkpoint git-venom-checkpoint
complete -o bashdefault -o default -F _git_venom_plan git-venom-plan
complete -o bashdefault -o default -F _git_venom_rollback git-venom-rollback
complete -o bashdefault -o default -F _git_venom_doctor git-venom-doctor
complete -o bashdefault -o default -F _git_venom_hook git-venom-hook
complete -o bashdefault -o default -F _git_venom git-venom
