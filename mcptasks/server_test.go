package mcptasks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
)

// reportServer is a real MCP server (the Go SDK's, over streamable HTTP
// on 127.0.0.1) with one task toolset: submit_report, report_status and
// cancel_report, answering in structuredContent as the contract asks.
type reportServer struct {
	url string

	mu      sync.Mutex
	next    int
	tasks   map[string]*remoteTask
	polls   map[string]int // status calls per task id
	cancels map[string]int
}

type remoteTask struct {
	status string
	result any
}

type submitIn struct {
	Topic string `json:"topic" jsonschema:"what the report is about"`
}

type taskIn struct {
	TaskID string `json:"task_id"`
}

type submitOut struct {
	TaskID string `json:"task_id"`
	Status string `json:"status"`
}

type statusOut struct {
	TaskID    string `json:"task_id"`
	Status    string `json:"status"`
	Result    any    `json:"result,omitempty"`
	Error     string `json:"error,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
}

func newReportServer(t *testing.T) *reportServer {
	t.Helper()
	rs := &reportServer{tasks: map[string]*remoteTask{}, polls: map[string]int{}, cancels: map[string]int{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "reports", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "submit_report", Description: "Write a report."}, rs.submit)
	mcp.AddTool(srv, &mcp.Tool{Name: "report_status", Description: "Status of a report."}, rs.status)
	mcp.AddTool(srv, &mcp.Tool{Name: "cancel_report", Description: "Cancel a report."}, rs.cancel)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "An ordinary tool."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, struct{}{}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	rs.url = hs.URL
	return rs
}

func (rs *reportServer) submit(_ context.Context, _ *mcp.CallToolRequest, in submitIn) (*mcp.CallToolResult, submitOut, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if in.Topic == "refuse" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "topic not allowed"}}}, submitOut{}, nil
	}
	rs.next++
	id := fmt.Sprintf("remote-%d", rs.next)
	if in.Topic == "long id" {
		id = strings.Repeat("x", 300)
	}
	rs.tasks[id] = &remoteTask{status: "running"}
	return nil, submitOut{TaskID: id, Status: "running"}, nil
}

func (rs *reportServer) status(_ context.Context, _ *mcp.CallToolRequest, in taskIn) (*mcp.CallToolResult, statusOut, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.polls[in.TaskID]++
	rt, ok := rs.tasks[in.TaskID]
	if !ok {
		return nil, statusOut{TaskID: in.TaskID, Status: "failed", ErrorCode: "task_not_found"}, nil
	}
	return nil, statusOut{TaskID: in.TaskID, Status: rt.status, Result: rt.result}, nil
}

func (rs *reportServer) cancel(_ context.Context, _ *mcp.CallToolRequest, in taskIn) (*mcp.CallToolResult, statusOut, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.cancels[in.TaskID]++
	if rt, ok := rs.tasks[in.TaskID]; ok && rt.status == "running" {
		rt.status = "cancelled"
	}
	return nil, statusOut{TaskID: in.TaskID, Status: "cancelled"}, nil
}

// finish completes a remote task with result.
func (rs *reportServer) finish(id string, result any) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.tasks[id].status, rs.tasks[id].result = "completed", result
}

func (rs *reportServer) counts() (polls, cancels map[string]int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	polls, cancels = map[string]int{}, map[string]int{}
	for k, v := range rs.polls {
		polls[k] = v
	}
	for k, v := range rs.cancels {
		cancels[k] = v
	}
	return polls, cancels
}

// extensions is the extensions file declaring rs's toolset.
func (rs *reportServer) extensions(t *testing.T) *config.Extensions {
	t.Helper()
	doc := `{"mcpServers": {"reports": {"type": "http", "url": "` + rs.url + `", "task_toolsets": [
		{"name": "Quarterly report", "submit_tool": "submit_report", "status_tool": "report_status", "cancel_tool": "cancel_report"}]}}}`
	ext, err := config.ParseExtensions("extensions_config.json", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ext
}

// manager is an MCP manager of rs, closed with the test.
func (rs *reportServer) manager(t *testing.T) (*mcptools.Manager, mcptools.ExtensionsSource) {
	t.Helper()
	src := mcptools.Static(rs.extensions(t))
	m := mcptools.New(mcptools.Options{Extensions: src})
	t.Cleanup(func() { m.Close() })
	return m, src
}
