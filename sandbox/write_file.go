package sandbox

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

//go:embed write_file.md
var writeFileDoc string

const writeFileSchema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "Why you are writing this file, in a few words. Always give this argument first."},
    "path": {"type": "string", "description": "The absolute path of the file to write. Always give this argument second."},
    "content": {"type": "string", "description": "The text to write. Always give this argument third."},
    "append": {"type": "boolean", "description": "Add the content at the end of the file instead of replacing it. Default false.", "default": false}
  },
  "required": ["description", "path", "content"]
}`

type writeFileArgs struct {
	Description string `json:"description"`
	Path        string `json:"path"`
	Content     string `json:"content"`
	Append      bool   `json:"append,omitempty"`
}

// writeFileMaxBytesEnv overrides the single-call write_file limit.
const writeFileMaxBytesEnv = "DEERFLOW_WRITE_FILE_MAX_BYTES"

// defaultWriteFileCallMaxBytes is DeerFlow's single-call limit (80 KiB).
const defaultWriteFileCallMaxBytes = 80 * 1024

// writeErrorMaxChars bounds write_file error texts.
const writeErrorMaxChars = 2000

// WriteFile returns the write_file tool.
func (t *Tools) WriteFile() *tool.Tool {
	return t.gated(NameWriteFile, newTool(NameWriteFile, writeFileDoc, writeFileSchema, t.writeFile))
}

// callMaxBytes returns the single-call limit: the environment override
// when it parses as an integer (<= 0 disables), else 80 KiB.
func (t *Tools) callMaxBytes() int {
	raw := strings.TrimSpace(t.getenv(writeFileMaxBytesEnv))
	if raw == "" {
		return defaultWriteFileCallMaxBytes
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return defaultWriteFileCallMaxBytes
	}
	return n
}

func (t *Tools) writeFile(ctx context.Context, call *tool.Call, in writeFileArgs) (*tool.Result, error) {
	if !in.Append {
		if limit := t.callMaxBytes(); limit > 0 && len(in.Content) > limit {
			return tool.Errorf("write_file content (%d bytes) exceeds the %d-byte single-call limit. Split the content into smaller "+
				"pieces: either (a) write the first section now, then use `str_replace` for further edits, or (b) call "+
				"write_file again with append=True carrying the next section. See SIZE POLICY in the tool docstring or "+
				"issue #3189 for the rationale.", len(in.Content), limit), nil
		}
	}
	sb, res, err := t.sandbox(ctx, call)
	if res != nil || err != nil {
		return res, err
	}
	target, err := sb.Resolve(in.Path, vpath.Write)
	if err != nil {
		return pathError(err), nil
	}
	content := in.Content
	rewritten := false
	if t.rewriteContent() {
		if c := sb.layout.ToHostText(sb.user, sb.thread, content); c != content {
			content, rewritten = c, true
		}
	}
	unlock := sb.fileLocks.lock(target.Host)
	defer unlock()
	if err := t.checkFileCeiling(target, len(content), in.Append); err != nil {
		return writeError(sb, in.Path, err), nil
	}
	if err := writeTarget(target, []byte(content), in.Append); err != nil {
		return writeError(sb, in.Path, err), nil
	}
	sb.reads.Forget(target.Host)
	if in.Append {
		rewritten = rewritten || sb.wasRewritten(target.Host)
	}
	sb.markWritten(target.Host, rewritten)
	return tool.Text("OK"), nil
}

// errTooLarge is a write over sandbox.write_file_max_bytes.
type errTooLarge struct{ size, limit int64 }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("the file would be %d bytes, over the sandbox.write_file_max_bytes limit of %d bytes", e.size, e.limit)
}

// checkFileCeiling applies sandbox.write_file_max_bytes (Antler) to the
// file a write would produce.
func (t *Tools) checkFileCeiling(target vpath.Target, n int, appendMode bool) error {
	limit := t.cfg.Sandbox.WriteFileMaxBytes
	if limit <= 0 {
		return nil
	}
	size := int64(n)
	if appendMode {
		if fi, err := statTarget(target); err == nil && !fi.IsDir() {
			size += fi.Size()
		}
	}
	if size > limit {
		return errTooLarge{size, limit}
	}
	return nil
}

// writeError words a write failure as DeerFlow does, bounded to 2000
// characters.
func writeError(sb *Sandbox, p string, err error) *tool.Result {
	var msg string
	switch classify(err) {
	case classPermission:
		msg = "Error: Permission denied writing to file: " + p
	case classIsDir:
		msg = "Error: Path is a directory, not a file: " + p
	case classEscape:
		msg = "Error: " + vpath.TraversalMessage
	default:
		header := "Error: Failed to write file '" + p + "'"
		detail := unexpected(sb, err)
		if e, ok := err.(errTooLarge); ok {
			detail = "FileTooLarge: " + e.Error()
		}
		budget := writeErrorMaxChars - len([]rune(header)) - 2
		if budget <= 0 {
			msg = truncateMiddle(header+": "+detail, writeErrorMaxChars, "write_file error truncated")
		} else {
			msg = header + ": " + truncateMiddle(detail, budget, "write_file error truncated")
		}
	}
	return tool.Errorf("%s", truncateMiddle(msg, writeErrorMaxChars, "write_file error truncated"))
}
