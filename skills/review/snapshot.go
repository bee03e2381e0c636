package review

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// Snapshot is what a reader took from a package (DeerFlow's
// package-snapshot.v1). Fields are in the sorted order of their JSON
// names.
type Snapshot struct {
	// Files are sorted by path; every path passed NormalizePath.
	Files         []File        `json:"files"`
	Limits        Limits        `json:"limits"`
	ReaderErrors  []ReaderError `json:"reader_errors"`
	SchemaVersion string        `json:"schema_version"`
	Subject       Subject       `json:"subject"`
	// Truncated is set when a limit left part of the package unread.
	Truncated bool `json:"truncated"`
}

// Subject names what was read.
type Subject struct {
	// Category is public, custom or legacy for an installed skill.
	Category *string `json:"category"`
	// DisplayRef is how reports name the package: the skill:// target,
	// the folder or archive name, or the inline target. It is never a
	// host path.
	DisplayRef string  `json:"display_ref"`
	NameHint   *string `json:"name_hint"`
	// Source is installed, local_directory, archive or inline.
	Source string `json:"source"`
}

// The subject sources.
const (
	SourceInstalled = "installed"
	SourceDirectory = "local_directory"
	SourceArchive   = "archive"
	SourceInline    = "inline"
)

// The kinds of a file.
const (
	KindText    = "text"
	KindBinary  = "binary"
	KindSymlink = "symlink"
)

// File is one file of a snapshot.
type File struct {
	// Content is the text of a text file; nil otherwise.
	Content *string `json:"content,omitempty"`
	Kind    string  `json:"kind"`
	Path    string  `json:"path"`
	// SHA256 is the hex digest of the bytes read (of a symlink: of its
	// target); empty for a file too large to read.
	SHA256 string `json:"sha256"`
	// Size is the file's size in bytes (0 for a symlink).
	Size int64 `json:"size"`
	// Target is a symlink's target, as stored; never followed.
	Target string `json:"target,omitempty"`
}

// ReaderError is a problem a reader met; the snapshot goes on without
// the entry.
type ReaderError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Path    *string `json:"path"`
}

// The reader error codes, DeerFlow's.
const (
	codeRootNotFound     = "root_not_found"
	codeRootNotDirectory = "root_not_directory"
	codeTooManyFiles     = "too_many_files"
	codeTotalSize        = "total_size_exceeded"
	codeFileTooLarge     = "file_too_large"
	codeStatFailed       = "stat_failed"
	codeReadFailed       = "read_failed"
	codePathEscaped      = "path_escaped"
	codeInvalidArchive   = "invalid_archive_path"
	codeArchiveRead      = "archive_read_failed"
	codeArchiveMember    = "archive_member_read_failed"
)

// textExtensions are the file extensions read as text even when they
// hold a NUL byte (as long as they are UTF-8), DeerFlow's list.
var textExtensions = []string{".css", ".csv", ".html", ".js", ".json", ".md", ".py", ".sh", ".svg", ".toml", ".ts", ".txt", ".yaml", ".yml"}

func newSnapshot(subject Subject, limits Limits) *Snapshot {
	return &Snapshot{SchemaVersion: SnapshotSchemaVersion, Subject: subject, Limits: limits,
		Files: []File{}, ReaderErrors: []ReaderError{}}
}

func (s *Snapshot) addError(code, p, message string) {
	e := ReaderError{Code: code, Message: message}
	if p != "" {
		e.Path = &p
	}
	s.ReaderErrors = append(s.ReaderErrors, e)
}

// addData adds a file read whole: text when it decodes as UTF-8 (and,
// outside the text extensions, holds no NUL byte), binary otherwise.
func (s *Snapshot) addData(p string, data []byte) {
	f := File{Path: p, Kind: KindBinary, Size: int64(len(data)), SHA256: digestHex(data)}
	if isText(p, data) {
		text := string(data)
		f.Kind, f.Content = KindText, &text
	}
	s.Files = append(s.Files, f)
}

// addTooLarge lists a file over the per-file limit, unread.
func (s *Snapshot) addTooLarge(p string, size int64, message string) {
	s.Truncated = true
	s.Files = append(s.Files, File{Path: p, Kind: KindBinary, Size: size})
	s.addError(codeFileTooLarge, p, message)
}

func (s *Snapshot) addSymlink(p, target string) {
	s.Files = append(s.Files, File{Path: p, Kind: KindSymlink, SHA256: digestHex([]byte(target)), Target: target})
}

// finish sorts the files by path and the errors by path and code.
func (s *Snapshot) finish() *Snapshot {
	slices.SortStableFunc(s.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(s.ReaderErrors, func(a, b ReaderError) int {
		return cmp.Or(strings.Compare(deref(a.Path), deref(b.Path)), strings.Compare(a.Code, b.Code))
	})
	return s
}

func isText(p string, data []byte) bool {
	if !slices.Contains(textExtensions, strings.ToLower(path.Ext(p))) && slices.Contains(data, 0) {
		return false
	}
	return utf8.Valid(data)
}

func digestHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// InlineSnapshot is the snapshot of a pasted SKILL.md; nameHint (for
// example "inline://SKILL.md") becomes its display name. Text over the
// per-file limit is cut at a character boundary and the snapshot marked
// truncated.
func InlineSnapshot(content, nameHint string, limits Limits) *Snapshot {
	limits = limits.withDefaults()
	subject := Subject{Source: SourceInline, DisplayRef: cmp.Or(nameHint, "inline://SKILL.md")}
	if nameHint != "" {
		subject.NameHint = &nameHint
	}
	s := newSnapshot(subject, limits)
	data := []byte(content)
	if int64(len(data)) > limits.MaxFileBytes {
		s.Truncated = true
		s.addError(codeFileTooLarge, SkillFile, "Inline SKILL.md exceeds the per-file review limit")
		data = cutUTF8(data, int(limits.MaxFileBytes))
	}
	text := string(data)
	s.Files = append(s.Files, File{Path: SkillFile, Kind: KindText, Size: int64(len(data)),
		SHA256: digestHex(data), Content: &text})
	return s.finish()
}

// cutUTF8 returns at most n bytes of data, without a split character at
// the end (invalid bytes are dropped, as Python's errors="ignore").
func cutUTF8(data []byte, n int) []byte {
	data = data[:min(n, len(data))]
	return []byte(strings.ToValidUTF8(string(data), ""))
}

// SkillFile is the name of a package's main file.
const SkillFile = "SKILL.md"
