package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// reportTasks is an MCP server (Go SDK, 127.0.0.1) whose one report task
// runs until finish is called.
type reportTasks struct {
	mu   sync.Mutex
	done bool
}

func (rt *reportTasks) finish() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.done = true
}

func (rt *reportTasks) serve(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "reports", Version: "1"}, nil)
	type in struct {
		Topic  string `json:"topic,omitempty"`
		TaskID string `json:"task_id,omitempty"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "submit_report", Description: "Write a report."},
		func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"task_id": "r1", "status": "running"}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "report_status", Description: "Status."},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, map[string]any, error) {
			rt.mu.Lock()
			defer rt.mu.Unlock()
			if rt.done {
				return nil, map[string]any{"task_id": a.TaskID, "status": "completed", "result": "the Q1 report is ready"}, nil
			}
			return nil, map[string]any{"task_id": a.TaskID, "status": "running"}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "cancel_report", Description: "Cancel."},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"task_id": a.TaskID, "status": "cancelled"}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return `{"mcpServers": {"reports": {"type": "http", "url": "` + hs.URL + `", "task_toolsets": [
		{"name": "Q1 report", "submit_tool": "submit_report", "status_tool": "report_status", "cancel_tool": "cancel_report"}]}}}`
}

// A task submitted by `antler run` is stored; `antler serve`, started
// later on the same home, polls it to its end, serves it on the task
// routes and tells the thread in a notice run.
func TestE2EBackgroundTaskSubmittedByRunPolledByServe(t *testing.T) {
	tasks := &reportTasks{}
	ext := tasks.serve(t)
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "reports_submit_report", `{"topic":"q1"}`)}},
		modeltest.Turn{Text: "The report is being written in the background."},
		modeltest.Turn{Text: "Good news: your Q1 report is ready."}) // the notice run
	cfg, home := e2eConfig(t, srv.URL)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("mcp_tasks: {enabled: true, poll_interval_seconds: 1}\n")
	f.Close()
	writeFile(t, filepath.Dir(cfg), "extensions_config.json", ext)

	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "run", "--thread", "t1", "write the q1 report")
	if code != 0 {
		t.Fatalf("run: exit %d: %s%s", code, out, errOut)
	}
	tasks.finish()

	url, stop := startServe(t, nil, "--config", cfg, "--home", home)
	defer stop()
	var list []map[string]any
	// The poller is asynchronous: wait for the task's end (a bound for
	// failure, not a timing assertion).
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(url + "/api/threads/t1/mcp-tasks")
		if err != nil {
			t.Fatal(err)
		}
		list = nil
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list) == 1 && list[0]["status"] == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(list) != 1 || list[0]["status"] != "completed" || list[0]["task_name"] != "Q1 report" {
		t.Fatalf("tasks of t1 = %v", list)
	}
	resp, err := http.Get(url + "/api/threads/t1/mcp-tasks/" + list[0]["task_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var detail map[string]any
	json.NewDecoder(resp.Body).Decode(&detail)
	resp.Body.Close()
	if detail["result"] != "the Q1 report is ready" {
		t.Errorf("detail = %v", detail)
	}
	// The end is told on the thread by a notice run (DeerFlow's
	// notification run) whose answer joins the thread.
	var state []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(url + "/api/threads/t1/state")
		if err != nil {
			t.Fatal(err)
		}
		state, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(state), "your Q1 report is ready") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(string(state), "your Q1 report is ready") || !strings.Contains(string(state), `"hide_from_ui":true`) {
		t.Errorf("thread t1 after the notice = %s", state)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exit = %d", code)
	}
}
