package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// BenchmarkCall compares one echo call through Antler's MCP tool with the
// same call on a bare go-sdk ClientSession, against the same in-memory
// server, in one run. See docs/benchmarks.md.
func BenchmarkCall(b *testing.B) {
	srv := newTestServer()
	args := json.RawMessage(`{"message":"hello"}`)

	b.Run("bare", func(b *testing.B) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(b.Context(), st, nil); err != nil {
			b.Fatal(err)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cs, err := c.Connect(b.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: mcptools.DefaultProtocolVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			r, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "echo", Arguments: args})
			if err != nil || r.IsError {
				b.Fatal(err)
			}
		}
	})

	b.Run("antler", func(b *testing.B) {
		m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(parseExt(b, `{"mem": `+memServerJSON("")+`}`)), Dial: memServers{"mem": srv}.dial})
		defer m.Close()
		tools, err := m.Tools(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		echo := tools[0]
		call := &tool.Call{ID: "c", ThreadID: "t", UserID: "u"}
		b.ReportAllocs()
		for b.Loop() {
			r, err := echo.Handler(b.Context(), call, args)
			if err != nil || r.IsError {
				b.Fatal(err, r)
			}
		}
	})
}

// BenchmarkCallInterleaved alternates the two calls of BenchmarkCall in
// one loop, so that load changes on a shared machine hit both equally, and
// reports each one's time per call and their ratio.
func BenchmarkCallInterleaved(b *testing.B) {
	srv := newTestServer()
	args := json.RawMessage(`{"message":"hello"}`)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(b.Context(), st, nil); err != nil {
		b.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(b.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: mcptools.DefaultProtocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(parseExt(b, `{"mem": `+memServerJSON("")+`}`)), Dial: memServers{"mem": srv}.dial})
	defer m.Close()
	tools, err := m.Tools(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	echo, call := tools[0], &tool.Call{ID: "c", ThreadID: "t", UserID: "u"}
	var bare, antler time.Duration
	for b.Loop() {
		t0 := time.Now()
		if r, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil || r.IsError {
			b.Fatal(err)
		}
		t1 := time.Now()
		if r, err := echo.Handler(b.Context(), call, args); err != nil || r.IsError {
			b.Fatal(err)
		}
		bare, antler = bare+t1.Sub(t0), antler+time.Since(t1)
	}
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "bare-ns/call")
	b.ReportMetric(float64(antler.Nanoseconds())/float64(b.N), "antler-ns/call")
	b.ReportMetric(float64(antler)/float64(bare), "ratio")
}

// BenchmarkDiscoveryStdio discovers n stdio servers that each take 300 ms
// to start: concurrent discovery costs about the slowest server, not the
// sum.
func BenchmarkDiscoveryStdio(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			var entries []string
			for i := range n {
				entries = append(entries, fmt.Sprintf("%q: %s", fmt.Sprint("s", i),
					fakeServerJSON(b, "serve", `"env": {"`+fakeEnv+`": "serve", "FAKE_INIT_DELAY": "300ms"}`)))
			}
			ext := parseExt(b, "{"+strings.Join(entries, ",")+"}")
			for b.Loop() {
				m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext)})
				tools, err := m.Tools(context.Background())
				if err != nil || len(tools) != 5*n {
					b.Fatalf("%d tools, %v", len(tools), err)
				}
				b.StopTimer()
				m.Close()
				b.StartTimer()
			}
		})
	}
}
