#!/usr/bin/env bash

test_description='-- <pathspec> narrows a plan, its id and its rollback; checkpoint diff takes one too, with --stat and --name-only'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# narrow: back into the repository of the first tests (each test starts in
# the trash directory).
# nplan ARGS...: the plan's JSON (--json before any "--", which plan of
# lib-cases.sh puts last).
nplan () {
	git venom-plan --agent a1 --json "$@"
}

narrow () {
	cd "$TRASH_DIRECTORY/narrow" && OUT="$TRASH_DIRECTORY/narrow.out" && AG=a1 && ISO=
}

test_expect_success 'setup: a turn changes src/, docs/ and a big file; a person edits notes.md between turns' '
	case_repo narrow guarded &&
	mkdir -p src/lib docs &&
	echo "a" >src/a.c && echo "b" >src/b.c && echo "l" >src/lib/l.c &&
	echo "guide" >docs/guide.md && echo "notes" >notes.md &&
	git add -A && git commit -q -m base &&
	git config venom.checkpoints.maxFileBytes 1k &&
	ts >/dev/null &&
	echo "a2" >src/a.c && rm src/b.c && echo "l2" >src/lib/l.c && echo "new" >src/new.c &&
	echo "guide 2" >docs/guide.md &&
	perl -e "print q(x) x 4096" >big.bin &&
	te >/dev/null &&
	echo "a person" >>notes.md
'

test_expect_success 'the plan narrowed to src/ has only its paths, and says so in the JSON' '
	narrow &&
	nplan k1 -- src/ >"$OUT/src.json" &&
	jq -c "[.repos[0].files[] | \"\\(.change) \\(.path)\"]" "$OUT/src.json" >"$OUT/actual" &&
	echo "[\"modify src/a.c\",\"create src/b.c\",\"modify src/lib/l.c\",\"delete src/new.c\"]" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	test_json "$OUT/src.json" ".pathspec == [\"src/\"]" ".repos[0].left == []" ".restore == \"files\"" &&
	test_json "$OUT/src.json" "has(\"prefix\") | not"
'

test_expect_success 'the whole plan would refuse (notes.md is the person'"'"'s) and list big.bin; the narrowed one does neither' '
	narrow &&
	venom_fails conflict.outside_edits "$OUT/all.json" nplan k1 &&
	nplan k1 --outside keep >"$OUT/all.json" &&
	test_json "$OUT/all.json" "[.repos[0].left[].path] == [\"notes.md\", \"big.bin\"]"
'

test_expect_success 'the pathspec is part of the plan id' '
	narrow &&
	P=$(jq -r .plan "$OUT/src.json") &&
	nplan k1 -- src >"$OUT/src2.json" &&
	test "$(jq -r .plan "$OUT/src2.json")" != "$P" &&
	nplan k1 --restore files --outside keep >"$OUT/whole.json" &&
	test "$(jq -r .plan "$OUT/whole.json")" != "$P" &&
	venom_fails conflict.rollback_stale "$OUT/stale.json" git venom-rollback --agent a1 k1 --plan $P --restore files --outside keep --json &&
	venom_fails conflict.rollback_stale "$OUT/stale.json" git venom-rollback --agent a1 k1 --plan $P --json -- src &&
	venom_fails conflict.rollback_stale "$OUT/stale.json" git venom-rollback --agent a1 k1 --plan $P --json -- src/lib
'

test_expect_success 'pathspec magic is git'"'"'s: exclude, glob, top, relative to the current directory' '
	narrow &&
	nplan k1 -- src ":!src/lib" >"$OUT/ex.json" &&
	test_json "$OUT/ex.json" "[.repos[0].files[].path] == [\"src/a.c\", \"src/b.c\", \"src/new.c\"]" &&
	nplan k1 -- ":(glob)**/l.c" >"$OUT/glob.json" &&
	test_json "$OUT/glob.json" "[.repos[0].files[].path] == [\"src/lib/l.c\"]" &&
	(cd src/lib && git venom-plan --agent a1 k1 --json -- l.c ../a.c ":/docs") >"$OUT/rel.json" &&
	test_json "$OUT/rel.json" "[.repos[0].files[].path] == [\"docs/guide.md\", \"src/a.c\", \"src/lib/l.c\"]" \
		".prefix == \"src/lib/\"" ".pathspec == [\"l.c\", \"../a.c\", \":/docs\"]"
'

test_expect_success 'left paths are narrowed too: big.bin is listed for its own pathspec only' '
	narrow &&
	nplan k1 -- "*.bin" >"$OUT/bin.json" &&
	test_json "$OUT/bin.json" "[.repos[0].left[] | \"\\(.reason) \\(.path)\"] == [\"too_big big.bin\"]" ".repos[0].files == []"
'

test_expect_success 'the human plan names the pathspec in its confirming command, and that command works as printed' '
	narrow &&
	git venom-plan --agent a1 k1 -- src/ ":!src/lib" >"$OUT/plan.txt" &&
	grep "^to do it: git venom-rollback --agent a1 k1 --plan p2-[0-9a-f]* --restore files -- src/ '"'"':!src/lib'"'"'$" "$OUT/plan.txt" &&
	cmd=$(sed -n "s/^to do it: //p" "$OUT/plan.txt") &&
	eval "$cmd" >"$OUT/rb.txt" &&
	grep "^rolled back a1 to k1$" "$OUT/rb.txt" &&
	grep "^verified: the tree is as planned" "$OUT/rb.txt"
'

test_expect_success 'only the narrowed paths went back; the rest stayed, and the safety checkpoint holds the whole tree' '
	narrow &&
	echo a >"$OUT/expect" && test_cmp "$OUT/expect" src/a.c &&
	echo b >"$OUT/expect" && test_cmp "$OUT/expect" src/b.c &&
	test_path_is_missing src/new.c &&
	echo "l2" >"$OUT/expect" && test_cmp "$OUT/expect" src/lib/l.c &&
	echo "guide 2" >"$OUT/expect" && test_cmp "$OUT/expect" docs/guide.md &&
	printf "notes\na person\n" >"$OUT/expect" && test_cmp "$OUT/expect" notes.md &&
	S=$(ref k3) &&
	test "$(git venom-checkpoint list --agent a1 --json | jq -r ".checkpoints[] | select(.checkpoint == \"k3\") | .reason")" = pre_rollback &&
	git show $S:src/new.c >"$OUT/actual" && echo new >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	git show $S:notes.md >"$OUT/actual" && printf "notes\na person\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	git show $S:docs/guide.md >"$OUT/actual" && echo "guide 2" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual"
'

test_expect_success '--restore all with a pathspec: the files would match no point of a conversation' '
	case_repo conv guarded &&
	echo one >f && git add f && git commit -q -m one &&
	ck --reason turn_start --harness claude-code --harness-session s1 --harness-turn u1 >/dev/null &&
	echo two >f &&
	ck --reason turn_end --harness claude-code --harness-session s1 --harness-turn u1 --harness-end e1 >/dev/null &&
	ck --reason turn_start --harness claude-code --harness-session s1 --harness-turn u2 >/dev/null &&
	echo three >f &&
	ck --reason turn_end --harness claude-code --harness-session s1 --harness-turn u2 --harness-end e2 >/dev/null &&
	venom_fails conflict.checkpoint_files_only "$OUT/err.json" nplan k2 --restore all -- f &&
	test_json "$OUT/err.json" ".error.data.why == \"pathspec\"" &&
	nplan k2 -- f >"$OUT/p.json" &&
	test_json "$OUT/p.json" ".restore == \"files\"" ".conversation.rewinds == false"
'

test_expect_success '--name-status and -z print the paths for scripts, as git does' '
	narrow &&
	git venom-plan --agent a1 k1 --outside keep --name-status >"$OUT/ns" &&
	printf "L\ttoo_big\tbig.bin\nM\tturn\tdocs/guide.md\nL\toutside\tnotes.md\nM\tturn\tsrc/lib/l.c\n" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/ns" &&
	git venom-plan --agent a1 k1 -z -- docs >"$OUT/z" &&
	printf "M\000turn\000docs/guide.md\000" >"$OUT/expect" &&
	cmp "$OUT/expect" "$OUT/z" &&
	test_expect_code 2 git venom-plan --agent a1 k1 --name-status --json
'

test_expect_success 'checkpoint diff takes a pathspec (relative to here), --stat and --name-only' '
	narrow &&
	(cd src && git venom-checkpoint diff --agent a1 k1 k2 --json -- lib ../docs) >"$OUT/d.json" &&
	test_json "$OUT/d.json" "[.files[].path] == [\"docs/guide.md\", \"src/lib/l.c\"]" ".pathspec == [\"lib\", \"../docs\"]" &&
	(cd src && git venom-checkpoint diff --agent a1 k1 k2 --name-only -- .) >"$OUT/actual" &&
	printf "src/a.c\nsrc/b.c\nsrc/lib/l.c\nsrc/new.c\n" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	git venom-checkpoint diff --agent a1 k1 k2 -z -- src/lib >"$OUT/z" &&
	printf "src/lib/l.c\000" >"$OUT/expect" && cmp "$OUT/expect" "$OUT/z" &&
	(cd src && git venom-checkpoint diff --agent a1 k1 k2 --stat -- lib) >"$OUT/actual" &&
	git diff --stat $(ref k1) $(ref k2) -- src/lib >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/actual" &&
	grep "^ src/lib/l.c | 2 +-$" "$OUT/actual"
'

test_expect_success 'a pathspec git cannot read is invalid_params.pathspec, and nothing is written' '
	narrow &&
	{ tree_state && git for-each-ref refs/venom && venom_log | wc -l; } >"$OUT/before" &&
	venom_fails invalid_params.pathspec "$OUT/err.json" nplan k1 -- src ":(foo)x" &&
	test_json "$OUT/err.json" ".error.data.pathspec == [\"src\", \":(foo)x\"]" \
		".error.message | test(\"magic\")" &&
	venom_fails invalid_params.pathspec "$OUT/err.json" git venom-rollback --agent a1 --json k1 --plan p2-0000000000000000 -- ../outside &&
	test_json "$OUT/err.json" ".error.message | test(\"outside repository\")" &&
	venom_fails invalid_params.pathspec "$OUT/err.json" git venom-checkpoint diff --agent a1 --json k1 -- ":(foo)x" &&
	test_expect_code 2 git venom-plan --agent a1 k1 -- ":(foo)x" 2>"$OUT/stderr" &&
	grep "^error: bad pathspec: " "$OUT/stderr" &&
	{ tree_state && git for-each-ref refs/venom && venom_log | wc -l; } >"$OUT/after" &&
	test_cmp "$OUT/before" "$OUT/after" &&
	nplan k1 -- no/such/path >"$OUT/none.json" &&
	test_json "$OUT/none.json" "[.repos[0].files[]] == []"
'

test_done
