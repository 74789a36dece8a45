# t/lib-zsh-complete.zsh: what zsh's completion makes of a command line.
#
#	zsh -f t/lib-zsh-complete.zsh FPATH-DIR 'git venom-plan --ag'
#
# starts an interactive zsh on a pseudo-terminal (zsh/zpty) with FPATH-DIR
# first in its fpath and compinit loaded, types the line and a TAB, and
# prints what the terminal then shows (the completed line, or the list of
# matches), without escape sequences or carriage returns. For
# t/t0024-completion.sh.
zmodload zsh/zpty || exit 1
dir=$1 input=$2
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D; zstyle ':completion:*' list-separator '--'; print RE""ADY"
zpty -r z x '*READY*% ' || exit 1
zpty -w -n z "$input"$'\t'
# Read until the terminal has been quiet for half a second, after at least
# a second and a half (the first completion loads the functions), and at
# most 20 seconds.
res="" quiet=0
for i in {1..200}; do
	if zpty -r -t z line; then
		res+=$line quiet=0
	else
		(( quiet++ ))
		(( i > 15 && quiet >= 5 )) && break
		sleep 0.1
	fi
done
zpty -d z
print -r -- "$res" | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/.\x08//g; s/\x07//g'
