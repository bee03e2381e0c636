package sandbox

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

//go:embed glob.md
var globDoc string

const globSchema = `{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "Why you are searching for these paths, in a few words. Always give this argument first."},
    "pattern": {"type": "string", "description": "The glob pattern, relative to the root path, for example **/*.py."},
    "path": {"type": "string", "description": "The absolute path of the root directory to search under."},
    "include_dirs": {"type": "boolean", "description": "Also return matching directories. Default false.", "default": false},
    "max_results": {"type": "integer", "description": "The most paths to return. Default 200.", "default": 200}
  },
  "required": ["description", "pattern", "path"]
}`

type globArgs struct {
	Description string `json:"description"`
	Pattern     string `json:"pattern"`
	Path        string `json:"path"`
	IncludeDirs bool   `json:"include_dirs,omitempty"`
	MaxResults  *int   `json:"max_results,omitempty"`
}

// The glob limits.
const (
	defaultGlobMaxResults = 200
	maxGlobMaxResults     = 1000
)

// Glob returns the glob tool. configuredMax is the max_results option of
// its tools[] entry (<= 0: 200; at most 1000).
func (t *Tools) Glob(configuredMax int) *tool.Tool {
	return newTool(NameGlob, globDoc, globSchema, func(ctx context.Context, call *tool.Call, in globArgs) (*tool.Result, error) {
		return t.glob(ctx, call, in, configuredMax)
	})
}

func (t *Tools) glob(ctx context.Context, call *tool.Call, in globArgs, configuredMax int) (*tool.Result, error) {
	sb, res, err := t.sandbox(ctx, call)
	if res != nil || err != nil {
		return res, err
	}
	if r := t.skillBlocked(sb, in.Path); r != nil {
		return r, nil
	}
	limit := effectiveMax(in.MaxResults, configuredMax, defaultGlobMaxResults, maxGlobMaxResults)
	target, err := sb.Resolve(in.Path, vpath.Read)
	if err != nil {
		return pathError(err), nil
	}
	r, err := openJail(target)
	if err != nil {
		return searchError(sb, in.Path, err, "Unexpected error searching paths"), nil
	}
	defer r.Close()
	var matches []string
	truncated := false
	err = walkTree(r, target, func(e walkEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		isDir := e.isDir
		if e.symlink {
			st, err := r.Stat(e.full) // refuses targets outside the jail
			if err != nil {
				return nil
			}
			isDir = st.IsDir()
		}
		if isDir && !in.IncludeDirs {
			return nil
		}
		if !pathMatches(in.Pattern, e.rel) || t.hiddenBySkill(sb, e.virtual) {
			return nil
		}
		if len(matches) == limit {
			truncated = true
			return errStop
		}
		matches = append(matches, e.virtual)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return searchError(sb, in.Path, err, "Unexpected error searching paths"), nil
	}
	if len(matches) == 0 {
		return tool.Text("No files matched under " + in.Path), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d paths under %s", len(matches), in.Path)
	if truncated {
		fmt.Fprintf(&b, " (showing first %d)", len(matches))
	}
	for i, m := range matches {
		fmt.Fprintf(&b, "\n%d. %s", i+1, m)
	}
	if truncated {
		b.WriteString("\nResults truncated. Narrow the path or pattern to see fewer matches.")
	}
	return tool.Text(sb.Mask(b.String())), nil
}

// searchError words a glob or grep failure.
func searchError(sb *Sandbox, p string, err error, unexpectedPrefix string) *tool.Result {
	switch classify(err) {
	case classNotExist:
		return tool.Errorf("Directory not found: %s", p)
	case classNotDir, classIsDir:
		return tool.Errorf("Path is not a directory: %s", p)
	case classPermission:
		return tool.Errorf("Permission denied: %s", p)
	case classEscape:
		return tool.Errorf("%s", vpath.TraversalMessage)
	}
	return tool.Errorf("%s: %s", unexpectedPrefix, unexpected(sb, err))
}
