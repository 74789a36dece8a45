package refs

import (
	"math/rand"
	"regexp"
	"testing"
)

// TestAgentShapeIsTheRegexp: agentShape accepts exactly what the pattern
// DESIGN.md section 1 gives accepts, on the edge cases and on random
// strings over an alphabet that has every class of character it checks.
func TestAgentShapeIsTheRegexp(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	long := "a123456789012345678901234567890123456789012345678901234567890123"
	cases := []string{"", "a", "0", ".", "-a", "_a", "a.", "a-b_c.d", "A", "aB", "a/b", "a b", "é",
		long, long + "4", long[:63] + "-", "a\n", "\na"}
	alphabet := "az09._-A/ \x00\xff"
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		n := rng.Intn(70)
		b := make([]byte, n)
		for j := range b {
			if rng.Intn(4) == 0 {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			} else {
				b[j] = alphabet[rng.Intn(4)]
			}
		}
		cases = append(cases, string(b))
	}
	for _, id := range cases {
		if got, want := agentShape(id), re.MatchString(id); got != want {
			t.Fatalf("agentShape(%q) = %v, the regexp says %v", id, got, want)
		}
	}
}
