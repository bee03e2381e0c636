package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// The Manager is the MCP source of toolset.Assemble.
var _ toolset.MCPSource = (*mcptools.Manager)(nil)

// Discovery timeout skips only the hung server; a
// server that exits at once and one that crashes mid-call cost only their
// own tools; session initialisation at call time is bounded too.
func TestDiscoveryTimeoutSkipsOnlyHungServer(t *testing.T) {
	ext := parseExt(t, `{
		"hung": `+fakeServerJSON(t, "hang", `"session_init_timeout": 1`)+`,
		"gone": `+fakeServerJSON(t, "exit", "")+`,
		"lister": `+fakeServerJSON(t, "serve", `"env": {"`+fakeEnv+`": "serve", "FAKE_CRASH_ON_LIST": "1"}`)+`,
		"good": `+fakeServerJSON(t, "serve", "")+`}`)
	var mu sync.Mutex
	seen := map[string][]mcptools.ServerState{}
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), OnStatus: func(st mcptools.ServerStatus) {
		mu.Lock()
		defer mu.Unlock()
		seen[st.Name] = append(seen[st.Name], st.State)
	}})
	// Assembly through toolset.Assembler, as the agent factory does.
	asm := &toolset.Assembler{Registry: toolset.NewRegistry(), Env: &toolset.Env{Config: config.Default()}, MCP: m}
	start := time.Now()
	set, err := asm.Assemble(t.Context(), toolset.Options{IncludeMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	var mcpNames []string
	for _, e := range set.Entries {
		if e.Source == toolset.SourceMCP {
			mcpNames = append(mcpNames, e.Tool.Name)
		}
	}
	if diff := cmp.Diff([]string{"good_crash", "good_echo", "good_env", "good_pid", "good_sleep"}, mcpNames); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	tools, err := m.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if elapsed > 10*time.Second {
		t.Errorf("discovery took %s; the hung server must cost at most its 1 s timeout", elapsed)
	}
	st := statusByName(m)
	if s := st["hung"]; s.State != mcptools.StateFailed || s.Err == nil || s.Err.Error() != "tool discovery timed out (1s)" {
		t.Errorf("hung: %+v", s)
	}
	if s := st["lister"]; s.State != mcptools.StateFailed || s.Err == nil || !strings.Contains(s.Err.Error(), "crashing while listing") {
		t.Errorf("lister: %+v", s)
	}
	if s := st["gone"]; s.State != mcptools.StateFailed || s.Err == nil || !strings.Contains(s.Err.Error(), "fake: refusing to start") {
		t.Errorf("gone: %+v (the error should carry the server's stderr)", s)
	}
	mu.Lock()
	if diff := cmp.Diff([]mcptools.ServerState{"connecting", "ready"}, seen["good"]); diff != "" {
		t.Errorf("OnStatus for good (-want +got):\n%s", diff)
	}
	mu.Unlock()

	// A failed server is not retried by the next Tools call.
	start = time.Now()
	if again, err := m.Tools(t.Context()); err != nil || &again[0] != &tools[0] || time.Since(start) > time.Second {
		t.Errorf("second Tools: err=%v same=%v took=%s", err, err == nil && &again[0] == &tools[0], time.Since(start))
	}
}

func statusByName(m *mcptools.Manager) map[string]mcptools.ServerStatus {
	out := map[string]mcptools.ServerStatus{}
	for _, s := range m.Status() {
		out[s.Name] = s
	}
	return out
}

// Session initialisation at call time is bounded
// by session_init_timeout too; the call gets an error result.
//
// The same session_init_timeout bounds discovery, and a short one is met
// by no stdio process started under -race on a loaded machine. So the
// control session (discovery, the calls without a thread) is an
// in-memory server, which needs no process start; once it is listed,
// every new session is a real stdio process that hangs in
// initialisation, as a thread's stuck npx would.
func TestSessionInitTimeoutAtCallTime(t *testing.T) {
	ext := parseExt(t, `{"s": `+fakeServerJSON(t, "hang", `"session_init_timeout": 1`)+`}`)
	var listed atomic.Bool
	control := newTestServer()
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext),
		Dial: func(ctx context.Context, s config.MCPServer) (mcp.Transport, error) {
			if listed.Load() {
				return nil, nil // the stdio process, which hangs
			}
			return memServers{"s": control}.dial(ctx, s)
		}})
	echo := toolsByName(t, m, "s_echo")["s_echo"]
	listed.Store(true)
	// The control session is alive; a new thread needs a new process,
	// which hangs.
	start := time.Now()
	msg, isErr := callText(t, echo, &tool.Call{UserID: "u", ThreadID: "new"}, `{"message":"x"}`)
	if !isErr || msg != "Error: MCP server 's' did not start within 1s" {
		t.Errorf("got %q", msg)
	}
	// Far above the 1 s bound, far below the hour the process hangs.
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %s", d)
	}
	if msg, isErr := callText(t, echo, &tool.Call{}, `{"message":"x"}`); isErr || msg != "Echo: x" {
		t.Errorf("control session: %q", msg)
	}
	res, err := m.Check(t.Context())
	if err != nil || len(res) != 1 || res[0].Err == nil || res[0].Err.Error() != "tool discovery timed out (1s)" {
		t.Errorf("check = %+v, %v", res, err)
	}
}

// callText calls tl and returns the text a model would read and whether
// it is an error result. A nil tl (not discovered) fails the test.
func callText(t *testing.T, tl *tool.Tool, call *tool.Call, args string) (string, bool) {
	t.Helper()
	if tl == nil {
		t.Fatalf("callText: nil tool (not discovered)")
	}
	res, err := tl.Handler(t.Context(), call, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", tl.Name, err)
	}
	return resultText(res), res.IsError
}

func TestStdioSessionsPerThreadAndRestart(t *testing.T) {
	ext := parseExt(t, `{"f": `+fakeServerJSON(t, "serve", `"env": {"`+fakeEnv+`": "serve", "FAKE_SECRET": "s3cret"}`)+`}`)
	t.Setenv("MCPTOOLS_NOT_INHERITED", "leak")
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), TerminateGrace: 200 * time.Millisecond})
	tools := toolsByName(t, m, "f_pid", "f_env", "f_crash")
	pid, env, crash := tools["f_pid"], tools["f_env"], tools["f_crash"]

	control, _ := callText(t, pid, &tool.Call{}, "")
	t1 := &tool.Call{UserID: "u", ThreadID: "t1"}
	t2 := &tool.Call{UserID: "u", ThreadID: "t2"}
	p1, _ := callText(t, pid, t1, "")
	p1again, _ := callText(t, pid, t1, "")
	if p1 != p1again || p1 == control {
		t.Errorf("thread t1 pids %s, %s; control %s: want one session per thread, separate from control", p1, p1again, control)
	}
	p2, _ := callText(t, pid, t2, "")
	if p2 == p1 || p2 == control {
		t.Errorf("thread t2 shares a process: %s (t1 %s, control %s)", p2, p1, control)
	}
	// The bound's evictions: process_bound_test.go.

	// Env: configured values arrive, the rest of Antler's env does not.
	if v, _ := callText(t, env, t1, `{"name":"FAKE_SECRET"}`); v != "s3cret" {
		t.Errorf("FAKE_SECRET = %q", v)
	}
	if v, _ := callText(t, env, t1, `{"name":"MCPTOOLS_NOT_INHERITED"}`); v != "<unset>" {
		t.Errorf("MCPTOOLS_NOT_INHERITED = %q, want <unset>", v)
	}
	if v, _ := callText(t, env, t1, `{"name":"PATH"}`); v == "<unset>" {
		t.Error("PATH not inherited")
	}

	// A crash mid-call is an error result; the next call restarts the server.
	before, _ := callText(t, pid, t1, "")
	msg, isErr := callText(t, crash, t1, "")
	if !isErr || !strings.Contains(msg, "closed the connection while running 'crash'; it will be restarted on the next call") ||
		!strings.Contains(msg, "fake: crashing on purpose") {
		t.Errorf("crash result = %q", msg)
	}
	after, isErr := callText(t, pid, t1, "")
	if isErr || after == before {
		t.Errorf("after crash: pid %q (before %q), error %v", after, before, isErr)
	}
	// Other sessions were not affected.
	if p, _ := callText(t, pid, &tool.Call{}, ""); p != control {
		t.Errorf("control session changed after a thread's crash: %s -> %s", control, p)
	}
}
