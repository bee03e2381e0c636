package toolset_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/toolset"
)

// benchSetup builds an assembler with 20 config tools and a cached MCP
// source of 1,000 tools across 10 servers, labelled with their source as
// mcptools labels them.
func benchSetup(b *testing.B) (*toolset.Assembler, []*tool.Tool, toolset.Options) {
	return benchSetupLabels(b, true)
}

func benchSetupLabels(b *testing.B, labelled bool) (*toolset.Assembler, []*tool.Tool, toolset.Options) {
	var yaml strings.Builder
	yaml.WriteString(baseConfig + "tools:\n")
	reg := fakeRegistry(nil)
	for i := range 20 {
		fmt.Fprintf(&yaml, "  - {name: x, group: g%d, use: fake:x}\n", i%4)
	}
	cfg := mustConfig(b, yaml.String())
	var mcpTools []*tool.Tool
	for s := range 10 {
		for i := range 100 {
			t := fakeTool(fmt.Sprintf("server%d_tool%d", s, i))
			t.Meta = map[string]string{"mcp_server": fmt.Sprintf("server%d", s)}
			if labelled {
				t.Meta[tool.MetaSource] = string(toolset.SourceMCP)
			}
			mcpTools = append(mcpTools, t)
		}
	}
	a := &toolset.Assembler{Registry: reg, Env: &toolset.Env{Config: cfg}, Builtins: allBuiltins, MCP: &fakeMCP{tools: mcpTools}}
	return a, mcpTools, toolset.Options{IncludeMCP: true, SubagentEnabled: true}
}

// BenchmarkAssemble measures a per-run assembly with 20 config tools and
// 1,000 cached MCP tools. The Floor sub-benchmark only copies the same
// slices into a fresh entry list: the least any assembly can cost.
func BenchmarkAssemble(b *testing.B) {
	b.Run("Assemble", func(b *testing.B) {
		a, _, opts := benchSetup(b)
		ctx := b.Context()
		if _, err := a.Assemble(ctx, opts); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			ts, err := a.Assemble(ctx, opts)
			if err != nil || len(ts.Entries) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("Floor", func(b *testing.B) {
		a, mcpTools, opts := benchSetup(b)
		ts, err := a.Assemble(b.Context(), opts)
		if err != nil {
			b.Fatal(err)
		}
		cached := ts.Entries[:len(ts.Entries)-len(mcpTools)]
		b.ReportAllocs()
		for b.Loop() {
			entries := make([]toolset.Entry, 0, len(cached)+len(mcpTools))
			entries = append(entries, cached...)
			for _, t := range mcpTools {
				entries = append(entries, toolset.Entry{Tool: t, Source: toolset.SourceMCP, Group: t.Meta["mcp_server"]})
			}
			if len(slices.Clip(entries)) == 0 {
				b.Fatal("empty")
			}
		}
	})
	for _, c := range []struct {
		name     string
		labelled bool
	}{{"Uncached", true}, {"UncachedUnlabelled", false}} {
		b.Run(c.name, func(b *testing.B) { benchUncached(b, c.labelled) })
	}
}

// benchUncached hands the assembler a new MCP slice each time, which
// defeats its memo: the cost when a server's tool list changed. Without
// the source label (a source other than mcptools) every tool is copied
// to carry it.
func benchUncached(b *testing.B, labelled bool) {
	{
		a, mcpTools, opts := benchSetupLabels(b, labelled)
		src := &fakeMCP{}
		a.MCP = src
		b.ReportAllocs()
		for b.Loop() {
			src.tools = slices.Clone(mcpTools)
			if _, err := a.Assemble(b.Context(), opts); err != nil {
				b.Fatal(err)
			}
		}
	}
}
