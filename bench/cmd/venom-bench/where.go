package main

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// breakdown is where one traced venom command's CPU went, read from its
// GIT_VENOM_TRACE=1 output: "venom trace: CPU of git <cmd>: <ms> ms" for
// each git child once it ended, and last "venom trace: CPU: <ms> ms
// venom, <ms> ms its git children" (plumbing's childCPU, internal/cli's
// traceCPU).
type breakdown struct {
	own, children time.Duration // venom's process; all its git children
	byCmd         map[string]*cmdCPU
	n             int // git children
}

// cmdCPU is the CPU of the children that ran one git command.
type cmdCPU struct {
	name string
	n    int
	cpu  time.Duration
}

// parseTrace reads a trace into a breakdown; a trace without its last
// line (the command died, or was not traced) is an error.
func parseTrace(trace []byte) (*breakdown, error) {
	b := &breakdown{byCmd: map[string]*cmdCPU{}}
	total := false
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		if rest, ok := strings.CutPrefix(l, "venom trace: CPU of git "); ok {
			name, v, ok := strings.Cut(rest, ": ")
			d, err := parseMs(v)
			if !ok || err != nil {
				return nil, fmt.Errorf("trace line %q", l)
			}
			c := b.byCmd[name]
			if c == nil {
				c = &cmdCPU{name: name}
				b.byCmd[name] = c
			}
			c.n++
			c.cpu += d
			b.n++
			continue
		}
		if rest, ok := strings.CutPrefix(l, "venom trace: CPU: "); ok {
			own, kids, ok := strings.Cut(strings.TrimSuffix(rest, " its git children"), " venom, ")
			var err1, err2 error
			b.own, err1 = parseMs(own)
			b.children, err2 = parseMs(kids)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("trace line %q", l)
			}
			total = true
		}
	}
	if !total {
		return nil, fmt.Errorf("no CPU line in its trace (GIT_VENOM_TRACE=1): %.300s", trace)
	}
	return b, nil
}

// parseMs reads "12.34 ms".
func parseMs(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), " ms"), 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(f * float64(time.Millisecond)), nil
}

// explain says where the traced run's CPU went, total being the CPU of
// its whole process tree (wait4): venom's own process, git's dispatcher
// (the `git venom-...` that started it: total less venom and its
// children), and the git children by command, most first, "xN" where a
// command ran N times. Lines of at most about 100 columns, each ending
// in a newline.
func (b *breakdown) explain(total time.Duration) string {
	cmds := make([]*cmdCPU, 0, len(b.byCmd))
	for _, c := range b.byCmd {
		cmds = append(cmds, c)
	}
	sort.Slice(cmds, func(i, j int) bool {
		if cmds[i].cpu != cmds[j].cpu {
			return cmds[i].cpu > cmds[j].cpu
		}
		return cmds[i].name < cmds[j].name
	})
	words := []string{fmt.Sprintf("where the CPU of one more run, traced, went: %s in all; venom's own process %s,", msStr(total), msStr(b.own))}
	if d := total - b.own - b.children; d > 0 {
		words = append(words, fmt.Sprintf("git's dispatcher %s,", msStr(d)))
	}
	words = append(words, fmt.Sprintf("%d git children %s:", b.n, msStr(b.children)))
	for i, c := range cmds {
		w := c.name
		if c.n > 1 {
			w += fmt.Sprintf(" x%d", c.n)
		}
		w += " " + msStr(c.cpu)
		if i < len(cmds)-1 {
			w += ","
		}
		words = append(words, w)
	}
	var out, line strings.Builder
	for _, w := range words {
		if line.Len() > 0 && line.Len()+1+len(w) > 100 {
			out.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		out.WriteString(line.String() + "\n")
	}
	return out.String()
}

func msStr(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
