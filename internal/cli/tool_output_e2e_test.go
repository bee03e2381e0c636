package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// bigOutputLines is how many lines the dump tool returns: 64 bytes each,
// 12 MB in all.
const bigOutputLines = 187_500

// bigOutputLine is line i (1-based) of the dump tool's output.
func bigOutputLine(i int) string {
	return fmt.Sprintf("line %07d %s\n", i, strings.Repeat("x", 51))
}

// startBigMCP serves, over streamable HTTP on 127.0.0.1, one tool,
// "dump", whose result is one 12 MB text block.
func startBigMCP(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= bigOutputLines; i++ {
		b.WriteString(bigOutputLine(i))
	}
	text := b.String()
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "dump", Description: "Dump the whole log."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// startServeProcess runs `antler serve` as its own process and returns
// its base URL and pid.
func startServeProcess(t *testing.T, cfg, home string) (string, int) {
	t.Helper()
	cmd := antlerCmd(t, "--config", cfg, "--home", home, "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addrRE := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return m[1], cmd.Process.Pid
		}
	}
	t.Fatal("serve did not start")
	return "", 0
}

// procStatusKB reads a field (VmRSS, VmHWM) of /proc/<pid>/status in KiB,
// or -1 where there is no /proc.
func procStatusKB(pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n
		}
	}
	return -1
}

// dirBytes sums the sizes of the files directly in dir whose names start
// with prefix.
func dirBytes(t *testing.T, dir, prefix string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), prefix) && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// raceBuild reports whether this binary (and so the serve process it
// starts) was built with the race detector.
func raceBuild() bool {
	info, ok := debug.ReadBuildInfo()
	return ok && slices.ContainsFunc(info.Settings, func(s debug.BuildSetting) bool { return s.Key == "-race" && s.Value == "true" })
}

// TestE2EToolOutputBudget_twelveMegabyteMCPResult is issue 20's
// acceptance run: the scripted model calls an MCP tool (a real server
// over streamable HTTP) that returns 12 MB of text, then reads lines
// from the middle of the saved output with read_file, through `antler
// serve` in its own process. The result must contribute under 20 KB to
// the next model request, the run's SSE stream must total under 1 MB,
// the database must grow under 2 MB, and read_file must return the
// middle lines; serve's peak RSS is logged.
func TestE2EToolOutputBudget_twelveMegabyteMCPResult(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 12 MB through a real MCP server and antler serve")
	}
	mcpURL := startBigMCP(t)
	var mu sync.Mutex
	var toolMsg, readMsg model.Message
	pathRE := regexp.MustCompile(`saved to (/mnt/user-data/outputs/\.tool-results/\S+\.txt) \(`)
	const from, to = 93_750, 93_752
	srv := modeltest.NewServer(t,
		modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c1", "big_dump", `{}`)}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			mu.Lock()
			defer mu.Unlock()
			toolMsg = modeltest.LastMessage(req)
			m := pathRE.FindStringSubmatch(toolMsg.Content)
			if m == nil {
				return modeltest.Turn{Text: "no file reference"}
			}
			args, _ := json.Marshal(map[string]any{"description": "middle", "path": m[1], "start_line": from, "end_line": to})
			return modeltest.Turn{ToolCalls: []model.ToolCall{toolCall("c2", "read_file", string(args))}}
		}},
		modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
			mu.Lock()
			defer mu.Unlock()
			readMsg = modeltest.LastMessage(req)
			return modeltest.Turn{Text: "done"}
		}})
	cfg, home := e2eConfig(t, srv.URL)
	ext, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"big": map[string]any{"type": "http", "url": mcpURL}}})
	writeFile(t, filepath.Dir(cfg), "extensions_config.json", string(ext))

	url, pid := startServeProcess(t, cfg, home)
	dbBefore := dirBytes(t, home, "antler.db")
	rssBefore := procStatusKB(pid, "VmRSS")
	body := `{"input":{"messages":[{"type":"human","content":"dump the log"}]},"stream_mode":["values","messages-tuple","updates"]}`
	resp, err := http.Post(url+"/api/langgraph/threads/t1/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d %v", resp.StatusCode, err)
	}
	rssPeak := procStatusKB(pid, "VmHWM")
	dbAfter := dirBytes(t, home, "antler.db")

	mu.Lock()
	defer mu.Unlock()
	bodies := srv.Bodies()
	if len(bodies) < 2 {
		t.Fatalf("%d model requests, want 3 (SSE %d bytes)", len(bodies), len(stream))
	}
	growth := len(bodies[1]) - len(bodies[0])
	t.Logf("tool message %d bytes; request grew %d bytes; SSE %d bytes; database %d -> %d bytes; serve RSS %d KiB before, peak %d KiB",
		len(toolMsg.Content), growth, len(stream), dbBefore, dbAfter, rssBefore, rssPeak)
	if growth >= 20_000 || len(toolMsg.Content) >= 20_000 {
		t.Errorf("the 12 MB result added %d bytes to the next request (its message %d bytes), want under 20 KB", growth, len(toolMsg.Content))
	}
	if !strings.Contains(toolMsg.Content, "[Full big_dump output saved to /mnt/user-data/outputs/.tool-results/big_dump-") {
		t.Errorf("tool message is not a saved-output preview:\n%.500s", toolMsg.Content)
	}
	if len(stream) >= 1<<20 {
		t.Errorf("SSE stream %d bytes, want under 1 MB", len(stream))
	}
	if dbAfter-dbBefore >= 2<<20 {
		t.Errorf("database grew %d bytes, want under 2 MB", dbAfter-dbBefore)
	}
	// Issue 20's bound on the peak RSS rise is 100 MB; with the result
	// spooled to disk before the MCP SDK decodes its frame, 32 to 41 MB
	// are measured (docs/benchmarks.md). A race build roughly doubles the
	// rise (78 MB measured), so there the bound is 200 MB: still far
	// below what a 12 MB result kept in the state costs (507 MB before
	// the budget, several times that under the race detector).
	if limit := rssRiseLimit(); rssBefore > 0 && rssPeak-rssBefore >= limit {
		t.Errorf("serve's peak RSS rose %d KiB, want under %d KiB", rssPeak-rssBefore, limit)
	}
	want := bigOutputLine(from) + bigOutputLine(from+1) + bigOutputLine(to)
	if !strings.Contains(readMsg.Content, strings.TrimSuffix(want, "\n")) || strings.Contains(readMsg.Content, bigOutputLine(1)) {
		t.Errorf("read_file of lines %d-%d returned:\n%.1000s", from, to, readMsg.Content)
	}
}

// rssRiseLimit is the bound in KiB on serve's peak RSS rise over the 12 MB
// result: issue 20's 100 MB, or 200 MB in a race build.
func rssRiseLimit() int {
	if raceBuild() {
		return 200 << 10
	}
	return 100 << 10
}
