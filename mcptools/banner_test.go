package mcptools_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A stdio server that prints a banner, a dotenv line, a JSON log record
// and a 300 KiB line on stdout before its first message and again between
// responses keeps working: the lines are skipped, and the first is logged
// once at warning level with the server's name and the line's beginning.
func TestStdioBanner_nonJSONLinesOnStdoutAreSkipped(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ext := parseExt(t, `{"chatty": `+fakeServerJSON(t, "serve", `"env": {"`+fakeEnv+`": "serve", "FAKE_BANNER": "1"}`)+`}`)
	m := newManager(t, mcptools.Options{Extensions: mcptools.Static(ext), Logger: logger})
	tools := toolsByName(t, m)
	noisy, echo := tools["chatty_noisy"], tools["chatty_echo"]
	if noisy == nil || echo == nil {
		t.Fatalf("tools %v: the server was dropped (logs: %s)", tools, logs.String())
	}
	for _, call := range []*tool.Call{{}, {UserID: "u", ThreadID: "t1"}} {
		if msg, isErr := callText(t, noisy, call, ""); isErr || msg != "quiet now" {
			t.Errorf("noisy (thread %q): %q", call.ThreadID, msg)
		}
		if msg, isErr := callText(t, echo, call, `{"message":"x"}`); isErr || msg != "Echo: x" {
			t.Errorf("echo after noise (thread %q): %q", call.ThreadID, msg)
		}
	}
	warn := "MCP server 'chatty' wrote a line on stdout that is not a JSON-RPC message; skipping it"
	if n := strings.Count(logs.String(), warn); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), `line="fake MCP server v1 ready"`) {
		t.Errorf("the warning does not show the line:\n%s", logs.String())
	}
	if len(logs.String()) > 4096 {
		t.Errorf("%d bytes of logs: the long line is not bounded", len(logs.String()))
	}
}
