#!/bin/sh
# e2e/install-clients.sh: install the agent clients make e2e runs, at the
# versions pinned in e2e/clients/package.json (and its lock), into
# e2e/clients/node_modules with npm --prefix: never globally. A second run
# finds them there and installs nothing (the folder is git-ignored and kept
# between runs); a changed pin installs again.
#
# Needs Node.js 20 or later and npm (Gemini CLI 0.61 asks for Node 20;
# Claude Code and Codex ship native binaries in their npm packages).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
dir=$here/clients

die() { echo "e2e/install-clients.sh: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || die "node is missing: install Node.js 20 or later (apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 || die "npm is missing: install npm (apt-get install npm)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || die "Node.js $(node --version) is too old: Gemini CLI 0.61 needs 20 or later"

# installed: 0 when every pinned client is in node_modules at its pin, and
# the two that ship native binaries answer --version with it (Claude Code's
# binary is put in place by its postinstall; Gemini CLI is JavaScript, and
# its --version takes seconds, so its package.json says).
installed() {
	node -e '
const fs = require("fs"), path = require("path"), cp = require("child_process");
const dir = process.argv[1];
const pins = JSON.parse(fs.readFileSync(path.join(dir, "package.json"))).dependencies;
const bins = {"@anthropic-ai/claude-code": "claude", "@openai/codex": "codex"};
for (const [pkg, want] of Object.entries(pins)) {
  let have = "none";
  try { have = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", pkg, "package.json"))).version; } catch (e) {}
  if (have === want && bins[pkg]) {
    let out = "";
    try { out = cp.execFileSync(path.join(dir, "node_modules", ".bin", bins[pkg]), ["--version"], {encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 60000}); } catch (e) {}
    const m = out.match(/\d+\.\d+\.\d+/);
    if (!m || m[0] !== want) have = (m ? m[0] : "no working binary") + " from " + bins[pkg] + " --version";
  }
  if (have !== want) { console.log(pkg + ": want " + want + ", have " + have); process.exit(1); }
}' "$dir"
}

if why=$(installed); then
	echo "e2e: clients installed in $dir (claude, codex, gemini at their pins)"
	exit 0
fi
echo "e2e: installing the pinned clients into $dir ($why)"
# npm ci installs exactly the lock's tree; install scripts run only for the
# packages package.json's allowScripts names (Claude Code's postinstall puts
# its native binary, from its npm platform package, in place).
npm --prefix "$dir" ci --no-audit --no-fund --loglevel=error
why=$(installed) || die "the clients do not answer with their pinned versions after npm ci: $why"
echo "e2e: clients installed in $dir"
