package sandbox

import (
	"context"
	_ "embed"
	"strings"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

//go:embed str_replace.md
var strReplaceDoc string

const strReplaceSchema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "Why you are changing this file, in a few words. Always give this argument first."},
    "path": {"type": "string", "description": "The absolute path of the file to change. Always give this argument second."},
    "old_str": {"type": "string", "description": "The text to replace. Always give this argument third."},
    "new_str": {"type": "string", "description": "The replacement text. Always give this argument fourth."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of only the first. Default false.", "default": false}
  },
  "required": ["description", "path", "old_str", "new_str"]
}`

type strReplaceArgs struct {
	Description string `json:"description"`
	Path        string `json:"path"`
	OldStr      string `json:"old_str"`
	NewStr      string `json:"new_str"`
	ReplaceAll  bool   `json:"replace_all,omitempty"`
}

// StrReplace returns the str_replace tool. The read, replace and write
// happen under one lock per (sandbox, path), so concurrent edits of one
// file in a step do not lose each other's changes.
func (t *Tools) StrReplace() *tool.Tool {
	return t.gated(NameStrReplace, newTool(NameStrReplace, strReplaceDoc, strReplaceSchema, t.strReplace))
}

func (t *Tools) strReplace(ctx context.Context, call *tool.Call, in strReplaceArgs) (*tool.Result, error) {
	sb, res, err := t.sandbox(ctx, call)
	if res != nil || err != nil {
		return res, err
	}
	target, err := sb.Resolve(in.Path, vpath.Write)
	if err != nil {
		return pathError(err), nil
	}
	unlock := sb.fileLocks.lock(target.Host)
	defer unlock()
	data, err := readTarget(target)
	if err != nil {
		switch classify(err) {
		case classNotExist:
			return tool.Errorf("File not found: %s", in.Path), nil
		case classPermission:
			return tool.Errorf("Permission denied accessing file: %s", in.Path), nil
		case classIsDir:
			return tool.Errorf("Path is a directory, not a file: %s", in.Path), nil
		case classEscape:
			return tool.Errorf("%s", vpath.TraversalMessage), nil
		}
		return tool.Errorf("Unexpected error replacing string: %s", unexpected(sb, err)), nil
	}
	if isBinary(data) {
		return tool.Errorf("%s", binaryGuidance(in.Path)), nil
	}
	if in.OldStr == "" {
		return tool.Text("OK"), nil
	}
	content := normalizeNewlines(string(data))
	rewritten := sb.wasRewritten(target.Host)
	if rewritten {
		content = sb.Mask(content)
	}
	if !strings.Contains(content, in.OldStr) {
		return tool.Errorf("String to replace not found in file: %s", in.Path), nil
	}
	n := 1
	if in.ReplaceAll {
		n = -1
	}
	content = strings.Replace(content, in.OldStr, in.NewStr, n)
	if t.rewriteContent() {
		if c := sb.layout.ToHostText(sb.user, sb.thread, content); c != content {
			content, rewritten = c, true
		}
	}
	if err := t.checkFileCeiling(target, len(content), false); err != nil {
		return tool.Errorf("Unexpected error replacing string: %s", "FileTooLarge: "+err.Error()), nil
	}
	if err := writeTarget(target, []byte(content), false); err != nil {
		if classify(err) == classPermission {
			return tool.Errorf("Permission denied accessing file: %s", in.Path), nil
		}
		return tool.Errorf("Unexpected error replacing string: %s", unexpected(sb, err)), nil
	}
	sb.reads.Forget(target.Host)
	sb.markWritten(target.Host, rewritten)
	return tool.Text("OK"), nil
}
