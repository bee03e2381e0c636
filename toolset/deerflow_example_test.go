package toolset

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/community/browser"
	"github.com/antlerhq/antler/config"
)

// TestDeerFlowExampleToolsAssemble loads the DeerFlow-style example config
// and checks that its default tool set (web_search, web_fetch,
// image_search and the sandbox tools) resolves through DefaultRegistry
// with no unknown use string, and that Assemble binds them.
func TestDeerFlowExampleToolsAssemble(t *testing.T) {
	path := filepath.Join("..", "config", "testdata", "deerflow-config.example.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(path, data, func(k string) (string, bool) { return "test-" + k, true })
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var names []string
	for _, e := range cfg.Tools {
		names = append(names, e.Name)
	}
	want := []string{"web_search", "web_fetch", "image_search", "ls", "read_file", "glob", "grep", "write_file", "str_replace", "bash"}
	if d := cmp.Diff(want, names); d != "" {
		t.Fatalf("example tool set (-want +got):\n%s", d)
	}

	reg := DefaultRegistry()
	env := &Env{Config: cfg, Home: t.TempDir()}
	for _, e := range cfg.Tools {
		tl, err := reg.BuildTool(t.Context(), env, e)
		if err != nil {
			t.Errorf("tools[%d] %s (%s): %v", e.Index, e.Name, e.Use, err)
			continue
		}
		if tl.Name != e.Name {
			t.Errorf("tools[%d]: use %s builds %q, want %q", e.Index, e.Use, tl.Name, e.Name)
		}
	}

	a := &Assembler{Registry: reg, Env: env}
	ts, err := a.Assemble(t.Context(), Options{})
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	for _, n := range want {
		if n == "bash" && !cfg.Sandbox.AllowHostBash {
			continue // dropped by the host-bash gate, not unknown
		}
		if !slices.Contains(ts.Names(), n) {
			t.Errorf("assembled tools %v lack %s", ts.Names(), n)
		}
	}
}

// TestCommunityUses checks every community use string builds its tool,
// and that options are decoded strictly.
func TestCommunityUses(t *testing.T) {
	reg := DefaultRegistry()
	env := &Env{Home: t.TempDir()}
	uses := map[string]string{
		"deerflow.community.ddg_search.tools:web_search_tool": "web_search",
		"deerflow.community.tavily.tools:web_search_tool":     "web_search",
		"deerflow.community.searxng.tools:web_search_tool":    "web_search",
		"deerflow.community.brave.tools:web_search_tool":      "web_search",
		"antler:web_search": "web_search",
		"deerflow.community.jina_ai.tools:web_fetch_tool": "web_fetch",
		"deerflow.community.tavily.tools:web_fetch_tool":  "web_fetch",
		"deerflow.community.searxng.tools:web_fetch_tool": "web_fetch",
		"antler:web_fetch": "web_fetch",
		"deerflow.community.image_search.tools:image_search_tool": "image_search",
		"deerflow.community.brave.tools:image_search_tool":        "image_search",
		"antler:image_search":                                  "image_search",
		"deerflow.community.serper.tools:image_search_tool":    "image_search",
		"deerflow.community.infoquest.tools:image_search_tool": "image_search",
	}
	for _, p := range []string{"exa", "serper", "firecrawl", "fastcrw", "groundroute", "infoquest"} {
		uses["deerflow.community."+p+".tools:web_search_tool"] = "web_search"
	}
	for _, p := range []string{"exa", "firecrawl", "fastcrw", "groundroute", "infoquest", "crawl4ai", "browserless"} {
		uses["deerflow.community."+p+".tools:web_fetch_tool"] = "web_fetch"
	}
	for use, name := range uses {
		tl, err := reg.BuildTool(t.Context(), env, config.ToolEntry{Name: name, Use: use, Options: map[string]any{"max_results": 3, "timeout": 10}})
		if err != nil {
			// max_results is not a web_fetch key.
			if name == "web_fetch" {
				tl, err = reg.BuildTool(t.Context(), env, config.ToolEntry{Name: name, Use: use, Options: map[string]any{"timeout": 10}})
			}
			if err != nil {
				t.Errorf("%s: %v", use, err)
				continue
			}
		}
		if tl.Name != name {
			t.Errorf("%s builds %q, want %q", use, tl.Name, name)
		}
	}
	for _, bad := range []config.ToolEntry{
		{Name: "web_fetch", Use: "antler:web_fetch", Options: map[string]any{"max_chars": "lots"}},
		{Name: "web_fetch", Use: "antler:web_fetch", Options: map[string]any{"provider": "carrier-pigeon"}},
		{Name: "web_search", Use: "antler:web_search", Options: map[string]any{"max_resluts": 3}},
		{Name: "image_search", Use: "antler:image_search", Options: map[string]any{"provider": "tavily"}},
	} {
		if _, err := reg.BuildTool(t.Context(), env, bad); err == nil {
			t.Errorf("%s %v: want a configuration error", bad.Use, bad.Options)
		}
	}
}

// TestDeerFlowExampleEveryTool builds every tools[] entry of DeerFlow's
// config.example.yaml with all of them uncommented (testdata holds its
// tools section): each use string resolves and its options decode, and
// Assemble binds one tool per name.
func TestDeerFlowExampleEveryTool(t *testing.T) {
	path := filepath.Join("testdata", "deerflow-tools-uncommented.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) (string, bool) {
		if k == "HTTPS_PROXY" {
			return "http://127.0.0.1:3128", true
		}
		return "test-" + k, true
	}
	cfg, err := config.Parse(path, data, getenv)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	reg := DefaultRegistry()
	browsers := browser.NewManager(browser.ManagerOptions{})
	t.Cleanup(func() { _ = browsers.Close() })
	env := &Env{Config: cfg, Home: t.TempDir(), Browser: browsers}
	uses := map[string]bool{}
	var tools []config.ToolEntry
	for _, e := range cfg.Tools {
		uses[e.Use] = true
		tools = append(tools, e)
		tl, err := reg.BuildTool(t.Context(), env, e)
		if err != nil {
			t.Errorf("tools[%d] %s (%s): %v", e.Index, e.Name, e.Use, err)
			continue
		}
		if tl.Name != e.Name {
			t.Errorf("tools[%d]: use %s builds %q, want %q", e.Index, e.Use, tl.Name, e.Name)
		}
	}
	if len(uses) < 35 {
		t.Errorf("the example has %d use strings; the testdata lost entries", len(uses))
	}
	cfg.Tools = tools
	a := &Assembler{Registry: reg, Env: env}
	ts, err := a.Assemble(t.Context(), Options{})
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	for _, n := range []string{"web_search", "web_fetch", "web_capture", "image_search", "ls",
		"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_get_text",
		"browser_back", "browser_screenshot", "browser_close"} {
		if !slices.Contains(ts.Names(), n) {
			t.Errorf("assembled tools %v lack %s", ts.Names(), n)
		}
	}
}
