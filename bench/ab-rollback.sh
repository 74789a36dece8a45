#!/bin/bash
# ab-rollback.sh: the rollback of N paths with two builds, alternated, against
# `git status` + `git checkout HEAD -- <paths>`, in one scratch copy of a
# repository (the bench's generated tree, by default). Prints the median CPU
# time (user+system, the process and its git children) of each.
#
#   OLD=/tmp/old/bin NEW=bin N=10 ITER=8 bench/ab-rollback.sh [repo]
#
# Each iteration takes a manual checkpoint K, appends a line to N tracked
# files, plans the rollback to K (untimed) and times the real call; then
# changes the same files again and times the baseline. The copy is made
# once, under $TMPDIR, and removed at the end. It times with GNU time
# (/usr/bin/time -f), so it runs on Linux.
set -eu
src=${1:-${TMPDIR:-/tmp}/git-venom-bench/gen-100000-v1}
OLD=$(cd "${OLD:?OLD=<dir of the old binaries>}" && pwd)
NEW=$(cd "${NEW:-bin}" && pwd)
N=${N:-10}
ITER=${ITER:-8}
work=$(mktemp -d "${TMPDIR:-/tmp}/venom-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -a "$src" "$work/repo"
cd "$work/repo"
step=$(( $(git ls-files | wc -l) / N ))
git ls-files | awk -v s="$step" 'NR % s == 0' | head -n "$N" > "$work/paths"
out=$work/times
for i in $(seq "$ITER"); do
	for v in old new; do
		bin=$NEW
		[ "$v" = old ] && bin=$OLD
		k=$("$bin/git-venom-checkpoint" --reason manual --json | sed 's/.*"checkpoint":"\(k[0-9]*\)".*/\1/')
		while IFS= read -r f; do echo "$v$i" >> "$f"; done < "$work/paths"
		p=$("$bin/git-venom-plan" --json --outside=overwrite "$k" | sed 's/.*"plan":"\(p[0-9]*-[0-9a-f]*\)".*/\1/')
		/usr/bin/time -f "$v %U %S" -a -o "$out" "$bin/git-venom-rollback" "$k" --plan "$p" --outside=overwrite >/dev/null
		while IFS= read -r f; do echo "b$v$i" >> "$f"; done < "$work/paths"
		/usr/bin/time -f "base %U %S" -a -o "$out" sh -c 'git status --porcelain -z --untracked-files=all >/dev/null; xargs git checkout HEAD -- < "$1"' - "$work/paths"
	done
done
for k in old new base; do
	grep "^$k " "$out" | awk '{print $2 + $3}' | sort -n |
		awk -v k="$k" '{c[NR] = $1} END {printf "%-4s median cpu %.3f s (n=%d)\n", k, c[int((NR + 1) / 2)], NR}'
done
