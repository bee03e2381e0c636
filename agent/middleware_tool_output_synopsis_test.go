package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// DeerFlow's preview and synopsis cases (TestBuildPreview,
// TestToolOutputSynopsis), one named case each.

func TestRenderPreview(t *testing.T) {
	nested, _ := json.MarshalIndent(map[string]any{
		"data": map[string]any{"items": func() []any {
			var items []any
			for i := range 47 {
				items = append(items, map[string]any{"id": i, "name": fmt.Sprintf("item-%d", i)})
			}
			return items
		}(), "next_cursor": "cursor-2"},
		"meta": map[string]any{"source": "unit"},
	}, "", "  ")
	small, _ := json.MarshalIndent(map[string]any{"data": map[string]any{"items": []int{1, 2, 3}}}, "", "  ")
	var csvRows []string
	for i := range 10 {
		csvRows = append(csvRows, fmt.Sprintf("Ada%d,%d", i, 90+i))
	}
	for _, c := range []struct {
		name, content, tool, vp string
		head, tail              int
		prefix                  string
		want, notWant           []string
		beforeAccess            []string // must not appear before "Access:"
		check                   func(t *testing.T, p string)
	}{
		{name: "typed summary and file reference", content: "HEAD_" + strings.Repeat("x", 5000) + "_TAIL", tool: "bash",
			vp: "/mnt/test/bash-abc.log", head: 100, tail: 50, prefix: "[Full bash output saved to /mnt/test/bash-abc.log",
			want: []string{"Preview kind: text", "Text output", "/mnt/test/bash-abc.log", "read_file", "start_line and end_line"}},
		{name: "total characters", content: strings.Repeat("a", 10000), tool: "web_search", vp: "/mnt/test/file.txt",
			head: 200, tail: 100, want: []string{"10000 chars"}},
		{name: "JSON structure and raw sample", tool: "mcp_json", vp: "/mnt/test/result.json", head: 80, tail: 40,
			content: `{"meta":{"source":"unit"},"items":[{"id":1,"name":"alpha"},{"id":2,"name":"beta"}],"payload":"` +
				strings.Repeat("x", 5000) + `","tail_marker":"SHOULD_NOT_NEED_TAIL"}`,
			want: []string{"Preview kind: json", "JSON object with 4 top-level keys", "Top-level keys: meta, items, payload, tail_marker",
				"items: array length 2", `$.meta.source: "unit"`, "Raw sample (head + tail"},
			check: func(t *testing.T, p string) {
				if strings.HasPrefix(p, `{"meta"`) || strings.Count(p, "x") < 50 {
					t.Errorf("preview does not lead with the synopsis or lacks the raw head:\n%s", p)
				}
			}},
		{name: "JSON nested paths without line hints", content: string(nested), tool: "api_tool", vp: "/mnt/test/api.json",
			head: 80, tail: 40, want: []string{"$.data: object keys 2; keys items, next_cursor", "$.data.items: array length 47; first item object"},
			notWant: []string{"byte offset "}, beforeAccess: []string{"line "}},
		{name: "JSON paths after leading newlines", content: "\n\n" + string(small), tool: "api_tool", vp: "/mnt/test/api.json",
			head: 80, tail: 40, want: []string{"$.data: object keys 1; keys items"}, notWant: []string{"byte offset "}, beforeAccess: []string{"line "}},
		{name: "key that is also a value earlier", content: `{"label": "items", "items": {"id": 1, "name": "foo"}}`, tool: "api_tool",
			vp: "/mnt/test/api.json", head: 200, tail: 200, want: []string{"$.items"}, notWant: []string{"byte offset"}},
		{name: "CSV columns", content: "name,score\n" + strings.Join(csvRows, "\n") + "\n", tool: "csv_tool", vp: "/mnt/test/table.csv",
			head: 80, tail: 40, want: []string{"Preview kind: csv", "CSV table with 10 data rows and 2 columns", "columns: name, score",
				"first data row: name=Ada0 | score=90"}},
		{name: "raw head and tail sample", content: strings.Repeat("log line 1\n", 200), tool: "bash", vp: "/mnt/test/run.log",
			head: 400, tail: 400, want: []string{"Raw sample (head + tail"},
			check: func(t *testing.T, p string) {
				if n := strings.Count(p, "log line 1"); n < 70 {
					t.Errorf("%d sample lines, want at least 70", n)
				}
			}},
		{name: "preview head and tail chars take effect", content: strings.Repeat("alpha ", 1000), tool: "bash", vp: "/mnt/test/run.log",
			head: 300, tail: 300, check: func(t *testing.T, p string) {
				if n := strings.Count(p, "alpha"); n < 50 {
					t.Errorf("%d alphas, want at least 50", n)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := renderPreview(c.content, c.tool, c.vp, c.head, c.tail)
			if !strings.HasPrefix(p, c.prefix) {
				t.Errorf("preview starts %q, want %q", p[:min(len(p), 80)], c.prefix)
			}
			for _, w := range c.want {
				if !strings.Contains(p, w) {
					t.Errorf("preview lacks %q:\n%s", w, p)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(p, w) {
					t.Errorf("preview has %q:\n%s", w, p)
				}
			}
			head, _, _ := strings.Cut(p, "Access:")
			for _, w := range c.beforeAccess {
				if strings.Contains(head, w) {
					t.Errorf("synopsis has %q:\n%s", w, head)
				}
			}
			if c.check != nil {
				c.check(t, p)
			}
		})
	}
}

func TestBuildSynopsis(t *testing.T) {
	deep := `{"k": 1}`
	for range 500 {
		deep = `{"k": ` + deep + `}`
	}
	var rows []string
	for i := 1; i <= 5; i++ {
		rows = append(rows, fmt.Sprintf("\tdrwxr-xr-x  2 user  group   64 Jun 24 17:00 dir%d", i))
	}
	for _, c := range []struct {
		name, content, tool string
		kind                synopsisKind
		title               string
		summary             []string // lines, each present
		structure           []string
		notable             []string
		noSummaryPrefix     []string // no summary line starts so
		sample              bool
	}{
		{name: "code imports and symbols", tool: "python",
			content: "import os\nfrom pathlib import Path\n\nclass Runner:\n    pass\n\ndef main():\n    return Path(os.getcwd())\n",
			kind:    "code", structure: []string{"line count: 8", "imports: os, pathlib"}, notable: []string{"class Runner", "def main"}},
		{name: "YAML top-level keys", tool: "config", content: "name: deer\nsettings:\n  enabled: true\n  retries: 3\nitems:\n  - alpha\n",
			kind: "yaml", summary: []string{"Top-level keys: name, settings, items"}, structure: []string{"settings: object", "items: array"}},
		{name: "XML root and children", tool: "xml", content: `<feed><entry id="1"/><entry id="2"/><meta/></feed>`,
			kind: "xml", summary: []string{"XML document with root tag feed."}, structure: []string{"root tag: feed", "entry: 2"}},
		{name: "log lines are text, not YAML", tool: "bash",
			content: strings.Repeat("INFO: starting service\nERROR: failed to connect\nWARN: retrying\nINFO: connected\n", 200), kind: "text"},
		{name: "deep JSON stops at the depth cap", content: deep, kind: "json"},
		{name: "quoted CSV cells keep their delimiter", tool: "csv_tool", kind: "csv",
			content: "name,description,score\n" + strings.Join([]string{`Ada,"a fine, brilliant logician",98`, `Grace,"a creator, of compilers",99`,
				`Alan,"a pioneer, of computing",95`, `Kurt,"a poet, of logic",91`, `Ada2,"another, fine mind",97`, `Grace2,"yet another, creator",93`}, "\n") + "\n",
			structure: []string{"first data row: name=Ada | description=a fine, brilliant logician | score=98"}},
		{name: "tab-indented shell output is not TSV", tool: "bash", content: "ls -l output:\n\ttotal 0\n" + strings.Join(rows, "\n") + "\n", kind: "text"},
		{name: "TSV table", tool: "db", content: "id\tname\n1\ta\n2\tb\n3\tc\n4\td\n5\te\n", kind: "tsv",
			summary: []string{"TSV table with 5 data rows and 2 columns."}, structure: []string{"columns: id, name", "first data row: id=1 | name=a"}},
		{name: "short text has no closing excerpt", content: strings.Repeat("hello world ", 30), kind: "text",
			noSummaryPrefix: []string{"Closing excerpt: "}, summary: []string{"Opening excerpt: " + strings.TrimSpace(strings.Repeat("hello world ", 30))}},
		{name: "JSON array shape, counts and samples", content: `[{"id": 1, "ok": true}, {"id": 2, "ok": false}, {"id": 3}, {"id": 4}]`, kind: "json",
			summary:   []string{"JSON array with 4 items."},
			structure: []string{"shape: array(len=4, first=[object(keys=2: id, ok), object(keys=2: id, ok), object(keys=1: id)])", "first item type: object"},
			notable:   []string{"$[0].id: 1", "$[0].ok: True", "$[1].id: 2", "$[1].ok: False"}},
		{name: "JSON scalars as Python prints them", content: `{"f": 1.0, "n": null, "s": "caf\u00e9", "big": 1e20}`, kind: "json",
			notable: []string{"$.f: 1.0", "$.n: None", `$.s: "café"`, "$.big: 1e+20"}},
		{name: "JSON with trailing text", content: `{"a": 1} tail`, kind: "json", notable: []string{"Trailing non-JSON characters after first value: 4"}},
		{name: "binary-looking output", content: strings.Repeat("ab\x00", 10), kind: "unknown", title: "Binary-like output",
			summary: []string{"The output has 30 characters and includes non-text control bytes."}, sample: true},
		{name: "control characters", content: strings.Repeat("\x01\x02abc", 20), kind: "unknown", title: "Binary-like output", sample: true},
		{name: "oversized output is not parsed", content: strings.Repeat("[1,", MaxSynopsisInputBytes/3+1), kind: "unknown", title: "Oversized output", sample: true},
		{name: "empty output", content: "", kind: "unknown", title: "Empty output", summary: []string{"The tool returned an empty string."}},
		{name: "Markdown section headers", tool: "web_fetch", content: "# Intro\nsome text\n## Usage\nmore\n## Usage\n", kind: "text",
			summary: []string{"Text output from web_fetch with 41 characters, 9 words, and 5 lines.", "Detected section headers: # Intro | ## Usage."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := buildSynopsis(c.content, c.tool)
			if s.kind != c.kind {
				t.Fatalf("kind %q, want %q (summary %q)", s.kind, c.kind, s.summary)
			}
			if c.title != "" && s.title != c.title {
				t.Errorf("title %q, want %q", s.title, c.title)
			}
			for _, list := range []struct {
				name      string
				got, want []string
			}{{"summary", s.summary, c.summary}, {"structure", s.structure, c.structure}, {"notable items", s.notable, c.notable}} {
				for _, w := range list.want {
					if !slices.Contains(list.got, w) {
						t.Errorf("%s lacks %q: %q", list.name, w, list.got)
					}
				}
			}
			for _, p := range c.noSummaryPrefix {
				if slices.ContainsFunc(s.summary, func(l string) bool { return strings.HasPrefix(l, p) }) {
					t.Errorf("summary has a line starting %q: %q", p, s.summary)
				}
			}
			if c.sample != (s.sample != "") {
				t.Errorf("sample %q, want one: %v", s.sample, c.sample)
			}
		})
	}
}

// TestBuildFallback covers DeerFlow's TestBuildFallback cases by name.
func TestBuildFallback(t *testing.T) {
	linesThenLongLine := func(total int) string {
		headLen := total * 6 / 10
		var b strings.Builder
		for i := 0; b.Len() < headLen; i++ {
			fmt.Fprintf(&b, "[info] step %d ok\n", i)
		}
		s := b.String()[:headLen]
		if !strings.HasSuffix(s, "\n") {
			s = s[:len(s)-1] + "\n"
		}
		return s + strings.Repeat("A", total-len(s))
	}
	for _, c := range []struct {
		name                  string
		content, tool         string
		max, head, tail       int
		same                  bool
		want                  []string
		wantPrefix, wantAfter string
	}{
		{name: "short content unchanged", content: "short", tool: "t", max: 100, head: 50, tail: 50, same: true},
		{name: "zero max disables", content: strings.Repeat("a", 1000), tool: "t", max: 0, head: 50, tail: 50, same: true},
		{name: "long content is truncated", content: strings.Repeat("H", 5000) + strings.Repeat("M", 20000) + strings.Repeat("T", 5000),
			tool: "bash", max: 12000, head: 6000, tail: 3000, want: []string{"omitted from bash output", "Persistent storage unavailable"}},
		{name: "head and tail are kept", content: "HEADSTART" + strings.Repeat("x", 50000) + "TAILEND", tool: "t", max: 20000,
			head: 10000, tail: 5000, wantPrefix: "HEADSTART", want: []string{"TAILEND"}},
		{name: "tail starts after the newline", content: strings.Repeat("A", 98000) + "\n" + strings.Repeat("B", 1999), tool: "bash",
			max: 30000, head: 8000, tail: 3000, wantAfter: "B"},
		{name: "very small max", content: strings.Repeat("x", 1000), tool: "t", max: 50, head: 20, tail: 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := buildFallback(c.content, c.tool, c.max, c.head, c.tail)
			if c.same {
				if got != c.content {
					t.Errorf("changed to %q", got)
				}
				return
			}
			if charLen(got) > c.max || len(got) >= len(c.content) {
				t.Errorf("%d characters, max %d (input %d)", charLen(got), c.max, len(c.content))
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q", w)
				}
			}
			if !strings.HasPrefix(got, c.wantPrefix) {
				t.Errorf("starts %q", got[:20])
			}
			if c.wantAfter != "" {
				if i := strings.LastIndex(got, "]\n\n"); i < 0 || !strings.HasPrefix(got[i+3:], c.wantAfter) {
					t.Errorf("tail does not start with %q", c.wantAfter)
				}
			}
		})
	}
	t.Run("never longer than max", func(t *testing.T) {
		for _, m := range []int{200, 500, 1000, 5000, 20000} {
			if got := buildFallback(strings.Repeat("x", 50000), "long_tool_name", m, m/2, m/4); charLen(got) > m {
				t.Errorf("max %d: %d characters", m, charLen(got))
			}
		}
		for _, total := range []int{50_000, 200_000, 1_000_000} {
			if got := buildFallback(linesThenLongLine(total), "bash", 30_000, 8_000, 3_000); charLen(got) > 30_000 {
				t.Errorf("total %d: %d characters", total, charLen(got))
			}
		}
	})
}
