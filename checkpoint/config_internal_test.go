package checkpoint

import "testing"

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
