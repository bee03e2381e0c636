package acptools

import (
	"slices"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// TestTraceparentEnv: an agent started inside a span (the acp tool
// call's) gets its TRACEPARENT, so that it can continue the run's trace.
func TestTraceparentEnv(t *testing.T) {
	t.Parallel()
	yaml := "acp_agents:\n  a:\n    command: " + strconv.Quote(testAgentBin(t)) + "\n    args: [echo]\n    description: traced\n"
	cfg, err := config.Parse("config.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
		SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
		TraceFlags: trace.FlagsSampled,
	})
	h := newHarness(t, harnessOptions{environ: func() []string { return []string{"PATH=/usr/bin:/bin"} }})
	ctx := trace.ContextWithSpanContext(t.Context(), sc)
	res, err := h.inv.Invoke(ctx, &tool.Call{ThreadID: "t1", UserID: "u1"}, "a", cfg.ACPAgents["a"], "x")
	if err != nil || res.IsError {
		t.Fatalf("invoke: %v %q", err, resultText(res))
	}
	env := readReport(t, h.workspace(t, "u1", "t1")).Env
	if want := "TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"; !slices.Contains(env, want) {
		t.Errorf("agent environment = %q, want %s in it", env, want)
	}
}
