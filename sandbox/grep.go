package sandbox

import (
	"context"
	_ "embed"
	"regexp"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

//go:embed grep.md
var grepDoc string

const grepSchema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "Why you are searching file contents, in a few words. Always give this argument first."},
    "pattern": {"type": "string", "description": "The text or regular expression to search for."},
    "path": {"type": "string", "description": "The absolute path of the file, or of the root directory, to search."},
    "glob": {"type": "string", "description": "Only search files whose path matches this glob, for example **/*.py."},
    "literal": {"type": "boolean", "description": "Treat the pattern as plain text. Default false.", "default": false},
    "case_sensitive": {"type": "boolean", "description": "Match case exactly. Default false.", "default": false},
    "max_results": {"type": "integer", "description": "The most matching lines to return. Default 100.", "default": 100}
  },
  "required": ["description", "pattern", "path"]
}`

type grepArgs struct {
	Description   string  `json:"description"`
	Pattern       string  `json:"pattern"`
	Path          string  `json:"path"`
	Glob          *string `json:"glob,omitempty"`
	Literal       bool    `json:"literal,omitempty"`
	CaseSensitive bool    `json:"case_sensitive,omitempty"`
	MaxResults    *int    `json:"max_results,omitempty"`
}

// The grep limits (the bounds of the scan are in grepscan.go).
const (
	defaultGrepMaxResults = 100
	maxGrepMaxResults     = 500
	grepLineChars         = 200 // a matching line is shown cut to this many characters
)

// Grep returns the grep tool. configuredMax is the max_results option of
// its tools[] entry (<= 0: 100; at most 500).
func (t *Tools) Grep(configuredMax int) *tool.Tool {
	return newTool(NameGrep, grepDoc, grepSchema, func(ctx context.Context, call *tool.Call, in grepArgs) (*tool.Result, error) {
		return t.grep(ctx, call, in, configuredMax)
	})
}

type grepMatch struct {
	virtual string
	line    int
	text    string
}

func (t *Tools) grep(ctx context.Context, call *tool.Call, in grepArgs, configuredMax int) (*tool.Result, error) {
	sb, res, err := t.sandbox(ctx, call)
	if res != nil || err != nil {
		return res, err
	}
	if r := t.skillBlocked(sb, in.Path); r != nil {
		return r, nil
	}
	limit := effectiveMax(in.MaxResults, configuredMax, defaultGrepMaxResults, maxGrepMaxResults)
	target, err := sb.Resolve(in.Path, vpath.Read)
	if err != nil {
		return pathError(err), nil
	}
	src := in.Pattern
	if in.Literal {
		src = regexp.QuoteMeta(src)
	}
	if !in.CaseSensitive {
		src = "(?i)" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return tool.Errorf("Invalid regex pattern: %v", err), nil
	}
	r, err := openJail(target)
	if err != nil {
		return searchError(sb, in.Path, err, "Unexpected error searching file contents"), nil
	}
	defer r.Close()
	fi, err := r.Stat(target.Rel)
	if err != nil {
		return searchError(sb, in.Path, err, "Unexpected error searching file contents"), nil
	}
	g := newGrepSearch(re, limit)
	switch {
	case fi.Mode().IsRegular():
		if _, err := g.file(ctx, r, target.Rel, target.Virtual, true); err != nil {
			return nil, err
		}
	case !fi.IsDir():
		// Never opened: opening a FIFO for reading blocks until a writer comes.
		g.skip(target.Virtual, "not searched: not a regular file")
	default:
		err = walkTree(r, target, func(e walkEntry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !e.regular { // folders, links, and FIFOs, which would block the open
				return nil
			}
			if in.Glob != nil && !pathMatches(*in.Glob, e.rel) {
				return nil
			}
			if t.hiddenBySkill(sb, e.virtual) {
				return nil
			}
			stop, err := g.file(ctx, r, e.full, e.virtual, false)
			if err != nil {
				return err
			}
			if stop {
				return errStop
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return searchError(sb, in.Path, err, "Unexpected error searching file contents"), nil
		}
	}
	return tool.Text(sb.Mask(g.report(in.Path))), nil
}
