package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
)

// TypedHandler is the handler of a typed tool. Returning an error makes
// an "Error: ..." result for the model, unless the error is the context's
// own (cancellation), which stops the run.
//
// Out may be a string (one text block), a *Result (used as it is), or
// any other value (marshalled to a json block).
type TypedHandler[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

// New returns a tool whose input schema is derived from In and whose
// arguments are validated against it before h runs. A validation failure
// is an "Error: ..." result naming the field; a panic in h is recovered
// into an error result.
//
// New panics if In has no JSON Schema form: that is a programming mistake
// in a code-defined tool, not a runtime condition.
func New[In, Out any](name, description string, h TypedHandler[In, Out]) *Tool {
	schema, err := SchemaFor[In]()
	if err != nil {
		panic(fmt.Sprintf("tool.New(%q): %v", name, err))
	}
	t, err := NewWithSchema(name, description, schema, h)
	if err != nil {
		panic(fmt.Sprintf("tool.New(%q): %v", name, err))
	}
	return t
}

// NewWithSchema is New with an explicit input schema, for tools whose
// schema says more than the Go type can (enums, defaults, descriptions
// written by hand).
func NewWithSchema[In, Out any](name, description string, schema json.RawMessage, h TypedHandler[In, Out]) (*Tool, error) {
	v, err := NewValidator(schema)
	if err != nil {
		return nil, err
	}
	t := &Tool{Name: name, Description: description, InputSchema: schema}
	t.Handler = func(ctx context.Context, call *Call, args json.RawMessage) (res *Result, err error) {
		if verr := v.Validate(args); verr != nil {
			return Errorf("Error: invalid arguments for %s: %v", name, verr), nil
		}
		var in In
		if len(args) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return Errorf("Error: invalid arguments for %s: %v", name, err), nil
			}
		}
		defer func() {
			if p := recover(); p != nil {
				call.Log().Error("tool panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
				res, err = PanicResult(name, p), nil
			}
		}()
		out, herr := h(ctx, call, in)
		if herr != nil {
			if ctx.Err() != nil && errors.Is(herr, ctx.Err()) {
				return nil, herr
			}
			return Errorf("%v", herr), nil
		}
		return toResult(out)
	}
	return t, nil
}

// PanicResult is the error result for a handler that panicked, in the
// words of DeerFlow's tool error handling.
func PanicResult(name string, p any) *Result {
	return FailureResult(name, "panic", fmt.Sprint(p))
}

// FailureResult is DeerFlow's text for a tool that raised: "Error: Tool
// '{name}' failed with {kind}: {detail}. Continue with available context,
// or choose an alternative tool." The detail is trimmed to 500
// characters; an empty detail is replaced by the kind.
func FailureResult(name, kind, detail string) *Result {
	if detail == "" {
		detail = kind
	}
	if r := []rune(detail); len(r) > 500 {
		detail = string(r[:497]) + "..."
	}
	r := Errorf("Error: Tool '%s' failed with %s: %s. Continue with available context, or choose an alternative tool.", name, kind, detail)
	return r
}

func toResult(out any) (*Result, error) {
	switch v := out.(type) {
	case nil:
		return Text(""), nil
	case string:
		return Text(v), nil
	case *Result:
		if v == nil {
			return Text(""), nil
		}
		return v, nil
	case Result:
		return &v, nil
	default:
		r, err := JSON(v)
		if err != nil {
			return Errorf("Error: cannot encode result: %v", err), nil
		}
		return r, nil
	}
}
