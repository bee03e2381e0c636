package tooltest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/tool/tooltest"
)

type echoIn struct {
	Text  string `json:"text" jsonschema:"what to echo"`
	Times int    `json:"times,omitempty"`
}

// good is a well-behaved typed tool.
func good(name string) *tool.Tool {
	return tool.New(name, "Echoes text.", func(ctx context.Context, _ *tool.Call, in echoIn) (string, error) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return strings.Repeat(in.Text, max(in.Times, 1)), nil
	})
}

const echoSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// raw is a tool with a hand-written schema and handler.
func raw(name, schema string, h tool.Handler) *tool.Tool {
	return &tool.Tool{Name: name, Description: "A fake tool.", InputSchema: json.RawMessage(schema), Handler: h}
}

// strictHandler decodes and checks its arguments by hand, correctly.
func strictHandler(ctx context.Context, _ *tool.Call, args json.RawMessage) (*tool.Result, error) {
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Text == nil {
		return tool.Errorf("invalid arguments"), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return tool.Text(*in.Text), nil
}

var echoSample = map[string]tooltest.Sample{
	"echo": {Args: []byte(`{"text":"hi"}`), Live: true},
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		tools   []*tool.Tool
		samples map[string]tooltest.Sample
		// want is the rules broken, as "index:rule", sorted; a trailing
		// "~" marks an accepted (Options.Known) violation.
		want []string
	}{
		{"typed tool passes", []*tool.Tool{good("echo")}, echoSample, nil},
		{"hand-written strict tool passes", []*tool.Tool{raw("echo", echoSchema, strictHandler)}, echoSample, nil},
		{"bad name", []*tool.Tool{good("echo it!")}, nil, []string{"0:name"}},
		{"name too long", []*tool.Tool{good(strings.Repeat("a", 65))}, nil, []string{"0:name"}},
		{"duplicate name is reported on the later tool", []*tool.Tool{good("echo"), good("other"), good("echo")}, nil,
			[]string{"2:name"}},
		{"empty description", []*tool.Tool{{Name: "echo", Description: " \n", InputSchema: json.RawMessage(echoSchema),
			Handler: strictHandler}}, nil, []string{"0:description"}},
		{"nil handler", []*tool.Tool{raw("echo", echoSchema, nil)}, nil, []string{"0:handler"}},
		{"nil tool", []*tool.Tool{nil}, nil, []string{"0:handler"}},
		{"schema not JSON", []*tool.Tool{raw("echo", `{"type":"object"`, strictHandler)}, nil, []string{"0:schema"}},
		{"schema missing", []*tool.Tool{raw("echo", ``, strictHandler)}, nil, []string{"0:schema"}},
		{"schema not an object schema", []*tool.Tool{raw("echo", `{"type":"string"}`, strictHandler)}, nil,
			[]string{"0:schema"}},
		{"schema without type", []*tool.Tool{raw("echo", `{"properties":{"text":{"type":"string"}},"required":["text"]}`,
			strictHandler)}, nil, []string{"0:schema"}},
		{"schema does not compile", []*tool.Tool{raw("echo",
			`{"type":"object","properties":{"text":{"type":"text"}},"required":["text"]}`, strictHandler)}, nil,
			[]string{"0:schema"}},
		{"schema with a remote reference does not compile", []*tool.Tool{raw("echo",
			`{"type":"object","properties":{"text":{"$ref":"https://example.com/s.json"}},"required":["text"]}`,
			strictHandler)}, nil, []string{"0:schema"}},
		{"required names a missing property", []*tool.Tool{raw("echo",
			`{"type":"object","properties":{"text":{"type":"string"}},"required":["text","txt"]}`, strictHandler)}, nil,
			[]string{"0:schema"}},
		{"sample that violates the schema", []*tool.Tool{good("echo")},
			map[string]tooltest.Sample{"echo": {Args: []byte(`{"text":1}`)}}, []string{"0:sample"}},
		{"handler that panics on bad arguments", []*tool.Tool{raw("echo", echoSchema,
			func(_ context.Context, _ *tool.Call, args json.RawMessage) (*tool.Result, error) {
				var in map[string]string
				_ = json.Unmarshal(args, &in)
				return tool.Text(in["text"][:1]), nil // panics on a missing text
			})}, nil, []string{"0:invalid_args", "0:malformed_args"}},
		{"handler that returns a Go error for bad arguments", []*tool.Tool{raw("echo", echoSchema,
			func(_ context.Context, _ *tool.Call, args json.RawMessage) (*tool.Result, error) {
				var in struct{ Text string }
				if err := json.Unmarshal(args, &in); err != nil || in.Text == "" {
					return nil, errors.New("bad arguments")
				}
				return tool.Text(in.Text), nil
			})}, nil, []string{"0:invalid_args", "0:malformed_args"}},
		{"handler that accepts anything", []*tool.Tool{raw("echo", echoSchema,
			func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return tool.Text("ok"), nil })},
			nil, []string{"0:invalid_args", "0:malformed_args"}},
		{"error result without the Error: prefix", []*tool.Tool{raw("echo", echoSchema,
			func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
				return &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "bad"}}, IsError: true}, nil
			})}, nil, []string{"0:invalid_args", "0:malformed_args"}},
		{"wrong type is only caught when the property declares one", []*tool.Tool{raw("echo",
			`{"type":"object","properties":{"text":{}}}`,
			func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
				return tool.Errorf("no"), nil
			})},
			nil, nil},
		{"cancelled call returning another Go error", []*tool.Tool{raw("echo", echoSchema,
			func(ctx context.Context, c *tool.Call, args json.RawMessage) (*tool.Result, error) {
				if ctx.Err() != nil {
					return nil, errors.New("connection reset")
				}
				return strictHandler(ctx, c, args)
			})}, echoSample, []string{"0:cancel"}},
		{"cancelled call wrapping the cancellation passes", []*tool.Tool{raw("echo", echoSchema,
			func(ctx context.Context, c *tool.Call, args json.RawMessage) (*tool.Result, error) {
				if err := ctx.Err(); err != nil {
					return nil, errors.Join(errors.New("stopped"), err)
				}
				return strictHandler(ctx, c, args)
			})}, echoSample, nil},
		{"nil result and nil error", []*tool.Tool{raw("echo", echoSchema,
			func(ctx context.Context, c *tool.Call, args json.RawMessage) (*tool.Result, error) {
				if ctx.Err() != nil {
					return nil, nil
				}
				return strictHandler(ctx, c, args)
			})}, echoSample, []string{"0:cancel"}},
		{"live result without content", []*tool.Tool{raw("echo", echoSchema,
			func(ctx context.Context, c *tool.Call, args json.RawMessage) (*tool.Result, error) {
				res, err := strictHandler(ctx, c, args)
				if res != nil && !res.IsError {
					return &tool.Result{}, err
				}
				return res, err
			})}, echoSample, []string{"0:result"}},
		{"live sample that fails", []*tool.Tool{good("echo")},
			map[string]tooltest.Sample{"echo": {Args: []byte(`{"text":"hi","times":-1,"x":1}`), Live: true}},
			[]string{"0:result", "0:sample"}},
		{"a sample that is not live is not run live", []*tool.Tool{raw("echo", echoSchema,
			func(ctx context.Context, c *tool.Call, args json.RawMessage) (*tool.Result, error) {
				if ctx.Err() == nil && json.Valid(args) && strings.Contains(string(args), `"hi"`) {
					panic("live call")
				}
				return strictHandler(ctx, c, args)
			})}, map[string]tooltest.Sample{"echo": {Args: []byte(`{"text":"hi"}`)}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range tooltest.Check(t.Context(), tt.tools, tooltest.Options{Samples: tt.samples}) {
				got = append(got, fmt.Sprintf("%d:%s", v.Index, v.Rule))
				t.Log(v)
			}
			slices.Sort(got)
			got = slices.Compact(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violated rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckKnown(t *testing.T) {
	tests := []struct {
		name  string
		tools []*tool.Tool
		// want is as in TestCheck; a trailing "~" marks an accepted
		// violation.
		want  []string
		known []tooltest.Known
	}{
		{"known violation is accepted", []*tool.Tool{good("echo"), good("echo")}, []string{"1:name~"},
			[]tooltest.Known{{Tool: "echo", Rule: "name", Reason: "test"}}},
		{"known violation matched by its message", []*tool.Tool{good("echo"), good("echo")}, []string{"1:name~"},
			[]tooltest.Known{{Tool: "echo", Rule: "name", Contains: "tool #0", Reason: "test"}}},
		{"known violation with another message", []*tool.Tool{good("echo"), good("echo")}, []string{"-1:known", "1:name"},
			[]tooltest.Known{{Tool: "echo", Rule: "name", Contains: "tool #7", Reason: "test"}}},
		{"known violation that does not occur", []*tool.Tool{good("echo")}, []string{"-1:known"},
			[]tooltest.Known{{Tool: "echo", Rule: "schema", Reason: "test"}}},
		{"known violation without a reason", []*tool.Tool{good("echo"), good("echo")},
			[]string{"-1:known", "1:name"}, []tooltest.Known{{Tool: "echo", Rule: "name"}}},
		{"known violation of a tool not in the list", []*tool.Tool{good("echo")}, []string{"-1:known"},
			[]tooltest.Known{{Tool: "ghost", Rule: "name", Reason: "test"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range tooltest.Check(t.Context(), tt.tools, tooltest.Options{Known: tt.known}) {
				s := fmt.Sprintf("%d:%s", v.Index, v.Rule)
				if v.Accepted != "" {
					s += "~"
				}
				got = append(got, s)
				t.Log(v)
			}
			slices.Sort(got)
			got = slices.Compact(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// The suite passes the Options.Call runtime to the handler.
func TestCheckUsesCall(t *testing.T) {
	var threads []string
	tl := raw("echo", echoSchema, func(ctx context.Context, c *tool.Call, args json.RawMessage) (*tool.Result, error) {
		threads = append(threads, c.ThreadID)
		return strictHandler(ctx, c, args)
	})
	opts := tooltest.Options{
		Samples: echoSample,
		Call:    func(t *tool.Tool) *tool.Call { return &tool.Call{Name: t.Name, ThreadID: "t-42"} },
	}
	if v := tooltest.Check(t.Context(), []*tool.Tool{tl}, opts); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
	if len(threads) == 0 || slices.ContainsFunc(threads, func(s string) bool { return s != "t-42" }) {
		t.Errorf("threads seen by the handler = %v, want only t-42", threads)
	}
}

// Run over good tools passes; its failures are Check's violations, shown
// above.
func TestRun(t *testing.T) {
	tooltest.Run(t, []*tool.Tool{good("echo"), raw("strict", echoSchema, strictHandler)}, tooltest.Options{
		Samples: map[string]tooltest.Sample{
			"echo":   {Args: []byte(`{"text":"hi","times":2}`), Live: true},
			"strict": {Args: []byte(`{"text":"hi"}`), Live: true},
		},
	})
}
