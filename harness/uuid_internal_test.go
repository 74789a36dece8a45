package harness

import (
	"math/rand"
	"regexp"
	"testing"
)

// TestIsUUIDIsTheRegexp: isUUID accepts exactly the lower-case 8-4-4-4-12
// UUIDs the pattern it replaced accepted.
func TestIsUUIDIsTheRegexp(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	good := "0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5f60"
	cases := []string{"", good, good + "0", good[:35], "0D3C8B1E-7F2A-4C39-9A57-1B2C3D4E5F60",
		"0d3c8b1e07f2a-4c39-9a57-1b2c3d4e5f60", "0d3c8b1e-7f2a-4c39-9a57-1b2c3d4e5fg0"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		b := []byte(good)
		for k := rng.Intn(3); k >= 0; k-- {
			b[rng.Intn(len(b))] = "0af-gA"[rng.Intn(6)]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := isUUID(s), re.MatchString(s); got != want {
			t.Fatalf("isUUID(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
