# t/lib-cases.sh: helpers for the field cases of CASES.md (t700*.sh).
#
# Source it after test-lib.sh, with TEST_NO_CREATE_REPO=1 set before:
#
#	TEST_NO_CREATE_REPO=1
#	. "$(dirname "$0")/test-lib.sh"
#	. "$TEST_DIRECTORY/lib-cases.sh"
#
# Each case runs in a fresh repository of its own, "$TRASH_DIRECTORY/<name>",
# and writes every output file (JSON results, hashes, expected text) in
# "$TRASH_DIRECTORY/<name>.out/", beside the repository and never in it: a
# file a test writes into the tree between turns is a person's file to the
# rollback, and would change what the case tests.
#
# The helpers map the placeholders of CASES.md onto the real CLI (as
# cases/run.sh's prelude does):
#
#	case_repo NAME [guarded]   make the repository, cd into it, set $REPO,
#	                           $OUT, $AG (a1) and $ISO: empty for a guarded
#	                           case (the main worktree is in_place), else
#	                           "--isolation worktree" (registered on the
#	                           agent's first capture)
#	ck ARGS...                 a capture by $AG; prints k<n>
#	ts / te                    turn_start / turn_end captures by $AG
#	plan K ARGS...             the dry run's JSON on stdout
#	rb K ARGS...               dry run, then the real call with its plan;
#	                           the real call's JSON on stdout, its status
#	venom_fails CODE FILE CMD  CMD exits with CODE's class status and prints
#	                           {"error":{"code":CODE}} (kept in FILE)
#
# Portability: bash 3.2, BSD and GNU userlands (no sha256sum, stat -c,
# sed -i, readlink -f).

# case_repo NAME [guarded]
case_repo () {
	REPO="$TRASH_DIRECTORY/$1"
	OUT="$TRASH_DIRECTORY/$1.out"
	AG=a1
	if test "${2:-}" = guarded; then
		ISO=
	else
		ISO="--isolation worktree"
	fi
	rm -rf "$REPO" "$OUT" &&
	mkdir -p "$OUT" &&
	git init -q "$REPO" &&
	cd "$REPO" &&
	git config user.name Dev &&
	git config user.email dev@example.invalid
}

# ck ARGS...: a capture by agent $AG (with $ISO, which only the first
# capture registers); prints the checkpoint id, keeps the JSON in
# $OUT/ck.json.
ck () {
	git venom-checkpoint --agent "$AG" $ISO "$@" --json >"$OUT/ck.json" || {
		cat "$OUT/ck.json" >&4
		return 1
	}
	jq -r .checkpoint "$OUT/ck.json"
}

ts () {
	ck --reason turn_start "$@"
}

te () {
	ck --reason turn_end "$@"
}

# plan K ARGS...: the dry run, JSON on stdout.
plan () {
	git venom-plan --agent "$AG" "$@" --json
}

# rb K ARGS...: the dry run (kept in $OUT/rb-plan.json), then the real call
# quoting its plan; prints the real call's JSON and returns its status.
rb () {
	_rb_k=$1
	shift
	git venom-plan --agent "$AG" "$_rb_k" "$@" --json >"$OUT/rb-plan.json" || {
		echo >&4 "rb: the dry run failed:"
		cat "$OUT/rb-plan.json" >&4
		cat "$OUT/rb-plan.json"
		return 1
	}
	_rb_p=$(jq -r .plan "$OUT/rb-plan.json") &&
	git venom-rollback --agent "$AG" "$_rb_k" "$@" --plan "$_rb_p" --json
}

# ref K: the ref of checkpoint K of $AG.
ref () {
	echo "refs/venom/checkpoints/$AG/${1#k}"
}

# treeof K: the tree of checkpoint K of $AG.
treeof () {
	git rev-parse "$(ref "$1")^{tree}"
}

# exit_class CODE prints the exit status of an error code's class (RFC 11.3).
exit_class () {
	case "$1" in
	failed.*) echo 1 ;;
	invalid_params.*) echo 2 ;;
	not_found.*) echo 3 ;;
	denied.*) echo 4 ;;
	conflict.*) echo 5 ;;
	timeout.*) echo 7 ;;
	unsupported.*) echo 10 ;;
	*) echo "exit_class: unknown class of $1" >&2; return 1 ;;
	esac
}

# venom_fails CODE FILE CMD...: CMD must exit with the status of CODE's
# class and print one JSON error object with that code; its output stays in
# FILE.
venom_fails () {
	_vf_code=$1
	_vf_file=$2
	shift 2
	_vf_want=$(exit_class "$_vf_code") || return 1
	"$@" >"$_vf_file"
	_vf_rc=$?
	if test "$_vf_rc" != "$_vf_want"; then
		echo >&4 "venom_fails: exit status $_vf_rc, want $_vf_want ($_vf_code): $*"
		cat "$_vf_file" >&4
		return 1
	fi
	jq -e --arg c "$_vf_code" '.error.code == $c and (.error.message | type) == "string"' "$_vf_file" >/dev/null 2>&4 || {
		echo >&4 "venom_fails: want error $_vf_code: $*"
		cat "$_vf_file" >&4
		return 1
	}
}

# sha FILE: a digest of FILE's bytes (git's object hash, with no filters,
# so it works the same on every system).
sha () {
	git hash-object --no-filters -- "$1"
}

# index_hash: a digest of the bytes of the real index file.
index_hash () {
	sha "$(git rev-parse --path-format=absolute --git-path index)"
}

# tree_state: one line per path below the current directory, outside any
# .git: type, permission bits, and the digest of a file's bytes or a
# link's target; names with a newline or tab are escaped. Two equal outputs
# mean nothing in the working tree changed (mtimes aside).
tree_state () {
	perl -MFile::Find -MDigest::SHA -e '
		my @out;
		find({ no_chdir => 1, wanted => sub {
			if (m{(^|/)\.git\z}) { $File::Find::prune = 1; return; }
			return if $_ eq ".";
			my @s = lstat($_);
			my $what;
			if (-l _) { $what = "link " . readlink($_); }
			elsif (-d _) { $what = "dir"; }
			else { $what = "file " . Digest::SHA->new(256)->addfile($_)->hexdigest; }
			(my $n = $_) =~ s/\\/\\\\/g; $n =~ s/\n/\\n/g; $n =~ s/\t/\\t/g;
			push @out, sprintf("%s %04o %s", $n, $s[2] & 07777, $what);
		}}, ".");
		print "$_\n" for sort @out;
	'
}

# file_mode FILE prints FILE's permission bits in octal (portable stat).
file_mode () {
	perl -e 'printf "%03o\n", (lstat $ARGV[0])[2] & 07777' "$1"
}

# random_bytes N FILE writes N pseudo-random bytes (incompressible, so a
# capture cannot shrink them), without /dev/urandom's cost for big files.
random_bytes () {
	perl -e 'srand($ARGV[1]); my $n = $ARGV[0]; my $s = "";
		while (length($s) < $n) { $s .= pack("N*", map { int(rand(4294967296)) } 1..1024); }
		print substr($s, 0, $n);' "$1" "${3:-$$}" >"$2"
}

# refs_state: every ref and what it points at, and the stash list.
refs_state () {
	git for-each-ref --format='%(objectname) %(refname)' &&
	git stash list
}

# Prerequisites the cases need.
if command -v strace >/dev/null 2>&1 && strace -f -qq -o /dev/null true 2>/dev/null; then
	test_set_prereq STRACE
fi
# A case-insensitive file system (APFS and NTFS by default): BR-40.
: >"$VENOM_TEST_ROOT/.case-probe" &&
if test -e "$VENOM_TEST_ROOT/.CASE-PROBE"; then
	test_set_prereq CASE_INSENSITIVE_FS
fi
rm -f "$VENOM_TEST_ROOT/.case-probe"
# File modes are kept (not on some mounted Windows file systems).
: >"$VENOM_TEST_ROOT/.mode-probe" && chmod 600 "$VENOM_TEST_ROOT/.mode-probe" &&
if test "$(file_mode "$VENOM_TEST_ROOT/.mode-probe")" = 600; then
	test_set_prereq POSIXPERM
fi
rm -f "$VENOM_TEST_ROOT/.mode-probe"
# Permission checks apply to this user (root ignores a read-only directory).
if ! test_have_prereq ROOT; then
	test_set_prereq SANITY
fi
