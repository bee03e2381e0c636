package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"
)

// The chat's line history (README.md, "Using it").
const (
	// chatHistoryMax is how many lines the history file keeps (the
	// newest); it is also the line editor's own limit.
	chatHistoryMax = 1000
	// chatHistoryMaxLine is the longest line kept: longer lines (a
	// pasted document) are sent but not remembered.
	chatHistoryMaxLine = 4096
	// chatHistoryName is the file's name under chatHistoryDir.
	chatHistoryName = "chat_history"
)

// chatHistoryPath is the per-user history file: $XDG_STATE_HOME/antler,
// else ~/.local/state/antler on Unix; the user's config folder elsewhere.
// "" when no such folder can be named.
func chatHistoryPath(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "antler", chatHistoryName)
	}
	if runtime.GOOS != "windows" {
		if h := getenv("HOME"); filepath.IsAbs(h) {
			return filepath.Join(h, ".local", "state", "antler", chatHistoryName)
		}
		return ""
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "antler", chatHistoryName)
}

// chatHistory is the history file: one line per entry, oldest first,
// written whole (atomically, mode 0600: a chat may hold secrets) after
// every line.
type chatHistory struct {
	path  string
	lines []string
}

// loadChatHistory reads the file at path; a missing file is an empty
// history. Lines that are not UTF-8 or too long are dropped.
func loadChatHistory(path string) (*chatHistory, error) {
	h := &chatHistory{path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		h.add(sc.Text())
	}
	return h, sc.Err()
}

// add appends line (not a repeat of the last one, not blank, not too
// long, one line) and drops the oldest past chatHistoryMax. It reports
// whether the line was kept.
func (h *chatHistory) add(line string) bool {
	if strings.TrimSpace(line) == "" || len(line) > chatHistoryMaxLine || strings.ContainsAny(line, "\r\n") ||
		!utf8.ValidString(line) || len(h.lines) > 0 && h.lines[len(h.lines)-1] == line {
		return false
	}
	h.lines = append(h.lines, line)
	if n := len(h.lines) - chatHistoryMax; n > 0 {
		h.lines = append(h.lines[:0], h.lines[n:]...)
	}
	return true
}

// save writes the history: a temporary file of mode 0600 beside it,
// renamed over it; the folder is created with mode 0700.
func (h *chatHistory) save() error {
	if h.path == "" {
		return nil
	}
	dir := filepath.Dir(h.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+chatHistoryName+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	var b strings.Builder
	for _, l := range h.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, h.path)
	}
	if err != nil {
		return fmt.Errorf("chat history %s: %w", h.path, err)
	}
	return nil
}
