package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
)

// Failure says why Invoke made a result out of a handler's Go error or
// panic; it is nil on every other result.
type Failure struct {
	// Kind names the error's type as Python names an exception class
	// (see ErrorKind), or "panic".
	Kind string
	// Detail is the error's text or the panic value.
	Detail string
}

// MaxFailureDetail caps, in characters, the detail of a failure result's
// text.
const MaxFailureDetail = 500

// Invoke runs one tool call through h (a tool's handler, usually wrapped
// in middlewares) and enforces the error contract of this package, in
// this one place:
//
//   - a panic anywhere in h is recovered and becomes a failure result
//     (FailureResult with kind "panic"), logged with its stack;
//   - a Go error becomes a failure result too (the kind is ErrorKind of
//     the error), so that the model can continue with another tool, as
//     DeerFlow's tool error handling does;
//   - only cancellation is returned as a Go error: ctx is done, or h
//     returned context.Canceled; the run stops;
//   - a nil result becomes an empty text result.
//
// Failure results carry Result.Failure. The agent loop, `antler tools
// call` and the tool contract suite all call tools through Invoke.
func Invoke(ctx context.Context, h Handler, call *Call, args json.RawMessage) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			call.Log().Error("tool panicked", "tool", call.Name, "tool_call_id", call.ID, "panic", p,
				"stack", string(debug.Stack()))
			res, err = failure(call.Name, "panic", fmt.Sprint(p)), nil
		}
	}()
	res, err = h(ctx, call, args)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return nil, err
		}
		call.Log().Error("tool execution failed", "tool", call.Name, "tool_call_id", call.ID, "err", err)
		return failure(call.Name, ErrorKind(err), err.Error()), nil
	}
	if res == nil {
		res = Text("")
	}
	return res, nil
}

func failure(name, kind, detail string) *Result {
	if name == "" {
		name = "unknown_tool"
	}
	r := FailureResult(name, kind, strings.TrimSpace(detail))
	r.Failure = &Failure{Kind: kind, Detail: strings.TrimSpace(detail)}
	return r
}

// FailureResult is DeerFlow's text for a tool that raised: "Error: Tool
// '{name}' failed with {kind}: {detail}. Continue with available context,
// or choose an alternative tool." The detail is trimmed to
// MaxFailureDetail characters; an empty detail is replaced by the kind.
func FailureResult(name, kind, detail string) *Result {
	if detail == "" {
		detail = kind
	}
	if r := []rune(detail); len(r) > MaxFailureDetail {
		detail = string(r[:MaxFailureDetail-3]) + "..."
	}
	return Errorf("Error: Tool '%s' failed with %s: %s. Continue with available context, or choose an alternative tool.", name, kind, detail)
}

// ErrorKind names the kind of a Go error for DeerFlow's failure text
// ("failed with {kind}"), as Python names the exception class: the
// dynamic type's name without package or pointer, or "Error" for the
// standard library's anonymous error types.
func ErrorKind(err error) string {
	var target interface{ Unwrap() []error }
	if errors.As(err, &target) {
		return "Error"
	}
	name := reflect.TypeOf(err).String()
	name = strings.TrimLeft(name, "*")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "errorString", "wrapError", "wrapErrors", "joinError", "":
		return "Error"
	}
	return name
}
