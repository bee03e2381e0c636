package skills

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// writeFileAtomic writes data to name so that readers see either the old
// or the new content: a temporary file in the same folder is written,
// synced and renamed over name, and the folder is synced.
func writeFileAtomic(name string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, name); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// readText returns a file's content if it is UTF-8 text.
func readText(name string) (string, bool) {
	data, err := os.ReadFile(name)
	if err != nil || !utf8.Valid(data) {
		return "", false
	}
	return string(data), true
}

// HistoryRecord is one line of a custom skill's JSONL history.
type HistoryRecord struct {
	Action      string  `json:"action"`
	Author      string  `json:"author"`
	ThreadID    *string `json:"thread_id"`
	FilePath    string  `json:"file_path"`
	PrevContent *string `json:"prev_content"`
	NewContent  *string `json:"new_content"`
	Scanner     any     `json:"scanner"`
	// TS is the record's time (RFC 3339).
	TS string `json:"ts,omitempty"`
}

// AppendHistory appends rec as one JSON line to the history of user's
// custom skill name, and syncs the file.
func (s *Store) AppendHistory(user, name string, rec HistoryRecord) error {
	file := s.HistoryFile(user, name)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// One write call per record: concurrent appenders (another process)
	// cannot interleave inside a line.
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// History returns the history records of user's custom skill name, oldest
// first. Lines that do not parse are skipped.
func (s *Store) History(user, name string) ([]HistoryRecord, error) {
	f, err := os.Open(s.HistoryFile(user, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []HistoryRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		var r HistoryRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}
