#!/usr/bin/env bash

test_description='field cases I, J, K of CASES.md: symlinks, file/directory flips, line endings, filters, names and modes'

TEST_NO_CREATE_REPO=1
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-cases.sh"

# --- I. Symlinks -------------------------------------------------------------

test_expect_success SYMLINKS 'BR-29: undoing a directory-to-symlink swap never deletes outside files' '
	case_repo br29 &&
	OUTSIDE="$TRASH_DIRECTORY/br29.outside" && mkdir "$OUTSIDE" && echo precious >"$OUTSIDE/y.c" &&
	(cd "$OUTSIDE" && tree_state) >"$OUT/outside.before" &&
	mkdir lib && echo "int y;" >lib/y.c && git add . && git commit -qm init &&
	K1=$(ts) && rm -rf lib && ln -s "$OUTSIDE" lib && K2=$(te) &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" \
		".repos[0].files == [{path: \"lib\", change: \"delete\", class: \"turn\"}, {path: \"lib/y.c\", change: \"create\", class: \"turn\"}]" \
		".repos[0].left == []" &&
	rb $K1 >"$OUT/r1.json" &&
	test_json "$OUT/r1.json" ".exact == true" &&
	(cd "$OUTSIDE" && tree_state) >"$OUT/outside.after" && test_cmp "$OUT/outside.before" "$OUT/outside.after" &&
	test -d lib && ! test -L lib && echo "int y;" >"$OUT/expect" && test_cmp "$OUT/expect" lib/y.c
'

test_expect_success SYMLINKS 'BR-29: forward again (directory to symlink) keeps the outside file, and the result is verified' '
	cd "$TRASH_DIRECTORY/br29" && OUT="$TRASH_DIRECTORY/br29.out" && OUTSIDE="$TRASH_DIRECTORY/br29.outside" &&
	rb $K2 --restore files >"$OUT/r2.json" &&
	test -L lib && test "$(readlink lib)" = "$OUTSIDE" &&
	(cd "$OUTSIDE" && tree_state) >"$OUT/outside.after" && test_cmp "$OUT/outside.before" "$OUT/outside.after" &&
	test_json "$OUT/r2.json" \
		".repos[0].files == [{path: \"lib\", change: \"create\", class: \"turn\"}, {path: \"lib/y.c\", change: \"delete\", class: \"turn\"}]" \
		".after | test(\"^k[0-9]+$\")" ".exact == true" &&
	test "$(treeof "$(jq -r .after "$OUT/r2.json")")" = "$(treeof $K2)"
'

test_expect_success SYMLINKS 'BR-29 (kind I): a write whose parent is a symlink that stays is left, never written through' '
	case_repo br29k &&
	OUTSIDE="$TRASH_DIRECTORY/br29k.outside" && mkdir "$OUTSIDE" && echo precious >"$OUTSIDE/y.c" &&
	(cd "$OUTSIDE" && tree_state) >"$OUT/outside.before" &&
	mkdir lib && echo "int y;" >lib/y.c && git add . && git commit -qm init &&
	K1=$(ts) && rm -rf lib && K2=$(te) &&
	ln -s "$OUTSIDE" lib &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == []" \
		".repos[0].left == [{path: \"lib\", reason: \"outside\", detail: \"created after the last checkpoint\"}, {path: \"lib/y.c\", reason: \"ignored_in_the_way\", detail: \"lib\"}]" &&
	test -L lib &&
	(cd "$OUTSIDE" && tree_state) >"$OUT/outside.after" && test_cmp "$OUT/outside.before" "$OUT/outside.after"
'

test_expect_success SYMLINKS 'BR-31: with core.symlinks=false the stand-in file stays a 120000 entry and is never converted' '
	case_repo br31 &&
	echo "# rules" >CLAUDE.md && ln -s CLAUDE.md AGENTS.md && git add . && git commit -qm init &&
	git config core.symlinks false && rm AGENTS.md && git checkout -- AGENTS.md &&
	test -f AGENTS.md && ! test -L AGENTS.md &&
	K1=$(ts) &&
	git ls-tree "$(ref $K1)" AGENTS.md >"$OUT/entry" && grep "^120000 " "$OUT/entry" &&
	echo more >>CLAUDE.md && K2=$(te) &&
	git ls-tree "$(ref $K2)" AGENTS.md >"$OUT/entry2" && test_cmp "$OUT/entry" "$OUT/entry2" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].files == [{path: \"CLAUDE.md\", change: \"modify\", class: \"turn\"}]" ".repos[0].left == []" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" &&
	printf CLAUDE.md >"$OUT/expect" && test_cmp "$OUT/expect" AGENTS.md && ! test -L AGENTS.md &&
	echo "# rules" >"$OUT/expect" && test_cmp "$OUT/expect" CLAUDE.md &&
	git ls-tree "$(ref "$(jq -r .after "$OUT/r.json")")" AGENTS.md >"$OUT/entry3" && test_cmp "$OUT/entry" "$OUT/entry3" &&
	git status --porcelain >"$OUT/status" && test_must_be_empty "$OUT/status"
'

# --- J. File <-> directory replacement ---------------------------------------

test_expect_success 'BR-32: a directory holding ignored data is never wiped to write a file; with it gone, the flip works' '
	case_repo br32 &&
	printf "build/\n" >.gitignore && echo "old docs" >docs && git add . && git commit -qm init &&
	K1=$(ts) &&
	rm docs && mkdir -p docs/build && echo page >docs/index.md && echo cache >docs/build/cache.o &&
	K2=$(te) &&
	tree_state >"$OUT/tree.before" &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" ".repos[0].files == []" \
		".repos[0].left == [{path: \"docs\", reason: \"ignored_in_the_way\", detail: \"docs/build/cache.o\"}, {path: \"docs/index.md\", reason: \"ignored_in_the_way\", detail: \"docs/build/cache.o\"}]" &&
	rb $K1 >"$OUT/r1.json" &&
	test_json "$OUT/r1.json" ".exact == true" ".repos[0].files == []" \
		"[.repos[0].left[].path] == [\"docs\", \"docs/index.md\"]" &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after" &&
	test "$(cat docs/build/cache.o)" = cache &&
	rm -rf docs/build &&
	rb $K1 --restore files >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" ".exact == true" ".repos[0].left == []" \
		".repos[0].files == [{path: \"docs\", change: \"create\", class: \"turn\"}, {path: \"docs/index.md\", change: \"delete\", class: \"turn\"}]" &&
	test -f docs && echo "old docs" >"$OUT/expect" && test_cmp "$OUT/expect" docs
'

test_expect_success 'BR-32 (kind J): a file replaced by an emptied directory and back' '
	case_repo br32k &&
	mkdir -p pkg/sub && echo one >pkg/sub/a.txt && echo two >pkg/b.txt && git add . && git commit -qm init &&
	K1=$(ts) && rm -rf pkg && echo "now a file" >pkg && K2=$(te) &&
	rb $K1 >"$OUT/r1.json" &&
	test_json "$OUT/r1.json" ".exact == true" &&
	test "$(cat pkg/sub/a.txt)" = one && test "$(cat pkg/b.txt)" = two &&
	rb $K2 --restore files >"$OUT/r2.json" &&
	test_json "$OUT/r2.json" ".exact == true" &&
	test -f pkg && test "$(cat pkg)" = "now a file"
'

# --- K. Encodings, line endings, filters, names and modes --------------------

test_expect_success 'BR-34: core.safecrlf=true never makes a capture fail' '
	case_repo br34 &&
	printf "one\ntwo\n" >unix.txt && git add . && git commit -qm init &&
	git config core.autocrlf true && git config core.safecrlf true &&
	printf "one\ntwo\nthree\n" >unix.txt && printf "new\n" >new.txt &&
	K1=$(ck --reason manual) &&
	git show "$(ref $K1):unix.txt" >"$OUT/actual" && printf "one\ntwo\nthree\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	git cat-file -e "$(ref $K1):new.txt" &&
	K2=$(ts) && echo four >>unix.txt && K3=$(te) &&
	rb $K2 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".repos[0].files == [{path: \"unix.txt\", change: \"modify\", class: \"turn\"}]"
'

test_expect_success 'BR-35: files whose bytes are not their blob after an eol conversion make exact false and are listed in converted' '
	case_repo br35 &&
	git config core.autocrlf true &&
	printf "a\nb\n" >lf.txt && printf "a\r\nb\r\n" >crlf.txt && printf "a\r\nb\n" >mixed.txt && printf "x\n" >plain.dat &&
	echo "*.dat -text" >.gitattributes &&
	K1=$(ts) &&
	for f in lf.txt crlf.txt mixed.txt plain.dat; do sha $f >"$OUT/$f.sha" || return 1; done &&
	for f in lf.txt crlf.txt mixed.txt plain.dat; do echo junk >$f || return 1; done &&
	K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test "$(sha crlf.txt)" = "$(cat "$OUT/crlf.txt.sha")" &&
	test "$(sha plain.dat)" = "$(cat "$OUT/plain.dat.sha")" &&
	test_json "$OUT/r.json" ".exact == false" ".repos[0].converted == [\"crlf.txt\", \"lf.txt\", \"mixed.txt\"]" \
		"[.repos[0].files[].path] == [\"crlf.txt\", \"lf.txt\", \"mixed.txt\", \"plain.dat\"]"
'

test_expect_success 'BR-35: without conversions the same rollback is exact and lists nothing converted' '
	case_repo br35n &&
	printf "a\nb\n" >lf.txt && printf "a\r\nb\r\n" >crlf.txt &&
	K1=$(ts) && echo junk >lf.txt && echo junk >crlf.txt && K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" "(.repos[0].converted // []) == []" &&
	printf "a\r\nb\r\n" >"$OUT/expect" && test_cmp "$OUT/expect" crlf.txt
'

br36_setup () {
	case_repo $1 &&
	printf "*.dat filter=fake\n" >.gitattributes &&
	git config filter.fake.clean "$2" && git config filter.fake.smudge "$3" &&
	echo v1 >model.dat && git add . && git commit -qm init &&
	K1=$(ts) && echo v2 >model.dat && echo x >other.txt && K2=$(te)
}

test_expect_success 'BR-36 1: a required smudge filter that fails: failed.rollback_undone, nothing lost' '
	br36_setup br36 cat cat &&
	git config filter.fake.required true &&
	git config filter.fake.smudge false &&
	tree_state >"$OUT/tree.before" &&
	plan $K1 >"$OUT/plan.json" &&
	P=$(jq -r .plan "$OUT/plan.json") &&
	venom_fails failed.rollback_undone "$OUT/r.json" git venom-rollback --agent $AG $K1 --plan $P --json &&
	test_json "$OUT/r.json" ".error.data.safety | test(\"^k[0-9]+$\")" ".error.data.repo == \".\"" &&
	test_path_is_file model.dat && test "$(cat model.dat)" = v2 && test "$(cat other.txt)" = x &&
	tree_state >"$OUT/tree.after" && test_cmp "$OUT/tree.before" "$OUT/tree.after" &&
	SAFE=$(jq -r .error.data.safety "$OUT/r.json") &&
	git show "$(ref $SAFE):other.txt" >"$OUT/actual" && echo x >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/actual" &&
	venom_log | jq -c "select(.type == \"rollback.ended\") | {ok, code}" >"$OUT/ended" &&
	echo "{\"ok\":false,\"code\":\"failed.rollback_undone\"}" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ended"
'

test_expect_success 'BR-36 2: a smudge filter that works writes the content, and the result says it is not the blob' '
	br36_setup br36w "sed -e /^P:/!s/^/P:/" "sed s/^P://" &&
	git cat-file blob "$(ref $K1):model.dat" >"$OUT/blob" && echo P:v1 >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/blob" &&
	rb $K1 >"$OUT/r.json" &&
	test "$(cat model.dat)" = v1 &&
	test_json "$OUT/r.json" ".exact == false" ".repos[0].converted == [\"model.dat\"]"
'

test_expect_success 'BR-36 3: a non-required smudge that fails writes the pointer; the result must say so (exact false or left)' '
	br36_setup br36p "sed -e /^P:/!s/^/P:/" "sed s/^P://" &&
	git config filter.fake.smudge false &&
	rb $K1 >"$OUT/r.json" &&
	test_path_is_file model.dat &&
	if test "$(cat model.dat)" = "P:v1"
	then
		test_json "$OUT/r.json" ".exact == false or ([.repos[0].left[].path] | index(\"model.dat\") != null)"
	else
		test "$(cat model.dat)" = v2 &&
		test_json "$OUT/r.json" "[.repos[0].left[].path] | index(\"model.dat\") != null"
	fi
'

test_expect_success 'BR-38: names that look like pathspec magic, globs or options are captured and restored' '
	case_repo br38 &&
	git config venom.checkpoints.maxFileBytes 100k &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts) &&
	for n in ":todo.md" ":(top)x.md" "*.md" "[ab].md" "b.md" "-rf" "sp ace.txt" "weird),x.bin" "back\\slash"; do
		printf "%s\n" "$n" >"./$n" || return 1
	done &&
	if test_have_prereq FUNNYNAMES
	then
		printf "x\n" >"new
line.txt" && printf "x\n" >"tab	x.txt"
	fi &&
	random_bytes 150000 "*.bin" 38 && echo small >model.bin &&
	K2=$(te) &&
	git venom-checkpoint list --agent $AG --json >"$OUT/list.json" &&
	test_json "$OUT/list.json" "[.checkpoints[0].repos[0].skipped[].path] == [\"*.bin\"]" &&
	git ls-tree -r -z --name-only "$(ref $K2)" | tr "\\000\\n" "\\n?" | sort >"$OUT/names" &&
	{
		printf "%s\n" "*.md" "-rf" ":(top)x.md" ":todo.md" "[ab].md" a b.md "back\\slash" model.bin "sp ace.txt" "weird),x.bin" &&
		if test_have_prereq FUNNYNAMES; then printf "%s\n" "new?line.txt" "tab	x.txt"; fi
	} | sort >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/names" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" ".repos[0].left == [{path: \"*.bin\", reason: \"too_big\"}]" &&
	test -f "*.bin" && test_path_is_missing model.bin && test_path_is_missing ":todo.md" &&
	test_path_is_missing ":(top)x.md" && test_path_is_missing "-rf" && test_path_is_missing "back\\slash" &&
	test_path_is_missing "new
line.txt" &&
	ls >"$OUT/ls" && printf "*.bin\na\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ls"
'

test_expect_success 'BR-38 (kind K): a file named like exclude or glob magic never breaks a plan' '
	case_repo br38k &&
	echo a >a && git add . && git commit -qm init &&
	K1=$(ts) &&
	for n in ":!a" ":^b" ":(glob)**" ":(icase)A" ":(exclude)a"; do
		printf "%s\n" "$n" >"./$n" || return 1
	done &&
	K2=$(te) &&
	plan $K1 >"$OUT/plan.json" &&
	test_json "$OUT/plan.json" "[.repos[0].files[] | .path] | sort == [\":!a\", \":(exclude)a\", \":(glob)**\", \":(icase)A\", \":^b\"]" &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" &&
	ls >"$OUT/ls" && echo a >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ls"
'

# BR-40 needs a case-insensitive file system (APFS and NTFS by default),
# where git init sets core.ignorecase. On such a system the two names are
# one directory entry, so only the order delete-then-write gives the old
# case back.
test_expect_success CASE_INSENSITIVE_FS 'BR-40: undo of a case-only rename of a tracked file gives back the old case' '
	case_repo br40 &&
	echo hi >Readme.md && git add . && git commit -qm init &&
	K1=$(ts) && mv Readme.md tmp.md && mv tmp.md README.md && K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	ls >"$OUT/ls" && echo Readme.md >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ls" &&
	echo hi >"$OUT/expect" && test_cmp "$OUT/expect" Readme.md
'

test_expect_success CASE_INSENSITIVE_FS 'BR-40: undo of a case-only rename of an untracked file gives back the old case and never loses it' '
	case_repo br40u &&
	echo base >base && git add . && git commit -qm init &&
	echo hi >Readme.md &&
	K1=$(ts) && mv Readme.md tmp.md && mv tmp.md README.md && K2=$(te) &&
	git ls-tree --name-only "$(ref $K2)" >"$OUT/names" && grep -x README.md "$OUT/names" &&
	rb $K1 >"$OUT/r.json" &&
	ls >"$OUT/ls" && printf "Readme.md\nbase\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ls" &&
	echo hi >"$OUT/expect" && test_cmp "$OUT/expect" Readme.md
'

test_expect_success CASE_INSENSITIVE_FS 'BR-40: a kept file is never overwritten through a path that differs only in case' '
	case_repo br40g guarded &&
	echo base >base && git add . && git commit -qm init &&
	echo hi >Readme.md &&
	K1=$(ts) && rm Readme.md && K2=$(te) &&
	echo person >README.md &&
	rb $K1 --outside keep >"$OUT/r.json" &&
	ls >"$OUT/ls" && printf "README.md\nbase\n" >"$OUT/expect" && test_cmp "$OUT/expect" "$OUT/ls" &&
	echo person >"$OUT/expect" && test_cmp "$OUT/expect" README.md &&
	test_json "$OUT/r.json" "[.repos[0].left[].path] | sort == [\"README.md\", \"Readme.md\"]" \
		"[.repos[0].files[].path] | index(\"Readme.md\") == null"
'

test_expect_success POSIXPERM 'BR-41: a rollback keeps a 0600 file 0600 and gives back the exec bit' '
	case_repo br41 &&
	umask 022 &&
	echo a >a && git add . && git commit -qm init &&
	printf "TOKEN=abc\n" >secrets.env && chmod 600 secrets.env &&
	printf "#!/bin/sh\necho hi\n" >run.sh && chmod 755 run.sh &&
	K1=$(ts) &&
	git ls-tree "$(ref $K1)" run.sh >"$OUT/entry" && grep "^100755 " "$OUT/entry" &&
	printf "TOKEN=zzz\n" >secrets.env && chmod 644 run.sh &&
	K2=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test_json "$OUT/r.json" ".exact == true" \
		".repos[0].files == [{path: \"run.sh\", change: \"modify\", class: \"turn\"}, {path: \"secrets.env\", change: \"modify\", class: \"turn\"}]" &&
	printf "TOKEN=abc\n" >"$OUT/expect" && test_cmp "$OUT/expect" secrets.env &&
	test "$(file_mode secrets.env)" = 600 &&
	test "$(file_mode run.sh)" = 755
'

# The undo of a rollback gives back the bits the rollback could not keep:
# of a file it deleted, a directory it emptied, and a file whose git mode
# it changed. Checkpoints hold only 644 and 755; rollback.started logs the
# rest.
test_expect_success POSIXPERM 'BR-41: the undo of a rollback gives back the bits of what it deleted or changed the mode of' '
	case_repo br41u &&
	umask 022 &&
	echo a >a && printf "#!/bin/sh\n" >tool && chmod 700 tool && git add . && git commit -qm init &&
	K1=$(ts) && K2=$(te) &&
	K3=$(ts) &&
	echo secret >private.txt && chmod 600 private.txt &&
	mkdir -p keys/deep && echo k >keys/deep/id && chmod 600 keys/deep/id && chmod 700 keys keys/deep &&
	chmod 640 tool &&
	K4=$(te) &&
	rb $K1 >"$OUT/r.json" &&
	test_path_is_missing private.txt && test_path_is_missing keys &&
	test "$(file_mode tool)" = 755 &&
	S=$(jq -r .safety "$OUT/r.json") &&
	rb $S --restore files >"$OUT/u.json" &&
	test_json "$OUT/u.json" ".exact == true" &&
	test "$(cat private.txt)" = secret &&
	test "$(file_mode private.txt)" = 600 &&
	test "$(file_mode keys)" = 700 && test "$(file_mode keys/deep)" = 700 &&
	test "$(file_mode keys/deep/id)" = 600 &&
	test "$(file_mode tool)" = 640 &&
	rb $K1 >"$OUT/r2.json" && test_path_is_missing private.txt
'

# What git would give back anyway is not logged (umask 002: 0664 files,
# 0775 directories); a directory's setgid and sticky bits are; a 0700
# directory the rollback empties and fills again keeps its bits; with
# core.fileMode=false, whose captures read no exec bit, an executable file
# the rollback deleted comes back executable with the undo.
test_expect_success POSIXPERM 'BR-41: only bits git would not give back are logged; special directory bits, a refilled directory and core.fileMode=false' '
	case_repo br41s &&
	umask 002 &&
	mkdir keys && echo k >keys/old && echo a >a && git add . && git commit -qm init &&
	chmod 700 keys && chmod 600 keys/old &&
	K1=$(ts) && K2=$(te) &&
	K3=$(ts) &&
	echo team >team.txt && mkdir shared group &&
	echo s >shared/s && echo g >group/g && chmod 1777 shared && chmod 2770 group &&
	git mv keys/old keys/new && git commit -qm mv && chmod 700 keys &&
	K4=$(te) &&
	rb $K1 --restore files >"$OUT/r.json" &&
	test "$(file_mode keys)" = 700 && test "$(file_mode keys/old)" = 664 &&
	venom_log | grep "\"rollback.started\"" | tail -n 1 >"$OUT/started" &&
	jq -c "[.perms[] | [.path, .perm]] | sort" "$OUT/started" >"$OUT/perms" &&
	echo "[[\"group\",\"2770\"],[\"keys\",\"0700\"],[\"keys/new\",\"0600\"],[\"shared\",\"1777\"]]" >"$OUT/expect" &&
	test_cmp "$OUT/expect" "$OUT/perms" &&
	S=$(jq -r .safety "$OUT/r.json") &&
	rb $S --restore files >"$OUT/u.json" &&
	test_json "$OUT/u.json" ".exact == true" &&
	test "$(file_mode shared)" = 1777 && test "$(file_mode group)" = 2770 &&
	test "$(file_mode keys/new)" = 600 && test "$(file_mode team.txt)" = 664 &&
	git config core.fileMode false &&
	K6=$(ts) && printf "#!/bin/sh\n" >new.sh && chmod 700 new.sh && K7=$(te) &&
	rb $K6 --restore files >"$OUT/r2.json" && test_path_is_missing new.sh &&
	S2=$(jq -r .safety "$OUT/r2.json") &&
	rb $S2 --restore files >"$OUT/u2.json" &&
	test "$(file_mode new.sh)" = 700
'

test_done
