package mcptasks

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/store/sqlite"
	"github.com/antlerhq/antler/tool"
)

// downServer is a server whose status tool fails (an error result, as the
// MCP manager makes of a lost connection) or breaks the contract.
type downServer struct{ answer *tool.Result }

func (d downServer) ToolsOf(context.Context, []string) ([]*tool.Tool, error) {
	h := func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return d.answer, nil }
	return []*tool.Tool{{Name: "srv_status", Meta: map[string]string{"mcp_server": "srv", "mcp_tool": "status"}, Handler: h}}, nil
}

// A failing poll is retried with a doubling wait and counted, the
// thread told once its tracking degrades; an answer that breaks the
// contract fails the task.
func TestPollFailures(t *testing.T) {
	st, err := sqlite.OpenDir(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateThread(t.Context(), &store.Thread{ID: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	task := &store.MCPTask{ID: "a", UserID: "u", ThreadID: "t", Server: "srv", Toolset: "x", RemoteID: "r1",
		SubmitTool: "submit", StatusTool: "status", CancelTool: "cancel", Status: store.MCPTaskWorking, NextPollAt: now, CreatedAt: now}
	if err := st.CreateMCPTask(t.Context(), task, store.MCPTaskLimits{}); err != nil {
		t.Fatal(err)
	}
	clock := now
	srv := &downServer{answer: tool.Errorf("MCP server 'srv' closed the connection")}
	r, err := New(Options{Store: st, MCP: srv, Config: config.MCPTasks{MaxPollBackoffSeconds: 15}, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	for i, wantWait := range []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second} {
		if err := r.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		got, _ := st.GetMCPTask(t.Context(), "a")
		if got.PollErrors != i+1 || got.Status != store.MCPTaskWorking || !got.NextPollAt.Equal(clock.Add(wantWait)) || got.LastPollError == "" {
			t.Fatalf("after failure %d: errors %d, status %s, next poll in %v, error %q", i+1, got.PollErrors, got.Status, got.NextPollAt.Sub(clock), got.LastPollError)
		}
		// The third failure in a row (tracking_degraded_after_errors) makes
		// the thread's notice due, once.
		if noticed := !got.NotifyDueAt.IsZero(); noticed != (i == 2) {
			t.Fatalf("after failure %d: notice due %v", i+1, noticed)
		}
		clock = got.NextPollAt
	}
	srv.answer = tool.Text("done, but only in text")
	if err := r.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetMCPTask(t.Context(), "a")
	if got.Status != store.MCPTaskFailed || got.PollErrors != 0 || got.Error == "" {
		t.Errorf("after a broken answer: %+v", got)
	}
}
