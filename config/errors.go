package config

import (
	"errors"
	"strconv"
	"strings"
)

// ErrEnvNotSet is wrapped by errors about a "$VAR" value whose environment
// variable is not set.
var ErrEnvNotSet = errors.New("environment variable is not set")

// Error is a configuration error with its position. Error formats it as
// "FILE:LINE: KEY: MSG", leaving out the parts that are empty.
type Error struct {
	File string // file name as given by the caller
	Line int    // 1-based line, 0 if unknown
	Key  string // key path such as "models[0].api_key"
	Msg  string
	Err  error // underlying cause, if any
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Line))
		}
	} else if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	sep := func() {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
	}
	if e.Key != "" {
		sep()
		b.WriteString(e.Key)
	}
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg != "" {
		sep()
		b.WriteString(msg)
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }
