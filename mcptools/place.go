package mcptools

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// maxSnapshotFiles bounds the workspace snapshot taken before a thread's
// stdio call: a workspace with more files (not counting .mcp/) is not
// snapshot, and bare file names in the call's results are then left as
// they are. Paths with a slash are translated regardless. The walk costs
// about 9 µs a file (one lstat each), so the bound is also the most a
// large workspace (a cloned repository) adds to every call: ~9 ms.
const maxSnapshotFiles = 1024

// threadPlace is the thread a thread's stdio call runs for, with its
// folders created.
type threadPlace struct {
	paths  vpath.ThreadPaths
	tmp    string // paths.Workspace/.mcp/tmp, mode 0700
	masker *vpath.Masker
}

// prepareThread creates the folders of (user, thread) and the servers'
// temporary folder in its workspace, as DeerFlow does before every stdio
// call, so that a folder deleted meanwhile comes back.
func (m *Manager) prepareThread(user, thread string) (*threadPlace, error) {
	l := m.opts.Layout
	tp, err := l.EnsureThreadDirs(user, thread)
	if err != nil {
		var ve *vpath.Error
		if errors.As(err, &ve) {
			return nil, err
		}
		return nil, errors.New(l.Mask(user, thread, err.Error()))
	}
	p := &threadPlace{paths: tp,
		tmp: filepath.Join(tp.Workspace, ".mcp", "tmp"), masker: l.Masker(user, thread)}
	if err := os.MkdirAll(p.tmp, 0o700); err != nil {
		return nil, errors.New(p.masker.Mask(fmt.Sprintf("create the temporary folder: %v", err)))
	}
	// MkdirAll leaves an existing folder's mode alone.
	if err := os.Chmod(p.tmp, 0o700); err != nil {
		return nil, errors.New(p.masker.Mask(fmt.Sprintf("create the temporary folder: %v", err)))
	}
	return p, nil
}

// maskResult replaces the host paths of the thread's folders in every
// text block of res by their virtual paths, whatever produced the text
// (the server, its stderr, our own error messages).
func (p *threadPlace) maskResult(res *tool.Result) {
	for i := range res.Content {
		if res.Content[i].Text != "" {
			res.Content[i].Text = p.masker.Mask(res.Content[i].Text)
		}
		if res.Content[i].URI != "" { // a binary block's source
			res.Content[i].URI = p.masker.Mask(res.Content[i].URI)
		}
	}
}

// fileStamp is what a snapshot remembers of a file.
type fileStamp struct {
	mod  time.Time
	size int64
}

// snapshotFiles returns the regular files below dir by path relative to
// dir, leaving out the servers' own .mcp/ at the top, or nil when there
// are more than maxSnapshotFiles of them or dir cannot be read.
func snapshotFiles(dir string) map[string]fileStamp {
	out := map[string]fileStamp{}
	errTooMany := errors.New("too many files")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable corner is not worth failing for
		}
		if d.IsDir() {
			if p != dir && d.Name() == ".mcp" && filepath.Dir(p) == dir {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if len(out) == maxSnapshotFiles {
			return errTooMany
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fileStamp{mod: info.ModTime(), size: info.Size()}
		return nil
	})
	if err != nil {
		return nil
	}
	return out
}

// translator rewrites the local paths of one call's result (DeerFlow's
// local path translation in mcp/tools.py).
type translator struct {
	place  *threadPlace
	cwd    string               // the server's working directory
	before map[string]fileStamp // the workspace before the call; nil if not taken

	changed map[string][]string // by base name: host paths created or modified by the call
	looked  bool                // changed was computed
}

// translator snapshots the workspace and returns the translator of a call
// to a server running in cwd.
func (p *threadPlace) translator(cwd string) *translator {
	if cwd != "" && !filepath.IsAbs(cwd) {
		if abs, err := filepath.Abs(cwd); err == nil {
			cwd = abs
		}
	}
	return &translator{place: p, cwd: cwd, before: snapshotFiles(p.paths.Workspace)}
}

// translateResult rewrites, in place, resource links (file:// URIs) and
// path-like words in text that name an existing file of the thread's
// user-data folder to their /mnt/user-data/... paths.
func (tr *translator) translateResult(r *mcp.CallToolResult) {
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			c.Text = tr.text(c.Text)
		case *mcp.ResourceLink:
			if v, ok := tr.fileURI(c.URI); ok {
				c.URI = v
			}
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				if v, ok := tr.fileURI(c.Resource.URI); ok {
					c.Resource.URI = v
				}
				c.Resource.Text = tr.text(c.Resource.Text)
			}
		}
	}
}

// fileURI returns the virtual path of a file:// URI of an existing file in
// the user-data folder.
func (tr *translator) fileURI(uri string) (string, bool) {
	if len(uri) < 7 || !strings.EqualFold(uri[:7], "file://") {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || (u.Host != "" && u.Host != "localhost") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return tr.virtual(u.Path)
}

// virtual returns the /mnt/user-data/... path of host when it names an
// existing file inside the thread's user-data folder (lexically, or
// through the symlink-resolved spelling of the folder; a symlink elsewhere
// that points into the folder does not count).
func (tr *translator) virtual(host string) (string, bool) {
	if !filepath.IsAbs(host) {
		return "", false
	}
	host = filepath.Clean(host)
	v := tr.place.masker.Mask(host)
	if v == host || (v != vpath.UserData && !strings.HasPrefix(v, vpath.UserData+"/")) {
		return "", false
	}
	if _, err := os.Stat(host); err != nil {
		return "", false
	}
	return v, true
}

// text rewrites the path-like words of s: absolute paths and file:// URIs
// of existing files in the user-data folder, relative paths with a slash
// that resolve (against the server's working directory) to one, and bare
// file names when exactly one file of that name in the workspace was
// created or modified by the call. Trailing punctuation stays. Words are
// separated by white space, quotes and brackets, so a path with a space
// in it is not recognised (the final masking still hides its folder).
func (tr *translator) text(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if isWordSep(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && !isWordSep(s[j]) {
			j++
		}
		word := s[i:j]
		end := len(strings.TrimRight(word, ".,;:!?"))
		v, ok := tr.word(word[:end])
		if !ok && end < len(word) { // a file name may end in a dot
			if v, ok = tr.word(word); ok {
				end = len(word)
			}
		}
		if ok {
			b.WriteString(s[last:i])
			b.WriteString(v)
			last = i + end
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// word returns the virtual path a single word stands for.
func (tr *translator) word(w string) (string, bool) {
	switch {
	case w == "" || w == "." || w == "..":
		return "", false
	case len(w) >= 7 && strings.EqualFold(w[:7], "file://"):
		return tr.fileURI(w)
	case strings.Contains(w, "://"):
		return "", false
	case strings.HasPrefix(w, "/"):
		return tr.virtual(w)
	case strings.Contains(w, "/"):
		if tr.cwd == "" {
			return "", false
		}
		return tr.virtual(filepath.Join(tr.cwd, filepath.FromSlash(w)))
	}
	hosts := tr.changedNamed(w)
	if len(hosts) != 1 {
		return "", false
	}
	return tr.virtual(hosts[0])
}

// changedNamed returns the workspace files named name that the call
// created or modified (compared with the snapshot; none without one).
// Only a name that looks like a file name (a base and an extension with
// a letter: notes.txt, not 3.14 or "Done.") is looked up, so a result
// with no such word costs no second walk of the workspace.
func (tr *translator) changedNamed(name string) []string {
	if tr.before == nil || !looksLikeFileName(name) {
		return nil
	}
	if !tr.looked {
		tr.looked = true
		if tr.before != nil {
			if after := snapshotFiles(tr.place.paths.Workspace); after != nil {
				tr.changed = map[string][]string{}
				for rel, st := range after {
					if old, ok := tr.before[rel]; !ok || !old.mod.Equal(st.mod) || old.size != st.size {
						base := filepath.Base(rel)
						tr.changed[base] = append(tr.changed[base], filepath.Join(tr.place.paths.Workspace, rel))
					}
				}
			}
		}
	}
	return tr.changed[name]
}

// isWordSep reports whether c separates path-like words: white space,
// quotes and brackets.
func isWordSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '<', '>', '(', ')', '[', ']', '{', '}':
		return true
	}
	return false
}

// looksLikeFileName reports whether w is a base name with an extension of
// one to ten letters and digits, at least one of them a letter.
func looksLikeFileName(w string) bool {
	dot := strings.LastIndexByte(w, '.')
	if dot <= 0 || dot == len(w)-1 || len(w)-dot-1 > 10 || strings.ContainsRune(w, '/') {
		return false
	}
	letter := false
	for _, c := range []byte(w[dot+1:]) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return letter
}
