package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// WriteBlockMeta is the Result.Meta key of a call the gate refused:
// {"path": virtual path, "tool": name}.
const WriteBlockMeta = "deerflow_write_block"

// ReadBeforeWrite returns the read-before-write gate (DeerFlow's agents/middlewares item
// 11) as a middleware over calls named write_file, str_replace and
// read_file; other calls pass through.
//
// write_file and str_replace on an existing file are refused unless the
// newest read_file of that path saw the file's current content (its
// sha256). Writes never refresh a mark, so every write invalidates earlier
// reads. New files pass. If the gate cannot inspect the file it lets the
// call through, and the tool reports its own error (fail-open, as
// DeerFlow).
//
// The gate check and the call run under a lock per (sandbox, path), and
// read_file runs under the same lock, so that two writes of one step
// cannot both pass on one stale mark and a mark always hashes the version
// the model was shown.
//
// The tools built by [Tools] already include the gate when
// read_before_write.enabled is true (the default); add this middleware
// only around other implementations of these tools, never twice around
// the same call.
func ReadBeforeWrite(p Provider) tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if call == nil {
				return next(ctx, call, args)
			}
			switch call.Name {
			case NameWriteFile, NameStrReplace, NameReadFile:
				return gate(ctx, p, call.Name, next, call, args)
			}
			return next(ctx, call, args)
		}
	}
}

// gated wraps a tool's handler with the gate when read_before_write is
// enabled.
func (t *Tools) gated(kind string, tl *tool.Tool) *tool.Tool {
	if !t.cfg.ReadBeforeWrite.Enabled {
		return tl
	}
	inner := tl.Handler
	p := t.provider
	tl.Handler = func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
		return gate(ctx, p, kind, inner, call, args)
	}
	return tl
}

func gate(ctx context.Context, p Provider, kind string, next tool.Handler, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
	var a struct {
		Path *string `json:"path"`
	}
	if call == nil || call.ThreadID == "" || json.Unmarshal(args, &a) != nil || a.Path == nil {
		return next(ctx, call, args)
	}
	user := call.UserID
	if user == "" {
		user = "default"
	}
	sb, err := p.Acquire(ctx, user, call.ThreadID)
	if err != nil {
		return next(ctx, call, args)
	}
	access := vpath.Write
	if kind == NameReadFile {
		access = vpath.Read
	}
	target, err := sb.Resolve(*a.Path, access)
	if err != nil {
		return next(ctx, call, args) // the tool words the refusal
	}
	unlock := sb.gateLocks.lock(target.Host)
	defer unlock()
	if kind == NameReadFile {
		return next(ctx, call, args)
	}
	// One streaming pass: the file's hash and line count, in bounded memory.
	scan, err := scanTarget(target, scanOptions{})
	if err != nil || scan.binary {
		return next(ctx, call, args) // new file, or cannot inspect: fail open
	}
	if sum, ok := sb.reads.Get(target.Host); ok && sum == scan.sum {
		return next(ctx, call, args)
	}
	r := tool.Errorf("%s", blockMessage(kind, *a.Path, scan.lines))
	r.Meta = map[string]any{WriteBlockMeta: map[string]string{"path": path.Clean(target.Virtual), "tool": kind}}
	return r, nil
}

// blockMessage is DeerFlow's text for a refused write.
func blockMessage(toolName, p string, lines int) string {
	desc := fmt.Sprintf("%d lines", lines)
	if lines == 1 {
		desc = "1 line"
	}
	hint := "Call read_file on it first, check what is already there, then retry."
	if lines > 0 {
		hint = fmt.Sprintf("Call read_file on it first (e.g. start_line=%d, end_line=%d), check what is already there, then retry.",
			max(1, lines-29), lines)
	}
	return fmt.Sprintf("Error: %s blocked — %s already exists (%s) and you have not read its current version. "+
		"Any write invalidates earlier reads, so re-read before every modification. %s", toolName, p, desc, hint)
}
