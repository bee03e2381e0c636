package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
)

// traceparents records the traceparent an MCP server received, as the
// HTTP header and in the request's _meta.
type traceparents struct {
	mu           sync.Mutex
	header, meta []string
}

func (p *traceparents) add(header bool, v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if header {
		p.header = append(p.header, v)
	} else {
		p.meta = append(p.meta, v)
	}
}

// newTracedMCPServer starts an HTTP MCP server with an echo tool that
// records the trace context of every tools/call.
func newTracedMCPServer(t *testing.T, seen *traceparents) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(_ context.Context, req *mcp.CallToolRequest, in struct{ Message string }) (*mcp.CallToolResult, any, error) {
			tp, _ := req.Params.Meta["traceparent"].(string)
			seen.add(false, tp)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Message}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			seen.add(true, tp)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestTelemetry_runWithToolMCPAndSubagent reads the spans of a run whose
// model calls an MCP tool and the task tool, which runs a subagent: one
// trace, the run's invoke_agent span at its root, the chat and
// execute_tool spans under it, the tools/call span under the MCP tool's
// and the subagent's invoke_agent under task's; the MCP server receives
// the same trace id.
func TestTelemetry_runWithToolMCPAndSubagent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	rec := telemetry.New(telemetry.Options{TracerProvider: tp,
		DescribeModel: func(name string) (string, string) { return "openai", "gpt-test-" + name }})

	var seen traceparents
	url := newTracedMCPServer(t, &seen)
	ext := &config.Extensions{MCPServers: map[string]config.MCPServer{
		"web": {Name: "web", Enabled: true, Type: "http", URL: url}}}
	m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext), TracerProvider: tp})
	t.Cleanup(func() { _ = m.Close() })
	tools, err := m.Tools(t.Context())
	if err != nil || len(tools) != 1 {
		t.Fatalf("Tools() = %d tools, %v", len(tools), err)
	}
	echo := tools[0]

	sub, err := agent.New(agent.Options{Model: agent.NamedModel("sub", modeltest.New(modeltest.Turn{Text: "sub done"})), Telemetry: rec})
	if err != nil {
		t.Fatal(err)
	}
	task := &tool.Tool{Name: "task", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, _ *tool.Call, _ json.RawMessage) (*tool.Result, error) {
			out, err := sub.Invoke(ctx, agent.Input{Messages: []model.Message{model.UserText("go")},
				Context: map[string]any{"subagent_type": "general-purpose"}}, nil)
			if err != nil {
				return nil, err
			}
			return tool.Text(out.State.Messages[len(out.State.Messages)-1].Content), nil
		}}
	lead := modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{
			{ID: "c1", Name: echo.Name, Arguments: json.RawMessage(`{"Message":"hi"}`)},
			{ID: "c2", Name: "task", Arguments: json.RawMessage(`{}`)}}},
		modeltest.Turn{Text: "done"})
	a, err := agent.New(agent.Options{Model: agent.NamedModel("default", lead), Tools: []*tool.Tool{echo, task}, Telemetry: rec, ToolConcurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(t.Context(), agent.Input{ThreadID: "th", RunID: "r1", Messages: []model.Message{model.UserText("hello")}}, nil); err != nil {
		t.Fatal(err)
	}

	spans := exp.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
	}
	// tree renders each span as "parent > name".
	var tree []string
	traces := map[string]bool{}
	for _, s := range spans {
		traces[s.SpanContext.TraceID().String()] = true
		parent := "(root)"
		if p, ok := byID[s.Parent.SpanID().String()]; ok && s.Parent.IsValid() {
			parent = p.Name
		}
		tree = append(tree, parent+" > "+s.Name)
	}
	want := []string{
		"(root) > invoke_agent lead_agent",
		"invoke_agent lead_agent > chat gpt-test-default",
		"invoke_agent lead_agent > execute_tool " + echo.Name,
		"execute_tool " + echo.Name + " > tools/call echo",
		"execute_tool task > invoke_agent general-purpose",
		"invoke_agent general-purpose > chat gpt-test-sub",
		"invoke_agent lead_agent > execute_tool task",
		"invoke_agent lead_agent > chat gpt-test-default",
	}
	if diff := cmp.Diff(sortedCopy(want), sortedCopy(tree)); diff != "" {
		t.Errorf("span tree (-want +got):\n%s", diff)
	}
	if len(traces) != 1 {
		t.Errorf("spans are in %d traces, want 1", len(traces))
	}
	var traceID string
	for id := range traces {
		traceID = id
	}

	attrs := func(name string) map[string]string {
		for _, s := range spans {
			if s.Name == name {
				out := map[string]string{}
				for _, kv := range s.Attributes {
					out[string(kv.Key)] = kv.Value.String()
				}
				return out
			}
		}
		t.Fatalf("no span %q", name)
		return nil
	}
	checks := []struct {
		span string
		want map[string]string
	}{
		{"invoke_agent lead_agent", map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "lead_agent",
			"gen_ai.conversation.id": "th", "antler.run.id": "r1", "antler.run.outcome": "completed", "antler.run.turns": "2"}},
		{"chat gpt-test-default", map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": "gpt-test-default", "gen_ai.response.model": "gpt-test-default", "antler.model.name": "default"}},
		{"execute_tool " + echo.Name, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": echo.Name,
			"gen_ai.tool.call.id": "c1", "gen_ai.tool.type": "extension", "antler.tool.source": "mcp", "antler.mcp.server": "web",
			"antler.tool.outcome": "ok"}},
		{"execute_tool task", map[string]string{"gen_ai.tool.call.id": "c2", "gen_ai.tool.type": "function", "antler.tool.outcome": "ok"}},
		{"tools/call echo", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "antler.mcp.server": "web"}},
	}
	for _, c := range checks {
		got := attrs(c.span)
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("span %q: %s = %q, want %q", c.span, k, got[k], v)
			}
		}
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
			if _, ok := got[k]; ok {
				t.Errorf("span %q records %s without CaptureContent", c.span, k)
			}
		}
	}
	if got := attrs("chat gpt-test-default")["gen_ai.usage.input_tokens"]; got == "" || got == "0" {
		t.Errorf("chat span: gen_ai.usage.input_tokens = %q, want the call's", got)
	}

	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.meta) != 1 || !strings.Contains(seen.meta[0], traceID) {
		t.Errorf("MCP _meta traceparent = %q, want one with trace %s", seen.meta, traceID)
	}
	found := false
	for _, h := range seen.header {
		found = found || strings.Contains(h, traceID)
	}
	if !found {
		t.Errorf("MCP HTTP traceparent headers = %q, want one with trace %s", seen.header, traceID)
	}
}

// TestTelemetry_captureContent records messages, arguments and results
// only when the operator opts in.
func TestTelemetry_captureContent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	rec := telemetry.New(telemetry.Options{TracerProvider: tp, CaptureContent: true})
	greet := &tool.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Text("hello Ada"), nil
		}}
	a, err := agent.New(agent.Options{Model: modeltest.New(
		modeltest.Turn{ToolCalls: []model.ToolCall{{Name: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)}}},
		modeltest.Turn{Text: "done"}), Tools: []*tool.Tool{greet}, Telemetry: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(t.Context(), agent.Input{Messages: []model.Message{model.UserText("say hi")}}, nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "gen_ai.input.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result":
				got[string(kv.Key)] = kv.Value.String()
			}
		}
	}
	if !strings.Contains(got["gen_ai.input.messages"], "say hi") || got["gen_ai.tool.call.arguments"] != `{"name":"Ada"}` ||
		got["gen_ai.tool.call.result"] != "hello Ada" {
		t.Errorf("content attributes = %v", got)
	}
}

func sortedCopy(s []string) []string {
	return slices.Sorted(slices.Values(s))
}
