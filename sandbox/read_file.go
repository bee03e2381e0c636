package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

//go:embed read_file.md
var readFileDoc string

const readFileSchema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "Why you are reading this file, in a few words. Always give this argument first."},
    "path": {"type": "string", "description": "The absolute path of the file to read."},
    "start_line": {"type": "integer", "description": "First line to return (1-based, inclusive). Leave out to start at the first line."},
    "end_line": {"type": "integer", "description": "Last line to return (1-based, inclusive). Leave out to read to the end."}
  },
  "required": ["description", "path"]
}`

type readFileArgs struct {
	Description string `json:"description"`
	Path        string `json:"path"`
	StartLine   *int   `json:"start_line,omitempty"`
	EndLine     *int   `json:"end_line,omitempty"`
}

// binaryGuidance is DeerFlow's text for a file that is not UTF-8 text.
func binaryGuidance(p string) string {
	return "cannot read '" + p + "' as text — it appears to be a binary file (e.g. .xlsx, .pdf, or an image). " +
		"read_file only supports UTF-8 text. Use bash with a suitable library instead (pandas/openpyxl for spreadsheets), or view_image for images."
}

// ReadFile returns the read_file tool. A successful read stamps the read
// mark that the read-before-write gate checks.
func (t *Tools) ReadFile() *tool.Tool {
	return t.gated(NameReadFile, newTool(NameReadFile, readFileDoc, readFileSchema, t.readFile))
}

func (t *Tools) readFile(ctx context.Context, call *tool.Call, in readFileArgs) (*tool.Result, error) {
	sb, res, err := t.sandbox(ctx, call)
	if res != nil || err != nil {
		return res, err
	}
	if r := t.skillBlocked(sb, in.Path); r != nil {
		return r, nil
	}
	if in.StartLine != nil && *in.StartLine < 1 {
		return tool.Text("(start_line must be >= 1)"), nil
	}
	start := 1
	if in.StartLine != nil {
		start = *in.StartLine
	}
	if in.EndLine != nil && *in.EndLine < 1 {
		return tool.Text("(end_line must be >= 1)"), nil
	}
	if in.EndLine != nil && start > *in.EndLine {
		return tool.Text("(start_line > end_line — no lines in range)"), nil
	}
	target, err := sb.Resolve(in.Path, vpath.Read)
	if err != nil {
		return pathError(err), nil
	}
	opts := scanOptions{collect: true, keep: t.cfg.Sandbox.ReadFileOutputMaxChars}
	if in.StartLine != nil || in.EndLine != nil {
		opts.ranged, opts.start = true, start
		if in.EndLine != nil {
			opts.end = *in.EndLine
		}
	}
	if sb.wasRewritten(target.Host) {
		opts.mask = sb.Mask
	}
	scan, err := scanTarget(target, opts)
	if err != nil {
		switch classify(err) {
		case classNotExist:
			return tool.Errorf("File not found: %s", in.Path), nil
		case classPermission:
			return tool.Errorf("Permission denied reading file: %s", in.Path), nil
		case classIsDir:
			return tool.Errorf("Path is a directory, not a file: %s", in.Path), nil
		case classEscape:
			return tool.Errorf("%s", vpath.TraversalMessage), nil
		}
		return tool.Errorf("Unexpected error reading file: %s", unexpected(sb, err)), nil
	}
	if scan.binary {
		return tool.Errorf("%s", binaryGuidance(in.Path)), nil
	}
	sb.reads.Mark(target.Host, scan.sum)
	if scan.total == 0 {
		if in.StartLine != nil && *in.StartLine > 1 {
			return tool.Text("(start_line exceeds file length)"), nil
		}
		return tool.Text("(empty)"), nil
	}
	r := tool.Text(truncateHeadOf(scan.head, scan.total, t.cfg.Sandbox.ReadFileOutputMaxChars, readFileHint))
	r.Meta = map[string]any{"read_sha256": scan.sum}
	return r, nil
}

// scanTarget opens the file at t and scans it once (see scanText): the
// whole file is read, to hash it for the read mark, but only the output
// cap of its text is kept.
func scanTarget(t vpath.Target, opts scanOptions) (textScan, error) {
	f, err := openTargetFile(t)
	if err != nil {
		return textScan{}, err
	}
	defer f.Close()
	return scanText(f, opts)
}

// isBinary reports whether data is not text: invalid UTF-8, or a NUL byte
// in its first 8 KiB.
func isBinary(data []byte) bool {
	head := data[:min(len(data), 8192)]
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(data)
}

// normalizeNewlines turns \r\n and lone \r into \n, as Python's text mode
// reads them.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
