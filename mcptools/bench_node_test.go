package mcptools_test

import (
	"fmt"
	"testing"

	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/tool"
)

// BenchmarkNodeFirstCall measures the first call of a new thread to a
// real Node stdio server (testdata/peers): each op starts the thread's
// process and makes one call; the resident memory of that process tree
// is reported as rss-MB. See docs/benchmarks.md.
func BenchmarkNodeFirstCall(b *testing.B) {
	servers := []struct{ pkg, tool, args string }{
		{"server-memory", "read_graph", `{}`},
		{"server-filesystem", "list_allowed_directories", `{}`},
		{"server-everything", "echo", `{"message":"x"}`},
	}
	for _, s := range servers {
		b.Run(s.pkg, func(b *testing.B) {
			node, script := npmServer(b, s.pkg)
			args := []string{script}
			if s.pkg == "server-filesystem" {
				args = append(args, b.TempDir())
			}
			var rss int64
			ext := parseExt(b, `{"n": `+stdioJSON(node, args, nil)+`}`)
			m := mcptools.New(mcptools.Options{Extensions: mcptools.Static(ext),
				ProcessRSS: func(pid int) (int64, bool) { r, ok := mcptools.TreeRSS(pid); rss = r; return r, ok }})
			defer m.Close()
			tools, err := m.Tools(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			var tl *tool.Tool
			for _, x := range tools {
				if x.Meta[mcptools.MetaTool] == s.tool {
					tl = x
				}
			}
			if tl == nil {
				b.Fatalf("no tool %s", s.tool)
			}
			i := 0
			for b.Loop() {
				i++
				r, err := tl.Handler(b.Context(), &tool.Call{UserID: "u", ThreadID: fmt.Sprint("t", i)}, []byte(s.args))
				if err != nil || r.IsError {
					b.Fatal(err, r)
				}
			}
			b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
		})
	}
}
