package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/vpath"
)

// errNoToolResultStore is why an output could not be saved when there is
// no layout or no thread to save it under.
var errNoToolResultStore = errors.New("no thread outputs folder for tool results")

// Naming of saved tool outputs: "{tool}-{12 hex digits}.{ext}", as
// DeerFlow names them, in the thread's outputs folder under the
// configured storage_subdir. A write goes through a temporary file named
// as package sandbox names its own ("." + name + ".antler-tmp-" + 12 hex
// digits), so that one left by a crash is removed when the thread's
// sandbox is next opened.
const (
	toolResultIDBytes = 6 // 12 hex digits
	toolResultTempTag = ".antler-tmp-"
	// toolResultNameTries bounds the names tried when a name is taken.
	toolResultNameTries = 8
)

// toolResultExt is DeerFlow's extension map: shell and fetch outputs are
// logs, everything else text.
func toolResultExt(toolName string) string {
	switch toolName {
	case "bash", "bash_tool", "web_fetch":
		return "log"
	}
	return "txt"
}

// sanitizeToolName is DeerFlow's _sanitize_tool_name: the last path
// segment, with "..", "/" and "\" taken out ("unknown" when nothing is
// left).
func sanitizeToolName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ReplaceAll(name, "..", "")
	name = strings.NewReplacer("/", "_", `\`, "_").Replace(name)
	if name == "" {
		return "unknown"
	}
	return name
}

// validStorageSubdir reports whether s is one path segment (config
// validation refuses anything else; this guards direct use).
func validStorageSubdir(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && !strings.Contains(s, "..")
}

// toolResultStore writes tool outputs into a thread's outputs folder.
// Every file operation goes through os.Root at the thread's own folder,
// so an outputs folder (or user-data) that is a symlink leading out of
// the thread is refused, never followed.
type toolResultStore struct {
	layout *vpath.Layout // nil: nothing can be saved
	subdir string
}

// saveText writes text as a new file for toolName with extension ext and
// returns its virtual path. Invalid UTF-8 is written as U+FFFD, so that
// read_file reads the file as text.
func (s toolResultStore) saveText(user, threadID, toolName, ext, text string) (string, error) {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return s.save(user, threadID, toolName, ext, text)
}

// saveBytes writes data as it is (an image) as a new file.
func (s toolResultStore) saveBytes(user, threadID, toolName, ext string, data []byte) (string, error) {
	return s.save(user, threadID, toolName, ext, string(data))
}

// save writes data as a new file for toolName with extension ext and
// returns its virtual path. The file appears whole or not at all, and
// never replaces another file.
func (s toolResultStore) save(user, threadID, toolName, ext, data string) (string, error) {
	if s.layout == nil || threadID == "" {
		return "", errNoToolResultStore
	}
	if !validStorageSubdir(s.subdir) {
		return "", fmt.Errorf("storage_subdir %q is not a single path segment", s.subdir)
	}
	tp, err := s.layout.ThreadPaths(user, threadID)
	if err != nil {
		return "", err
	}
	outputs, err := filepath.Rel(tp.Base, tp.Outputs)
	if err != nil || !filepath.IsLocal(outputs) {
		return "", fmt.Errorf("outputs folder %s is not inside the thread's folder", tp.Outputs)
	}
	if err := os.MkdirAll(tp.Base, 0o755); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(tp.Base)
	if err != nil {
		return "", err
	}
	defer root.Close()
	dir := path.Join(filepath.ToSlash(outputs), s.subdir)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name, err := writeNewFile(root, dir, sanitizeToolName(toolName), ext, data)
	if err != nil {
		return "", err
	}
	return vpath.Outputs + "/" + s.subdir + "/" + name, nil
}

// writeNewFile writes data to a temporary file in dir, syncs it, and
// links it under a fresh name (a hard link never replaces an existing
// file; where links are not supported, a rename after checking that the
// name is free). It returns the name.
func writeNewFile(root *os.Root, dir, prefix, ext, data string) (string, error) {
	tmp := path.Join(dir, "."+prefix+toolResultTempTag+randomHex(toolResultIDBytes))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	_, werr := io.WriteString(f, data) // no copy of a large output
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = root.Remove(tmp)
		return "", err
	}
	defer func() { _ = root.Remove(tmp) }() // already gone after a rename
	for range toolResultNameTries {
		name := prefix + "-" + randomHex(toolResultIDBytes) + "." + ext
		target := path.Join(dir, name)
		err := root.Link(tmp, target)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			if _, serr := root.Lstat(target); !errors.Is(serr, fs.ErrNotExist) {
				continue
			}
			if err := root.Rename(tmp, target); err != nil {
				return "", err
			}
		}
		if d, err := root.Open(dir); err == nil {
			_ = d.Sync()
			_ = d.Close()
		}
		return name, nil
	}
	return "", fmt.Errorf("no free file name for %s output after %d tries", prefix, toolResultNameTries)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
