package commandtool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/antlerhq/antler/commandtool"
	"github.com/antlerhq/antler/tool"
)

// TestTraceparentEnv: the command gets TRACEPARENT of the call's span, so
// that it can continue the run's trace; without a span it gets none.
func TestTraceparentEnv(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
		SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
		TraceFlags: trace.FlagsSampled,
	})
	tl, err := commandtool.New(commandtool.Options{Name: "t", Command: []string{script(t, `echo "tp=$TRACEPARENT"`)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TRACEPARENT", "")
	tests := []struct {
		name string
		span bool
		want string
	}{
		{"in a span", true, "tp=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		{"no span", false, "tp="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			if tc.span {
				ctx = trace.ContextWithSpanContext(ctx, sc)
			}
			res, err := tl.Handler(ctx, &tool.Call{}, json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(res.TextContent()); got != tc.want {
				t.Errorf("command printed %q, want %q", got, tc.want)
			}
		})
	}
}
