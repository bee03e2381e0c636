package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

type greetIn struct {
	Name  string   `json:"name" jsonschema:"who to greet"`
	Times int      `json:"times,omitempty" jsonschema:"how many times"`
	Tags  []string `json:"tags,omitempty"`
}

func greet() *tool.Tool {
	return tool.New("greet", "Greets someone.", func(ctx context.Context, c *tool.Call, in greetIn) (string, error) {
		switch in.Name {
		case "panic":
			panic("boom")
		case "fail":
			return "", errors.New("no such person")
		case "cancel":
			<-ctx.Done()
			return "", ctx.Err()
		}
		return strings.Repeat("hi "+in.Name+" ", max(in.Times, 1)), nil
	})
}

func TestNewDerivesSchema(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(greet().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	props := schema["properties"].(map[string]any)
	if got := props["name"].(map[string]any)["description"]; got != "who to greet" {
		t.Errorf("name description = %v", got)
	}
	if got := props["tags"].(map[string]any)["type"]; got != "array" {
		t.Errorf("tags type = %v, want plain \"array\" (nullable unions simplified)", got)
	}
	if diff := cmp.Diff([]any{"name"}, schema["required"]); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
}

func TestNewHandlesCalls(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantText  string
		wantError bool
	}{
		{"ok", `{"name":"ann","times":2}`, "hi ann hi ann ", false},
		{"missing required field names it", `{}`, "Error: invalid arguments for greet: /: missing property 'name'", true},
		{"wrong type names the field", `{"name":"ann","times":"x"}`, "/times", true},
		{"unknown field rejected", `{"name":"ann","extra":1}`, "extra", true},
		{"not an object", `[1]`, "Error: invalid arguments for greet: arguments must be a JSON object", true},
		{"bad json", `{`, "Error: invalid arguments for greet: arguments are not valid JSON", true},
		{"handler error becomes Error result", `{"name":"fail"}`, "Error: no such person", true},
		{"panic recovered by Invoke", `{"name":"panic"}`, "Error: Tool 'greet' failed with panic: boom. Continue with available context, or choose an alternative tool.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Invoke(t.Context(), greet().Handler, &tool.Call{Name: "greet"}, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("Go error %v; model-correctable problems must be results", err)
			}
			if res.IsError != tt.wantError {
				t.Errorf("IsError = %v, want %v (%s)", res.IsError, tt.wantError, res.TextContent())
			}
			if !strings.Contains(res.TextContent(), tt.wantText) {
				t.Errorf("text = %q, want it to contain %q", res.TextContent(), tt.wantText)
			}
		})
	}
}

func TestNewCancellationIsAGoError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := greet().Handler(ctx, &tool.Call{}, json.RawMessage(`{"name":"cancel"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestChainFirstIsOutermost(t *testing.T) {
	var order []string
	mw := func(name string) tool.Middleware {
		return func(next tool.Handler) tool.Handler {
			return func(ctx context.Context, c *tool.Call, a json.RawMessage) (*tool.Result, error) {
				order = append(order, name+">")
				r, err := next(ctx, c, a)
				order = append(order, "<"+name)
				return r, err
			}
		}
	}
	h := tool.Chain(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		order = append(order, "handler")
		return tool.Text("ok"), nil
	}, mw("a"), nil, mw("b"))
	if _, err := h(t.Context(), &tool.Call{}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a>", "b>", "handler", "<b", "<a"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestFailureResultTrimsDetail(t *testing.T) {
	r := tool.FailureResult("x", "ValueError", strings.Repeat("d", 600))
	text := r.TextContent()
	if !strings.Contains(text, strings.Repeat("d", 497)+"...") || strings.Contains(text, strings.Repeat("d", 498)) {
		t.Errorf("detail not trimmed to 497+...: %d chars", len(text))
	}
	if got := tool.FailureResult("x", "ValueError", "").TextContent(); !strings.Contains(got, "failed with ValueError: ValueError.") {
		t.Errorf("empty detail: %q", got)
	}
}

func TestErrorfDoesNotDoublePrefix(t *testing.T) {
	if got := tool.Errorf("Error: x").TextContent(); got != "Error: x" {
		t.Errorf("got %q", got)
	}
	if got := tool.Errorf("x %d", 1).TextContent(); got != "Error: x 1" {
		t.Errorf("got %q", got)
	}
}

func ExampleNew() {
	type in struct {
		City string `json:"city" jsonschema:"the city to look up"`
	}
	weather := tool.New("weather", "Current weather of a city.", func(ctx context.Context, c *tool.Call, in in) (string, error) {
		return "sunny in " + in.City, nil
	})
	res, _ := weather.Handler(context.Background(), &tool.Call{}, json.RawMessage(`{"city":"Oslo"}`))
	fmt.Println(res.TextContent())
	res, _ = weather.Handler(context.Background(), &tool.Call{}, json.RawMessage(`{}`))
	fmt.Println(res.TextContent())
	// Output:
	// sunny in Oslo
	// Error: invalid arguments for weather: /: missing property 'city'
}
