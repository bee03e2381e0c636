package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// resultBytes is the size the ceiling measures: text, images, artifact
// as JSON.
func resultBytes(t *testing.T, r *tool.Result) int {
	t.Helper()
	n := len(r.TextContent())
	for _, c := range r.Content {
		n += len(c.Data)
	}
	if r.Artifact != nil {
		data, err := json.Marshal(r.Artifact)
		if err != nil {
			t.Fatal(err)
		}
		n += len(data)
	}
	return n
}

// numberedLines returns n lines "line 000001 ...\n" of about 64 bytes.
func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %06d %s\n", i, strings.Repeat("z", 52))
	}
	return b.String()
}

func TestToolOutputCeiling(t *testing.T) {
	big := numberedLines(20000) // 1.28 MB
	disabled := func(c *config.ToolOutput) { c.Enabled = false }
	for _, c := range []struct {
		name     string
		cfg      func(*config.ToolOutput)
		tool     string
		res      *tool.Result
		noLayout bool
		// savedWhole: one saved file equals this.
		savedWhole string
		want       []string
		check      func(t *testing.T, out *tool.Result, files map[string]string)
	}{
		{name: "budget disabled: cut and saved", cfg: disabled, tool: "bash", res: tool.Text(big), savedWhole: big,
			want: []string{"line 000001 ", "line 020000 ", "bytes omitted: one tool result may hold at most 262144 bytes.",
				"is saved to /mnt/user-data/outputs/.tool-results/bash-", "use read_file on it with start_line and end_line"}},
		{name: "exempt tool: cut and saved", tool: "read_file", res: tool.Text(big), savedWhole: big,
			want: []string{"bytes omitted", "/mnt/user-data/outputs/.tool-results/read_file-"}},
		{name: "nothing can be saved", cfg: disabled, tool: "bash", res: tool.Text(big), noLayout: true,
			want: []string{"bytes omitted", "could not be saved"}},
		{name: "fallback limit beyond the ceiling", cfg: func(c *config.ToolOutput) { c.ExternalizeMinChars, c.FallbackMaxChars = 0, 10_000_000 },
			tool: "bash", res: tool.Text(big), savedWhole: big, want: []string{"bytes omitted"}},
		{name: "error results are capped too", cfg: disabled, tool: "bash", res: tool.Errorf("Error: %s", big),
			want: []string{"Error: line 000001"}, check: func(t *testing.T, out *tool.Result, _ map[string]string) {
				if !out.IsError {
					t.Error("lost IsError")
				}
			}},
		{name: "an oversized artifact is saved as JSON", cfg: disabled, tool: "mcp_tool",
			res:  &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "summary"}}, Artifact: map[string]any{"structured_content": map[string]any{"rows": big}}},
			want: []string{"[The structured content of this result (", "is saved to /mnt/user-data/outputs/.tool-results/mcp_tool-", "summary"},
			check: func(t *testing.T, out *tool.Result, files map[string]string) {
				ref, _ := out.Artifact.(map[string]any)[OmittedArtifactKey].(map[string]any)
				path, _ := ref["path"].(string)
				name := path[strings.LastIndexByte(path, '/')+1:]
				var saved map[string]map[string]string
				if err := json.Unmarshal([]byte(files[name]), &saved); err != nil || saved["structured_content"]["rows"] != big {
					t.Errorf("artifact file %s: %v", name, err)
				}
			}},
		// Images never stay inline (see middleware_tool_output_media.go):
		// these two, over the ceiling together, are saved like any other.
		{name: "images over the ceiling are saved", cfg: disabled, tool: "mcp_tool",
			res: &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "two charts"},
				{Type: tool.BlockImage, MIMEType: "image/png", Data: make([]byte, 200<<10)},
				{Type: tool.BlockImage, MIMEType: "image/jpeg", Data: bytes.Repeat([]byte{0xff, 0xd8}, 100<<10)}}},
			want: []string{"two charts", "[image 1 of 2 (image/png, 204800 bytes) saved to /mnt/user-data/outputs/.tool-results/mcp_tool-",
				".bin; its content is not a PNG, JPEG, GIF or WebP image, so it is not shown]", ".jpg]"},
			check: func(t *testing.T, out *tool.Result, files map[string]string) {
				if len(files) != 2 {
					t.Errorf("%d files, want the two images", len(files))
				}
				jpeg := bytes.Repeat([]byte{0xff, 0xd8}, 100<<10)
				for name, data := range files {
					if strings.HasSuffix(name, ".jpg") && data != string(jpeg) {
						t.Errorf("%s is not the image's bytes", name)
					}
				}
			}},
		{name: "images within the ceiling are saved too", cfg: disabled, tool: "mcp_tool",
			res:  &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: "chart"}, {Type: tool.BlockImage, MIMEType: "image/png", Data: make([]byte, 1000)}}},
			want: []string{"chart", "[image 1 of 1 (image/png, 1000 bytes) saved to /mnt/user-data/outputs/.tool-results/mcp_tool-"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			layout, tp := budgetLayout(t)
			opts := ToolOutputBudgetOptions{Config: toolOutputConfig(c.cfg), Layout: layout}
			if c.noLayout {
				opts.Layout = nil
			}
			out := runToolBudget(t, NewToolOutputBudget(opts), budgetCall(c.tool), c.res)
			if n := resultBytes(t, out); n > MaxToolResultBytes {
				t.Errorf("result of %d bytes, over the ceiling of %d", n, MaxToolResultBytes)
			}
			text := out.TextContent()
			if !utf8.ValidString(text) {
				t.Error("text is not valid UTF-8")
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, clipForLog(text))
				}
			}
			files := savedFiles(t, tp)
			if c.savedWhole != "" {
				found := false
				for _, data := range files {
					found = found || data == c.savedWhole
				}
				if !found {
					t.Errorf("no saved file holds the whole output (%d files)", len(files))
				}
			}
			if c.check != nil {
				c.check(t, out, files)
			}
			if len(c.want) == 0 && c.check == nil && out != c.res {
				t.Error("a result within the ceiling changed")
			}
		})
	}
}

func clipForLog(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n[...]\n" + s[len(s)-1000:]
	}
	return s
}

// TestCutToCeiling: never over the limit, never inside a UTF-8
// sequence, head and tail kept.
func TestCutToCeiling(t *testing.T) {
	for _, c := range []struct {
		name  string
		text  string
		limit int
		note  ceilingNote
	}{
		{"ASCII lines", numberedLines(10000), 4096, ceilingNote{total: 640000, path: "/mnt/user-data/outputs/.tool-results/t-0123456789ab.txt"}},
		{"one long line", strings.Repeat("a", 100000), 1000, ceilingNote{}},
		{"multibyte text", strings.Repeat("你好世界🙂", 20000), 5000, ceilingNote{total: 1, failed: true}},
		{"limit below the marker", strings.Repeat("é", 1000), 40, ceilingNote{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := cutToCeiling(c.text, c.limit, c.note)
			if len(got) > c.limit || !utf8.ValidString(got) {
				t.Fatalf("%d bytes (limit %d), valid UTF-8 %v", len(got), c.limit, utf8.ValidString(got))
			}
			if c.limit > 100 && (!strings.HasPrefix(c.text, got[:10]) || !strings.HasSuffix(c.text, got[len(got)-10:])) {
				t.Errorf("head or tail lost: %q ... %q", got[:10], got[len(got)-10:])
			}
		})
	}
}
