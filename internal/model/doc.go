// Package model holds the toolkit's model-based random test, its
// regression cases and its concurrency test (issue 6). It has no code of
// its own: everything is in its _test.go files.
//
// TestModel drives random sequences of file operations, commits, captures,
// plans and rollbacks on real repositories and checks each step against a
// model of RFC 2's invariants and RFC 4, 7.3 and 7.4. Each sequence has a
// seed, printed with any failure:
//
//	VENOM_MODEL_SEED=<first seed>  start of the seed range (default: from the clock)
//	VENOM_MODEL_SEQS=<n>           run exactly n sequences (default: as many as fit the budget)
//	VENOM_MODEL_BUDGET=<duration>  time for the default run (default 4s)
//	VENOM_MODEL_STEPS=<n>          steps per sequence (default 40)
//	VENOM_MODEL_STRICT=1           stop at the known divergences too
//	VENOM_MODEL_REPORT=<file>      append progress and the final count there
//	VENOM_MODEL_KEEP=1             keep a failing sequence's repository
//	VENOM_MODEL_TRACE=1            log every sequence's steps (with -v)
//
// VENOM_MODEL_SEED=1234 VENOM_MODEL_SEQS=1 go test ./internal/model -run TestModel -v
// runs sequence 1234 again, printing every step.
package model
