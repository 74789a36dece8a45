#!/usr/bin/env bash
# bench/run.sh: build git-venom and measure it against plain git.
#
#   bench/run.sh                      generated 100k-file tree only
#   REPO=/path/to/repo bench/run.sh   also a local clone of that repository
#   bench/run.sh -reps 11 -v          extra flags go to venom-bench (-h lists them)
#
# Environment: REPO (a repository to clone and measure; it is only read),
# REPS (runs a side, default 9), VENOM_BENCH_CACHE (default
# ${TMPDIR:-/tmp}/git-venom-bench: the generated tree, clones and the built
# binaries live there, never in this repository), GIT_VENOM_BIN (measure
# these already-built binaries instead of building).
#
# Portable: bash 3.2 (macOS) and POSIX tools only.
set -eu

here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/.." && pwd -P)

tmp=${TMPDIR:-/tmp}
tmp=${tmp%/}
cache=${VENOM_BENCH_CACHE:-$tmp/git-venom-bench}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)

case "$cache/" in
"$root"/*)
	echo "bench/run.sh: VENOM_BENCH_CACHE=$cache is inside the repository; use a directory outside it" >&2
	exit 2
	;;
esac

if ! command -v go >/dev/null 2>&1; then
	echo "bench/run.sh: go is not on PATH" >&2
	exit 2
fi

# Always build: the go build cache makes this a second when nothing changed,
# and a stale binary would measure old code.
tooldir=$cache/tool
mkdir -p "$tooldir"
(cd "$root" && go build -o "$tooldir/" ./bench/cmd/venom-bench)

bin=${GIT_VENOM_BIN:-}
if [ -z "$bin" ]; then
	bin=$cache/bin
	mkdir -p "$bin"
	# As `make build` builds them (static, stripped).
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$bin/" ./cmd/...)
fi

set -- -bin "$bin" -cache "$cache" -reps "${REPS:-9}" "$@"
if [ -n "${REPO:-}" ]; then
	set -- -repo "$REPO" "$@"
fi
status=0
"$tooldir/venom-bench" "$@" || status=$?

# Hook latency (issue 5): an edit-record event against the capture it does
# not do, a turn_start event against the checkpoint command it wraps, with
# `git --version` as the floor. HOOK_BENCH=0 skips it.
if [ "${HOOK_BENCH:-1}" != 0 ]; then
	echo
	echo "hook latency: go test -run '^\$' -bench . -benchtime ${HOOK_BENCHTIME:-30x} ./harness/"
	(cd "$root" && go test -run '^$' -bench . -benchtime "${HOOK_BENCHTIME:-30x}" ./harness/) || status=$?
	echo "targets: BenchmarkHookEdit within 15 ms; BenchmarkHookTurnStart within BenchmarkCheckpointCommand + 10 ms"
fi
exit $status
