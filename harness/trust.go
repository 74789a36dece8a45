package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/venom-org/git-venom/checkpoint"
)

// Hook trust (issue 14 item 5). A harness can skip the hooks install wrote
// without a word: codex exec skips the hooks of an untrusted project, and
// untrusted hooks; Gemini CLI loads no project settings (so no project
// hooks) in an untrusted folder; an interactive Claude Code session holds
// every hook back until the folder's trust dialog is accepted. Each
// harness records that trust in its own files, which these checks read
// (and never write) to say whether the hooks will run in a tree.

// TrustOptions says where to look: the tree's top, the user's home, and
// the environment (CODEX_HOME, CLAUDE_CONFIG_DIR,
// GEMINI_CLI_TRUSTED_FOLDERS_PATH, GEMINI_CLI_TRUST_WORKSPACE; nil means
// os.Getenv).
type TrustOptions struct {
	Root, Home string
	Getenv     func(string) string
}

func (o TrustOptions) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

// installed is one settings file that holds our handlers: its scope and
// path, and each handler with its event, matcher, timeout (seconds, as the
// file has it) and its place in the file (group and handler index).
type installed struct {
	scope, file string
	handlers    []installedHandler
	root        *object
}

type installedHandler struct {
	event, matcher, command string
	timeout                 int64
	hasTimeout              bool
	group, index            int
}

// installedIn finds the settings files of h, of every scope, that hold
// handlers of ours.
func (h *Harness) installedIn(o TrustOptions) []installed {
	var out []installed
	m := merger{h: h}
	for _, scope := range Scopes {
		if _, ok := h.install.file[scope]; !ok {
			continue
		}
		_, path, err := h.SettingsFile(InstallOptions{Scope: scope, Root: o.Root, Home: o.Home, Getenv: o.Getenv})
		if err != nil {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v, err := decodeJSON(data)
		root, ok := v.(*object)
		if err != nil || !ok {
			continue
		}
		hooks, _ := hooksObject(root, false)
		if hooks == nil {
			continue
		}
		in := installed{scope: scope, file: path, root: root}
		for _, event := range hooks.keys {
			list, _ := hooks.vals[event].([]any)
			for gi, g := range list {
				if h.install.flat {
					if m.ours(g) {
						in.handlers = append(in.handlers, installedHandler{event: event, command: g.(*object).str("command"), group: gi})
					}
					continue
				}
				grp, _ := g.(*object)
				hs, ok := grp.valsList("hooks")
				if !ok {
					continue
				}
				for hi, hv := range hs {
					if !m.ours(hv) {
						continue
					}
					ho := hv.(*object)
					ih := installedHandler{event: event, matcher: grp.str("matcher"), command: ho.str("command"), group: gi, index: hi}
					if n, ok := ho.vals["timeout"].(json.Number); ok {
						ih.timeout, _ = n.Int64()
						ih.hasTimeout = true
					}
					in.handlers = append(in.handlers, ih)
				}
			}
		}
		if len(in.handlers) > 0 {
			out = append(out, in)
		}
	}
	return out
}

// TrustChecks are git venom-doctor's lines for the hooks of every harness
// installed for this tree (in any scope): hooks.<harness>, ok when the
// harness's own files say they will run here, warn when they say they
// will not (or not in every mode), with the step that fixes it. A harness
// with nothing installed has no line.
func TrustChecks(o TrustOptions) []checkpoint.Check {
	var out []checkpoint.Check
	for _, h := range all {
		ins := h.installedIn(o)
		if len(ins) == 0 {
			continue
		}
		out = append(out, h.trustCheck(o, ins))
	}
	return out
}

// TrustCheck is TrustChecks for h alone, and whether h has hooks installed.
func (h *Harness) TrustCheck(o TrustOptions) (checkpoint.Check, bool) {
	ins := h.installedIn(o)
	if len(ins) == 0 {
		return checkpoint.Check{}, false
	}
	return h.trustCheck(o, ins), true
}

func (h *Harness) trustCheck(o TrustOptions, ins []installed) checkpoint.Check {
	c := checkpoint.Check{ID: "hooks." + h.Name, Level: "ok"}
	var where []string
	for _, in := range ins {
		where = append(where, fmt.Sprintf("%s (%s scope)", in.file, in.scope))
	}
	switch h.Name {
	case "codex":
		codexTrust(o, ins, &c)
	case "gemini":
		geminiTrust(o, ins, &c)
	case "claude-code":
		claudeTrust(o, ins, &c)
	default:
		c.Message = "installed; " + h.Name + "'s own trust settings are not checked"
	}
	c.Message = strings.Join(where, ", ") + ": " + c.Message
	return c
}

// codexHome is $CODEX_HOME, else ~/.codex.
func codexHome(o TrustOptions) string {
	if v := o.getenv("CODEX_HOME"); v != "" {
		return v
	}
	return filepath.Join(o.Home, ".codex")
}

// snake is Codex's name of an event in its trust keys: UserPromptSubmit
// is user_prompt_submit.
func snake(event string) string {
	var b strings.Builder
	for i, r := range event {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CodexHookHash is the hash Codex 0.171 records when a person trusts a
// command hook ([hooks.state."<file>:<event>:<group>:<handler>"]
// trusted_hash = "sha256:<hex>" in $CODEX_HOME/config.toml): the SHA-256
// of the compact, key-sorted JSON of the hook's identity, {event_name (in
// snake case), hooks: [{async: false, command, timeout (600 when the file
// has none), type: "command"}], matcher (when set)}. It was checked against
// the hashes codex 0.171 wrote for the entries install writes.
func CodexHookHash(event, matcher, command string, timeout int64) string {
	id := map[string]any{"event_name": snake(event),
		"hooks": []any{map[string]any{"async": false, "command": command, "timeout": timeout, "type": "command"}}}
	if matcher != "" {
		id["matcher"] = matcher
	}
	// encoding/json sorts map keys and adds no space; serde_json escapes
	// no HTML characters.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func codexTrust(o TrustOptions, ins []installed, c *checkpoint.Check) {
	cfgPath := filepath.Join(codexHome(o), "config.toml")
	data, err := os.ReadFile(cfgPath)
	if err != nil && !os.IsNotExist(err) {
		c.Level, c.Message = "warn", fmt.Sprintf("cannot read %s (%v): whether codex runs these hooks is unknown", cfgPath, err)
		return
	}
	keys, _ := tomlKeys(string(data))
	if keys["features\x00hooks"] == "false" || keys["features\x00codex_hooks"] == "false" {
		c.Level, c.Message = "warn", "hooks are off in "+cfgPath+" ([features] hooks = false): codex runs none"
		c.Fix = "remove `hooks = false` from [features] in " + cfgPath
		return
	}
	var problems, fixes []string
	project := false
	for _, in := range ins {
		project = project || in.scope == "project"
	}
	if project {
		switch trust := codexProjectTrust(keys, o.Root); trust {
		case "trusted":
		case "":
			problems = append(problems, "the project is not trusted in "+cfgPath+" (codex loads no project .codex/ hooks then)")
			fixes = append(fixes, "start codex in "+o.Root+" and trust the folder")
		default:
			problems = append(problems, fmt.Sprintf("the project is marked trust_level = %q in %s: codex loads no project hooks", trust, cfgPath))
			fixes = append(fixes, "trust the folder in codex (or set trust_level = \"trusted\" for it in "+cfgPath+")")
		}
	}
	n, untrusted, modified := 0, 0, 0
	for _, in := range ins {
		for _, hd := range in.handlers {
			n++
			t := hd.timeout
			if !hd.hasTimeout {
				t = 600
			}
			key := fmt.Sprintf("%s:%s:%d:%d", in.file, snake(hd.event), hd.group, hd.index)
			switch got := keys["hooks\x00state\x00"+key+"\x00trusted_hash"]; got {
			case CodexHookHash(hd.event, hd.matcher, hd.command, t):
			case "":
				untrusted++
			default:
				modified++
			}
		}
	}
	if untrusted+modified > 0 {
		problems = append(problems, fmt.Sprintf("%d of its %d hooks are not trusted in %s (%d new, %d changed since trusted)",
			untrusted+modified, n, cfgPath, untrusted, modified))
		fixes = append(fixes, "start codex in "+o.Root+" and answer \"Hooks need review\" with \"Trust all and continue\" (or trust them in /hooks)")
	}
	if len(problems) == 0 {
		c.Message = fmt.Sprintf("codex runs them here: the project and all %d hooks are trusted in %s", n, cfgPath)
		return
	}
	c.Level = "warn"
	c.Message = "codex skips them here, and `codex exec` says nothing about it: " + strings.Join(problems, "; ")
	c.Fix = strings.Join(fixes, "; ") + "; for one `codex exec` run, --dangerously-bypass-hook-trust runs untrusted hooks"
}

// codexProjectTrust is the trust_level recorded for root or the nearest
// directory above it ("" when none is).
func codexProjectTrust(keys map[string]string, root string) string {
	for _, dir := range ancestors(root) {
		if v, ok := keys["projects\x00"+dir+"\x00trust_level"]; ok {
			return v
		}
	}
	return ""
}

// ancestors lists dir, then each directory above it, as given and, when
// different, with symlinks resolved.
func ancestors(dir string) []string {
	var out []string
	seen := map[string]bool{}
	bases := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != bases[0] {
		bases = append(bases, r)
	}
	for _, d := range bases {
		for {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	return out
}

// readJSONFile decodes a JSON object file; nil when it is missing or not
// an object.
func readJSONFile(path string) (*object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	obj, _ := v.(*object)
	return obj, nil
}

// path reads a nested member (a.b.c) of o.
func (o *object) path(keys ...string) (any, bool) {
	var cur any = o
	for _, k := range keys {
		obj, ok := cur.(*object)
		if !ok || obj == nil {
			return nil, false
		}
		if cur, ok = obj.get(k); !ok {
			return nil, false
		}
	}
	return cur, true
}

func geminiTrust(o TrustOptions, ins []installed, c *checkpoint.Check) {
	userPath := filepath.Join(o.Home, ".gemini", "settings.json")
	user, err := readJSONFile(userPath)
	if err != nil {
		c.Level, c.Message = "warn", fmt.Sprintf("cannot read %s (%v): whether Gemini CLI runs these hooks is unknown", userPath, err)
		return
	}
	trusted, why := geminiFolderTrust(o, user)
	// hooksConfig.enabled (default true) and hooksConfig.disabled, in the
	// user settings and, in a trusted folder, the project's.
	files := []*object{user}
	for _, in := range ins {
		if in.scope == "project" && trusted {
			files = append(files, in.root)
		}
	}
	for _, f := range files {
		if v, ok := f.path("hooksConfig", "enabled"); ok && v == false {
			c.Level, c.Message = "warn", "hooksConfig.enabled is false: Gemini CLI runs no hook"
			c.Fix = "remove \"hooksConfig\": {\"enabled\": false} from the settings"
			return
		}
		if v, ok := f.path("hooksConfig", "disabled"); ok {
			if list, ok := v.([]any); ok {
				for _, x := range list {
					if x == "git-venom" {
						c.Level, c.Message = "warn", "hooksConfig.disabled names git-venom: Gemini CLI skips these hooks"
						c.Fix = "take \"git-venom\" out of hooksConfig.disabled"
						return
					}
				}
			}
		}
	}
	if trusted {
		c.Message = "Gemini CLI runs them here: " + why
		return
	}
	c.Level = "warn"
	c.Message = "Gemini CLI does not run them here: " + why + "; in an untrusted folder it loads no project settings, so no project hooks, and `gemini -p` exits 55"
	c.Fix = "start gemini in " + o.Root + " and trust the folder (or add \"" + o.Root + "\": \"TRUST_FOLDER\" to " + geminiTrustFile(o) +
		"); for one run, --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true trusts the folder but loads no project hooks"
}

func geminiTrustFile(o TrustOptions) string {
	if p := o.getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH"); p != "" {
		return p
	}
	return filepath.Join(o.Home, ".gemini", "trustedFolders.json")
}

// geminiFolderTrust is Gemini CLI 0.61's folder trust for o.Root: the
// environment first, then security.folderTrust.enabled (default true; off
// trusts every folder), then the longest rule of trustedFolders.json that
// holds the folder (TRUST_FOLDER: that folder and below; TRUST_PARENT: the
// rule's parent and below; DO_NOT_TRUST). No rule is untrusted.
func geminiFolderTrust(o TrustOptions, user *object) (bool, string) {
	if o.getenv("GEMINI_RESTRICTED_MODE") == "true" || o.getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false" {
		return false, "the environment says untrusted (GEMINI_CLI_TRUST_WORKSPACE=false or GEMINI_RESTRICTED_MODE)"
	}
	if o.getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		return true, "GEMINI_CLI_TRUST_WORKSPACE=true"
	}
	if v, ok := user.path("security", "folderTrust", "enabled"); ok && v == false {
		return true, "folder trust is off (security.folderTrust.enabled = false)"
	}
	file := geminiTrustFile(o)
	rules, err := readJSONFile(file)
	if err != nil {
		return false, fmt.Sprintf("%s cannot be read (%v)", file, err)
	}
	best, level := -1, ""
	if rules != nil {
		root := filepath.Clean(o.Root)
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		for _, k := range rules.keys {
			lvl, _ := rules.vals[k].(string)
			dir := filepath.Clean(k)
			if lvl == "TRUST_PARENT" {
				dir = filepath.Dir(dir)
			}
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				dir = r
			}
			if (root == dir || strings.HasPrefix(root, strings.TrimSuffix(dir, "/")+"/")) && len(k) > best {
				best, level = len(k), lvl
			}
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return true, "the folder is trusted in " + file
	case "DO_NOT_TRUST":
		return false, "the folder is marked DO_NOT_TRUST in " + file
	}
	return false, "the folder is not in " + file
}

func claudeTrust(o TrustOptions, ins []installed, c *checkpoint.Check) {
	for _, in := range ins {
		if v, ok := in.root.get("disableAllHooks"); ok && v == true {
			c.Level, c.Message = "warn", in.file+" sets disableAllHooks: Claude Code runs no hook"
			c.Fix = "remove disableAllHooks from " + in.file
			return
		}
	}
	path := filepath.Join(o.Home, ".claude.json")
	if d := o.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		path = filepath.Join(d, ".claude.json")
	}
	state, err := readJSONFile(path)
	if err != nil {
		c.Level, c.Message = "warn", fmt.Sprintf("cannot read %s (%v): whether Claude Code runs these hooks interactively is unknown", path, err)
		return
	}
	for _, dir := range ancestors(o.Root) {
		if v, ok := state.path("projects", dir, "hasTrustDialogAccepted"); ok && v == true {
			c.Message = "Claude Code runs them here: the folder's trust dialog was accepted (" + path + "), and claude -p always runs them"
			return
		}
	}
	c.Level = "warn"
	c.Message = "claude -p runs them, but an interactive session holds every hook back until the folder's trust dialog is accepted (not yet, per " + path + ")"
	c.Fix = "start claude in " + o.Root + " once and accept the trust dialog"
}
