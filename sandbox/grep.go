package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

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

// The grep limits.
const (
	DefaultGrepMaxResults = 100
	MaxGrepMaxResults     = 500
	grepMaxFileBytes      = 1_000_000
	grepLineChars         = 200
	grepMaxLineChars      = grepLineChars * 10 // longer lines (minified files) are skipped
)

// Grep returns the grep tool. configuredMax is the max_results option of
// its tools[] entry (<= 0: the default).
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
	limit := effectiveMax(in.MaxResults, configuredMax, DefaultGrepMaxResults, MaxGrepMaxResults)
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
	var matches []grepMatch
	truncated := false
	// search reports whether the limit was passed.
	search := func(full, virtual string) bool {
		data, ok := readSearchable(r, full)
		if !ok {
			return false
		}
		for n, line := range lines(data) {
			if utf8.RuneCount(line) > grepMaxLineChars || !re.Match(line) {
				continue
			}
			if len(matches) == limit {
				truncated = true
				return true
			}
			matches = append(matches, grepMatch{virtual: virtual, line: n, text: summarizeLine(line)})
		}
		return false
	}
	if !fi.IsDir() {
		search(target.Rel, target.Virtual)
	} else {
		err = walkTree(r, target, func(e walkEntry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if e.isDir || e.symlink {
				return nil
			}
			if in.Glob != nil && !pathMatches(*in.Glob, e.rel) {
				return nil
			}
			if t.hiddenBySkill(sb, e.virtual) {
				return nil
			}
			if search(e.full, e.virtual) {
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
	if len(matches) == 0 {
		return tool.Text("No matches found under " + in.Path), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d matches under %s", len(matches), in.Path)
	if truncated {
		fmt.Fprintf(&b, " (showing first %d)", len(matches))
	}
	for _, m := range matches {
		fmt.Fprintf(&b, "\n%s:%d: %s", m.virtual, m.line, m.text)
	}
	if truncated {
		b.WriteString("\nResults truncated. Narrow the path or add a glob filter.")
	}
	return tool.Text(sb.Mask(b.String())), nil
}

// readSearchable reads a regular file of at most 1 MB that is not binary
// (no NUL in its first 8 KiB).
func readSearchable(r *os.Root, name string) ([]byte, bool) {
	f, err := r.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > grepMaxFileBytes {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, grepMaxFileBytes+1))
	if err != nil || len(data) > grepMaxFileBytes {
		return nil, false
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, false
	}
	return data, true
}

// lines yields the 1-based lines of data without their line endings.
func lines(data []byte) func(func(int, []byte) bool) {
	return func(yield func(int, []byte) bool) {
		n := 0
		for len(data) > 0 {
			n++
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if !yield(n, bytes.TrimSuffix(line, []byte("\r"))) {
				return
			}
		}
	}
}

// summarizeLine returns a line as shown in results: invalid UTF-8
// replaced, cut to 200 characters with "...".
func summarizeLine(line []byte) string {
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if utf8.RuneCountInString(s) <= grepLineChars {
		return s
	}
	return string([]rune(s)[:grepLineChars-3]) + "..."
}
