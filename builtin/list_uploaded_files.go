package builtin

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// ListUploadedFilesName is the name of the list_uploaded_files tool.
const ListUploadedFilesName = "list_uploaded_files"

//go:embed list_uploaded_files.md
var listUploadedFilesDescription string

// Limits of list_uploaded_files: the default and largest max_results
// (DeerFlow's), and how many entries of the uploads folder are read at
// most (Antler's: host bash can fill the folder without the gateway's
// upload limits).
const (
	listUploadsDefaultResults = 20
	listUploadsMaxResults     = 100
	listUploadsMaxEntries     = 10_000
)

// uploadStagingPrefix starts the names of the files the gateway is still
// writing into the uploads folder (gateway/uploads.go); they are not
// uploads yet.
const uploadStagingPrefix = ".upload-"

const listUploadedFilesSchema = `{
  "type": "object",
  "properties": {
    "include_outline": {
      "anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}],
      "description": "Which files get their document outline (headings, or the first lines without headings): false (default) for none, true for every file, or a list of file names, e.g. [\"report.pdf\", \"data.csv\"]."
    },
    "max_results": {"type": "integer", "description": "Maximum number of files to return (default 20, at most 100)."}
  }
}`

type listUploadedFilesArgs struct {
	IncludeOutline any  `json:"include_outline,omitempty"`
	MaxResults     *int `json:"max_results,omitempty"`
}

// uploadedFileInfo is one file of the answer.
type uploadedFileInfo struct {
	Filename       string         `json:"filename"`
	Size           int64          `json:"size"`
	Path           string         `json:"path"`
	Extension      string         `json:"extension"`
	Outline        []outlineEntry `json:"outline,omitempty"`
	OutlinePreview []string       `json:"outline_preview,omitempty"`
}

// listUploadedFilesResult is the answer, in DeerFlow's shape: total_count
// only when the folder was read, truncated and omitted_summary only when
// files were left out.
type listUploadedFilesResult struct {
	Files          []uploadedFileInfo `json:"files"`
	TotalCount     *int               `json:"total_count,omitempty"`
	Truncated      bool               `json:"truncated,omitempty"`
	OmittedSummary string             `json:"omitted_summary,omitempty"`
	Message        string             `json:"message"`
}

// NewListUploadedFiles returns the list_uploaded_files tool (DeerFlow's
// list_uploaded_files_tool.py): the files of the thread's uploads folder
// uploaded before this run (the run's own are in the state's
// uploaded_files and left out), newest first, at most max_results of
// them. A Markdown file beside a file of the same stem is its conversion
// and not listed on its own; with include_outline, its headings become
// the file's outline. Symlinks and files the gateway is still writing
// are skipped.
//
// neutralize makes text from outside the trust boundary (file names,
// headings) safe to enter the model's context; Antler passes
// agent.NeutralizeUntrustedTags, which builtin cannot import.
//
// NewListUploadedFiles panics if layout or neutralize is nil (a wiring
// mistake).
func NewListUploadedFiles(layout *vpath.Layout, neutralize func(string) string) *tool.Tool {
	if layout == nil || neutralize == nil {
		panic("builtin.NewListUploadedFiles: layout or neutralize is nil")
	}
	t, err := tool.NewWithSchema(ListUploadedFilesName, strings.TrimSpace(listUploadedFilesDescription),
		json.RawMessage(listUploadedFilesSchema),
		func(ctx context.Context, call *tool.Call, in listUploadedFilesArgs) (*tool.Result, error) {
			return listUploadedFiles(layout, neutralize, call, in)
		})
	if err != nil {
		panic("builtin.NewListUploadedFiles: " + err.Error()) // constant schema: a programming error
	}
	return t
}

func listUploadedFiles(layout *vpath.Layout, neutralize func(string) string, call *tool.Call, in listUploadedFilesArgs) (*tool.Result, error) {
	outlineAll, outlineNames, res := outlineSelection(in.IncludeOutline)
	if res != nil {
		return res, nil
	}
	if call == nil {
		return tool.JSON(listUploadedFilesResult{Files: []uploadedFileInfo{}, Message: "No runtime context available."})
	}
	threadID := callThreadID(call)
	if threadID == "" {
		return tool.JSON(listUploadedFilesResult{Files: []uploadedFileInfo{}, Message: "Thread not found."})
	}
	tp, err := layout.ThreadPaths(callUserID(call), threadID)
	if err != nil {
		return pathErrorResult(err), nil
	}
	cands, res := historicalUploads(tp, call)
	if res != nil {
		return res, nil
	}
	if len(cands) == 0 {
		return tool.JSON(listUploadedFilesResult{Files: []uploadedFileInfo{}, Message: "No historical uploaded files in this thread."})
	}
	limit := listUploadsDefaultResults
	if in.MaxResults != nil {
		limit = min(max(*in.MaxResults, 1), listUploadsMaxResults)
	}
	total := len(cands)
	out := listUploadedFilesResult{Files: []uploadedFileInfo{}, TotalCount: &total,
		Message: fmt.Sprintf("Found %d historical file(s).", total)}
	for i, c := range cands {
		if i >= limit {
			out.Truncated = true
			out.OmittedSummary = omittedSummary(cands[limit:], neutralize)
			break
		}
		info := uploadedFileInfo{Filename: neutralize(c.name), Size: c.size,
			Path: neutralize(vpath.Uploads + "/" + c.name), Extension: neutralize(filepath.Ext(c.name))}
		if outlineAll || slices.Contains(outlineNames, c.name) {
			info.Outline, info.OutlinePreview = fileOutline(tp.Uploads, c.name, neutralize)
		}
		out.Files = append(out.Files, info)
	}
	return tool.JSON(out)
}

// outlineSelection reads include_outline: a boolean, or a list of file
// names (the schema allows nothing else; a null is false).
func outlineSelection(v any) (all bool, names []string, res *tool.Result) {
	switch v := v.(type) {
	case nil:
		return false, nil, nil
	case bool:
		return v, nil, nil
	case []any:
		for _, n := range v {
			s, ok := n.(string)
			if !ok {
				return false, nil, tool.Errorf("include_outline: a list must hold file names (strings)")
			}
			names = append(names, s)
		}
		return false, names, nil
	}
	return false, nil, tool.Errorf("include_outline must be true, false or a list of file names")
}

// uploadCandidate is one listed file.
type uploadCandidate struct {
	name  string
	size  int64
	mtime int64 // UnixNano
}

// historicalUploads returns the uploads folder's regular files, newest
// first, without those of the current run, conversion artifacts and
// staging files; or the result that answers instead (no folder, a folder
// that cannot be read).
func historicalUploads(tp vpath.ThreadPaths, call *tool.Call) ([]uploadCandidate, *tool.Result) {
	empty := func(msg string) *tool.Result {
		r, _ := tool.JSON(listUploadedFilesResult{Files: []uploadedFileInfo{}, Message: msg})
		return r
	}
	// An uploads folder replaced by a symlink out of the thread's folder
	// holds no uploads of the thread.
	if rel, err := filepath.Rel(realPath(tp.Base), realPath(tp.Uploads)); err != nil || !filepath.IsLocal(rel) {
		return nil, empty("No uploads directory for this thread.")
	}
	dir, err := os.Open(tp.Uploads)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, empty("No uploads directory for this thread.")
	}
	if err != nil {
		return nil, empty("Failed to read uploads directory: " + vpath.Uploads)
	}
	defer dir.Close()
	entries, err := dir.ReadDir(listUploadsMaxEntries)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, empty("Failed to read uploads directory: " + vpath.Uploads)
	}
	current := currentRunUploads(call)
	stems := map[string]int{} // stem -> number of regular files with it
	var files []fs.DirEntry
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), uploadStagingPrefix) {
			files = append(files, e)
			stems[strings.TrimSuffix(e.Name(), filepath.Ext(e.Name()))]++
		}
	}
	var cands []uploadCandidate
	for _, e := range files {
		name := e.Name()
		if current[name] {
			continue
		}
		// A .md beside another file of its stem is that file's conversion.
		if strings.HasSuffix(name, ".md") && stems[strings.TrimSuffix(name, ".md")] > 1 {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed since the listing
		}
		cands = append(cands, uploadCandidate{name: name, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
	}
	slices.SortStableFunc(cands, func(a, b uploadCandidate) int {
		return cmp.Or(cmp.Compare(b.mtime, a.mtime), strings.Compare(a.name, b.name))
	})
	return cands, nil
}

// omittedSummary counts the files left out by extension ("2 .csv, 1
// .pdf"), in the extensions' order.
func omittedSummary(rest []uploadCandidate, neutralize func(string) string) string {
	counts := map[string]int{}
	for _, c := range rest {
		ext := strings.ToLower(filepath.Ext(c.name))
		if ext == "" {
			ext = "(no extension)"
		}
		counts[neutralize(ext)]++
	}
	parts := make([]string, 0, len(counts))
	for _, ext := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[ext], ext))
	}
	return neutralize(strings.Join(parts, ", "))
}

// currentRunUploads are the names of the files uploaded with this run:
// the state's uploaded_files (DeerFlow's uploads middleware sets them)
// and the files attached to the last human message (how Antler's gateway
// passes them).
func currentRunUploads(call *tool.Call) map[string]bool {
	current := map[string]bool{}
	if call.State == nil {
		return current
	}
	for _, f := range call.State.UploadedFiles {
		current[f.Filename] = true
	}
	msgs := call.State.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != model.RoleUser {
			continue
		}
		files, _ := msgs[i].Meta["files"].([]any)
		for _, f := range files {
			if fm, ok := f.(map[string]any); ok {
				if name, _ := fm["filename"].(string); name != "" {
					current[name] = true
				}
			}
		}
		break
	}
	return current
}
