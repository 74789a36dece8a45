#!/usr/bin/env bash
# scripts/demo.sh: what `make demo` runs. It makes a throwaway repository in
# a temporary directory and plays the whole loop: a checkpoint when an
# agent's turn starts, the agent's damage, a checkpoint when the turn ends,
# the plan, the rollback, checks that the tree is back and that an ignored
# .env was never touched, then the undo of the rollback and a check that the
# tree is as it was before the rollback. It never touches any other
# repository, and it exits non-zero when a check fails.
#
# usage: scripts/demo.sh [BINDIR]   (default: bin/ of this checkout)
# VENOM_DEMO_KEEP=1 keeps the temporary repository to look around in.
#
# Portable: bash 3.2 (macOS), POSIX find, sort, cksum, touch -t; nothing
# GNU-only.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd -P)
bindir=$(cd "${1:-$here/bin}" && pwd -P)
for verb in checkpoint plan rollback; do
	if ! test -x "$bindir/git-venom-$verb"; then
		echo "demo: no $bindir/git-venom-$verb; run 'make build' first" >&2
		exit 1
	fi
done

# Only the binaries under demonstration, git, and a clean git environment:
# nothing inherited from a hook or a harness may point git elsewhere.
PATH="$bindir:$PATH"
for v in $(compgen -v GIT_); do unset "$v"; done
# A harness's tool subprocess would make the rollback an agent's call.
unset CLAUDE_CODE_CHILD_SESSION CODEX_THREAD_ID GEMINI_CLI CURSOR_AGENT
export GIT_AUTHOR_NAME='Dee Veloper' GIT_AUTHOR_EMAIL='dev@example.com'
export GIT_COMMITTER_NAME='Dee Veloper' GIT_COMMITTER_EMAIL='dev@example.com'
# The user's own git config (a global hooksPath, commit.gpgSign, ...) must
# not run anything or prompt in the demo repository.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_PAGER=cat LC_ALL=C

tmp=$(mktemp -d "${TMPDIR:-/tmp}/venom-demo.XXXXXX")
tmp=$(cd "$tmp" && pwd -P)
cleanup() {
	if test -n "${VENOM_DEMO_KEEP:-}"; then
		echo
		echo "(kept the demo repository: $tmp/project)"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

if test -t 1 && test -z "${NO_COLOR:-}"; then
	bold=$(printf '\033[1m') dim=$(printf '\033[2m') off=$(printf '\033[0m')
	green=$(printf '\033[32m') red=$(printf '\033[31m')
else
	bold= dim= off= green= red=
fi

# quote prints its arguments as a shell would need them typed.
quote() {
	local a out=
	for a in "$@"; do
		case "$a" in
		*[!A-Za-z0-9_./:=@%+-]* | '') a="'${a//\'/\'\\\'\'}'" ;;
		esac
		out="$out${out:+ }$a"
	done
	printf '%s' "$out"
}
# say prints a narration line; show prints a command; run prints a command,
# then runs it.
say() { printf '\n%s# %s%s\n' "$dim" "$*" "$off"; }
show() { printf '%s$ %s%s\n' "$bold" "$*" "$off"; }
run() { show "$(quote "$@")"; "$@"; }
# write FILE TEXT: what an agent's edit tool or a command it ran would do.
write() {
	if ! test -d "$(dirname "$1")"; then
		run mkdir -p "$(dirname "$1")"
	fi
	show "$(quote printf '%s\n' "$2") > $(quote "$1")"
	printf '%s\n' "$2" >"$1"
}

# snapshot DIR prints every path of the working tree DIR but .git and .env,
# sorted, with its type, and for a file its mode bit and cksum: two equal
# snapshots mean equal trees, empty directories included.
snapshot() {
	(
		cd "$1"
		find . \( -name .git -o -name .env \) -prune -o -print | LC_ALL=C sort |
			while IFS= read -r p; do
				if test -L "$p"; then
					printf 'link %s -> %s\n' "$p" "$(readlink "$p")"
				elif test -d "$p"; then
					printf 'dir  %s\n' "$p"
				else
					x=-
					test -x "$p" && x=x
					printf 'file %s %s %s\n' "$p" "$x" "$(cksum <"$p")"
				fi
			done
	)
}

# check WHAT COMMAND...: runs COMMAND quietly and prints "ok WHAT", or
# "FAIL WHAT" and remembers to exit non-zero.
failed=0
check() {
	local what=$1
	shift
	if "$@" >"$tmp/check.out" 2>&1; then
		printf '%sok%s   %s\n' "$green" "$off" "$what"
	else
		printf '%sFAIL%s %s\n' "$red" "$off" "$what"
		sed 's/^/     /' "$tmp/check.out"
		failed=1
	fi
}
same_tree() { diff "$1" "$2"; }
# env_untouched: .env has the agent's bytes, the same inode, and the mtime
# we pinned to 2000-01-01, so any write or replacement since would show.
env_untouched() {
	cmp "$tmp/env.expected" .env &&
		test "$(ls -i .env | awk '{print $1}')" = "$env_inode" &&
		test -z "$(find .env -newer "$tmp/stamp")"
}

say "a throwaway repository in $tmp, with one commit"
mkdir "$tmp/project"
cd "$tmp/project"
run git init -q -b main
write src/app.py 'def greet(name):
    return "hello " + name'
write docs/notes.md '# notes'
write docs/guide.md '# guide'
write config 'debug = false'
write README.md '# demo project'
write .gitignore '.env
build/'
run git add .
run git commit -q -m "initial commit"

say "a secret the agent must never see captured or rolled back (.env is ignored)"
write .env 'API_TOKEN=s3cr3t'

say "the turn starts: the harness takes a checkpoint before the agent runs"
run git venom-checkpoint --agent demo --reason turn_start
snapshot . >"$tmp/turn-start.snap"
head_before=$(git rev-parse HEAD)
git ls-files -s >"$tmp/index-before"

say "the agent's edit tool rewrites a file and adds a test (the hook records the paths)"
write src/app.py 'def greet(name):
    raise NotImplementedError  # the agent broke it'
write tests/test_app.py 'from src.app import greet'
run git venom-checkpoint edit --agent demo --path src/app.py --path tests/test_app.py
say "...and the commands it runs delete a file, turn a file into a directory, write output"
run rm docs/notes.md
run rm config
run mkdir config
write config/settings.toml 'debug = true'
write out/report.txt 'tests: 0 passed, 1 failed'
say "...and rotate the token in the ignored .env, which is the agent's to keep"
write .env 'API_TOKEN=rotated'
cp .env "$tmp/env.expected"
# Pin .env's mtime in the past: a rollback that wrote it would make it new.
run touch -t 200001010000 .env
touch -t 200001010001 "$tmp/stamp"
env_inode=$(ls -i .env | awk '{print $1}')

say "the turn ends: the harness takes another checkpoint"
run git venom-checkpoint --agent demo --reason turn_end
run git venom-checkpoint list --agent demo
run git venom-checkpoint diff --agent demo k1 k2
snapshot . >"$tmp/turn-end.snap"

say "the turn went wrong. The plan: what going back to k1 would change (it writes nothing)"
run git venom-plan --agent demo k1 | tee "$tmp/plan.out"
plan=$(sed -n 's/^plan \(p[0-9]*-[0-9a-f]*\):.*/\1/p' "$tmp/plan.out")
test -n "$plan" || { echo "demo: no plan id in the plan's output" >&2; exit 1; }

say "a person read the plan; the rollback does exactly that, after a safety checkpoint"
run git venom-rollback --agent demo k1 --plan "$plan" | tee "$tmp/rollback.out"
safety=$(sed -n 's/^safety checkpoint \(k[0-9]*\) .*/\1/p' "$tmp/rollback.out")
test -n "$safety" || { echo "demo: no safety checkpoint in the rollback's output" >&2; exit 1; }

say "checks"
check "every file and directory is as at the turn start (k1)" same_tree "$tmp/turn-start.snap" <(snapshot .)
check ".env still has the agent's edit: same bytes, inode and mtime (never touched)" env_untouched
check "HEAD did not move (a guarded tree: the main worktree)" test "$(git rev-parse HEAD)" = "$head_before"
check "the index did not change" same_tree "$tmp/index-before" <(git ls-files -s)
run git status --short

say "changed your mind? Undo the rollback: plan and roll back to the safety checkpoint $safety"
run git venom-plan --agent demo "$safety" --restore files | tee "$tmp/undo-plan.out"
plan=$(sed -n 's/^plan \(p[0-9]*-[0-9a-f]*\):.*/\1/p' "$tmp/undo-plan.out")
test -n "$plan" || { echo "demo: no plan id in the plan's output" >&2; exit 1; }
run git venom-rollback --agent demo "$safety" --plan "$plan" --restore files

say "checks"
check "every file and directory is as before the rollback (k2)" same_tree "$tmp/turn-end.snap" <(snapshot .)
check ".env was never touched, by the rollback or its undo" env_untouched

say "every checkpoint is still there, the rollback's own included"
run git venom-checkpoint list --agent demo

if test "$failed" != 0; then
	echo
	echo "demo: a check failed" >&2
	exit 1
fi
echo
echo "demo: all checks passed"
