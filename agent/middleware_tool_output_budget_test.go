package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// The cases of DeerFlow's test_tool_output_budget_middleware.py,
// re-expressed: helpers, thresholds, exemptions, overrides, fallback,
// content blocks and model-request history. The synopsis and fallback
// texts themselves are pinned against DeerFlow's output in
// middleware_tool_output_golden_test.go.

const budgetUser, budgetThread = "u1", "t1"

// budgetLayout returns a layout in a temporary home and the paths of
// the test thread.
func budgetLayout(t *testing.T) (*vpath.Layout, vpath.ThreadPaths) {
	t.Helper()
	layout, err := vpath.New(vpath.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := layout.ThreadPaths(budgetUser, budgetThread)
	if err != nil {
		t.Fatal(err)
	}
	return layout, tp
}

// toolOutputConfig is DeerFlow's default section with mod applied.
func toolOutputConfig(mod func(*config.ToolOutput)) config.ToolOutput {
	c := config.Default().ToolOutput
	c.ExemptTools = slices.Clone(c.ExemptTools)
	if mod != nil {
		mod(&c)
	}
	return c
}

func budgetCall(name string) *tool.Call {
	return &tool.Call{ID: "tc-1", Name: name, ThreadID: budgetThread, UserID: budgetUser}
}

// runToolBudget passes res through the budget's tool middleware.
func runToolBudget(t *testing.T, b *ToolOutputBudget, call *tool.Call, res *tool.Result) *tool.Result {
	t.Helper()
	h := b.ToolMiddleware()(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) { return res, nil })
	out, err := h(t.Context(), call, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// savedFiles returns the files (not temporary ones) of the thread's
// tool-results folder, by name, with their content.
func savedFiles(t *testing.T, tp vpath.ThreadPaths) map[string]string {
	t.Helper()
	dir := filepath.Join(tp.Outputs, DefaultToolResultsDir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil // no folder (or none possible)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// blockOutputs makes the thread's outputs folder impossible to create:
// a regular file stands where it would be.
func blockOutputs(t *testing.T, tp vpath.ThreadPaths) {
	t.Helper()
	if err := os.MkdirAll(tp.UserData, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tp.Outputs, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSnapToLineBoundary(t *testing.T) {
	for _, c := range []struct {
		name      string
		text      string
		pos, want int
	}{
		{"snaps back to the newline", "line1\nline2\nline3", 14, 12},
		{"no newline in the second half", "abcdefghij", 8, 8},
		{"zero", "abc", 0, 0},
		{"past the end", "abc", 10, 10},
		{"counts characters", "你好\n世界你好世界", 5, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := snapEnd(c.text, charLen(c.text), c.pos); got != c.want {
				t.Errorf("snapEnd(%q, %d) = %d, want %d", c.text, c.pos, got, c.want)
			}
		})
	}
}

func TestSnapStartToLineBoundary(t *testing.T) {
	for _, c := range []struct {
		name      string
		text      string
		pos, want int
	}{
		{"snaps forward to the newline", "line1\nline2\nline3", 2, 6},
		{"no newline in the first half", "abcdefghij", 2, 2},
		{"zero", "a\nbc", 0, 0},
		{"past the end", "abc", 10, 10},
		{"counts characters", "你好世界\n你好世界你好世界", 1, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := snapStart(c.text, charLen(c.text), c.pos); got != c.want {
				t.Errorf("snapStart(%q, %d) = %d, want %d", c.text, c.pos, got, c.want)
			}
		})
	}
	t.Run("never moves backwards", func(t *testing.T) {
		text := "aaaa\n" + strings.Repeat("b", 20)
		for pos := 1; pos < len(text); pos++ {
			if got := snapStart(text, len(text), pos); got < pos {
				t.Fatalf("snapStart(%d) = %d", pos, got)
			}
		}
	})
}

func TestSanitizeToolName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"../../etc/passwd", "passwd"},
		{`..\..\windows\system32`, "__windows_system32"},
		{"bash", "bash"},
		{"", "unknown"},
		{"..", "unknown"},
	} {
		if got := sanitizeToolName(c.in); got != c.want {
			t.Errorf("sanitizeToolName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestToolResultStore_save(t *testing.T) {
	for _, c := range []struct {
		name, tool, subdir string
		prepare            func(t *testing.T, tp vpath.ThreadPaths)
		wantPrefix         string
		wantExt            string
		wantErr            bool
	}{
		{name: "bash output is a log", tool: "bash", wantPrefix: "/mnt/user-data/outputs/.tool-results/bash-", wantExt: ".log"},
		{name: "web_fetch output is a log", tool: "web_fetch", wantPrefix: "/mnt/user-data/outputs/.tool-results/web_fetch-", wantExt: ".log"},
		{name: "other tools write text", tool: "unknown_tool", wantPrefix: "/mnt/user-data/outputs/.tool-results/unknown_tool-", wantExt: ".txt"},
		{name: "traversal in the tool name is taken out", tool: "../../etc/passwd", wantPrefix: "/mnt/user-data/outputs/.tool-results/passwd-", wantExt: ".txt"},
		{name: "custom single-segment subdir", tool: "t", subdir: "tool-output-cache", wantPrefix: "/mnt/user-data/outputs/tool-output-cache/t-", wantExt: ".txt"},
		{name: "absolute subdir is refused", tool: "t", subdir: "/etc/evil", wantErr: true},
		{name: "traversal subdir is refused", tool: "t", subdir: "../../../etc", wantErr: true},
		{name: "unwritable outputs folder", tool: "t", prepare: blockOutputs, wantErr: true},
		{name: "outputs symlinked out of the thread is refused", tool: "t", prepare: func(t *testing.T, tp vpath.ThreadPaths) {
			outside := t.TempDir()
			if err := os.MkdirAll(tp.UserData, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, tp.Outputs); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if entries, _ := os.ReadDir(outside); len(entries) > 0 {
					t.Errorf("wrote %v outside the thread", entries)
				}
			})
		}, wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			layout, tp := budgetLayout(t)
			if c.prepare != nil {
				c.prepare(t, tp)
			}
			s := toolResultStore{layout: layout, subdir: cmpOr(c.subdir, DefaultToolResultsDir)}
			vp, err := s.saveText(budgetUser, budgetThread, c.tool, toolResultExt(c.tool), "full content here")
			if c.wantErr {
				if err == nil {
					t.Fatalf("saved to %s, want an error", vp)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(vp, c.wantPrefix) || !strings.HasSuffix(vp, c.wantExt) || strings.Contains(vp, "../") {
				t.Errorf("virtual path %q, want %s...%s", vp, c.wantPrefix, c.wantExt)
			}
			host, err := layout.Resolve(budgetUser, budgetThread, vp, vpath.Read)
			if err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(host); err != nil || string(data) != "full content here" {
				t.Errorf("file %s: %q, %v", host, data, err)
			}
		})
	}
	t.Run("no layout or no thread", func(t *testing.T) {
		layout, _ := budgetLayout(t)
		for _, s := range []toolResultStore{{subdir: DefaultToolResultsDir}, {layout: layout, subdir: DefaultToolResultsDir}} {
			if vp, err := s.saveText(budgetUser, "", "t", "txt", "x"); err == nil {
				t.Errorf("saved to %s without a layout or thread", vp)
			}
		}
	})
	t.Run("repeated saves never overwrite each other", func(t *testing.T) {
		layout, tp := budgetLayout(t)
		s := toolResultStore{layout: layout, subdir: DefaultToolResultsDir}
		seen := map[string]bool{}
		for i := range 20 {
			vp, err := s.saveText(budgetUser, budgetThread, "bash", "log", string(rune('a'+i)))
			if err != nil {
				t.Fatal(err)
			}
			if seen[vp] {
				t.Fatalf("name %s used twice", vp)
			}
			seen[vp] = true
		}
		if files := savedFiles(t, tp); len(files) != 20 {
			t.Errorf("%d files, want 20 (and no temporary file left): %v", len(files), files)
		}
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestToolOutputBudget_trigger(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  func(*config.ToolOutput)
		tool string
		want int
	}{
		{"the smaller of the two thresholds", func(c *config.ToolOutput) { c.ExternalizeMinChars, c.FallbackMaxChars = 12000, 30000 }, "any_tool", 12000},
		{"a per-tool override", func(c *config.ToolOutput) {
			c.ExternalizeMinChars, c.FallbackMaxChars, c.ToolOverrides = 50000, 0, map[string]int{"sensitive": 100}
		}, "sensitive", 100},
		{"other tools keep the global threshold", func(c *config.ToolOutput) {
			c.ExternalizeMinChars, c.FallbackMaxChars, c.ToolOverrides = 50000, 0, map[string]int{"sensitive": 100}
		}, "other", 50000},
		{"a zero override leaves the fallback", func(c *config.ToolOutput) {
			c.ExternalizeMinChars, c.FallbackMaxChars, c.ToolOverrides = 50, 200, map[string]int{"bash": 0}
		}, "bash", 200},
		{"nothing when both are off", func(c *config.ToolOutput) { c.ExternalizeMinChars, c.FallbackMaxChars = 0, 0 }, "any", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewToolOutputBudget(ToolOutputBudgetOptions{Config: toolOutputConfig(c.cfg)})
			if got := b.trigger(c.tool); got != c.want {
				t.Errorf("trigger(%s) = %d, want %d", c.tool, got, c.want)
			}
		})
	}
}

// budgetCase is one tool result through the middleware.
type budgetCase struct {
	name     string
	cfg      func(*config.ToolOutput)
	tool     string
	res      *tool.Result
	noLayout bool                                     // no layout: nothing can be saved
	noThread bool                                     // the call has no thread
	prepare  func(t *testing.T, tp vpath.ThreadPaths) // before the call
	// same: the very result comes back.
	same bool
	// saved: the full output is in one file, whose virtual path the
	// text names.
	saved bool
	// want and notWant are substrings of the resulting text; maxChars
	// bounds it.
	want, notWant []string
	maxChars      int
	check         func(t *testing.T, out *tool.Result)
}

func TestToolOutputBudget_toolResults(t *testing.T) {
	x := func(n int) *tool.Result { return tool.Text(strings.Repeat("x", n)) }
	low := func(ext, fb int) func(*config.ToolOutput) {
		return func(c *config.ToolOutput) {
			c.ExternalizeMinChars, c.FallbackMaxChars, c.FallbackHeadChars, c.FallbackTailChars = ext, fb, 80, 40
			c.PreviewHeadChars, c.PreviewTailChars = 50, 30
		}
	}
	cases := []budgetCase{
		{name: "small output passes through", cfg: low(1000, 30000), tool: "bash", res: tool.Text("small output"), same: true},
		{name: "disabled budget passes through", cfg: func(c *config.ToolOutput) { c.Enabled, c.ExternalizeMinChars, c.FallbackMaxChars = false, 10, 20 },
			tool: "bash", res: x(50000), same: true},
		{name: "default section externalizes 40001 characters", tool: "remote_executor", res: x(40001), saved: true,
			want: []string{"[Full remote_executor output saved to /mnt/user-data/outputs/.tool-results/remote_executor-", "(40001 chars, ~10000 tokens)"}, maxChars: 5000},
		{name: "oversized output is saved to disk", cfg: low(100, 30000), tool: "remote_executor", res: x(500), saved: true,
			want: []string{"Full remote_executor output saved to", "read_file", "start_line and end_line"}},
		{name: "preview has the typed summary", cfg: low(50, 30000), tool: "web_search",
			res: tool.Text("HEADPART_" + strings.Repeat("m", 200) + "_TAILPART"), saved: true,
			want: []string{"[Full web_search output saved to", "Preview kind: text", "Text output", "HEADPART_"}},
		{name: "fallback without a layout", cfg: low(50, 200), tool: "mcp_tool", res: x(500), noLayout: true,
			want: []string{"omitted from mcp_tool output", "Persistent storage unavailable"}, maxChars: 200},
		{name: "fallback without a thread", cfg: func(c *config.ToolOutput) {
			c.ExternalizeMinChars, c.FallbackMaxChars, c.FallbackHeadChars, c.FallbackTailChars = 50, 500, 100, 50
		}, tool: "tool", res: x(1000), noThread: true, want: []string{"omitted"}, maxChars: 500},
		{name: "fallback when the disk write fails", cfg: low(50, 200), tool: "tool", res: x(500), prepare: blockOutputs,
			want: []string{"omitted from tool output"}, maxChars: 200},
		{name: "read_file is exempt", cfg: low(10, 50), tool: "read_file", res: x(100), same: true},
		{name: "read_file_tool is exempt", cfg: low(10, 50), tool: "read_file_tool", res: x(100), same: true},
		{name: "custom exempt tool", cfg: func(c *config.ToolOutput) { low(10, 50)(c); c.ExemptTools = []string{"my_tool"} },
			tool: "my_tool", res: x(100), same: true},
		{name: "custom exempt list replaces the default", cfg: func(c *config.ToolOutput) { low(10, 50)(c); c.ExemptTools = []string{"my_tool"} },
			tool: "read_file", res: x(100), saved: true},
		{name: "per-tool threshold", cfg: func(c *config.ToolOutput) {
			c.ExternalizeMinChars, c.ToolOverrides = 50000, map[string]int{"sensitive_tool": 100}
		}, tool: "sensitive_tool", res: x(500), saved: true, want: []string{"Full sensitive_tool output saved to"}},
		{name: "per-tool zero turns saving off", cfg: func(c *config.ToolOutput) {
			low(50, 200)(c)
			c.ToolOverrides = map[string]int{"bash": 0}
		}, tool: "bash", res: x(500), want: []string{"Persistent storage unavailable"}, maxChars: 200},
		{name: "state update and artifact are kept", cfg: low(50, 30000), tool: "present_files",
			res: &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: strings.Repeat("x", 200)}},
				Update: &thread.Update{Artifacts: []string{"/mnt/user-data/outputs/report.html"}}, Artifact: map[string]any{"k": "v"}, MessageID: "m1"},
			saved: true, want: []string{"Full present_files output saved to"},
			check: func(t *testing.T, out *tool.Result) {
				if out.Update == nil || !slices.Equal(out.Update.Artifacts, []string{"/mnt/user-data/outputs/report.html"}) ||
					out.MessageID != "m1" || out.Artifact == nil {
					t.Errorf("update %+v, message id %q, artifact %v", out.Update, out.MessageID, out.Artifact)
				}
			}},
		{name: "empty output passes through", cfg: low(10, 20), tool: "tool", res: tool.Text(""), same: true},
		{name: "exactly at the threshold passes through", cfg: low(100, 100), tool: "tool", res: x(100), same: true},
		{name: "one character over triggers", cfg: low(100, 30000), tool: "tool", res: x(101), saved: true},
		{name: "the threshold counts characters, not bytes", cfg: low(100, 30000), tool: "tool", res: tool.Text(strings.Repeat("你", 100)), same: true},
		{name: "Chinese content is saved whole", cfg: low(50, 30000), tool: "tool", res: tool.Text(strings.Repeat("你好世界", 50)), saved: true},
		// Results with images: TestToolOutputMedia_imageResultsAreNotBudgeted.
		{name: "MCP text blocks become one saved text", cfg: low(50, 30000), tool: "mcp_tool",
			res: &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: strings.Repeat("x", 200)}}}, saved: true,
			want: []string{"Full mcp_tool output saved to"}},
		{name: "several text blocks are joined and budgeted", cfg: func(c *config.ToolOutput) {
			c.ExternalizeMinChars, c.FallbackMaxChars, c.FallbackHeadChars, c.FallbackTailChars = 50, 500, 100, 50
		}, tool: "mcp_tool", noLayout: true,
			res:  &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: strings.Repeat("a", 300)}, {Type: tool.BlockText, Text: strings.Repeat("b", 300)}}},
			want: []string{"omitted"}, maxChars: 500},
		{name: "small text blocks pass through", cfg: low(1000, 30000), tool: "mcp_tool",
			res: &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "small result"}}}, same: true},
		{name: "a JSON block is budgeted as its text", cfg: low(50, 30000), tool: "api",
			res:   &tool.Result{Content: []tool.Block{{Type: tool.BlockJSON, JSON: json.RawMessage(`{"items":[` + strings.Repeat(`{"id":1},`, 20) + `{"id":2}]}`)}}},
			saved: true, want: []string{"Preview kind: json", "$.items: array length 21; first item object"}},
		{name: "error results are budgeted too", cfg: low(50, 30000), tool: "tool",
			res: tool.Errorf("Error: %s", strings.Repeat("failure ", 50)), saved: true,
			check: func(t *testing.T, out *tool.Result) {
				if !out.IsError {
					t.Error("lost IsError")
				}
				if meta, _ := out.Meta[ToolMetaKey].(map[string]any); meta["status"] != "error" {
					t.Errorf("classification %v, want the error's", out.Meta[ToolMetaKey])
				}
			}},
		{name: "classification comes from the original output", cfg: low(50, 30000), tool: "api",
			res: tool.Text(`{"error": "rate limit exceeded", "detail": "` + strings.Repeat("z", 200) + `"}`), saved: true,
			check: func(t *testing.T, out *tool.Result) {
				meta, _ := out.Meta[ToolMetaKey].(map[string]any)
				if meta["status"] != "error" || meta["error_type"] != "rate_limited" {
					t.Errorf("classification %v, want rate_limited from the original JSON", meta)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runBudgetCase(t, c) })
	}
}

func runBudgetCase(t *testing.T, c budgetCase) {
	layout, tp := budgetLayout(t)
	if c.prepare != nil {
		c.prepare(t, tp)
	}
	opts := ToolOutputBudgetOptions{Config: toolOutputConfig(c.cfg), Layout: layout}
	if c.noLayout {
		opts.Layout = nil
	}
	call := budgetCall(c.tool)
	if c.noThread {
		call.ThreadID = ""
	}
	original := c.res.TextContent()
	out := runToolBudget(t, NewToolOutputBudget(opts), call, c.res)
	if c.same {
		if out != c.res {
			t.Fatalf("result changed: %q", out.TextContent())
		}
		return
	}
	if out == c.res {
		t.Fatal("result unchanged")
	}
	if len(out.Content) != 1 || out.Content[0].Type != tool.BlockText {
		t.Fatalf("content %+v, want one text block", out.Content)
	}
	text := out.Content[0].Text
	files := savedFiles(t, tp)
	if c.saved {
		if len(files) != 1 {
			t.Fatalf("saved files %v, want one", slices.Collect(mapKeys(files)))
		}
		for name, data := range files {
			if data != original {
				t.Errorf("file %s holds %d bytes, want the %d of the output", name, len(data), len(original))
			}
			if vp := vpath.Outputs + "/" + DefaultToolResultsDir + "/" + name; !strings.Contains(text, vp) {
				t.Errorf("text does not name %s:\n%s", vp, text)
			}
		}
	} else if len(files) != 0 {
		t.Errorf("saved %v, want nothing", slices.Collect(mapKeys(files)))
	}
	for _, w := range c.want {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	for _, w := range c.notWant {
		if strings.Contains(text, w) {
			t.Errorf("text has %q:\n%s", w, text)
		}
	}
	if c.maxChars > 0 && charLen(text) > c.maxChars {
		t.Errorf("%d characters, more than %d", charLen(text), c.maxChars)
	}
	if c.check != nil {
		c.check(t, out)
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestToolOutputBudget_repeatedCallsKeepEveryOutput: two oversized
// results of one tool land in two files.
func TestToolOutputBudget_repeatedCallsKeepEveryOutput(t *testing.T) {
	layout, tp := budgetLayout(t)
	b := NewToolOutputBudget(ToolOutputBudgetOptions{Config: toolOutputConfig(nil), Layout: layout})
	for _, s := range []string{"first ", "second "} {
		runToolBudget(t, b, budgetCall("bash"), tool.Text(strings.Repeat(s, 3000)))
	}
	var got []string
	for name, data := range savedFiles(t, tp) {
		if !strings.HasPrefix(name, "bash-") || !strings.HasSuffix(name, ".log") {
			t.Errorf("file name %s, want bash-<id>.log", name)
		}
		got = append(got, data[:strings.IndexByte(data, ' ')])
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"first", "second"}, got); diff != "" {
		t.Errorf("saved outputs (-want +got):\n%s", diff)
	}
}

// TestToolOutputBudget_fromConfig: the section as config.Parse loads it,
// absent (on, DeerFlow's defaults) or partial.
func TestToolOutputBudget_fromConfig(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		wantExt    int
		wantHead   int
		wantOn     bool
	}{
		{"section absent", "config_version: 34\n", 12000, 2000, true},
		{"partial section", "tool_output:\n  externalize_min_chars: 5000\n  preview_head_chars: 500\n", 5000, 500, true},
		{"disabled", "tool_output:\n  enabled: false\n", 12000, 2000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("config.yaml", []byte(c.yaml), nil)
			if err != nil {
				t.Fatal(err)
			}
			b := NewToolOutputBudget(ToolOutputBudgetOptions{Config: cfg.ToolOutput})
			if b.cfg.ExternalizeMinChars != c.wantExt || b.cfg.PreviewHeadChars != c.wantHead || b.cfg.Enabled != c.wantOn ||
				!b.exempt["read_file"] || b.cfg.StorageSubdir != DefaultToolResultsDir || b.cfg.FallbackMaxChars != 30000 {
				t.Errorf("budget config %+v, exempt %v", b.cfg, b.exempt)
			}
		})
	}
}

func TestToolOutputBudget_modelRequests(t *testing.T) {
	fb := func(c *config.ToolOutput) {
		c.FallbackMaxChars, c.FallbackHeadChars, c.FallbackTailChars = 500, 100, 50
	}
	tm := func(name, content string) model.Message {
		return model.Message{Role: model.RoleTool, Name: name, ToolCallID: "tc-" + name, Content: content}
	}
	huge := strings.Repeat("h", MaxToolResultBytes+1000)
	for _, c := range []struct {
		name  string
		cfg   func(*config.ToolOutput)
		msgs  []model.Message
		same  bool
		check func(t *testing.T, got []model.Message)
	}{
		{name: "oversized history is truncated", cfg: fb, msgs: []model.Message{tm("tool", strings.Repeat("q", 1000))},
			check: func(t *testing.T, got []model.Message) {
				if !strings.Contains(got[0].Content, "omitted") || charLen(got[0].Content) > 500 {
					t.Errorf("content (%d chars): %q", charLen(got[0].Content), got[0].Content)
				}
			}},
		{name: "small history is untouched", cfg: func(c *config.ToolOutput) { c.FallbackMaxChars = 1000 },
			msgs: []model.Message{tm("tool", "small")}, same: true},
		{name: "exempt tools stay whole", cfg: func(c *config.ToolOutput) { c.FallbackMaxChars = 50 },
			msgs: []model.Message{tm("read_file", strings.Repeat("x", 200))}, same: true},
		{name: "other messages are kept", cfg: fb, msgs: []model.Message{
			{Role: model.RoleUser, Content: strings.Repeat("x", 2000)},
			{Role: model.RoleAssistant, Content: strings.Repeat("y", 2000)},
			tm("tool", strings.Repeat("z", 1000)),
		}, check: func(t *testing.T, got []model.Message) {
			if len(got[0].Content) != 2000 || len(got[1].Content) != 2000 || !strings.Contains(got[2].Content, "omitted") {
				t.Errorf("messages %d, %d, %q", len(got[0].Content), len(got[1].Content), got[2].Content)
			}
		}},
		{name: "the ceiling applies with the budget disabled", cfg: func(c *config.ToolOutput) { c.Enabled = false },
			msgs: []model.Message{tm("tool", huge)}, check: func(t *testing.T, got []model.Message) {
				if len(got[0].Content) > MaxToolResultBytes || !strings.Contains(got[0].Content, "bytes omitted") {
					t.Errorf("content %d bytes", len(got[0].Content))
				}
			}},
		{name: "the ceiling applies to exempt tools", msgs: []model.Message{tm("read_file", huge)},
			check: func(t *testing.T, got []model.Message) {
				if len(got[0].Content) > MaxToolResultBytes {
					t.Errorf("content %d bytes", len(got[0].Content))
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewToolOutputBudget(ToolOutputBudgetOptions{Config: toolOutputConfig(c.cfg)})
			req := &model.Request{Messages: c.msgs}
			before := slices.Clone(c.msgs)
			var got *model.Request
			h := b.ModelMiddleware()(func(_ context.Context, call *tool.ModelCall) (*model.Response, error) {
				got = call.Request
				return &model.Response{}, nil
			})
			if _, err := h(t.Context(), &tool.ModelCall{Request: req}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, req.Messages); diff != "" {
				t.Errorf("the original request changed (-before +after):\n%s", diff)
			}
			if c.same {
				if got != req {
					t.Error("request rebuilt, want the same request")
				}
				return
			}
			if got == req {
				t.Fatal("request not rewritten")
			}
			c.check(t, got.Messages)
		})
	}
}

// TestContainsLowered_matchesLoweringWhole: the piecewise search of the
// partial-result markers (which spares a copy of a large output) finds
// what strings.ToLower of the whole text would, markers across piece
// boundaries included.
func TestContainsLowered_matchesLoweringWhole(t *testing.T) {
	pad := strings.Repeat("é", loweredChunk/2-5) // a piece ends inside the marker
	for _, c := range []struct {
		name, text string
	}{
		{"empty", ""},
		{"short hit", "Partial Results follow"},
		{"short miss", "all results"},
		{"across a piece boundary", pad + "RESULTS MAY BE INCOMPLETE" + pad},
		{"at the very end", strings.Repeat("x", 3*loweredChunk) + "Truncated"},
		{"miss in a long text", strings.Repeat("trunc ated ", loweredChunk/5)},
		{"just after a piece end", strings.Repeat("y", loweredChunk-3) + "LIMITED RESULTS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := slices.ContainsFunc(partialMarkers, func(m string) bool { return strings.Contains(strings.ToLower(c.text), m) })
			if got := containsLowered(c.text, partialMarkers); got != want {
				t.Errorf("containsLowered = %v, strings.ToLower whole = %v", got, want)
			}
		})
	}
}
