# git-venom: build, install, test.
#
# Kept to what GNU make 3.81 (macOS) understands: no .ONESHELL, no grouped
# targets, no $(file ...); recipes are plain sh.

GO      ?= go
PROVE   ?= prove
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man/man1
# Shell completion: where bash-completion loads a command's file by name
# (git's completion asks it for git-venom-<cmd> and git-venom), and where
# zsh's _git finds _git-* files and compinit their #compdef.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
# Parallel jobs for the t/ suite; each script has its own trash directory.
TEST_JOBS ?= 2
# Extra options for prove, e.g. PROVE_OPTS=-v.
PROVE_OPTS ?=
# How long each fuzz target runs in `make fuzz-long`.
FUZZTIME ?= 60s
# make e2e: which tests (go test -run), and how long they may take in all.
E2E_RUN ?=
E2E_TIMEOUT ?= 30m
# How many e2e tests run at once (each has its own repository, HOME and
# model server; the clients are slow to start, not busy).
E2E_PARALLEL ?= 3
# What install builds first. t/t0007-install.sh sets it to "man" so that
# it installs the bin/ under test and never rebuilds it while tests run.
INSTALL_DEPS ?= build man

CMDS      = checkpoint plan rollback hook doctor
# bin/git-venom is `git venom`, the terminal UI (RFC 12).
BINS      = $(CMDS:%=bin/git-venom-%) bin/git-venom
MAN_SRC   = $(wildcard docs/man/git-venom*.md)
MAN_PAGES = $(MAN_SRC:.md=.1)
T_SCRIPTS = $(wildcard t/t[0-9][0-9][0-9][0-9]-*.sh)

.PHONY: build install man test e2e check bench demo clean fuzz-long

## build: compile the six binaries (git-venom-* and git-venom, the TUI) into bin/
# Static and stripped: a hook starts one of them on every event, and a
# dynamically linked Go binary with its debug info costs about twice the
# CPU to start (issue 5, `make bench` hook rows). Nothing here needs cgo.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o bin/ ./cmd/...

## install: copy the binaries to $(BINDIR), the man pages to $(MANDIR) and the bash and zsh completion
install: $(INSTALL_DEPS)
	mkdir -p "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)" "$(DESTDIR)$(BASHCOMPDIR)" "$(DESTDIR)$(ZSHCOMPDIR)"
	for b in $(BINS); do cp "$$b" "$(DESTDIR)$(BINDIR)/" || exit 1; chmod 0755 "$(DESTDIR)$(BINDIR)/$${b##*/}" || exit 1; done
	for m in $(MAN_PAGES); do cp "$$m" "$(DESTDIR)$(MANDIR)/" || exit 1; chmod 0644 "$(DESTDIR)$(MANDIR)/$${m##*/}" || exit 1; done
	for c in $(CMDS:%=git-venom-%) git-venom; do cp completion/git-venom.bash "$(DESTDIR)$(BASHCOMPDIR)/$$c" || exit 1; chmod 0644 "$(DESTDIR)$(BASHCOMPDIR)/$$c" || exit 1; done
	for f in completion/zsh/_*; do cp "$$f" "$(DESTDIR)$(ZSHCOMPDIR)/" || exit 1; chmod 0644 "$(DESTDIR)$(ZSHCOMPDIR)/$${f##*/}" || exit 1; done

## man: render docs/man/*.md into roff man pages (docs/man/*.1) with go-md2man
man: $(MAN_PAGES)

docs/man/%.1: docs/man/%.md
	$(GO) tool go-md2man -in $< -out $@

## test: what CI runs: the Go tests, then the t/ suite by prove against bin/
# Both always run, so one failure does not hide the other; either fails it.
test: build
	@status=0; \
	echo "$(GO) test -count=1 ./..."; \
	$(GO) test -count=1 ./... || status=1; \
	echo "prove -j$(TEST_JOBS) --exec bash $(PROVE_OPTS) t/t*.sh"; \
	PATH="$(CURDIR)/bin:$$PATH" VENOM_BIN="$(CURDIR)/bin" \
		$(PROVE) -j$(TEST_JOBS) --exec bash $(PROVE_OPTS) $(T_SCRIPTS) || status=1; \
	exit $$status

## e2e: the real clients (Claude Code, Codex, Gemini CLI at pinned versions, installed into e2e/clients by npm) against a scripted model server
# e2e/README.md says what it needs and how to add a test. E2E_RUN=TestClaudeTurns runs one.
e2e: build
	sh e2e/install-clients.sh
	VENOM_BIN="$(CURDIR)/bin" VENOM_E2E_CLIENTS="$(CURDIR)/e2e/clients/node_modules/.bin" \
		$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -parallel $(E2E_PARALLEL) -v $(if $(E2E_RUN),-run '$(E2E_RUN)') ./e2e/

## check: gofmt (any listed file fails), go vet, and the Go tests under -race
check:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*')); \
	if [ -n "$$out" ]; then echo "gofmt -l lists files that need formatting:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

## bench: run bench/run.sh (REPO=<path> also measures that repository)
bench: build
	@if [ -n "$(REPO)" ]; then \
		echo "REPO=$(REPO) bash bench/run.sh"; REPO="$(REPO)" bash bench/run.sh; \
	else \
		echo "bash bench/run.sh"; bash bench/run.sh; \
	fi

## fuzz-long: every go fuzz target for FUZZTIME each (default 60s), then the model and many-processes tests at length, then the rollback stress test (kills, an editor, gc)
fuzz-long:
	FUZZTIME="$(FUZZTIME)" bash scripts/fuzz-long.sh

## demo: a throwaway repository, a few agent-like turns, checkpoints, the list
demo: build
	bash scripts/demo.sh "$(CURDIR)/bin"

## clean: remove bin/ and the rendered man pages
clean:
	rm -rf bin
	rm -f docs/man/*.1
