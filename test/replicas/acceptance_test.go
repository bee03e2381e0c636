package replicas_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// procScript drives the replica processes (rules only: stateless).
//
//   - "slow ..." lists a folder, then answers after 60 s: a run that is
//     still going when the test collides with it or kills its replica;
//   - "facts ..." answers "facts bound" when the MCP tool facts_lookup is
//     bound, "no facts" otherwise;
//   - anything else lists a folder, then answers "done: <listing>".
func procScript() modeltest.Script {
	ls := model.ToolCall{Name: "ls", Arguments: json.RawMessage(`{"path":"/mnt/user-data"}`)}
	return modeltest.Script{
		ChunkSize: 8,
		Rules: []modeltest.Rule{
			{LastRole: model.RoleUser, Contains: "slow", Reply: modeltest.Turn{Text: "listing", ToolCalls: []model.ToolCall{ls}}},
			{LastRole: model.RoleTool, Reply: modeltest.Turn{Text: "finally", Delay: 60 * time.Second, Func: slowOnly}},
			{LastRole: model.RoleUser, Contains: "facts", Tool: "facts_lookup", Reply: modeltest.Turn{Text: "facts bound"}},
			{LastRole: model.RoleUser, Contains: "facts", Reply: modeltest.Turn{Text: "no facts"}},
			{LastRole: model.RoleUser, Reply: modeltest.Turn{Text: "listing", ToolCalls: []model.ToolCall{ls}}},
		},
	}
}

// slowOnly makes the answer after a tool result slow only in a run whose
// user message asked for it.
func slowOnly(req *model.Request) modeltest.Turn {
	for _, m := range slices.Backward(req.Messages) {
		if m.Role == model.RoleUser {
			if strings.Contains(m.Content, "slow") {
				return modeltest.Turn{Text: "finally", Delay: 60 * time.Second}
			}
			break
		}
	}
	return modeltest.Turn{Text: "done"}
}

// factsServer is a streamable-HTTP MCP server on 127.0.0.1 with one tool.
func factsServer(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "facts", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "Looks a fact up."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Key string `json:"key"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fact " + in.Key}}}, nil, nil
		})
	hs := newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	return hs + "/mcp"
}

// twoProcs starts replicas A and B of `antler serve` on one schema, one
// home (a shared disk: extensions file, threads' folders) and one model.
func twoProcs(t *testing.T, script modeltest.Script, leaseSeconds int) (a, b *proc, m *modeltest.Server) {
	t.Helper()
	_, schema := pgtest.Schema(t)
	m = modeltest.NewScriptServer(t, script)
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(procConfig(m.URL, schema, leaseSeconds)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "extensions_config.json"), []byte(`{"mcpServers": {}, "skills": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Start both at once: their migrations race on the empty schema.
	pa, pb := make(chan *proc, 1), make(chan *proc, 1)
	go func() { pa <- startProcNoFatal(t, "A", cfgPath, home) }()
	go func() { pb <- startProcNoFatal(t, "B", cfgPath, home) }()
	a, b = <-pa, <-pb
	if a == nil || b == nil {
		t.FailNow()
	}
	return a, b, m
}

// TestReplicaProcesses is the acceptance test of issue 12: two `antler
// serve` processes on two loopback ports against one Postgres database.
func TestReplicaProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts antler processes; skipped with -short")
	}
	a, b, m := twoProcs(t, procScript(), 2)
	ca, cb := newClient(t, a.url), newClient(t, b.url)

	t.Run("thread on A, run on B, state on A", func(t *testing.T) {
		ca.json("POST", "/api/threads", map[string]any{"thread_id": "t-ab"}, 200, nil)
		resp := cb.do("POST", "/api/langgraph/threads/t-ab/runs/stream", runBody("hello"))
		rid := runIDOf(resp)
		frames, err := readStream(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("run on B: status %d, %v", resp.StatusCode, err)
		}
		if err := checkFrames(frames, 1); err != nil {
			t.Fatal(err)
		}
		_, state := getJSON(ca, "/api/threads/t-ab/state")
		msgs, _ := state["values"].(map[string]any)["messages"].([]any)
		if len(msgs) != 4 || msgs[3].(map[string]any)["content"] != "done" {
			t.Fatalf("state on A: %v", msgs)
		}
		_, run := getJSON(ca, "/api/threads/t-ab/runs/"+rid)
		if run["status"] != "success" {
			t.Errorf("run on A: %v", run)
		}
	})

	t.Run("second concurrent run via the other replica is 409", func(t *testing.T) {
		resp := ca.do("POST", "/api/langgraph/threads/t-busy/runs/stream", runBody("slow please"))
		defer resp.Body.Close()
		rid := runIDOf(resp)
		s := newSSE(resp.Body)
		if f, err := s.next(); err != nil || f.Event != "metadata" {
			t.Fatalf("first frame %v %v", f, err)
		}
		conflict := cb.do("POST", "/api/langgraph/threads/t-busy/runs/stream", runBody("hello"))
		conflict.Body.Close()
		if conflict.StatusCode != http.StatusConflict {
			t.Fatalf("second run via B: status %d, want 409", conflict.StatusCode)
		}
		// The same through A itself.
		conflict = ca.do("POST", "/api/langgraph/threads/t-busy/runs/stream", runBody("hello"))
		conflict.Body.Close()
		if conflict.StatusCode != http.StatusConflict {
			t.Fatalf("second run via A: status %d, want 409", conflict.StatusCode)
		}
		waitFor(t, 10*time.Second, "the run to be recorded", func() bool {
			_, run := getJSON(cb, "/api/threads/t-busy/runs/"+rid)
			return run["status"] == "running"
		})
		// Cancel through B: A's run stops and its stream ends.
		cancel := cb.do("POST", "/api/threads/t-busy/runs/"+rid+"/cancel?wait=1", nil)
		cancel.Body.Close()
		if cancel.StatusCode != http.StatusNoContent {
			t.Fatalf("cancel via B: status %d", cancel.StatusCode)
		}
		rest, err := readStream(resp.Body)
		if err != nil || len(rest) == 0 || rest[len(rest)-1].Event != "end" {
			t.Fatalf("A's stream after the cancel: %v %v", eventsOf(rest), err)
		}
	})

	t.Run("MCP config change through A is used by B's next run", func(t *testing.T) {
		url := factsServer(t)
		ca.json("PUT", "/api/mcp/config", map[string]any{"mcp_servers": map[string]any{
			"facts": map[string]any{"enabled": true, "type": "http", "url": url}}}, 200, nil)
		var tools []map[string]any
		cb.json("GET", "/api/tools", nil, 200, &tools)
		if !slices.ContainsFunc(tools, func(tl map[string]any) bool { return tl["name"] == "facts_lookup" }) {
			t.Errorf("B's tools after the change through A lack facts_lookup: %v", tools)
		}
		resp := cb.do("POST", "/api/langgraph/threads/t-mcp/runs/stream", runBody("facts please"))
		frames, err := readStream(resp.Body)
		resp.Body.Close()
		if err != nil || checkFrames(frames, 1) != nil {
			t.Fatalf("run on B: %v %v", eventsOf(frames), err)
		}
		_, state := getJSON(cb, "/api/threads/t-mcp/state")
		msgs, _ := state["values"].(map[string]any)["messages"].([]any)
		if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "facts bound" {
			t.Errorf("B's run did not bind the MCP tool: %v", msgs)
		}
		if names := modeltest.ToolNames(m.LastRequest()); !slices.Contains(names, "facts_lookup") {
			t.Errorf("B's model request bound %v", names)
		}
	})

	t.Run("SIGKILL of B mid-run fails the run after the lease, keeps every checkpoint", func(t *testing.T) {
		resp := cb.do("POST", "/api/langgraph/threads/t-kill/runs/stream", runBody("slow work"))
		defer resp.Body.Close()
		rid := runIDOf(resp)
		// Wait for the tool step's checkpoint: the model is then stuck
		// in its 60 s answer.
		var before []string
		waitFor(t, 20*time.Second, "B's checkpoints after the tool step", func() bool {
			before = history(ca, "t-kill")
			_, st := getJSON(ca, "/api/threads/t-kill/state")
			msgs, _ := st["values"].(map[string]any)["messages"].([]any)
			return len(msgs) == 3 // human, AI with the ls call, tool result
		})
		// A client follows the run on A while B dies.
		join := ca.do("GET", "/api/threads/t-kill/runs/"+rid+"/stream", nil)
		defer join.Body.Close()
		if join.StatusCode != 200 {
			t.Fatalf("join on A: status %d", join.StatusCode)
		}
		killedAt := time.Now()
		b.kill()

		var run map[string]any
		waitFor(t, 15*time.Second, "the run to be failed", func() bool {
			_, run = getJSON(ca, "/api/threads/t-kill/runs/"+rid)
			return run["status"] == "error"
		})
		t.Logf("run failed %v after SIGKILL (lease 2 s)", time.Since(killedAt).Round(100*time.Millisecond))
		after := history(ca, "t-kill")
		for _, id := range before {
			if !slices.Contains(after, id) {
				t.Errorf("checkpoint %s lost: before %v, after %v", id, before, after)
			}
		}
		frames, err := readStream(join.Body)
		if err != nil || len(frames) < 2 || frames[len(frames)-1].Event != "end" || frames[len(frames)-2].Event != "error" {
			t.Errorf("follower on A: %v %v", eventsOf(frames), err)
		}
		// The thread is usable again, from its last checkpoint.
		again := ca.do("POST", "/api/langgraph/threads/t-kill/runs/stream", runBody("hello again"))
		frames, err = readStream(again.Body)
		again.Body.Close()
		if again.StatusCode != 200 || err != nil || checkFrames(frames, 1) != nil {
			t.Fatalf("run after the kill: status %d %v %v", again.StatusCode, eventsOf(frames), err)
		}
		_, st := getJSON(ca, "/api/threads/t-kill/state")
		msgs, _ := st["values"].(map[string]any)["messages"].([]any)
		if len(msgs) < 6 {
			t.Errorf("state after the next run holds %d messages, want the 3 kept + the new run's", len(msgs))
		}
	})
	if t.Failed() {
		t.Logf("A's log:\n%s\nB's log:\n%s", a.stderr(), b.stderr())
	}
}
