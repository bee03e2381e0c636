package toolset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/toolset"
)

// leadOptions and taskOptions are the assembly options of a lead agent
// with subagents and of one of its subagent tasks: they differ, so an
// assembler that serves both misses its one-entry cache on every call.
var (
	leadOptions = toolset.Options{IncludeMCP: true, SubagentEnabled: true, ModelName: "plain"}
	taskOptions = toolset.Options{IncludeMCP: true, SubagentEnabled: false, ModelName: "eyes"}
)

// BenchmarkAssembleAsRunsDo measures assemblies as runs make them, beside
// the cached figure of BenchmarkAssemble:
//
//   - alternating: lead and task options in turn over 20 config tools and
//     1,000 MCP tools from a fake source, so that each call misses the
//     one-entry cache (what a run pays when the previous assembly had
//     other options);
//   - mcp-manager, mcp-manager-alternating: the same with the real MCP
//     source, an mcptools.Manager over ten in-memory go-sdk servers of
//     100 tools each, configured by an extensions file on disk that every
//     call checks through config.ExtensionsCache; first with the same
//     options each call, then alternating.
func BenchmarkAssembleAsRunsDo(b *testing.B) {
	b.Run("alternating", func(b *testing.B) {
		a, _, _ := benchSetup(b)
		assembleAlternating(b, a)
	})
	b.Run("mcp-manager", func(b *testing.B) {
		a := managerAssembler(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Assemble(b.Context(), leadOptions); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp-manager-alternating", func(b *testing.B) {
		assembleAlternating(b, managerAssembler(b))
	})
}

func assembleAlternating(b *testing.B, a *toolset.Assembler) {
	b.Helper()
	opts := []toolset.Options{leadOptions, taskOptions}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ts, err := a.Assemble(b.Context(), opts[i%2])
		if err != nil || len(ts.Entries) < 1000 {
			b.Fatal(err)
		}
		i++
	}
}

// managerAssembler is benchSetup's assembler with an mcptools.Manager as
// its MCP source: ten in-memory servers of 100 tools, named in an
// extensions file written to a temporary folder, discovered once.
func managerAssembler(b *testing.B) *toolset.Assembler {
	b.Helper()
	a, _, _ := benchSetup(b)
	servers := map[string]*mcp.Server{}
	var ext strings.Builder
	ext.WriteString(`{"mcpServers": {`)
	for s := range 10 {
		name := fmt.Sprintf("server%d", s)
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		for i := range 100 {
			srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool%d", i), Description: fmt.Sprintf("Tool %d of %s.", i, name),
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
		servers[name] = srv
		if s > 0 {
			ext.WriteString(",")
		}
		fmt.Fprintf(&ext, `%q: {"type": "http", "url": "http://127.0.0.1:1/unused"}`, name)
	}
	ext.WriteString("}}")
	path := filepath.Join(b.TempDir(), "extensions_config.json")
	if err := os.WriteFile(path, []byte(ext.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	// The extensions cache re-reads a file written less than 2 s before
	// its read (config's settleTime); a real file is older than that.
	time.Sleep(2100 * time.Millisecond)
	dial := func(ctx context.Context, s config.MCPServer) (mcp.Transport, error) {
		srv, ok := servers[s.Name]
		if !ok {
			return nil, nil
		}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	m := mcptools.New(mcptools.Options{Extensions: config.NewExtensionsCache(path), Dial: dial})
	b.Cleanup(func() { _ = m.Close() })
	tools, err := m.Tools(b.Context())
	if err != nil || len(tools) != 1000 {
		b.Fatalf("discovery: %d tools, %v", len(tools), err)
	}
	a.MCP = m
	return a
}
