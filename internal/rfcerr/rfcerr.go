// Package rfcerr is the error every command returns to its caller: one RFC
// 11.3 code (or a toolkit code in the same classes), a message for people,
// optional hints, and the data member of the JSON error object. The code's
// class fixes the exit status in exactly one place, internal/cli.
package rfcerr

import (
	"errors"
	"fmt"
)

// Error is an error with an RFC code. Code is "class.name", e.g.
// "not_found.checkpoint"; Data becomes {"error":{"data":...}}.
type Error struct {
	Code    string
	Message string
	Hints   []string
	Data    map[string]any
	Err     error // the cause, for %w chains and tracing
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

// New makes an error with a code and a formatted message.
func New(code string, data map[string]any, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Data: data}
}

// Wrap makes an error with a code whose message is context: cause.
func Wrap(code string, cause error, data map[string]any, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Code: code, Message: msg, Data: data, Err: cause}
}

// WithHint adds a hint line and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hints = append(e.Hints, fmt.Sprintf(format, args...))
	return e
}

// As finds the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// Code returns err's RFC code, or "failed.internal" when it has none.
func Code(err error) string {
	if e := As(err); e != nil {
		return e.Code
	}
	return "failed.internal"
}
