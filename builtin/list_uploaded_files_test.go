package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// tagNeutralizer stands in for agent.NeutralizeUntrustedTags: it marks
// a <system> tag so the tests can see which fields pass through it.
func tagNeutralizer(s string) string { return strings.ReplaceAll(s, "<system>", "&lt;system&gt;") }

// upload writes an upload with a modification time age before now.
func (e *threadEnv) upload(t *testing.T, name, data string, age time.Duration) {
	t.Helper()
	p := e.write(t, e.tp.Uploads, name, []byte(data))
	when := time.Now().Add(-age)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
}

func listUploads(t *testing.T, e *threadEnv, call *tool.Call, args map[string]any) listUploadedFilesResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res := callTool(t, NewListUploadedFiles(e.layout, tagNeutralizer), call, args)
	if res.IsError {
		t.Fatalf("error result: %s", res.TextContent())
	}
	var out listUploadedFilesResult
	if err := json.Unmarshal([]byte(res.TextContent()), &out); err != nil {
		t.Fatalf("result is not the JSON answer: %v\n%s", err, res.TextContent())
	}
	return out
}

func TestListUploadedFiles(t *testing.T) {
	total := func(n int) *int { return &n }
	tests := []struct {
		name  string
		setup func(t *testing.T, e *threadEnv, call *tool.Call)
		args  map[string]any
		want  listUploadedFilesResult
	}{
		{name: "empty folder", want: listUploadedFilesResult{Files: []uploadedFileInfo{}, Message: "No historical uploaded files in this thread."}},
		{name: "no uploads folder",
			setup: func(t *testing.T, e *threadEnv, _ *tool.Call) { os.RemoveAll(e.tp.Uploads) },
			want:  listUploadedFilesResult{Files: []uploadedFileInfo{}, Message: "No uploads directory for this thread."}},
		{name: "no thread",
			setup: func(_ *testing.T, _ *threadEnv, c *tool.Call) { c.ThreadID = "" },
			want:  listUploadedFilesResult{Files: []uploadedFileInfo{}, Message: "Thread not found."}},
		{name: "newest first with size path and extension",
			setup: func(t *testing.T, e *threadEnv, _ *tool.Call) {
				e.upload(t, "old.csv", "a,b", 2*time.Hour)
				e.upload(t, "new.pdf", "%PDF-1", time.Hour)
			},
			want: listUploadedFilesResult{TotalCount: total(2), Message: "Found 2 historical file(s).", Files: []uploadedFileInfo{
				{Filename: "new.pdf", Size: 6, Path: "/mnt/user-data/uploads/new.pdf", Extension: ".pdf"},
				{Filename: "old.csv", Size: 3, Path: "/mnt/user-data/uploads/old.csv", Extension: ".csv"},
			}}},
		{name: "current run uploads, staging files, symlinks and conversions left out",
			setup: func(t *testing.T, e *threadEnv, c *tool.Call) {
				e.upload(t, "report.pdf", "%PDF", time.Hour)
				e.upload(t, "report.md", "# Report", time.Hour)
				e.upload(t, "notes.md", "plain", 2*time.Hour)
				e.upload(t, ".upload-123", "partial", time.Minute)
				e.upload(t, "state.txt", "x", time.Minute)
				e.upload(t, "message.txt", "y", time.Minute)
				if err := os.Symlink("/etc/passwd", filepath.Join(e.tp.Uploads, "link.txt")); err != nil {
					t.Fatal(err)
				}
				c.State.UploadedFiles = []thread.UploadedFile{{Filename: "state.txt"}}
				c.State.Messages = []model.Message{{Role: model.RoleUser, Meta: map[string]any{
					"files": []any{map[string]any{"filename": "message.txt"}}}}}
			},
			want: listUploadedFilesResult{TotalCount: total(2), Message: "Found 2 historical file(s).", Files: []uploadedFileInfo{
				{Filename: "report.pdf", Size: 4, Path: "/mnt/user-data/uploads/report.pdf", Extension: ".pdf"},
				{Filename: "notes.md", Size: 5, Path: "/mnt/user-data/uploads/notes.md", Extension: ".md"},
			}}},
		{name: "max_results truncates and counts the rest by extension",
			setup: func(t *testing.T, e *threadEnv, _ *tool.Call) {
				e.upload(t, "a.txt", "1", time.Minute)
				e.upload(t, "b.csv", "1", 2*time.Minute)
				e.upload(t, "c.csv", "1", 3*time.Minute)
				e.upload(t, "Makefile", "1", 4*time.Minute)
			},
			args: map[string]any{"max_results": 1},
			want: listUploadedFilesResult{TotalCount: total(4), Message: "Found 4 historical file(s).", Truncated: true,
				OmittedSummary: "1 (no extension), 2 .csv",
				Files:          []uploadedFileInfo{{Filename: "a.txt", Size: 1, Path: "/mnt/user-data/uploads/a.txt", Extension: ".txt"}}}},
		{name: "max_results below one is one",
			setup: func(t *testing.T, e *threadEnv, _ *tool.Call) {
				e.upload(t, "a.txt", "1", time.Minute)
				e.upload(t, "b.txt", "1", 2*time.Minute)
			},
			args: map[string]any{"max_results": 0},
			want: listUploadedFilesResult{TotalCount: total(2), Message: "Found 2 historical file(s).", Truncated: true,
				OmittedSummary: "1 .txt",
				Files:          []uploadedFileInfo{{Filename: "a.txt", Size: 1, Path: "/mnt/user-data/uploads/a.txt", Extension: ".txt"}}}},
		{name: "outline for the named files only, preview without headings",
			setup: func(t *testing.T, e *threadEnv, _ *tool.Call) {
				e.upload(t, "paper.pdf", "%PDF", time.Minute)
				e.upload(t, "paper.md", "# Intro\n\ntext\n**ITEM 1. BUSINESS**\n**3.2** **Attention**\n**2023** **2022**\n## **A** **B**\n", time.Minute)
				e.upload(t, "memo.docx", "PK", 2*time.Minute)
				e.upload(t, "memo.md", "first\n\nsecond <system>\n", 2*time.Minute)
				e.upload(t, "skip.pdf", "%PDF", 3*time.Minute)
				e.upload(t, "skip.md", "# Hidden", 3*time.Minute)
			},
			args: map[string]any{"include_outline": []string{"paper.pdf", "memo.docx"}},
			want: listUploadedFilesResult{TotalCount: total(3), Message: "Found 3 historical file(s).", Files: []uploadedFileInfo{
				{Filename: "paper.pdf", Size: 4, Path: "/mnt/user-data/uploads/paper.pdf", Extension: ".pdf", Outline: []outlineEntry{
					{Title: "Intro", Line: 1}, {Title: "ITEM 1. BUSINESS", Line: 4}, {Title: "3.2 Attention", Line: 5}, {Title: "A B", Line: 7}}},
				{Filename: "memo.docx", Size: 2, Path: "/mnt/user-data/uploads/memo.docx", Extension: ".docx",
					OutlinePreview: []string{"first", "second &lt;system&gt;"}},
				{Filename: "skip.pdf", Size: 4, Path: "/mnt/user-data/uploads/skip.pdf", Extension: ".pdf"},
			}}},
		{name: "names neutralised",
			setup: func(t *testing.T, e *threadEnv, _ *tool.Call) { e.upload(t, "<system>.txt", "1", time.Minute) },
			want: listUploadedFilesResult{TotalCount: total(1), Message: "Found 1 historical file(s).", Files: []uploadedFileInfo{
				{Filename: "&lt;system&gt;.txt", Size: 1, Path: "/mnt/user-data/uploads/&lt;system&gt;.txt", Extension: ".txt"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newThreadEnv(t)
			call := e.call()
			if tc.setup != nil {
				tc.setup(t, e, call)
			}
			got := listUploads(t, e, call, tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListUploadedFiles_outlineTruncatedAtFiftyHeadings(t *testing.T) {
	e := newThreadEnv(t)
	var md strings.Builder
	for range 60 {
		md.WriteString("# h\n")
	}
	e.upload(t, "long.md", md.String(), time.Minute)
	got := listUploads(t, e, e.call(), map[string]any{"include_outline": true})
	outline := got.Files[0].Outline
	if len(outline) != outlineMaxEntries+1 || !outline[outlineMaxEntries].Truncated || outline[outlineMaxEntries-1].Line != outlineMaxEntries {
		t.Errorf("outline of %d entries, last %+v; want %d headings then the truncated mark", len(outline), outline[len(outline)-1], outlineMaxEntries)
	}
}

func TestListUploadedFiles_badIncludeOutline(t *testing.T) {
	e := newThreadEnv(t)
	res := callTool(t, NewListUploadedFiles(e.layout, tagNeutralizer), e.call(), map[string]any{"include_outline": "yes"})
	if !res.IsError || !strings.Contains(res.TextContent(), "include_outline") {
		t.Errorf("got %q, want an error naming include_outline", res.TextContent())
	}
}
