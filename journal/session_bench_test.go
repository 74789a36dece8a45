package journal_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/venom-org/git-venom/internal/journaltest"
	"github.com/venom-org/git-venom/journal"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadSession is a command's first Load of a log of one long
// agent session (journaltest.Session), read whole (no snapshot) and from
// the replay snapshot, at 10 and 10,000 records; cpu-µs/op is the
// process's CPU time per Load.
func BenchmarkLoadSession(b *testing.B) {
	for _, n := range []int{10, 10000} {
		l, err := journal.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if err := journaltest.Fill(l, "claude-0d3c8b1e7f2a", "/tree", n); err != nil {
			b.Fatal(err)
		}
		for _, from := range []string{"whole", "snapshot"} {
			b.Run(fmt.Sprintf("records=%d/%s", n, from), func(b *testing.B) {
				if from == "snapshot" {
					if _, err := (&journal.Log{Dir: l.Dir}).Load(); err != nil {
						b.Fatal(err)
					}
				}
				c0 := cpuNow()
				for i := 0; i < b.N; i++ {
					if from == "whole" {
						os.Remove(l.SnapshotPath())
					}
					nl := &journal.Log{Dir: l.Dir}
					journal.SetSnapshotEvery(nl, 1<<30) // never written
					if _, err := nl.Load(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cpuNow()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}
