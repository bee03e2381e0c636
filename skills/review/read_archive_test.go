package review

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadArchive(t *testing.T) {
	tests := []struct {
		name       string
		members    []zipMember
		limits     Limits
		wantFiles  []string
		wantErrors []string
		truncated  bool
	}{
		{
			name: "traversal and absolute names refused, symlink recorded, folders skipped",
			members: []zipMember{
				{name: "SKILL.md", content: validSkill("demo")},
				{name: "../escape.txt", content: "escape"},
				{name: "/absolute.txt", content: "absolute"},
				{name: `..\windows.txt`, content: "backslashes"},
				{name: "references/", content: ""},
				{name: "links/outside", content: "../../etc/passwd", symlink: true},
			},
			wantFiles:  []string{"text SKILL.md", "symlink links/outside"},
			wantErrors: []string{"invalid_archive_path ../escape.txt", `invalid_archive_path ..\windows.txt`, "invalid_archive_path /absolute.txt"},
		},
		{
			name:      "inner dot segments are cleaned",
			members:   []zipMember{{name: "references/../SKILL.md", content: validSkill("demo")}},
			wantFiles: []string{"text SKILL.md"},
		},
		{
			name: "more members than MaxFiles: the first in name order",
			members: []zipMember{
				{name: "c.md", content: "c"}, {name: "a.md", content: "a"}, {name: "b.md", content: "b"},
			},
			limits:     Limits{MaxFiles: 2},
			wantFiles:  []string{"text a.md", "text b.md"},
			wantErrors: []string{"too_many_files "},
			truncated:  true,
		},
		{
			name: "a member over the per-file limit is listed unread",
			members: []zipMember{
				{name: "SKILL.md", content: validSkill("demo")},
				{name: "assets/big.bin", content: strings.Repeat("x", 200)},
			},
			limits:     Limits{MaxFileBytes: 150},
			wantFiles:  []string{"text SKILL.md", "binary assets/big.bin"},
			wantErrors: []string{"file_too_large assets/big.bin"},
			truncated:  true,
		},
		{
			name: "the total budget stops the reading",
			members: []zipMember{
				{name: "a.md", content: strings.Repeat("a", 60)},
				{name: "b.md", content: strings.Repeat("b", 60)},
				{name: "c.md", content: strings.Repeat("c", 60)},
			},
			limits:     Limits{MaxTotalBytes: 100},
			wantFiles:  []string{"text a.md"},
			wantErrors: []string{"total_size_exceeded b.md"},
			truncated:  true,
		},
		{
			name:      "binary content",
			members:   []zipMember{{name: "assets/logo.png", content: "\x89PNG\r\n\x1a\n\x00\x00"}},
			wantFiles: []string{"binary assets/logo.png"},
		},
		{
			name: "unsupported compression method is a member error",
			members: []zipMember{
				{name: "SKILL.md", content: validSkill("demo")},
				{name: "odd.md", content: "x", method: 99},
			},
			wantFiles:  []string{"text SKILL.md"},
			wantErrors: []string{"archive_member_read_failed odd.md"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := readZip(t, buildZip(t, tt.members...), tt.limits)
			if diff := cmp.Diff(tt.wantFiles, filePaths(s)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErrors, errorCodes(s)); diff != "" {
				t.Errorf("reader errors (-want +got):\n%s", diff)
			}
			if s.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", s.Truncated, tt.truncated)
			}
		})
	}
}

func TestReadArchiveSymlinkTarget(t *testing.T) {
	s := readZip(t, buildZip(t, zipMember{name: "link", content: "../outside", symlink: true}), Limits{})
	want := []File{{Path: "link", Kind: KindSymlink, Size: 0, SHA256: digestHex([]byte("../outside")), Target: "../outside"}}
	if diff := cmp.Diff(want, s.Files); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.Subject.DisplayRef != "demo.skill" || deref(s.Subject.NameHint) != "demo" || s.Subject.Source != SourceArchive {
		t.Errorf("subject = %+v", s.Subject)
	}
}

// TestReadArchiveDeclaredSizeLies: a member whose header declares fewer
// bytes than it inflates to is never read past its budget.
func TestReadArchiveDeclaredSizeLies(t *testing.T) {
	data := buildZip(t, zipMember{name: "SKILL.md", content: strings.Repeat("x", 4096), method: zip.Deflate})
	data = patchUncompressedSize(t, data, 10)
	s := readZip(t, data, Limits{MaxFileBytes: 100})
	for _, f := range s.Files {
		if f.Content != nil && len(*f.Content) > 100 {
			t.Errorf("%s: %d bytes of content read past the 100-byte budget", f.Path, len(*f.Content))
		}
		if f.Kind == KindText {
			t.Errorf("%s was read as text though it inflates past its declared size", f.Path)
		}
	}
	if len(s.ReaderErrors) == 0 {
		t.Errorf("no reader error for a member that lies about its size")
	}
}

// patchUncompressedSize sets the uncompressed size of the archive's only
// member in both its local and central headers.
func patchUncompressedSize(t *testing.T, data []byte, size uint32) []byte {
	t.Helper()
	out := bytes.Clone(data)
	local := bytes.Index(out, []byte("PK\x03\x04"))
	central := bytes.Index(out, []byte("PK\x01\x02"))
	if local < 0 || central < 0 {
		t.Fatal("test archive without headers")
	}
	binary.LittleEndian.PutUint32(out[local+22:], size)
	binary.LittleEndian.PutUint32(out[central+24:], size)
	return out
}

// TestReadArchiveDirectoryBudget: an archive whose central directory is
// larger than MaxArchiveDirectoryBytes (plus the allowance for the end
// records) is refused before its members are listed.
func TestReadArchiveDirectoryBudget(t *testing.T) {
	var members []zipMember
	for i := range 2000 {
		members = append(members, zipMember{name: strings.Repeat("n", 60) + string(rune('a'+i%26)) + strings.Repeat("x", i%7)})
	}
	data := buildZip(t, members...)
	s := readZip(t, data, Limits{MaxArchiveDirectoryBytes: 4096})
	if diff := cmp.Diff([]string{"archive_read_failed "}, errorCodes(s)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if len(s.Files) != 0 {
		t.Errorf("files listed from an archive over its directory budget: %v", filePaths(s))
	}
	if got := readZip(t, data, Limits{}); len(got.ReaderErrors) != 0 {
		t.Errorf("the default budget refused a small archive: %v", errorCodes(got))
	}
}

func TestReadArchiveNotZip(t *testing.T) {
	s := readZip(t, []byte("this is not an archive"), Limits{})
	if diff := cmp.Diff([]string{"archive_read_failed "}, errorCodes(s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReadArchiveBomb: a highly compressed member is inflated only to its
// budget.
func TestReadArchiveBomb(t *testing.T) {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	fw, err := w.Create("assets/bomb.txt")
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range 16 {
		if _, err := fw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := readZip(t, b.Bytes(), Limits{MaxFileBytes: 1 << 10})
	if diff := cmp.Diff([]string{"binary assets/bomb.txt"}, filePaths(s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"file_too_large assets/bomb.txt"}, errorCodes(s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
