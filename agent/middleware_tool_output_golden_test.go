package agent

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// previewCase is one input of testdata/tool_output/preview_cases.json:
// the content is the concatenation of each part repeated its count.
type previewCase struct {
	Name  string               `json:"name"`
	Parts [][2]json.RawMessage `json:"parts"`
	Tool  string               `json:"tool"`
	Head  int                  `json:"head"`
	Tail  int                  `json:"tail"`
}

func (c previewCase) content(t *testing.T) string {
	var b strings.Builder
	for _, p := range c.Parts {
		var s string
		var n int
		if err := json.Unmarshal(p[0], &s); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(p[1], &n); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.Repeat(s, n))
	}
	return b.String()
}

// TestRenderPreview_matchesDeerFlowGolden renders every case of the
// corpus and compares the whole text the model reads with the expected
// preview, which is DeerFlow's render_tool_output_preview output for the
// same input (testdata/tool_output/preview_golden.json).
func TestRenderPreview_matchesDeerFlowGolden(t *testing.T) {
	var cases []previewCase
	readJSONFile(t, "testdata/tool_output/preview_cases.json", &cases)
	var golden map[string]struct {
		Kind    string `json:"kind"`
		Preview string `json:"preview"`
	}
	readJSONFile(t, "testdata/tool_output/preview_golden.json", &golden)
	const vp = "/mnt/user-data/outputs/.tool-results/x-0123456789ab.txt"
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want, ok := golden[c.Name]
			if !ok {
				t.Fatalf("no golden preview for %s", c.Name)
			}
			content := c.content(t)
			if got := buildSynopsis(content, c.Tool).kind; string(got) != want.Kind {
				t.Errorf("kind %q, want %q", got, want.Kind)
			}
			got := renderPreview(content, c.Tool, vp, c.Head, c.Tail)
			if diff := cmp.Diff(want.Preview, got); diff != "" {
				t.Errorf("preview (-want +got):\n%s", diff)
			}
		})
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestBuildFallback_matchesDeerFlowGolden compares the head + tail
// truncation (made when an output cannot be saved) with DeerFlow's
// _build_fallback output for the same inputs
// (testdata/tool_output/fallback_golden.json).
func TestBuildFallback_matchesDeerFlowGolden(t *testing.T) {
	var cases []struct {
		previewCase
		Max  int    `json:"max"`
		Want string `json:"want"`
	}
	readJSONFile(t, "testdata/tool_output/fallback_golden.json", &cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := buildFallback(c.content(t), c.Tool, c.Max, c.Head, c.Tail)
			if diff := cmp.Diff(c.Want, got); diff != "" {
				t.Errorf("fallback (-want +got):\n%s", diff)
			}
			if c.Max > 0 && charLen(got) > c.Max {
				t.Errorf("%d characters, more than max %d", charLen(got), c.Max)
			}
		})
	}
}
