package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/venom-org/git-venom/internal/rfcerr"
	"github.com/venom-org/git-venom/plumbing"
)

// Config holds the venom.checkpoints.* keys with RFC 11.5 defaults.
// Sizes are bytes; durations are time.Duration.
type Config struct {
	Enabled       bool
	MaxFileBytes  int64
	MaxTotalBytes int64
	Keep          int
	KeepFor       time.Duration
	KeepSafety    time.Duration
	Timeout       time.Duration
	RollbackNote  string
	// ToolCalls is venom.checkpoints.toolCalls: which tool calls a hook
	// takes a mid-turn checkpoint before (ToolCallsShell, ToolCallsAll,
	// ToolCallsOff; git-venom-hook(1) says why the default is what it is).
	ToolCalls string
	// ModesFromDisk is core.fileMode and core.symlinks both true (git's
	// defaults), read in the same call: plumbing.Repo.KnowModesFromDisk.
	ModesFromDisk bool
	// ExecFromDisk is core.fileMode alone: git reads the exec bit from
	// the files (rollback's permission bits, CASES BR-41).
	ExecFromDisk bool
	// HashFiles are the values of core.attributesFile, include.path and
	// includeIf.<condition>.path, as configured: files outside the fixed
	// ones that may decide what git makes of a file's bytes, whose
	// identity the kept caches key on (plumbing.Repo.KnowConfigFiles).
	HashFiles []string
	// HashOnBranch is whether one of them is an includeIf.onbranch:*.path:
	// which files are included then depends on HEAD's branch.
	HashOnBranch bool
}

// The values of venom.checkpoints.toolCalls.
const (
	ToolCallsShell = "shell"
	ToolCallsAll   = "all"
	ToolCallsOff   = "off"
)

// DefaultRollbackNote is RFC 11.5's checkpoints.rollback_note.
const DefaultRollbackNote = "Note: the files were rolled back to their state {when}. Changes made after that point are gone, and what you remember of them may no longer be true. Read the files before you rely on them."

// Defaults returns RFC 11.5's defaults.
func Defaults() Config {
	return Config{
		Enabled:       true,
		MaxFileBytes:  52428800,
		MaxTotalBytes: 536870912,
		Keep:          100,
		KeepFor:       14 * 24 * time.Hour,
		KeepSafety:    30 * 24 * time.Hour,
		Timeout:       30 * time.Second,
		RollbackNote:  DefaultRollbackNote,
		ToolCalls:     ToolCallsShell,
		ModesFromDisk: true,
		ExecFromDisk:  true,
	}
}

// LoadConfig reads every venom.* key with one `git config -z --get-regexp`
// call, so `git -c venom.checkpoints.x=y venom-…` works like any git config.
// A value that does not parse is invalid_params.config (exit 2).
func LoadConfig(ctx context.Context, r *plumbing.Repo) (Config, error) {
	out, err := r.Run(ctx, plumbing.Options{}, configArgs...)
	return parseConfig(out, err)
}

// configArgs is the git command that lists the venom.* keys, the two
// core keys a capture's tree editing depends on, and the names of the
// files beyond the fixed ones whose changes the kept caches must see
// (Config.HashFiles).
var configArgs = []string{"config", "-z", "--get-regexp", `^(venom\.|core\.(filemode|symlinks|attributesfile)$|include\.path$|includeif\..*\.path$)`}

// hashFileArgs lists configArgs' names of files alone: a submodule's
// (knowSubmoduleConfig), whose venom.* keys are not read.
var hashFileArgs = []string{"config", "-z", "--get-regexp", `^(core\.attributesfile|include\.path|includeif\..*\.path)$`}

// knowSubmoduleConfig tells sub, a submodule's runner, the files its own
// configuration names (Config.HashFiles) when that configuration may
// include any (plumbing.Repo.SubmoduleConfigMayInclude): one git config
// call then, none in the usual case, where the runner keeps its parent's
// names, which hold the global and system ones.
func knowSubmoduleConfig(ctx context.Context, sub *plumbing.Repo) error {
	if !sub.SubmoduleConfigMayInclude() {
		return nil
	}
	out, err := sub.Run(ctx, plumbing.Options{}, hashFileArgs...)
	c, err := parseConfig(out, err)
	if err != nil {
		return err
	}
	sub.KnowConfigFiles(c.HashFiles, c.HashOnBranch)
	return nil
}

// parseConfig reads configArgs' output (and error) into a Config.
func parseConfig(out []byte, err error) (Config, error) {
	c := Defaults()
	if err != nil && !plumbing.IsExit(err, 1) { // 1: no key matched
		return c, fmt.Errorf("reading venom.* config: %w", err)
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		k, v, _ := strings.Cut(string(rec), "\n")
		if lk := strings.ToLower(k); lk == "core.filemode" || lk == "core.symlinks" {
			if b, err := ParseBool(v); err != nil || !b {
				c.ModesFromDisk = false // unreadable: as if off, the full way
				if lk == "core.filemode" {
					c.ExecFromDisk = false
				}
			}
			continue
		}
		if lk := strings.ToLower(k); lk == "core.attributesfile" || lk == "include.path" ||
			(strings.HasPrefix(lk, "includeif.") && strings.HasSuffix(lk, ".path")) {
			c.HashFiles = append(c.HashFiles, v)
			c.HashOnBranch = c.HashOnBranch || strings.HasPrefix(lk, "includeif.onbranch:")
			continue
		}
		if err := c.set(k, v); err != nil {
			return c, rfcerr.Wrap("invalid_params.config", err, map[string]any{"key": k, "value": v}, "bad value for %s", k)
		}
	}
	return c, nil
}

func (c *Config) set(key, v string) error {
	var err error
	switch strings.ToLower(key) {
	case "venom.checkpoints.enabled":
		c.Enabled, err = ParseBool(v)
	case "venom.checkpoints.maxfilebytes":
		c.MaxFileBytes, err = ParseSize(v)
	case "venom.checkpoints.maxtotalbytes":
		c.MaxTotalBytes, err = ParseSize(v)
	case "venom.checkpoints.keep":
		var n int64
		n, err = ParseSize(v)
		c.Keep = int(n)
	case "venom.checkpoints.keepfor":
		c.KeepFor, err = ParseDuration(v)
	case "venom.checkpoints.keepsafety":
		c.KeepSafety, err = ParseDuration(v)
	case "venom.checkpoints.timeout":
		c.Timeout, err = ParseDuration(v)
	case "venom.checkpoints.rollbacknote":
		c.RollbackNote = v
	case "venom.checkpoints.toolcalls":
		c.ToolCalls, err = parseToolCalls(v)
	}
	return err
}

// parseToolCalls reads venom.checkpoints.toolCalls: shell, all or off
// (true and false, as git spells booleans, are shell and off).
func parseToolCalls(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case ToolCallsShell:
		return ToolCallsShell, nil
	case ToolCallsAll:
		return ToolCallsAll, nil
	case ToolCallsOff:
		return ToolCallsOff, nil
	}
	if b, err := ParseBool(v); err == nil {
		if b {
			return ToolCallsShell, nil
		}
		return ToolCallsOff, nil
	}
	return "", fmt.Errorf("%q is not shell, all or off", v)
}

// ParseBool reads a boolean as git does: true, yes, on, 1 or nothing (a
// bare key) are true; false, no, off, 0 false; anything else an error.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean", v)
}

// ParseSize reads a byte count as git does: a whole number with an optional
// k, m or g suffix (powers of 1024).
func ParseSize(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		mul, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "g"):
		mul, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (a whole number with an optional k, m or g)", v)
	}
	return n * mul, nil
}

// ParseDuration reads RFC 11.5 durations: a whole number with s, m, h or d
// ("30s", "14d"); a bare number is seconds.
func ParseDuration(v string) (time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "ms"):
		unit, s = time.Millisecond, s[:len(s)-2]
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		unit, s = time.Minute, s[:len(s)-1]
	case strings.HasSuffix(s, "h"):
		unit, s = time.Hour, s[:len(s)-1]
	case strings.HasSuffix(s, "d"):
		unit, s = 24*time.Hour, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a duration (a whole number with s, m, h or d)", v)
	}
	return time.Duration(n) * unit, nil
}
