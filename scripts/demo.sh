#!/usr/bin/env bash
# scripts/demo.sh: what `make demo` runs. It makes a throwaway repository in
# a temporary directory, plays two agent turns with checkpoints around them,
# and shows the checkpoints. It never touches any other repository.
#
# usage: scripts/demo.sh [BINDIR]   (default: bin/ of this checkout)
# VENOM_DEMO_KEEP=1 keeps the temporary repository to look around in.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd -P)
bindir=$(cd "${1:-$here/bin}" && pwd -P)
if ! test -x "$bindir/git-venom-checkpoint"; then
	echo "demo: no $bindir/git-venom-checkpoint; run 'make build' first" >&2
	exit 1
fi

# Only the binaries under demonstration, git, and a clean git environment:
# nothing inherited from a hook or a harness may point git elsewhere.
PATH="$bindir:$PATH"
for v in $(compgen -v GIT_); do unset "$v"; done
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
else
	bold= dim= off=
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
# say prints a narration line; run prints a command, then runs it.
say() { printf '\n%s# %s%s\n' "$dim" "$*" "$off"; }
run() { printf '%s$ %s%s\n' "$bold" "$(quote "$@")" "$off"; "$@"; }
# write FILE TEXT: what an agent's edit tool or a command it ran would do.
write() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; printf '%s$ %s%s\n' "$bold" "write $1" "$off"; }

say "a throwaway repository in $tmp, with one commit"
mkdir "$tmp/project"
cd "$tmp/project"
run git init -q -b main
write src/app.py 'def greet(name):
    return "hello " + name'
write README.md '# demo project'
write .gitignore '.env
build/'
run git add .
run git commit -q -m "initial commit"

say "a secret the agent must never see captured (.env is ignored)"
write .env 'API_TOKEN=s3cr3t'

say "turn 1: the harness takes a checkpoint before the agent starts..."
run git venom-checkpoint --agent demo --reason turn_start
say "...the agent edits a file and adds a test..."
write src/app.py 'def greet(name):
    return f"hello, {name}!"'
write tests/test_app.py 'from src.app import greet

def test_greet():
    assert greet("ada") == "hello, ada!"'
say "...and the harness takes one when the turn ends"
run git venom-checkpoint --agent demo --reason turn_end

say "turn 2 starts with nothing changed: the turn_end checkpoint is reused, no new ref"
run git venom-checkpoint --agent demo --reason turn_start
say "the agent runs a command: it writes an untracked report and an ignored build cache"
write out/report.txt 'tests: 1 passed'
write build/cache.bin 'ignored build output'
write README.md '# demo project

Run the tests with pytest.'
say "a manual checkpoint in the middle of the turn, with a label"
run git venom-checkpoint --agent demo --label "tests pass"
write src/app.py 'def greet(name):
    raise NotImplementedError  # the agent broke it'
run git venom-checkpoint --agent demo --reason turn_end

say "the checkpoints, newest first"
run git venom-checkpoint list --agent demo

say "the last one: what turn 2 changed since the labelled checkpoint"
run git venom-checkpoint show k4 --agent demo

say "from the start of turn 1 to the end of turn 2"
run git venom-checkpoint diff k1 k4 --agent demo --path src/app.py

say "they are ordinary commits under refs/venom; .env and build/ are in none of them"
run git for-each-ref refs/venom
run git ls-tree -r --name-only refs/venom/checkpoints/demo/4

say "and nothing you see changed: the index still matches HEAD, the edits are still yours"
run git status --short
