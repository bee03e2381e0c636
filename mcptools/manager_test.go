package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// countLists counts tools/list requests a server receives.
func countLists(s *mcp.Server) *atomic.Int32 {
	n := &atomic.Int32{}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				n.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return n
}

func TestToolsListAndCall(t *testing.T) {
	srv := newTestServer()
	ext := parseExt(t, `{"mem": `+memServerJSON("")+`, "off": {"enabled": false, "command": "nope"}}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Dial: memServers{"mem": srv}.dial})

	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mem_echo", "mem_sleep"}, names(tools)); diff != "" {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	echo := tools[0]
	if got := echo.Meta; !cmp.Equal(got, map[string]string{"mcp_server": "mem", "mcp_tool": "echo", "mcp_transport": "http", "source": "mcp"}) {
		t.Errorf("meta = %v", got)
	}
	var schema map[string]any
	if err := json.Unmarshal(echo.InputSchema, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("schema = %s (%v)", echo.InputSchema, err)
	}
	res, err := echo.Handler(t.Context(), &tool.Call{ID: "c1"}, json.RawMessage(`{"message":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "Echo: hi" || res.IsError {
		t.Errorf("result = %q (error %v)", got, res.IsError)
	}

	st := m.Status()
	if len(st) != 2 || st[0].State != mcptools.StateReady || st[0].Tools != 2 || st[1].State != mcptools.StateDisabled {
		t.Errorf("status = %+v", st)
	}
}

func TestToolsReturnsSameSliceWhenUnchanged(t *testing.T) {
	srv := newTestServer()
	lists := countLists(srv)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"mem": `+memServerJSON("")+`}`)), Dial: memServers{"mem": srv}.dial})
	a, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if &a[0] != &b[0] {
		t.Error("Tools returned a new slice although nothing changed")
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("tools/list sent %d times, want 1", n)
	}
}

func TestListChangedRelistsOnlyThatServer(t *testing.T) {
	a, b := newTestServer(), newTestServer()
	listsA, listsB := countLists(a), countLists(b)
	m := newManager(t, mcptools.Options{
		Extensions: mcptools.Static(parseExt(t, `{"a": `+memServerJSON("")+`, "b": `+memServerJSON("")+`}`)),
		Dial:       memServers{"a": a, "b": b}.dial,
	})
	first, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// A tool added at runtime: the server sends tools/list_changed.
	mcp.AddTool(a, &mcp.Tool{Name: "late", Description: "Added at runtime."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("late result"), nil, nil
		})
	var got []*tool.Tool
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err = m.Tools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if contains(names(got), "a_late") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if diff := cmp.Diff([]string{"a_echo", "a_late", "a_sleep", "b_echo", "b_sleep"}, names(got)); diff != "" {
		t.Fatalf("after list_changed (-want +got):\n%s", diff)
	}
	if len(first) != 4 {
		t.Errorf("first list had %d tools", len(first))
	}
	if listsA.Load() < 2 || listsB.Load() != 1 {
		t.Errorf("tools/list count a=%d b=%d; want a>=2, b=1", listsA.Load(), listsB.Load())
	}
	res, err := got[1].Handler(t.Context(), &tool.Call{}, nil)
	if err != nil || resultText(res) != "late result" {
		t.Errorf("late tool: %v %v", res, err)
	}
}

func TestNamingOptions(t *testing.T) {
	srv := newTestServer()
	ext := parseExt(t, `{
		"raw": `+memServerJSON(`"tool_name_prefix": false, "disabled_tools": ["sleep"]`)+`,
		"pre": `+memServerJSON(`"disabled_tools": ["pre_echo"]`)+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Dial: memServers{"raw": srv, "pre": newTestServer()}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pre_sleep", "echo"}, names(tools)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestCallArgumentsAndResults(t *testing.T) {
	srv := newTestServer()
	var gotArgs atomic.Value
	srv.AddTool(&mcp.Tool{Name: "raw", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			gotArgs.Store(string(req.Params.Arguments))
			return &mcp.CallToolResult{
				Content: []mcp.Content{
					&mcp.TextContent{Text: "t"},
					&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}},
					&mcp.ResourceLink{URI: "file:///x.txt", Name: "x.txt", MIMEType: "text/plain"},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://r", Text: "embedded"}},
				},
				StructuredContent: map[string]any{"k": "v"},
			}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fails", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
		})
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"s": `+memServerJSON("")+`}`)), Dial: memServers{"s": srv}.dial})
	byName := toolsByName(t, m, "s_raw", "s_fails", "s_echo")

	for _, args := range []string{``, ` {} `} {
		res, err := byName["s_raw"].Handler(t.Context(), &tool.Call{}, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		if got := gotArgs.Load(); got != "{}" {
			t.Errorf("args %q reached the server as %v, want {}", args, got)
		}
		want := []tool.Block{
			{Type: tool.BlockText, Text: "t"},
			{Type: tool.BlockImage, MIMEType: "image/png", Data: []byte{1, 2, 3}},
			{Type: tool.BlockText, Text: `[resource link "x.txt": file:///x.txt (text/plain)]`},
			{Type: tool.BlockText, Text: "embedded"},
		}
		if diff := cmp.Diff(want, res.Content); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]any{"structured_content": map[string]any{"k": "v"}}, res.Artifact); diff != "" {
			t.Errorf("artifact (-want +got):\n%s", diff)
		}
	}
	// null is not an object: an error, as for every other tool (tool.New,
	// the agent loop), not a silent {}.
	for _, args := range []string{`[1]`, `null`, `"x"`} {
		res, err := byName["s_raw"].Handler(t.Context(), &tool.Call{}, json.RawMessage(args))
		if err != nil || !res.IsError || resultText(res) != "Error: tool arguments must be a JSON object" {
			t.Errorf("args %s: %q %v", args, resultText(res), err)
		}
	}
	res, err := byName["s_fails"].Handler(t.Context(), &tool.Call{}, nil)
	if err != nil || !res.IsError || resultText(res) != "Error: it broke" {
		t.Errorf("isError: %q %v", resultText(res), err)
	}
	res, err = byName["s_echo"].Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"message": 5}`))
	if err != nil || !res.IsError {
		t.Errorf("invalid args should be an error result: %q %v", resultText(res), err)
	}
}

// toolsByName returns m's tools by name. A tool of want that is missing
// fails the test, naming the tools found and each server's state (such as
// a discovery that timed out), rather than leaving a nil to dereference.
func toolsByName(t *testing.T, m *mcptools.Manager, want ...string) map[string]*tool.Tool {
	t.Helper()
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*tool.Tool{}
	for _, tl := range tools {
		out[tl.Name] = tl
	}
	for _, name := range want {
		if out[name] == nil {
			var states []string
			for _, s := range m.Status() {
				states = append(states, fmt.Sprintf("%s: %s (%v)", s.Name, s.State, s.Err))
			}
			t.Fatalf("no tool %s among %v; servers: %v", name, names(tools), states)
		}
	}
	return out
}

func TestCancellationReachesServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cancelled := make(chan struct{})
	started := make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done() // cancelled by notifications/cancelled
			close(cancelled)
			return nil, ctx.Err()
		})
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"s": `+memServerJSON("")+`}`)), Dial: memServers{"s": srv}.dial})
	block := toolsByName(t, m, "s_block")["s_block"]
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := block.Handler(ctx, &tool.Call{}, nil)
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call returned %v, want context.Canceled as a Go error", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the cancellation")
	}
}

// tool_call_timeout on the call side: Antler applies tool_call_timeout to
// every transport, where DeerFlow ignores it for sse and http servers
// (docs/differences.md); the timeout becomes an error result and the
// server sees notifications/cancelled.
func TestToolCallTimeoutAppliesToHTTP(t *testing.T) {
	srv := newTestServer()
	m := newManager(t, mcptools.Options{
		Extensions: mcptools.Static(parseExt(t, `{"s": `+memServerJSON(`"tool_call_timeout": 0.2`)+`}`)),
		Dial:       memServers{"s": srv}.dial,
	})
	start := time.Now()
	res, err := toolsByName(t, m, "s_sleep")["s_sleep"].Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"millis": 10000}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Error: MCP tool 'sleep' on server 's' timed out after 0.2s and was cancelled; " +
		"if it needs longer, raise tool_call_timeout (seconds) of server 's' in extensions_config.json"; resultText(res) != want || !res.IsError {
		t.Errorf("got %q, want %q", resultText(res), want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timed-out call took %s", d)
	}
	// The session survives a timeout.
	res, err = toolsByName(t, m, "s_echo")["s_echo"].Handler(t.Context(), &tool.Call{}, json.RawMessage(`{"message":"x"}`))
	if err != nil || resultText(res) != "Echo: x" {
		t.Errorf("after timeout: %q %v", resultText(res), err)
	}
}

func TestProgressEvents(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "work", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: "step"})
			}
			// Progress handlers run asynchronously on the client; events
			// that arrive after the result are dropped, as for any real
			// server whose last notification races its result.
			time.Sleep(100 * time.Millisecond)
			return text("done"), nil
		})
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"s": `+memServerJSON("")+`}`)), Dial: memServers{"s": srv}.dial})
	events := make(chan tool.Progress, 10)
	call := &tool.Call{ID: "call-1", Name: "s_work", Emit: func(name string, data any) {
		if name == tool.ProgressEvent {
			events <- data.(tool.Progress)
		}
	}}
	res, err := toolsByName(t, m, "s_work")["s_work"].Handler(t.Context(), call, nil)
	if err != nil || resultText(res) != "done" {
		t.Fatalf("%q %v", resultText(res), err)
	}
	select {
	case ev := <-events: // notification handlers run asynchronously
		if ev.Name != "s_work" || ev.Server != "s" || ev.Tool != "work" || ev.Total != 3 {
			t.Errorf("event = %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no progress event")
	}
}

func TestResetAndClose(t *testing.T) {
	srv := newTestServer()
	lists := countLists(srv)
	m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(parseExt(t, `{"s": `+memServerJSON("")+`}`)), Dial: memServers{"s": srv}.dial})
	a, _ := m.Tools(t.Context())
	m.Reset()
	b, err := m.Tools(t.Context())
	if err != nil || len(b) != 2 || &a[0] == &b[0] || lists.Load() != 2 {
		t.Errorf("after Reset: %v %v, lists=%d", names(b), err, lists.Load())
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Tools(t.Context()); err == nil {
		t.Error("Tools after Close succeeded")
	}
	res, err := b[0].Handler(t.Context(), &tool.Call{}, nil)
	if err == nil {
		t.Errorf("call after Close: %q, want a Go error", resultText(res))
	}
}

func TestBrokenServerConfigCostsOnlyItsTools(t *testing.T) {
	t.Setenv("MCPTOOLS_UNSET_TEST_VAR", "")
	ext := parseExt(t, `{
		"ok": `+memServerJSON("")+`,
		"nourl": {"type": "sse"},
		"badenv": {"command": "x", "env": {"K": "$MCPTOOLS_SURELY_UNSET_VAR"}}}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Dial: memServers{"ok": newTestServer()}.dial})
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok_echo", "ok_sleep"}, names(tools)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, st := range m.Status() {
		if st.Name != "ok" && (st.State != mcptools.StateFailed || st.Err == nil) {
			t.Errorf("%s: %+v", st.Name, st)
		}
	}
}
