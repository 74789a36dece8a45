# t/lib-terminal.sh: run a command on a pseudo-terminal, as git's
# t/lib-terminal.sh does with test-terminal.perl.
#
#	. "$TEST_DIRECTORY/lib-terminal.sh"
#	test_expect_success TTY 'title' '
#		test_terminal git venom-plan k1 >out
#	'
#
# test_terminal CMD... runs CMD with stdin, stdout and stderr on a new
# pseudo-terminal and prints what it wrote there, with the terminal's
# carriage returns removed; its status is CMD's. It uses script(1): the
# util-linux one (`script -qec CMD /dev/null`) or the BSD and macOS one
# (`script -q /dev/null CMD...`). The prerequisite TTY is set when one of
# them works here; without it the tests that need a terminal are skipped
# (prove shows "# skip ... (missing TTY)"). The terminal's size is what
# script gives a terminal it cannot copy one from (0x0, which the
# commands read as 80 columns, as git does), so tests set COLUMNS when the
# width matters.

# _tt_quote ARG...: the args as one sh command line, each single-quoted.
_tt_quote () {
	_tt_out=
	for _tt_a in "$@"; do
		_tt_out="$_tt_out '$(printf '%s' "$_tt_a" | sed "s/'/'\\\\''/g")'"
	done
	printf '%s' "$_tt_out"
}

if script -qec true /dev/null </dev/null >/dev/null 2>&1; then
	test_terminal () {
		script -qec "$(_tt_quote "$@")" /dev/null </dev/null >"$VENOM_TEST_ROOT/tt.out" 2>&1
		_tt_status=$?
		tr -d '\r' <"$VENOM_TEST_ROOT/tt.out"
		return $_tt_status
	}
elif script -q /dev/null true </dev/null >/dev/null 2>&1; then
	test_terminal () {
		script -q /dev/null "$@" </dev/null >"$VENOM_TEST_ROOT/tt.out" 2>&1
		_tt_status=$?
		tr -d '\r' <"$VENOM_TEST_ROOT/tt.out"
		return $_tt_status
	}
fi

if type test_terminal >/dev/null 2>&1 && test "$(test_terminal sh -c 'test -t 1 && test -t 0 && echo tty')" = tty; then
	test_set_prereq TTY
fi
