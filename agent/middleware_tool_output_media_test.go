package agent

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// pngBytes is a PNG signature followed by n filler bytes.
func pngBytes(n int) []byte {
	return append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, n)...)
}

var savedRE = regexp.MustCompile(`saved to /mnt/user-data/outputs/\.tool-results/(\S+?)[;\]]`)

func TestToolOutputMedia(t *testing.T) {
	wav := append([]byte("RIFF\x00\x00\x00\x00WAVE"), bytes.Repeat([]byte{1}, 100)...)
	for _, c := range []struct {
		name     string
		noLayout bool
		blocks   []tool.Block
		want     []string // lines of the result, in order (a prefix each)
		images   int      // entries under builtin.ToolImagesKey
		files    int
	}{
		{name: "three images and an audio blob become files and references",
			blocks: []tool.Block{{Type: tool.BlockText, Text: "charts"},
				{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(10)},
				{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(20)},
				{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(30)},
				{Type: tool.BlockBinary, MIMEType: "audio/wav", Data: wav}},
			want: []string{"charts", "[image 1 of 3 (image/png, 18 bytes) saved to ", "[image 2 of 3", "[image 3 of 3",
				"[audio/wav, 112 bytes saved to /mnt/user-data/outputs/.tool-results/mcp_tool-"},
			images: 3, files: 4},
		{name: "images over the count are refused",
			blocks: []tool.Block{{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)}, {Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)},
				{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)}, {Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)},
				{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)}, {Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)}},
			want: []string{"[image 1 of 6", "[image 2 of 6", "[image 3 of 6", "[image 4 of 6", "[image 5 of 6",
				"[image 6 of 6 (image/png, 9 bytes) refused: one tool result may carry at most 5 images]"},
			images: 5, files: 5},
		{name: "an image over the size limit is refused",
			blocks: []tool.Block{{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(MaxToolResultImageBytes)}},
			want:   []string{"[image 1 of 1 (image/png, 5242888 bytes) refused: an image may be at most 5242880 bytes]"}},
		{name: "an image a model cannot be shown is kept as a file only",
			blocks: []tool.Block{{Type: tool.BlockImage, MIMEType: "image/svg+xml", Data: []byte("<svg/>")}},
			want:   []string{"[image 1 of 1 (image/svg+xml, 6 bytes) saved to "}, files: 1},
		{name: "binary blocks over the count or the size are refused",
			blocks: append(slicesRepeat(tool.Block{Type: tool.BlockBinary, MIMEType: "audio/ogg", Data: []byte("OggS")}, MaxToolResultBinaries+1),
				tool.Block{Type: tool.BlockBinary, MIMEType: "application/pdf", URI: "mem://big", Data: make([]byte, MaxToolResultBinaryBytes+1)}),
			want: append(slicesRepeat("[audio/ogg, 4 bytes saved to ", MaxToolResultBinaries),
				"[audio/ogg, 4 bytes refused: one tool result may carry at most 8 binary blocks]",
				"[application/pdf, 16777217 bytes, resource mem://big refused: one tool result may carry at most 8 binary blocks]"),
			files: MaxToolResultBinaries},
		{name: "without a place to save them the blocks are dropped with a note", noLayout: true,
			blocks: []tool.Block{{Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)}, {Type: tool.BlockBinary, MIMEType: "audio/wav", Data: wav}},
			want:   []string{"[image 1 of 1 (image/png, 9 bytes) omitted: it could not be saved]", "[audio/wav, 112 bytes omitted: it could not be saved]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			layout, tp := budgetLayout(t)
			opts := ToolOutputBudgetOptions{Config: toolOutputConfig(nil), Layout: layout}
			if c.noLayout {
				opts.Layout = nil
			}
			out := runToolBudget(t, NewToolOutputBudget(opts), budgetCall("mcp_tool"), &tool.Result{Content: c.blocks})
			for _, b := range out.Content {
				if b.Type != tool.BlockText || len(b.Data) > 0 {
					t.Fatalf("a %s block with %d bytes survived", b.Type, len(b.Data))
				}
			}
			lines := strings.Split(out.TextContent(), "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(c.want), out.TextContent())
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], w)
				}
			}
			files := savedFiles(t, tp)
			if len(files) != c.files {
				t.Errorf("%d files saved, want %d", len(files), c.files)
			}
			for _, m := range savedRE.FindAllStringSubmatch(out.TextContent(), -1) {
				if _, ok := files[m[1]]; !ok {
					t.Errorf("referenced file %s does not exist", m[1])
				}
			}
			list, _ := out.Meta[builtin.ToolImagesKey].([]any)
			if len(list) != c.images {
				t.Fatalf("%d images listed, want %d: %v", len(list), c.images, out.Meta)
			}
			var imageBlocks []tool.Block
			for _, b := range c.blocks {
				if b.Type == tool.BlockImage {
					imageBlocks = append(imageBlocks, b)
				}
			}
			for i, e := range list {
				em := e.(map[string]any)
				name := strings.TrimPrefix(em["path"].(string), "/mnt/user-data/outputs/.tool-results/")
				if got, ok := files[name]; !ok || got != string(imageBlocks[i].Data) {
					t.Errorf("image %d: file %s missing or not the image's bytes", i+1, name)
				}
				if diff := cmp.Diff("image/png", em["mime_type"]); diff != "" {
					t.Errorf("image %d mime (-want +got):\n%s", i+1, diff)
				}
			}
		})
	}
}

func slicesRepeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// A result that held images is multimodal, which DeerFlow's budget leaves
// alone: its text stays whole even over the thresholds; only its images
// become files.
func TestToolOutputMedia_imageResultsAreNotBudgeted(t *testing.T) {
	layout, _ := budgetLayout(t)
	cfg := toolOutputConfig(func(c *config.ToolOutput) { c.ExternalizeMinChars, c.FallbackMaxChars = 10, 20 })
	long := strings.Repeat("x", 100)
	res := &tool.Result{Content: []tool.Block{{Type: tool.BlockText, Text: long}, {Type: tool.BlockImage, MIMEType: "image/png", Data: pngBytes(1)}}}
	out := runToolBudget(t, NewToolOutputBudget(ToolOutputBudgetOptions{Config: cfg, Layout: layout}), budgetCall("mcp_tool"), res)
	text := out.TextContent()
	if !strings.HasPrefix(text, long+"\n[image 1 of 1 (image/png, 9 bytes) saved to ") || strings.Contains(text, "output saved to") {
		t.Errorf("text = %q, want the whole text and the image's line", text)
	}
}
