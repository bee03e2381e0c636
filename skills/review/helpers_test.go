package review

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func jsonUnmarshalNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// validSkill is a minimal SKILL.md without findings.
func validSkill(name string) string {
	return "---\nname: " + name + "\ndescription: Checks one thing. Use when testing the review.\nallowed-tools: []\n---\n\n# Check\n\nDo the one thing, then stop.\n"
}

// writeTree writes files (package path → content) under a new temporary
// folder and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// zipMember is one member of a test archive.
type zipMember struct {
	name    string
	content string
	symlink bool
	method  uint16
}

// buildZip returns a ZIP archive of members, in their order.
func buildZip(t testing.TB, members ...zipMember) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	// Method 99 stores the bytes as they are: a method no reader knows.
	w.RegisterCompressor(99, func(out io.Writer) (io.WriteCloser, error) { return nopCloser{out}, nil })
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: m.method}
		if m.symlink {
			h.SetMode(fs.ModeSymlink | 0o777)
		}
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write([]byte(m.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// readZip reads data as a .skill archive named demo.skill.
func readZip(t testing.TB, data []byte, limits Limits) *Snapshot {
	t.Helper()
	s, err := ReadArchive(t.Context(), bytes.NewReader(data), int64(len(data)), "demo.skill", limits)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// errorCodes returns the reader errors as "code path" strings.
func errorCodes(s *Snapshot) []string {
	var out []string
	for _, e := range s.ReaderErrors {
		out = append(out, e.Code+" "+deref(e.Path))
	}
	return out
}

// filePaths returns the snapshot's file paths with their kinds.
func filePaths(s *Snapshot) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Kind+" "+f.Path)
	}
	return out
}
