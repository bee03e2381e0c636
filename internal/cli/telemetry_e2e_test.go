package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/telemetry/telemetrytest"
)

// tracedMCP is a local HTTP MCP server with one tool, "echo", that keeps
// the traceparent headers of the requests it is sent.
type tracedMCP struct {
	URL string
	mu  sync.Mutex
	tps []string
}

func startTracedMCP(t *testing.T) *tracedMCP {
	t.Helper()
	m := &tracedMCP{}
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Message string }) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Message}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			m.mu.Lock()
			m.tps = append(m.tps, tp)
			m.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	m.URL = hs.URL
	return m
}

func (m *tracedMCP) traceparents() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.tps)
}

// tracedScript answers the lead's first call with the MCP tool, the
// command tool that prints its TRACEPARENT and a task; the subagent and
// the lead's second call with text. It keeps the tool messages the lead
// reads.
type tracedScript struct {
	mu    sync.Mutex
	tools []model.Message
}

func (s *tracedScript) answer(req *model.Request) modeltest.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	isLead := slices.ContainsFunc(req.Tools, func(d model.ToolDefinition) bool { return d.Name == "task" })
	last := modeltest.LastMessage(req)
	switch {
	case len(req.Tools) == 0:
		return modeltest.Turn{Text: "A title"}
	case !isLead:
		return modeltest.Turn{Text: "sub done"}
	case last.Role == model.RoleUser:
		return modeltest.Turn{ToolCalls: []model.ToolCall{
			toolCall("c1", "web_echo", `{"Message":"hi"}`),
			toolCall("c2", "trace", `{}`),
			toolCall("c3", "task", `{"description":"look","prompt":"look around","subagent_type":"general-purpose"}`)}}
	}
	for _, m := range req.Messages {
		if m.Role == model.RoleTool {
			s.tools = append(s.tools, m)
		}
	}
	return modeltest.Turn{Text: "done"}
}

// tracedConfig is runConfig with a command tool printing TRACEPARENT and
// an extensions file naming the MCP server at mcpURL ("" for none).
func tracedConfig(t *testing.T, modelURL, mcpURL string) (cfg, home string) {
	t.Helper()
	dir := t.TempDir()
	cfg = writeFile(t, dir, "config.yaml", runConfig(modelURL)+`  - name: trace
    group: text
    use: antler:command
    command: ["sh", "-c", "echo tp=$TRACEPARENT"]
`)
	servers := map[string]any{}
	if mcpURL != "" {
		servers["web"] = map[string]any{"type": "http", "url": mcpURL}
	}
	ext, _ := json.Marshal(map[string]any{"mcpServers": servers})
	writeFile(t, dir, "extensions_config.json", string(ext))
	return cfg, filepath.Join(dir, "home")
}

// spanTree renders each span as "parent > name".
func spanTree(spans []telemetrytest.Span) []string {
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanID] = s.Name
	}
	var out []string
	for _, s := range spans {
		parent := "(root)"
		if p, ok := names[s.ParentSpanID]; ok {
			parent = p
		}
		out = append(out, parent+" > "+s.Name)
	}
	slices.Sort(out)
	return out
}

// TestE2ETelemetry_otlpReceiverAndMCPTraceparent: with
// OTEL_EXPORTER_OTLP_ENDPOINT at a local OTLP/HTTP receiver, antler run
// exports the run's spans there in one trace (the MCP call under its
// execute_tool span, the subagent's run under task's), and the local
// HTTP MCP server and the command tool get a traceparent of that trace.
func TestE2ETelemetry_otlpReceiverAndMCPTraceparent(t *testing.T) {
	recv := telemetrytest.NewReceiver(t)
	web := startTracedMCP(t)
	script := &tracedScript{}
	srv := modeltest.NewScriptServer(t, modeltest.Script{Rules: []modeltest.Rule{{Reply: modeltest.Turn{Func: script.answer}}}})
	cfg, home := tracedConfig(t, srv.URL, web.URL)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL, "OTEL_SERVICE_NAME": "antler-e2e"}
	code, out, errOut := runCLI(t, env, "--config", cfg, "--home", home, "run", "--subagents", "--thread", "t1", "hello")
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}

	spans := recv.Spans()
	tree := spanTree(spans)
	for _, want := range []string{
		"(root) > invoke_agent lead_agent",
		"invoke_agent lead_agent > chat scripted",
		"invoke_agent lead_agent > execute_tool web_echo",
		"execute_tool web_echo > tools/call echo",
		"invoke_agent lead_agent > execute_tool trace",
		"invoke_agent lead_agent > execute_tool task",
		"execute_tool task > invoke_agent general-purpose",
		"invoke_agent general-purpose > chat scripted",
	} {
		if !slices.Contains(tree, want) {
			t.Errorf("no span %q in the receiver's trace:\n%s", want, strings.Join(tree, "\n"))
		}
	}
	traceID := ""
	for _, s := range spans {
		if s.Name == "invoke_agent lead_agent" {
			traceID = s.TraceID
			if s.Attributes["gen_ai.conversation.id"] != "t1" || s.Attributes["antler.run.outcome"] != "completed" {
				t.Errorf("run span attributes = %v", s.Attributes)
			}
		}
		if s.ServiceName != "antler-e2e" {
			t.Errorf("span %q: service.name %q, want antler-e2e", s.Name, s.ServiceName)
		}
		if s.Name == "chat scripted" && (s.Attributes["gen_ai.provider.name"] != "openai" || s.Attributes["antler.model.name"] != "test") {
			t.Errorf("chat span attributes = %v", s.Attributes)
		}
	}
	for _, s := range spans {
		if s.Name != "antler.title" && s.TraceID != traceID {
			t.Errorf("span %q is in trace %s, want the run's %s", s.Name, s.TraceID, traceID)
		}
	}
	if tps := web.traceparents(); traceID == "" || !slices.ContainsFunc(tps, func(tp string) bool { return strings.Contains(tp, traceID) }) {
		t.Errorf("MCP server traceparents = %q, want one of trace %s", tps, traceID)
	}
	script.mu.Lock()
	defer script.mu.Unlock()
	if !slices.ContainsFunc(script.tools, func(m model.Message) bool {
		return m.ToolCallID == "c2" && strings.Contains(m.Content, "tp=00-"+traceID+"-")
	}) {
		t.Errorf("the command tool did not get TRACEPARENT of trace %s: %v", traceID, script.tools)
	}
}

// TestE2ETelemetry_console: OTEL_TRACES_EXPORTER=console and
// OTEL_METRICS_EXPORTER=console print the run's spans and metrics on
// stdout after its answer; without them nothing is printed.
func TestE2ETelemetry_console(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		spans bool
	}{
		{"console", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console"}, true},
		{"nothing set", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "trace", `{}`)}}, modeltest.Turn{Text: "done"})
			cfg, home := tracedConfig(t, srv.URL, "")
			code, out, errOut := runCLI(t, tc.env, "--config", cfg, "--home", home, "run", "hello")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, want := range []string{`"Name":"invoke_agent lead_agent"`, `"Name":"chat scripted"`, `"Name":"execute_tool trace"`,
				`"Name":"antler.runs"`, `"Name":"antler.model.calls"`, `"Name":"gen_ai.client.token.usage"`, `"Name":"antler.tool.calls"`} {
				if got := strings.Contains(out, want); got != tc.spans {
					t.Errorf("stdout has %s: %v, want %v:\n%s", want, got, tc.spans, out)
				}
			}
			if !strings.HasPrefix(out, "done") {
				t.Errorf("stdout does not start with the answer: %q", out)
			}
		})
	}
}
