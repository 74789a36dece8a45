#!/usr/bin/env bash

test_description='field cases F, G, H of CASES.md: submodules and nested repositories, big files and disk growth, large trees'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# --- F. Submodules and nested repos ------------------------------------------

test_expect_success 'BR-21: a nested repository with no commit never makes a stale tree; it is reported and never touched' '
	case_repo br21 &&
	echo v1 >file.txt && git add . && git commit -qm init &&
	K1=$(ts) &&
	echo v2 >file.txt &&
	git init -q scratch-clone && echo z >scratch-clone/z &&
	K2=$(te) &&
	test_json "$OUT/ck.json" ".repos[0].submodules == [{path: \"scratch-clone\", commit: null, dirty: true}]" &&
	git show "$(ref $K2):file.txt" >"$OUT/actual" && echo v2 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	git ls-tree -r --name-only "$(ref $K2)" >"$OUT/names" && echo file.txt >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/names" &&
	(cd scratch-clone && tree_state) >"$OUT/nested.before" &&
	echo v3 >file.txt &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"file.txt\", change: \"modify\", class: \"outside\"}]" \
		".repos[0].left | all(.path == \"scratch-clone\" and .reason == \"gitlink\")" ".exact == true" &&
	git show "$(ref "$(jq -r .safety "$OUT/r.json")"):file.txt" >"$OUT/actual" &&
	echo v3 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	echo v1 >"$OUT/expect" && test_cmp "$OUT/expect" file.txt &&
	test "$(cat scratch-clone/z)" = z && test_path_is_dir scratch-clone/.git &&
	(cd scratch-clone && tree_state) >"$OUT/nested.after" &&
	test_cmp "$OUT/nested.before" "$OUT/nested.after"
'

test_expect_success 'BR-21 (kind F): a submodule whose commit the agent moved goes back with its files (issue 18), and the top leaves no gitlink' '
	case_repo br21s &&
	git init -q "$REPO.sub" && (cd "$REPO.sub" && echo s >s && git add . && git commit -qm s) &&
	echo v1 >file.txt && git add . && git commit -qm init &&
	git -c protocol.file.allow=always submodule add -q "$REPO.sub" sub && git commit -qm sub &&
	S1=$(git -C sub rev-parse HEAD) &&
	K1=$(ts) &&
	test_json "$OUT/ck.json" ".repos[0].submodules == [{path: \"sub\", commit: \"$S1\", dirty: false}]" &&
	(cd sub && echo s2 >s && git commit -qam s2) && S2=$(git -C sub rev-parse HEAD) &&
	echo v2 >file.txt &&
	K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"file.txt\", change: \"modify\", class: \"turn\"}]" \
		".repos[0].left == []" \
		".repos[1].repo == \"sub\"" ".repos[1].files == [{path: \"s\", change: \"modify\", class: \"turn\"}]" \
		".repos[1].head == {moves: true, from: \"$S2\", to: \"$S1\", commits: 1}" ".exact == true" &&
	test "$(git -C sub rev-parse HEAD)" = "$S1" && test "$(cat sub/s)" = s
'

test_expect_success 'BR-21 (kind F): a nested repository whose commit moved is reported in left, never touched (RFC 4)' '
	case_repo br21n &&
	echo v1 >file.txt && git add . && git commit -qm init &&
	git init -q nested && echo n >nested/n && git -C nested add n && git -C nested commit -qm n &&
	N1=$(git -C nested rev-parse HEAD) &&
	K1=$(ts) &&
	test_json "$OUT/ck.json" ".repos[0].submodules == [{path: \"nested\", commit: \"$N1\", dirty: false}]" &&
	echo n2 >nested/n && git -C nested commit -qam n2 && N2=$(git -C nested rev-parse HEAD) &&
	echo v2 >file.txt &&
	K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test "$(git -C nested rev-parse HEAD)" = "$N2" && test "$(cat nested/n)" = n2 &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"file.txt\", change: \"modify\", class: \"turn\"}]" \
		"[.repos[0].left[] | {path, reason}] == [{path: \"nested\", reason: \"gitlink\"}]" \
		".repos[0].left[0].detail == \"$N1\""
'

# --- G. Big files, node_modules and disk growth ------------------------------

test_expect_success 'BR-24: an untracked file over maxFileBytes is skipped (too_big) at capture and left at rollback' '
	case_repo br24 &&
	git config venom.checkpoints.maxFileBytes 100k &&
	echo a >a && git add . && git commit -qm init &&
	random_bytes 300000 dataset.bin 24 && D0=$(sha dataset.bin) &&
	mkdir gen && for i in $(seq 1 200); do echo $i >gen/f$i || return 1; done &&
	git venom-checkpoint --agent $AG $ISO --reason turn_start --json >"$OUT/k1.json" &&
	test_json "$OUT/k1.json" ".repos[0].skipped == [{path: \"dataset.bin\", bytes: 300000, reason: \"too_big\"}]" &&
	K1=$(jq -r .checkpoint "$OUT/k1.json") &&
	test_must_fail git cat-file -e "$(ref $K1):dataset.bin" &&
	git cat-file -e "$(ref $K1):gen/f200" &&
	echo b >>a && echo more >>dataset.bin && D1=$(sha dataset.bin) &&
	git venom-checkpoint --agent $AG --reason turn_end --json >"$OUT/k2.json" &&
	test_json "$OUT/k2.json" ".repos[0].skipped == [{path: \"dataset.bin\", bytes: 300005, reason: \"too_big\"}]" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"a\", change: \"modify\", class: \"turn\"}]" \
		".repos[0].left == [{path: \"dataset.bin\", reason: \"too_big\"}]" ".exact == true" &&
	test "$(sha dataset.bin)" = "$D1" && test "$(cat a)" = a
'

test_expect_success STRACE 'BR-24: a too-big file is only stat'"'"'ed, never opened' '
	cd "$TRASH_DIRECTORY/br24" && OUT="$TRASH_DIRECTORY/br24.out" &&
	echo c >>a &&
	strace -f -qq -e trace=file -o "$OUT/trace" \
		git venom-checkpoint --agent $AG --reason manual --json >"$OUT/k3.json" &&
	test_json "$OUT/k3.json" "[.repos[0].skipped[].path] == [\"dataset.bin\"]" &&
	grep "open" "$OUT/trace" >"$OUT/opens" && test -s "$OUT/opens" &&
	! grep "dataset\\.bin" "$OUT/opens"
'

test_expect_success 'BR-24: a capture past venom.checkpoints.timeout is timeout.checkpoint and does not hold the turn' '
	case_repo br24t &&
	echo a >a && git add . && git commit -qm init &&
	mkdir gen && for i in $(seq 1 300); do echo $i >gen/f$i || return 1; done &&
	K1=$(ts) && echo b >>a &&
	git for-each-ref refs/venom >"$OUT/refs.before" &&
	venom_fails timeout.checkpoint "$OUT/timeout.json" \
		git -c venom.checkpoints.timeout=1ms venom-checkpoint --agent $AG --reason turn_end --json &&
	test_json "$OUT/timeout.json" ".error.data.repo == \".\"" &&
	git for-each-ref refs/venom >"$OUT/refs.after" && test_cmp "$OUT/refs.before" "$OUT/refs.after" &&
	venom_log | jq -c "select(.type == \"checkpoint.failed\") | {reason, code, turn}" >"$OUT/failed" &&
	echo "{\"reason\":\"turn_end\",\"code\":\"timeout.checkpoint\",\"turn\":\"t1\"}" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/failed" &&
	venom_log | jq -r "select(.type == \"turn.ended\") | .turn" >"$OUT/ended" &&
	echo t1 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ended"
'

test_expect_success 'BR-25: past maxTotalBytes the capture fails before git add: no object, no ref, a checkpoint.failed record' '
	case_repo br25 &&
	git config venom.checkpoints.maxFileBytes 100k && git config venom.checkpoints.maxTotalBytes 1m &&
	echo a >a && git add . && git commit -qm init &&
	mkdir build-out &&
	for i in $(seq 1 20); do random_bytes $((60000 + i * 1000)) build-out/chunk$i.o $i || return 1; done &&
	(cd .git/objects && find . -type f | sort) >"$OUT/objects.before" &&
	venom_fails failed.checkpoint_too_large "$OUT/e.json" git venom-checkpoint --agent $AG --reason manual --json &&
	test_json "$OUT/e.json" ".error.data.repo == \".\"" ".error.data.bytes == 1410000" \
		".error.data.largest == [\"build-out/chunk20.o\", \"build-out/chunk19.o\", \"build-out/chunk18.o\", \"build-out/chunk17.o\", \"build-out/chunk16.o\"]" &&
	(cd .git/objects && find . -type f | sort) >"$OUT/objects.after" &&
	test_cmp "$OUT/objects.before" "$OUT/objects.after" &&
	git for-each-ref refs/venom >"$OUT/refs" && test_must_be_empty "$OUT/refs" &&
	venom_log | jq -c "select(.type == \"checkpoint.failed\") | {agent, reason, code}" >"$OUT/failed" &&
	echo "{\"agent\":\"a1\",\"reason\":\"manual\",\"code\":\"failed.checkpoint_too_large\"}" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/failed"
'

test_expect_success 'BR-26: retention prunes refs beyond keep, never runs gc; doctor reports the bytes only checkpoints hold' '
	case_repo br26 &&
	git config venom.checkpoints.maxFileBytes 100k && git config venom.checkpoints.maxTotalBytes 200k &&
	git config venom.checkpoints.keep 3 &&
	echo a >a && git add . && git commit -qm init &&
	for t in $(seq 1 8); do
		ts >/dev/null && random_bytes 50000 generated.db $t &&
		git hash-object generated.db >>"$OUT/blobs" && te >/dev/null || return 1
	done &&
	venom_log | jq -c "select(.type == \"checkpoint.failed\")" >"$OUT/failed" && test_must_be_empty "$OUT/failed" &&
	git for-each-ref refs/venom/checkpoints/a1 >"$OUT/refs" && test_line_count = 3 "$OUT/refs" &&
	venom_log | jq -c "select(.type == \"checkpoint.pruned\")" >"$OUT/pruned" && test -s "$OUT/pruned" &&
	for b in $(cat "$OUT/blobs"); do git cat-file -e $b || return 1; done &&
	git count-objects -v >"$OUT/count" && grep "^packs: 0$" "$OUT/count" &&
	git venom-doctor --json >"$OUT/doctor.json" &&
	test_json "$OUT/doctor.json" \
		"[.checks[] | select(.id == \"checkpoints.size\")] | length == 1" \
		"[.checks[] | select(.id == \"checkpoints.refs\") | .level] == [\"ok\"]" &&
	jq -r ".checks[] | select(.id == \"checkpoints.size\") | .message" "$OUT/doctor.json" >"$OUT/size" &&
	bytes=$(sed -n "s/.* \\([0-9][0-9]*\\) bytes.*/\\1/p" "$OUT/size") &&
	test "$bytes" -ge 150000 && test "$bytes" -lt 200000
'

# --- H. Performance on large repos -------------------------------------------

br27_setup () {
	case_repo br27 &&
	mkdir src &&
	for i in $(seq 1 2000); do echo "line $i" >src/f$i.txt || return 1; done &&
	# Old mtimes, so no entry is racily clean in the index git writes now.
	perl -e "utime 1e9, 1e9, @ARGV" src/* &&
	git add . && git commit -qm big && git status >/dev/null
}

test_expect_success 'BR-27: a capture starts from a copy of the index: right content, index untouched' '
	br27_setup &&
	I0=$(index_hash) &&
	K1=$(ck --reason manual) &&
	echo x >>src/f1.txt &&
	K2=$(ck --reason manual) &&
	test "$(index_hash)" = "$I0" &&
	git diff --name-only "$(ref $K1)" "$(ref $K2)" >"$OUT/actual" &&
	echo src/f1.txt >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success STRACE 'BR-27: the second capture opens only the changed file and never runs read-tree' '
	cd "$TRASH_DIRECTORY/br27" && OUT="$TRASH_DIRECTORY/br27.out" &&
	echo y >>src/f2.txt &&
	# -s 256: each git'"'"'s whole argv, its pinned -c pairs first (strace
	# prints 32 elements of an array by default).
	strace -f -qq -s 256 -e trace=file -o "$OUT/trace" \
		git venom-checkpoint --agent $AG --reason manual --json >"$OUT/k3.json" &&
	grep "open.*\"src/f[0-9]*\\.txt\"" "$OUT/trace" | grep -v ENOENT |
		sed "s/.*\"\\(src\/f[0-9]*\\.txt\\)\".*/\\1/" | sort -u >"$OUT/opened" &&
	# Only the files changed since the index was written: f1 (test
	# above) and f2; never the 1,998 others.
	grep -x src/f2.txt "$OUT/opened" &&
	! grep -v -x "src/f[12]\\.txt" "$OUT/opened" &&
	grep "execve(" "$OUT/trace" >"$OUT/execs" && grep "\"status\"" "$OUT/execs" &&
	! grep "read-tree" "$OUT/execs" &&
	! grep "\"add\"" "$OUT/execs"
'

br28_setup () {
	case_repo br28 &&
	printf "node_modules/\n" >.gitignore && echo a >a && git add . && git commit -qm init &&
	for p in $(seq 1 30); do
		d=node_modules/.pnpm/p$p/node_modules/p$p &&
		mkdir -p $d && git init -q node_modules/.pnpm/p$p &&
		echo x >$d/f1.js && echo y >$d/f2.js || return 1
	done
}

test_expect_success 'BR-28: nested repositories inside an ignored folder are neither reported nor touched' '
	br28_setup &&
	(cd node_modules && tree_state && find . -name .git -type d | sort) >"$OUT/nm.before" &&
	K1=$(ts) &&
	test_json "$OUT/ck.json" ".repos[0].submodules == []" ".repos[0].skipped == []" &&
	echo b >>a && K2=$(te) &&
	git venom-checkpoint list --agent $AG --json >"$OUT/list.json" &&
	test_json "$OUT/list.json" "[.checkpoints[].repos[0].submodules] | all(. == [])" &&
	git ls-tree -r --name-only "$(ref $K2)" >"$OUT/names" && ! grep node_modules "$OUT/names" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"a\", change: \"modify\", class: \"turn\"}]" ".repos[0].left == []" &&
	(cd node_modules && tree_state && find . -name .git -type d | sort) >"$OUT/nm.after" &&
	test_cmp "$OUT/nm.before" "$OUT/nm.after"
'

test_expect_success STRACE 'BR-28: the capture never descends into an ignored folder' '
	cd "$TRASH_DIRECTORY/br28" && OUT="$TRASH_DIRECTORY/br28.out" &&
	echo c >>a &&
	strace -f -qq -e trace=file,getdents64 -o "$OUT/trace" \
		git venom-checkpoint --agent $AG --reason manual --json >"$OUT/k.json" &&
	test_json "$OUT/k.json" ".reused == false" &&
	grep "\"a\"" "$OUT/trace" &&
	! grep "node_modules/" "$OUT/trace"
'

test_done
