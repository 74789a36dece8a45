package checkpoint

import (
	"strings"
	"testing"
)

// TestParseConfigModes: core.fileMode and core.symlinks both on (or unset)
// let a capture read modes from disk; either off turns ModesFromDisk off,
// and only core.fileMode turns ExecFromDisk off (git reads no exec bit).
func TestParseConfigModes(t *testing.T) {
	for _, c := range []struct {
		out         string
		modes, exec bool
	}{
		{"", true, true},
		{"core.filemode\ntrue\x00core.symlinks\ntrue\x00", true, true},
		{"core.symlinks\nfalse\x00", false, true},
		{"core.filemode\nfalse\x00", false, false},
		{"core.fileMode\nno\x00core.symlinks\ntrue\x00", false, false},
	} {
		cfg, err := parseConfig([]byte(c.out), nil)
		if err != nil {
			t.Fatalf("%q: %v", c.out, err)
		}
		if cfg.ModesFromDisk != c.modes || cfg.ExecFromDisk != c.exec {
			t.Errorf("%q: ModesFromDisk %v ExecFromDisk %v, want %v %v", c.out, cfg.ModesFromDisk, cfg.ExecFromDisk, c.modes, c.exec)
		}
	}
}

// TestParseConfigToolCalls: venom.checkpoints.toolCalls is shell by
// default, takes shell, all and off (and git's booleans), and anything
// else is invalid_params.config.
func TestParseConfigToolCalls(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"", ToolCallsShell},
		{"venom.checkpoints.toolcalls\nall\x00", ToolCallsAll},
		{"venom.checkpoints.toolCalls\nOFF\x00", ToolCallsOff},
		{"venom.checkpoints.toolcalls\nshell\x00", ToolCallsShell},
		{"venom.checkpoints.toolcalls\nfalse\x00", ToolCallsOff},
		{"venom.checkpoints.toolcalls\nyes\x00", ToolCallsShell},
	} {
		cfg, err := parseConfig([]byte(c.out), nil)
		if err != nil || cfg.ToolCalls != c.want {
			t.Errorf("%q: %q, %v; want %q", c.out, cfg.ToolCalls, err, c.want)
		}
	}
	if _, err := parseConfig([]byte("venom.checkpoints.toolcalls\nbash\x00"), nil); err == nil || !strings.Contains(err.Error(), "venom.checkpoints.toolcalls") {
		t.Errorf("toolCalls=bash: %v, want a bad value error", err)
	}
}

// TestParseConfigHashFiles: core.attributesFile, include.path and each
// includeIf.<condition>.path are kept, as configured, for the kept caches
// to key on; they are no venom setting and never an error.
func TestParseConfigHashFiles(t *testing.T) {
	out := "core.attributesfile\n~/.attrs\x00include.path\nextra.cfg\x00includeif.gitdir:~/work/.path\n/etc/work.cfg\x00" +
		"venom.checkpoints.keep\n7\x00includeif.onbranch:x.y.path\nbranch.cfg\x00"
	cfg, err := parseConfig([]byte(out), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"~/.attrs", "extra.cfg", "/etc/work.cfg", "branch.cfg"}
	if strings.Join(cfg.HashFiles, "|") != strings.Join(want, "|") || cfg.Keep != 7 || !cfg.HashOnBranch {
		t.Fatalf("HashFiles %q, keep %d, on branch %v; want %q, 7, true", cfg.HashFiles, cfg.Keep, cfg.HashOnBranch, want)
	}
	if cfg, _ := parseConfig([]byte("includeif.gitdir:~/w/.path\nw.cfg\x00"), nil); cfg.HashOnBranch {
		t.Errorf("a gitdir condition alone: on branch, want not")
	}
}
