package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// TypedHandler is the handler of a typed tool. As in the MCP SDK's typed
// handlers, a returned error is the text of the error result the model
// reads ("Error: " is prefixed unless present), unless it is the
// context's own (cancellation), which stops the run. A panic is left to
// Invoke (the package's one recover).
//
// Out may be a string (one text block), a *Result (used as it is), or
// any other value (marshalled to a json block).
type TypedHandler[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

// New returns a tool whose input schema is derived from In and whose
// arguments are validated against it before h runs. A validation failure
// is an "Error: ..." result naming the field.
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
// written by hand). The schema must agree with In (SchemaAgrees): a
// schema and a struct that drift apart are an error here.
func NewWithSchema[In, Out any](name, description string, schema json.RawMessage, h TypedHandler[In, Out]) (*Tool, error) {
	if err := SchemaAgrees[In](schema); err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	v, err := NewValidator(schema)
	if err != nil {
		return nil, err
	}
	t := &Tool{Name: name, Description: description, InputSchema: schema}
	t.Handler = func(ctx context.Context, call *Call, args json.RawMessage) (*Result, error) {
		if verr := v.Validate(args); verr != nil {
			return Errorf("Error: invalid arguments for %s: %v", name, verr), nil
		}
		var in In
		if len(args) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return Errorf("Error: invalid arguments for %s: %v", name, err), nil
			}
		}
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
