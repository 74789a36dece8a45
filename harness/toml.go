package harness

import (
	"strconv"
	"strings"
)

// tomlKeys reads the string and boolean values of a TOML file into a map
// from the full dotted key path (segments joined by "\x00") to the value
// (booleans as "true" and "false"). It reads what Codex writes in
// config.toml: [table] and [a."quoted key".b] headers, key = value lines
// with bare, "basic" or 'literal' keys (dotted too), and one-line basic or
// literal strings. Anything else (arrays, inline tables, numbers,
// multi-line strings, [[array tables]]) is skipped, never misread: the
// doctor says "unknown" rather than guess. The second result is false when
// a line could not be read at all.
func tomlKeys(data string) (map[string]string, bool) {
	out := map[string]string{}
	var table []string
	ok := true
	inMulti := ""
	for _, raw := range strings.Split(data, "\n") {
		line := strings.TrimSpace(raw)
		if inMulti != "" {
			if strings.Contains(line, inMulti) {
				inMulti = ""
			}
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "[[") {
			table = []string{"\x01"} // an array of tables: its keys are not read
			continue
		}
		if line[0] == '[' {
			keys, rest, good := tomlKeyPath(line[1:])
			if !good || !strings.HasPrefix(strings.TrimSpace(rest), "]") {
				ok = false
				table = []string{"\x01"}
				continue
			}
			table = keys
			continue
		}
		keys, rest, good := tomlKeyPath(line)
		rest = strings.TrimSpace(rest)
		if !good || !strings.HasPrefix(rest, "=") {
			ok = false
			continue
		}
		if len(table) == 1 && table[0] == "\x01" {
			continue
		}
		val := strings.TrimSpace(rest[1:])
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(val, q) {
				if !strings.Contains(val[3:], q) {
					inMulti = q
				}
				val = ""
			}
		}
		full := strings.Join(append(append([]string(nil), table...), keys...), "\x00")
		switch {
		case val == "true" || val == "false" || strings.HasPrefix(val, "true ") || strings.HasPrefix(val, "false "):
			out[full] = strings.Fields(val)[0]
		case strings.HasPrefix(val, `"`) || strings.HasPrefix(val, "'"):
			if s, _, good := tomlString(val); good {
				out[full] = s
			}
		}
	}
	return out, ok
}

// tomlKeyPath reads a dotted key (bare, "basic" or 'literal' segments) at
// the start of s and returns its segments and what follows.
func tomlKeyPath(s string) ([]string, string, bool) {
	var keys []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, "", false
		}
		var k string
		switch s[0] {
		case '"', '\'':
			var good bool
			k, s, good = tomlString(s)
			if !good {
				return nil, "", false
			}
		default:
			i := 0
			for i < len(s) && (s[i] == '-' || s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
			if i == 0 {
				return nil, "", false
			}
			k, s = s[:i], s[i:]
		}
		keys = append(keys, k)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return keys, s, true
		}
		s = s[1:]
	}
}

// tomlString reads a one-line basic ("...", with escapes) or literal
// ('...') string at the start of s, and returns it and what follows.
func tomlString(s string) (string, string, bool) {
	if s[0] == '\'' {
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", "", false
		}
		return s[1 : 1+end], s[2+end:], true
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 >= len(s) {
				return "", "", false
			}
			i++
			switch s[i] {
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(s[i])
			case 'u', 'U':
				n := 4
				if s[i] == 'U' {
					n = 8
				}
				if i+n >= len(s) {
					return "", "", false
				}
				r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
				if err != nil {
					return "", "", false
				}
				b.WriteRune(rune(r))
				i += n
			default:
				return "", "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
