package acptools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// maxReadBytes bounds a file the agent reads through fs/read_text_file.
const maxReadBytes = 8 << 20

// errCodeResourceNotFound is ACP's "Resource not found" error code.
const errCodeResourceNotFound = -32002

// workspace serves an agent's fs/* requests inside one directory. Every
// path is opened through an os.Root, so neither ".." nor a symlink can
// lead outside it.
type workspace struct {
	dir     string   // absolute, as configured
	aliases []string // dir and, if different, its symlink-resolved form
	root    *os.Root
}

func openWorkspace(dir string) (*workspace, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	w := &workspace{dir: dir, aliases: []string{dir}, root: root}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		w.aliases = append(w.aliases, real)
	}
	return w, nil
}

func (w *workspace) Close() error { return w.root.Close() }

// rel returns p relative to the workspace, or an invalid-params error for
// a relative path or one outside the workspace.
func (w *workspace) rel(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", outsideError(p, "path must be absolute")
	}
	clean := filepath.Clean(p)
	for _, base := range w.aliases {
		r, err := filepath.Rel(base, clean)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
			continue
		}
		return r, nil
	}
	return "", outsideError(p, "path is outside the agent workspace "+w.dir)
}

func outsideError(p, msg string) error {
	return acp.NewInvalidParams(map[string]any{"path": p, "error": msg})
}

// fsError turns a file-system error into the JSON-RPC error the agent
// receives. Errors from os.Root that mean "escapes the root" are reported
// as outside the workspace.
func (w *workspace) fsError(p string, err error) error {
	var re *acp.RequestError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, fs.ErrNotExist):
		return &acp.RequestError{Code: errCodeResourceNotFound, Message: "Resource not found", Data: map[string]any{"path": p}}
	case strings.Contains(err.Error(), "path escapes from parent"):
		return outsideError(p, "path is outside the agent workspace "+w.dir)
	}
	return acp.NewInternalError(map[string]any{"path": p, "error": stripPath(err)})
}

// stripPath drops the *PathError wrapper, whose path is relative to the
// root and would confuse the agent.
func stripPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// read returns the file's text, or lines [line, line+limit) of it
// (line is 1-based; nil means from the start or to the end).
func (w *workspace) read(p string, line, limit *int) (string, error) {
	r, err := w.rel(p)
	if err != nil {
		return "", err
	}
	f, err := w.root.Open(r)
	if err != nil {
		return "", w.fsError(p, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return "", w.fsError(p, err)
	} else if st.IsDir() {
		return "", acp.NewInvalidParams(map[string]any{"path": p, "error": "path is a directory"})
	}
	data, err := io.ReadAll(io.LimitReader(f, maxReadBytes+1))
	if err != nil {
		return "", w.fsError(p, err)
	}
	if len(data) > maxReadBytes {
		return "", acp.NewInvalidParams(map[string]any{"path": p, "error": fmt.Sprintf("file is larger than %d bytes", maxReadBytes)})
	}
	return sliceLines(string(data), line, limit), nil
}

func sliceLines(s string, line, limit *int) string {
	if line == nil && limit == nil {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := 0
	if line != nil && *line > 1 {
		start = min(*line-1, len(lines))
	}
	end := len(lines)
	if limit != nil && *limit >= 0 && start+*limit < end {
		end = start + *limit
	}
	return strings.Join(lines[start:end], "")
}

// write replaces the file atomically: the content goes to a temporary
// file in the same folder, is synced and renamed over the target.
// Missing parent folders are created. An existing file keeps its mode.
func (w *workspace) write(p, content string) error {
	r, err := w.rel(p)
	if err != nil {
		return err
	}
	if r == "." {
		return acp.NewInvalidParams(map[string]any{"path": p, "error": "path is the workspace itself"})
	}
	dir := filepath.Dir(r)
	if err := w.root.MkdirAll(dir, 0o755); err != nil {
		return w.fsError(p, err)
	}
	mode := fs.FileMode(0o644)
	if st, err := w.root.Lstat(r); err == nil {
		if st.IsDir() {
			return acp.NewInvalidParams(map[string]any{"path": p, "error": "path is a directory"})
		}
		if st.Mode().IsRegular() {
			mode = st.Mode().Perm()
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(r)+".acp-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return w.fsError(p, err)
	}
	_, werr := io.WriteString(f, content)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = w.root.Rename(tmp, r)
	}
	if werr != nil {
		_ = w.root.Remove(tmp)
		return w.fsError(p, werr)
	}
	if d, err := w.root.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
