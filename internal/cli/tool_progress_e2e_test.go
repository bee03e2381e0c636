package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// progressMCP serves, over streamable HTTP on 127.0.0.1, one tool,
// "work", that sends three notifications/progress and then waits for
// release (closed by the test once it saw the three events: the client
// handles notifications asynchronously, so a result sent at once could
// overtake them) before answering "done".
type progressMCP struct {
	url     string
	release chan struct{}
	once    sync.Once
}

func startProgressMCP(t *testing.T) *progressMCP {
	t.Helper()
	p := &progressMCP{release: make(chan struct{})}
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "work", Description: "Do slow work."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			if tok == nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no progress token"}}}, nil, nil
			}
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok,
					Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
			select {
			case <-p.release:
			case <-ctx.Done():
			case <-time.After(time.Minute): // a test that never releases fails on its count
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	t.Cleanup(p.releaseNow)
	p.url = hs.URL
	return p
}

func (p *progressMCP) releaseNow() { p.once.Do(func() { close(p.release) }) }

// progressConfig is a config with the scripted model at url and the
// progress server as MCP server "slow".
func progressConfig(t *testing.T, url string, p *progressMCP) (cfg, home string) {
	cfg, home = e2eConfig(t, url)
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"slow": map[string]any{"type": "http", "url": p.url}}})
	writeFile(t, filepath.Dir(cfg), "extensions_config.json", string(ext))
	return cfg, home
}

var wantProgress = []map[string]any{
	{"name": "slow_work", "server": "slow", "tool": "work", "progress": 1.0, "total": 3.0, "message": "step 1"},
	{"name": "slow_work", "server": "slow", "tool": "work", "progress": 2.0, "total": 3.0, "message": "step 2"},
	{"name": "slow_work", "server": "slow", "tool": "work", "progress": 3.0, "total": 3.0, "message": "step 3"},
}

// withoutElapsed drops elapsed_ms (a time) from progress payloads.
func withoutElapsed(ps []map[string]any) []map[string]any {
	for _, p := range ps {
		if _, ok := p["elapsed_ms"].(float64); !ok {
			p["elapsed_ms"] = "missing"
			continue
		}
		delete(p, "elapsed_ms")
	}
	return ps
}

// TestE2EToolProgress_runStream: `antler run --json` prints one
// tool_progress event per notifications/progress of an MCP server.
func TestE2EToolProgress_runStream(t *testing.T) {
	p := startProgressMCP(t)
	srv := modeltest.NewServer(t, modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "slow_work", `{}`)}}, modeltest.Turn{Text: "ok"})
	cfg, home := progressConfig(t, srv.URL, p)
	cmd := antlerCmd(t, "--config", cfg, "--home", home, "run", "--json", "--thread", "t1", "work")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type       string         `json:"type"`
			ToolCallID string         `json:"tool_call_id"`
			Data       map[string]any `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad event line %q: %v", sc.Text(), err)
		}
		if ev.Type == "tool_progress" {
			if ev.ToolCallID != "c1" {
				t.Errorf("progress event for call %q, want c1", ev.ToolCallID)
			}
			if got = append(got, ev.Data); len(got) == 3 {
				p.releaseNow()
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if diff := cmp.Diff(wantProgress, withoutElapsed(got)); diff != "" {
		t.Errorf("tool_progress events (-want +got):\n%s", diff)
	}
}

// TestE2EToolProgress_gatewayCustomEvents: the gateway streams each
// progress report as a custom frame {type: "tool_progress",
// tool_call_id, ...}, the shape of DeerFlow's custom events.
func TestE2EToolProgress_gatewayCustomEvents(t *testing.T) {
	p := startProgressMCP(t)
	srv := modeltest.NewServer(t, modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "slow_work", `{}`)}}, modeltest.Turn{Text: "ok"})
	cfg, home := progressConfig(t, srv.URL, p)
	url, _ := startServeProcess(t, cfg, home)
	body := `{"input":{"messages":[{"type":"human","content":"work"}]},"stream_mode":["values","custom"]}`
	resp, err := http.Post(url+"/api/langgraph/threads/t1/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []map[string]any
	event := ""
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "custom":
			var frame map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &frame); err != nil {
				t.Fatalf("custom frame %q: %v", line, err)
			}
			if frame["type"] != "tool_progress" {
				continue
			}
			if frame["tool_call_id"] != "c1" {
				t.Errorf("frame for call %v, want c1", frame["tool_call_id"])
			}
			delete(frame, "type")
			delete(frame, "tool_call_id")
			if got = append(got, frame); len(got) == 3 {
				p.releaseNow()
			}
		}
	}
	if diff := cmp.Diff(wantProgress, withoutElapsed(got)); diff != "" {
		t.Errorf("custom tool_progress frames (-want +got):\n%s", diff)
	}
}
