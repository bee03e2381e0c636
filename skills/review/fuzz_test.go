package review

import (
	"bytes"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadArchive feeds arbitrary bytes to the archive reader under small
// limits. Whatever the input, the reader must not panic, every file path
// must be package-relative and clean, and the limits must hold.
func FuzzReadArchive(f *testing.F) {
	f.Add(buildZip(f, zipMember{name: "SKILL.md", content: validSkill("demo")}))
	f.Add(buildZip(f,
		zipMember{name: "../escape.txt", content: "x"},
		zipMember{name: "/abs", content: "y"},
		zipMember{name: "a/./b/../c.md", content: "z"},
		zipMember{name: "link", content: "../../etc", symlink: true},
		zipMember{name: "dir/", content: ""},
	))
	f.Add(buildZip(f, zipMember{name: "big.md", content: strings.Repeat("x", 5000)}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte{})
	limits := Limits{MaxFiles: 8, MaxFileBytes: 1024, MaxTotalBytes: 4096, MaxArchiveDirectoryBytes: 4096}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadArchive(t.Context(), bytes.NewReader(data), int64(len(data)), "fuzz.skill", limits)
		if err != nil {
			t.Fatalf("ReadArchive: %v", err)
		}
		checkSnapshotInvariants(t, s, limits)
		Analyze(s, ProfileDeerFlow) // must not panic either
	})
}

// checkSnapshotInvariants checks what every snapshot promises.
func checkSnapshotInvariants(t *testing.T, s *Snapshot, limits Limits) {
	t.Helper()
	if len(s.Files) > limits.MaxFiles {
		t.Errorf("%d files, limit %d", len(s.Files), limits.MaxFiles)
	}
	var total int64
	for _, f := range s.Files {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") || f.Path == ".." || strings.HasPrefix(f.Path, "../") ||
			path.Clean(f.Path) != f.Path || strings.Contains(f.Path, `\`) {
			t.Errorf("unsafe file path %q", f.Path)
		}
		if f.Content != nil {
			if int64(len(*f.Content)) > limits.MaxFileBytes {
				t.Errorf("%s: %d bytes of content over the per-file limit", f.Path, len(*f.Content))
			}
			if !utf8.ValidString(*f.Content) {
				t.Errorf("%s: text content is not UTF-8", f.Path)
			}
			total += int64(len(*f.Content))
		}
	}
	if total > limits.MaxTotalBytes {
		t.Errorf("%d bytes of content over the total limit %d", total, limits.MaxTotalBytes)
	}
}

// FuzzNormalizePath: an accepted path is clean, relative and inside the
// package: no empty, "." or ".." segment.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"SKILL.md", "../x", "/abs", `a\..\..\b`, "a/./b//c/", " . ", "a/b/../../..", "C:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizePath(in)
		if err != nil {
			return
		}
		if out == "" || out == "." || strings.HasPrefix(out, "/") || out == ".." || strings.HasPrefix(out, "../") ||
			strings.Contains(out, `\`) || path.Clean(out) != out {
			t.Fatalf("NormalizePath(%q) = %q", in, out)
		}
		for _, seg := range strings.Split(out, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("NormalizePath(%q) = %q: segment %q", in, out, seg)
			}
		}
	})
}
