# t/lib-tui.sh: drive `git venom` (the TUI) in a pseudo-terminal, with tmux.
#
# Source it after test-lib.sh. Tests that use it name the TMUX
# prerequisite (set here when tmux is on PATH; .ci/run installs it).
#
#	tui_start [VAR=value...]  run `git venom` in the current directory, in a
#	                          detached tmux session of $TUI_W x $TUI_H cells
#	                          (80 x 24), with those variables set
#	tui_wait TEXT [SECONDS]   wait until the screen shows TEXT (a fixed
#	                          string; default 60 s), and fail showing the
#	                          screen when it never does
#	tui_gone TEXT [SECONDS]   wait until the screen no longer shows TEXT
#	tui_joined                the screen as one line: lines joined by a
#	                          space, leading blanks dropped, so that a
#	                          command the TUI wrapped reads whole
#	tui_keys KEY...           tmux send-keys: "Enter", "Escape", "Down", "y"
#	tui_screen [-e]           print the screen (with -e, its colours as
#	                          escape sequences)
#	tui_quit                  press q, wait for the TUI's exit and print its
#	                          status (tui_exit)
#	tui_stop                  end the tmux server (in test_when_finished)
#
# The screen is read with capture-pane, and every wait polls it for the
# text that proves the TUI got there, never a fixed sleep: an Escape sent
# together with the next key reads as Alt+key to the TUI, so a test waits
# for what the Escape did before it sends more. Each TUI also lives at most
# $TUI_LIFETIME seconds (perl's alarm), so that no tmux server outlives a
# failed test, and each server is ended by tui_stop.
#
# Everything tmux and the TUI write goes to "$VENOM_TEST_ROOT/tui", outside
# every repository: a file written into a tree between turns is a person's
# to the rollback. Each tui_start gets a server socket and an exit file of
# its own (sock.N, exit.N), so that a server still ending after tui_stop
# (kill-server returns before the server has gone) never takes the next
# session's commands, and a dying TUI's exit status is never read as the
# next one's.

TUI_W=${TUI_W:-80}
TUI_H=${TUI_H:-24}
TUI_LIFETIME=${TUI_LIFETIME:-300}
TUI_DIR="$VENOM_TEST_ROOT/tui"
mkdir -p "$TUI_DIR"
command -v tmux >/dev/null 2>&1 && test_set_prereq TMUX

# The server's options: no status line (the TUI gets every row), a
# 256-colour terminal type, so colours read the same on every machine.
cat >"$TUI_DIR/tmux.conf" <<-\EOF
	set -g status off
	set -g default-terminal "screen-256color"
	set -g history-limit 0
EOF

_tui_n=0
_tui_exit="$TUI_DIR/exit.0"

tui_tmux () {
	tmux -u -S "$TUI_DIR/sock.$_tui_n" -f "$TUI_DIR/tmux.conf" "$@"
}

tui_start () {
	tui_stop
	_tui_n=$((_tui_n + 1))
	_tui_exit="$TUI_DIR/exit.$_tui_n"
	rm -f "$_tui_exit"
	# The session runs this script with the tree, this directory and the
	# lifetime first: env sets the variables, perl bounds the TUI's life,
	# and the exit status lands in this start's exit file.
	cat >"$TUI_DIR/run.sh" <<-\EOF
		cd "$1" || exit 1
		status=$2 life=$3
		shift 3
		env "$@" perl -e 'alarm shift; exec @ARGV' "$life" git venom
		echo $? >"$status.tmp" && mv "$status.tmp" "$status"
	EOF
	tui_tmux new-session -d -s venom -x "$TUI_W" -y "$TUI_H" \
		sh "$TUI_DIR/run.sh" "$PWD" "$_tui_exit" "$TUI_LIFETIME" "$@"
}

# Without -e, trailing blanks are dropped, so a pattern can end in $.
tui_screen () {
	if test "${1:-}" = -e; then
		tui_tmux capture-pane -p -e -t venom 2>/dev/null
	else
		tui_tmux capture-pane -p -t venom 2>/dev/null | sed "s/  *\$//"
	fi
}

tui_joined () {
	tui_screen | sed "s/^  *//" | tr "\n" " "
	echo
}

tui_keys () {
	tui_tmux send-keys -t venom "$@"
}

# _tui_poll WANT TEXT SECONDS: wait until grep -F TEXT on the screen is
# WANT (0 found, 1 not found).
_tui_poll () {
	_tries=$(( ${3:-60} * 10 ))
	while test $_tries -gt 0; do
		tui_screen >"$TUI_DIR/screen" 2>/dev/null
		grep -F -e "$2" "$TUI_DIR/screen" >/dev/null
		test $? = "$1" && return 0
		if test -f "$_tui_exit"; then
			break
		fi
		sleep 0.1
		_tries=$((_tries - 1))
	done
	# What the wait wanted comes last, after the screen: a CI log that
	# keeps only the end of the output still says it.
	{
		echo "--- screen:"
		cat "$TUI_DIR/screen"
		echo "---"
		if test -f "$_tui_exit"; then
			echo "tui: git venom exited with $(cat "$_tui_exit")"
		fi
		if test "$1" = 0; then
			echo "tui: the screen never showed: $2"
		else
			echo "tui: the screen still shows: $2"
		fi
	} >&4
	return 1
}

tui_wait () {
	_tui_poll 0 "$1" "${2:-60}"
}

tui_gone () {
	_tui_poll 1 "$1" "${2:-60}"
}

# tui_exit [SECONDS] waits for git venom to exit and prints its status.
tui_exit () {
	_tries=$(( ${1:-60} * 10 ))
	while ! test -f "$_tui_exit"; do
		_tries=$((_tries - 1))
		if test $_tries -le 0; then
			echo >&4 "tui: git venom did not exit"
			tui_screen >&4
			return 1
		fi
		sleep 0.1
	done
	cat "$_tui_exit"
}

tui_quit () {
	tui_keys q &&
	tui_exit
}

tui_stop () {
	tui_tmux kill-server >/dev/null 2>&1
	return 0
}
