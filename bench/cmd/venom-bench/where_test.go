package main

import (
	"strings"
	"testing"
	"time"
)

// TestWhere: a traced run's lines add up by command, most CPU first, and
// the dispatcher is what the whole tree used beyond venom and its
// children.
func TestWhere(t *testing.T) {
	trace := "venom trace: CPU of git rev-parse: 1.50 ms\n" +
		"venom trace: git status --porcelain=v2 -z\n" +
		"venom trace: CPU of git status: 15.25 ms\n" +
		"venom trace: capture: the tree of the same changes, 1234\n" +
		"venom trace: CPU of git rev-parse: 2.00 ms\n" +
		"venom trace: CPU of git status: 16.75 ms\n" +
		"venom trace: CPU of git cat-file: 1.10 ms\n" +
		"venom trace: CPU: 20.00 ms venom, 36.60 ms its git children\n"
	b, err := parseTrace([]byte(trace))
	if err != nil {
		t.Fatal(err)
	}
	if b.n != 5 || b.own != 20*time.Millisecond || b.byCmd["status"].n != 2 || b.byCmd["status"].cpu != 32*time.Millisecond {
		t.Fatalf("breakdown %+v, status %+v", b, b.byCmd["status"])
	}
	got := b.explain(58 * time.Millisecond)
	want := "where the CPU of one more run, traced, went: 58.0 ms in all; venom's own process 20.0 ms,\n" +
		"git's dispatcher 1.4 ms, 5 git children 36.6 ms: status x2 32.0 ms, rev-parse x2 3.5 ms,\n" +
		"cat-file 1.1 ms\n"
	if got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if len(l) > 100 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	if _, err := parseTrace([]byte("venom trace: CPU of git status: 1.00 ms\n")); err == nil {
		t.Error("a trace without its CPU line was read")
	}
	if _, err := parseTrace([]byte("venom trace: CPU of git status: many\nvenom trace: CPU: 1.00 ms venom, 1.00 ms its git children\n")); err == nil {
		t.Error("a child line without a number was read")
	}
}
