package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/authz"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

// testConfig is the config.yaml of the tests: one scripted model and one
// tool that writes a report into the thread's outputs.
const testConfig = `
models:
  - name: test-model
    display_name: Test Model
    use: test:scripted
    model: scripted
    api_key: sk-secret-never-shown
    context_window: 100000
tools:
  - name: make_report
    group: file:write
    use: test:make_report
uploads:
  max_files: 3
  max_file_size: 1024
  max_total_size: 2048
`

// env is one gateway under test with its places.
type env struct {
	t       *testing.T
	url     string
	gw      *gateway.Server
	store   *sqlite.Store
	layout  *vpath.Layout
	agents  *customagent.Store
	home    string
	extPath string
	resets  *resetCounter
	// mem is the gateway's memory manager (the config's memory section).
	mem *memory.Manager
}

type resetCounter struct {
	n    int
	next gateway.CacheResetter
}

func (r *resetCounter) Reset() {
	r.n++
	if r.next != nil {
		r.next.Reset()
	}
}

type envOptions struct {
	model  model.ChatModel
	tokens []config.GatewayToken
	mcp    toolset.MCPSource
	// config is appended to testConfig (more sections).
	config string
	// task, when set, binds the task tool running subagents with it.
	task builtin.Delegator
	// extensions is the initial extensions_config.json ("" for none).
	extensions string
	// dial, when set, serves MCP servers in memory through a real
	// mcptools.Manager reading the extensions file.
	dial func(context.Context, config.MCPServer) (mcp.Transport, error)
	// toolMiddlewares are the lead's embedder tool middlewares.
	toolMiddlewares []tool.Middleware
	// authz is the gateway's authorizer (nil: authorization off).
	authz *authz.Authorizer
	// memoryModel writes the memory extractions (nil: none).
	memoryModel model.ChatModel
	// telemetry records the gateway's spans (nil: none).
	telemetry *telemetry.Recorder
	// elicit makes the MCP servers' elicitation requests reach the
	// gateway (Server.Elicit), as `antler serve` wires them, through a
	// real mcptools.Manager reading the extensions file.
	elicit bool
	// gateway adjusts the gateway's options before New (nil: none).
	gateway func(*gateway.Options)
}

// newEnv starts a gateway on 127.0.0.1 with a real SQLite store under a
// temporary home.
func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	home := t.TempDir()
	cfg, err := config.Parse(filepath.Join(home, "config.yaml"), []byte(testConfig+o.config), nil)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := vpath.New(vpath.Options{Home: home, SkillsPath: filepath.Join(home, "skills")})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenDir(home, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	extPath := filepath.Join(home, "extensions_config.json")
	if o.extensions == "" {
		o.extensions = `{"mcpServers": {}, "skills": {}}`
	}
	if err := os.WriteFile(extPath, []byte(o.extensions), 0o644); err != nil {
		t.Fatal(err)
	}
	extCache := config.NewExtensionsCache(extPath)
	enabled := func(context.Context) (map[string]bool, error) {
		ext, _, err := extCache.Get()
		out := map[string]bool{}
		if ext != nil {
			for n, s := range ext.Skills {
				out[n] = s.Enabled
			}
		}
		return out, err
	}
	sk := skills.NewStore(skills.Options{SkillsPath: filepath.Join(home, "skills"), Home: home, EnabledState: enabled})
	agents := customagent.New(layout, customagent.Options{})

	m := o.model
	if m == nil {
		m = modeltest.New(modeltest.Turn{Text: "hello"})
	}
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) { return m, nil }, "test:scripted")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) {
		return makeReportTool(layout), nil
	}, "test:make_report")
	asm := &toolset.Assembler{
		Registry: reg,
		Env:      &toolset.Env{Config: cfg, Home: home},
		Builtins: toolset.Builtins{
			AskClarification: builtin.AskClarification(),
			PresentFiles:     builtin.NewPresentFiles(layout),
		},
		MCP: o.mcp,
	}
	if o.task != nil {
		asm.Builtins.Task = builtin.NewTask(o.task) // before its first use
	}
	resets := &resetCounter{}
	var elicitTo atomic.Pointer[gateway.Server]
	if o.dial != nil || o.elicit {
		mo := mcptools.Options{Extensions: extCache, Dial: o.dial}
		if o.elicit {
			mo.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return elicitTo.Load().Elicit(ctx, req)
			}
		}
		mgr := mcptools.New(mo)
		t.Cleanup(func() { mgr.Close() })
		asm.MCP = mgr
		resets.next = mgr
	}
	mem, err := memory.New(memory.Options{Config: cfg.Memory, Home: home, Model: o.memoryModel})
	if err != nil {
		t.Fatal(err)
	}
	gopts := gateway.Options{Memory: mem,
		Config: cfg, Store: st, Layout: layout, Agents: agents, Skills: sk,
		Factory:        agent.FactoryOptions{Assembler: asm, Agents: agent.CustomAgents(agents), ToolMiddlewares: o.toolMiddlewares},
		ExtensionsPath: extPath, MCP: resets, Tokens: o.tokens, Authorizer: o.authz, Telemetry: o.telemetry,
	}
	if o.gateway != nil {
		o.gateway(&gopts)
	}
	gw, err := gateway.New(gopts)
	if err != nil {
		t.Fatal(err)
	}
	elicitTo.Store(gw)
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(func() {
		srv.Close()
		gw.Close()
		mem.Close(context.Background())
		st.Close()
	})
	return &env{t: t, url: srv.URL, gw: gw, store: st, layout: layout, agents: agents, home: home,
		extPath: extPath, resets: resets, mem: mem}
}

// makeReportTool writes {"name", "text"} to the thread's outputs and
// presents it as an artifact.
func makeReportTool(layout *vpath.Layout) *tool.Tool {
	type in struct {
		Name string `json:"name"`
		Text string `json:"text"`
	}
	return tool.New("make_report", "Write a report into the outputs folder.",
		func(ctx context.Context, call *tool.Call, a in) (*tool.Result, error) {
			virtual := vpath.Outputs + "/" + a.Name
			p, err := layout.Resolve(call.UserID, call.ThreadID, virtual, vpath.Write)
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, []byte(a.Text), 0o644); err != nil {
				return nil, err
			}
			r := tool.Text("wrote " + virtual)
			r.Update = &thread.Update{Artifacts: []string{virtual}}
			return r, nil
		})
}

// do sends a request with an optional JSON body and bearer token.
func (e *env) do(method, path, token string, body any) *http.Response {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// json sends a request and decodes the JSON answer, failing unless the
// status is want.
func (e *env) json(method, path, token string, body any, want int, out any) {
	e.t.Helper()
	resp := e.do(method, path, token, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

// status sends a request and returns the status, draining the body.
func (e *env) status(method, path, token string, body any) int {
	e.t.Helper()
	resp := e.do(method, path, token, body)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// humanInput is the message the frontend sends for a prompt.
func humanInput(text string, extra map[string]any) map[string]any {
	kw := map[string]any{}
	for k, v := range extra {
		kw[k] = v
	}
	return map[string]any{"type": "human", "content": []any{map[string]any{"type": "text", "text": text}},
		"additional_kwargs": kw}
}

// runBody is the run-creation body DeerFlow's frontend sends
// (docs/api.md).
func runBody(tid string, msgs ...map[string]any) map[string]any {
	in := make([]any, len(msgs))
	for i, m := range msgs {
		in[i] = m
	}
	return map[string]any{
		"assistant_id": "lead_agent",
		"input":        map[string]any{"messages": in},
		"config":       map[string]any{"recursion_limit": 1000},
		"context": map[string]any{"model_name": "test-model", "mode": "flash", "thinking_enabled": false,
			"is_plan_mode": false, "subagent_enabled": false, "thread_id": tid},
		"stream_mode":   []string{"values", "messages-tuple", "updates", "custom"},
		"on_disconnect": "continue",
	}
}

// startStream posts a run and returns the open SSE response.
func (e *env) startStream(tid, token string, body any) *http.Response {
	e.t.Helper()
	resp := e.do("POST", "/api/langgraph/threads/"+tid+"/runs/stream", token, body)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("runs/stream: status %d: %s", resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "text/event-stream") {
		e.t.Fatalf("runs/stream: Content-Type %q", ct)
	}
	return resp
}
