package replicas_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/postgres"
	"github.com/antlerhq/antler/store/postgres/pgtest"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
	"github.com/antlerhq/antler/vpath"
)

const inprocConfig = `
models:
  - name: test-model
    use: test:scripted
    model: scripted
tools:
  - name: note
    group: file:write
    use: test:note
`

// script is the rules-only model every replica shares: stateless, so any
// number of runs may use it at once.
//
//   - "slow ..." calls note, then answers after 30 s (a run to kill or
//     to collide with);
//   - "wait ..." answers after 1 s;
//   - anything else calls note, then answers "done: <tool result>".
func script() modeltest.Script {
	note := model.ToolCall{Name: "note", Arguments: json.RawMessage(`{"text":"{last}"}`)}
	return modeltest.Script{
		NoRecord:  true,
		ChunkSize: 8,
		Rules: []modeltest.Rule{
			{LastRole: model.RoleUser, Contains: "slow", Reply: modeltest.Turn{ToolCalls: []model.ToolCall{note}}},
			{LastRole: model.RoleTool, Contains: "slow", Reply: modeltest.Turn{Text: "finally", Delay: 30 * time.Second}},
			{LastRole: model.RoleUser, Contains: "wait", Reply: modeltest.Turn{Text: "waited", Delay: time.Second}},
			{LastRole: model.RoleUser, Reply: modeltest.Turn{Text: "working on it", ToolCalls: []model.ToolCall{note}}},
			{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "done: {last}"}},
		},
	}
}

// noteTool echoes its text.
func noteTool() *tool.Tool {
	type in struct {
		Text string `json:"text"`
	}
	return tool.New("note", "Take a note.", func(_ context.Context, _ *tool.Call, a in) (string, error) {
		return "noted " + a.Text, nil
	})
}

// inproc is one in-process gateway replica.
type inproc struct {
	url   string
	store *postgres.Store
	rep   *gateway.Replica
	gw    *gateway.Server
	stop  func()
}

// startInproc starts a replica on 127.0.0.1 against the schema, with the
// shared home and model.
func startInproc(t testing.TB, url, schema, home string, m model.ChatModel, leaseTTL time.Duration) *inproc {
	return startInprocOpts(t, url, schema, home, m, inprocOptions{leaseTTL: leaseTTL})
}

type inprocOptions struct {
	leaseTTL time.Duration
	// extensions: the replica has its own extensions_config.json (in
	// home), an MCP manager reading it, and syncs it through Postgres.
	extensions bool
	// elicit, when set, are the MCP servers of an MCP manager whose
	// elicitation requests reach this replica's gateway, as `antler
	// serve` wires them.
	elicit *config.Extensions
}

func startInprocOpts(t testing.TB, url, schema, home string, m model.ChatModel, o inprocOptions) *inproc {
	t.Helper()
	leaseTTL := o.leaseTTL
	ctx := context.Background()
	cfg, err := config.Parse(filepath.Join(home, "config.yaml"), []byte(inprocConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolset.NewRegistry()
	reg.RegisterModel(func(context.Context, *toolset.Env, config.Model) (model.ChatModel, error) { return m, nil }, "test:scripted")
	reg.RegisterTool(func(context.Context, *toolset.Env, config.ToolEntry) (*tool.Tool, error) { return noteTool(), nil }, "test:note")
	asm := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg, Home: home}}
	var extPath string
	var mgr *mcptools.Manager
	var elicitTo atomic.Pointer[gateway.Server]
	switch {
	case o.extensions:
		extPath = filepath.Join(home, "extensions_config.json")
		mgr = mcptools.New(mcptools.Options{Extensions: config.NewExtensionsCache(extPath)})
		asm.MCP = mgr
	case o.elicit != nil:
		mgr = mcptools.New(mcptools.Options{Extensions: mcptools.Static(o.elicit),
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return elicitTo.Load().Elicit(ctx, req)
			}})
		asm.MCP = mgr
	}
	rep, err := gateway.NewReplica(gateway.ReplicaOptions{Store: st, LeaseTTL: leaseTTL, Poll: 200 * time.Millisecond,
		ExtensionsPath: extPath})
	if err != nil {
		t.Fatal(err)
	}
	gwOpts := gateway.Options{
		Config: cfg, Store: st, Layout: layout,
		Factory:        agent.FactoryOptions{Assembler: asm},
		ExtensionsPath: extPath,
	}
	if mgr != nil {
		gwOpts.MCP = mgr
	}
	gw, err := gateway.New(rep.Options(gwOpts))
	if err != nil {
		t.Fatal(err)
	}
	rep.Attach(gw)
	elicitTo.Store(gw)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rep.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	r := &inproc{url: "http://" + ln.Addr().String(), store: st, rep: rep, gw: gw}
	var stopped bool
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		srv.Close()
		gw.Close()
		rep.Close()
		if mgr != nil {
			mgr.Close()
		}
		st.Close()
	}
	t.Cleanup(r.stop)
	return r
}

// twoInproc starts replicas A and B on one fresh schema.
func twoInproc(t *testing.T) (a, b *inproc) {
	t.Helper()
	url, schema := pgtest.Schema(t)
	home := t.TempDir()
	m := modeltest.FromScript(script())
	return startInproc(t, url, schema, home, m, 0), startInproc(t, url, schema, home, m, 0)
}

// TestInProcessThreadAcrossReplicas: a thread created on A, run on B, is
// read on A with the run's status and every checkpoint.
func TestInProcessThreadAcrossReplicas(t *testing.T) {
	a, b := twoInproc(t)
	ca, cb := newClient(t, a.url), newClient(t, b.url)
	var th map[string]any
	ca.json("POST", "/api/threads", map[string]any{"thread_id": "t-across"}, 200, &th)

	resp := cb.do("POST", "/api/langgraph/threads/t-across/runs/stream", runBody("hello"))
	if resp.StatusCode != 200 {
		t.Fatalf("run on B: status %d", resp.StatusCode)
	}
	rid := runIDOf(resp)
	frames, err := readStream(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkFrames(frames, 1); err != nil {
		t.Fatal(err)
	}
	var state struct {
		Values struct {
			Messages []map[string]any `json:"messages"`
		} `json:"values"`
	}
	ca.json("GET", "/api/threads/t-across/state", nil, 200, &state)
	msgs := state.Values.Messages
	// The scripted model echoes the user's text as it sees it: framed by
	// the input sanitisation's boundary markers.
	if len(msgs) != 4 || !strings.Contains(msgs[3]["content"].(string), "done: noted --- BEGIN USER INPUT ---\nhello\n--- END USER INPUT ---") {
		t.Fatalf("state on A after the run on B: %d messages %v", len(msgs), msgs)
	}
	var run map[string]any
	ca.json("GET", "/api/threads/t-across/runs/"+rid, nil, 200, &run)
	if run["status"] != "success" {
		t.Errorf("run status on A = %v", run["status"])
	}
	var hist []map[string]any
	ca.json("POST", "/api/threads/t-across/history", map[string]any{"limit": 100}, 200, &hist)
	if len(hist) < 3 {
		t.Errorf("history on A has %d checkpoints, want at least 3 (input, model, tools, model)", len(hist))
	}
	// The usage B recorded is served by A.
	var usage struct {
		TotalTokens int64            `json:"total_tokens"`
		TotalRuns   int              `json:"total_runs"`
		ByCaller    map[string]int64 `json:"by_caller"`
	}
	ca.json("GET", "/api/threads/t-across/token-usage", nil, 200, &usage)
	if usage.TotalRuns != 1 || usage.TotalTokens <= 0 || usage.ByCaller["lead_agent"] != usage.TotalTokens {
		t.Errorf("token-usage on A = %+v, want B's run with its lead-agent tokens", usage)
	}
}

// TestInProcessSecondRunConflicts: while A runs a thread, a run on the
// same thread through B answers 409; the run's status is visible on B,
// and B can follow A's stream and cancel the run.
func TestInProcessSecondRunConflicts(t *testing.T) {
	a, b := twoInproc(t)
	ca, cb := newClient(t, a.url), newClient(t, b.url)
	resp := ca.do("POST", "/api/langgraph/threads/t-busy/runs/stream", runBody("slow one"))
	if resp.StatusCode != 200 {
		t.Fatalf("run on A: status %d", resp.StatusCode)
	}
	defer resp.Body.Close()
	rid := runIDOf(resp)
	s := newSSE(resp.Body)
	var first []frame
	for len(first) < 3 { // metadata and the first step's frames
		f, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, f)
	}

	conflict := cb.do("POST", "/api/langgraph/threads/t-busy/runs/stream", runBody("hello"))
	conflict.Body.Close()
	if conflict.StatusCode != http.StatusConflict {
		t.Fatalf("second run via B: status %d, want 409", conflict.StatusCode)
	}
	var run map[string]any
	cb.json("GET", "/api/threads/t-busy/runs/"+rid, nil, 200, &run)
	if run["status"] != "running" {
		t.Errorf("run status on B = %v, want running", run["status"])
	}

	// B follows the run from the start: the frames are A's, byte for byte.
	join := cb.do("GET", "/api/langgraph/threads/t-busy/runs/"+rid+"/stream", nil)
	if join.StatusCode != 200 {
		t.Fatalf("join on B: status %d", join.StatusCode)
	}
	js := newSSE(join.Body)
	for i, want := range first {
		got, err := js.next()
		if err != nil {
			t.Fatal(err)
		}
		if got.Raw != want.Raw {
			t.Fatalf("joined frame %d = %q, want %q", i, got.Raw, want.Raw)
		}
	}
	// Cancel through B: the run on A stops, both streams end.
	cancel := cb.do("POST", "/api/threads/t-busy/runs/"+rid+"/cancel?wait=1", nil)
	cancel.Body.Close()
	if cancel.StatusCode != http.StatusNoContent {
		t.Fatalf("cancel via B: status %d", cancel.StatusCode)
	}
	restA, err := readStream(resp.Body)
	if err != nil || len(restA) == 0 || restA[len(restA)-1].Event != "end" {
		t.Fatalf("A's stream after cancel: %v %v", eventsOf(restA), err)
	}
	restB, err := readStream(join.Body)
	join.Body.Close()
	if err != nil || len(restB) == 0 || restB[len(restB)-1].Event != "end" {
		t.Fatalf("B's joined stream after cancel: %v %v", eventsOf(restB), err)
	}
	cb.json("GET", "/api/threads/t-busy/runs/"+rid, nil, 200, &run)
	if run["status"] != "interrupted" {
		t.Errorf("cancelled run status = %v, want interrupted", run["status"])
	}
	// The thread is free again on either replica.
	again := cb.do("POST", "/api/langgraph/threads/t-busy/runs/stream", runBody("hello"))
	frames, err := readStream(again.Body)
	again.Body.Close()
	if again.StatusCode != 200 || err != nil || checkFrames(frames, 1) != nil {
		t.Fatalf("run after cancel: status %d, %v %v", again.StatusCode, eventsOf(frames), err)
	}
}

// TestInProcessRejoinAfterDisconnect: a client that loses its stream on A
// resumes it on B with Last-Event-ID and gets exactly the frames it
// missed.
func TestInProcessRejoinAfterDisconnect(t *testing.T) {
	a, b := twoInproc(t)
	ca, cb := newClient(t, a.url), newClient(t, b.url)
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", a.url+"/api/threads/t-rejoin/runs/stream", jsonBody(t, runBody("wait for me")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rid := runIDOf(resp)
	f, err := newSSE(resp.Body).next()
	if err != nil || f.Event != "metadata" {
		t.Fatalf("first frame %v %v", f, err)
	}
	cancel() // the client goes away; on_disconnect is continue
	resp.Body.Close()

	join := cb.do("GET", "/api/threads/t-rejoin/runs/"+rid+"/stream", nil, "Last-Event-ID", f.ID)
	defer join.Body.Close()
	if join.StatusCode != 200 {
		t.Fatalf("rejoin on B: status %d", join.StatusCode)
	}
	rest, err := readStream(join.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkFrames(rest, 2); err != nil {
		t.Fatalf("rejoined stream: %v (%v)", err, eventsOf(rest))
	}
	var run map[string]any
	ca.json("GET", "/api/threads/t-rejoin/runs/"+rid, nil, 200, &run)
	if run["status"] != "success" {
		t.Errorf("run status = %v", run["status"])
	}
}

func jsonBody(t testing.TB, v any) *strings.Reader {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReader(string(b))
}

var _ = errors.New
