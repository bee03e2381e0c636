package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Severity is a finding's severity. Only SeverityCritical blocks.
type Severity string

// The severities, most severe first.
const (
	SeverityCritical Severity = "CRITICAL"
	SeverityHigh     Severity = "HIGH"
	SeverityMedium   Severity = "MEDIUM"
	SeverityLow      Severity = "LOW"
)

// The static scan's limits, as DeerFlow's SkillScan.
const (
	maxPackageBytes   = 512 << 20
	maxFileBytes      = 64 << 20
	maxPackageMembers = 4096
)

// Finding is one static scan result.
type Finding struct {
	RuleID   string   `json:"rule_id"`
	Severity Severity `json:"severity"`
	// File is the slash-separated path inside the package ("" for a
	// package-wide finding).
	File string `json:"file"`
	// Line is 1-based; 0 when the finding is not about a line.
	Line        int    `json:"line,omitempty"`
	Message     string `json:"message"`
	Remediation string `json:"remediation"`
	// Evidence is the matched text; for secret rules it is "[redacted]".
	Evidence string `json:"evidence"`
}

// Location is "file:line", "file" or "<archive>".
func (f Finding) Location() string {
	loc := cmpOr(f.File, "<archive>")
	if f.Line > 0 {
		loc += fmt.Sprintf(":%d", f.Line)
	}
	return loc
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ScanResult is the outcome of a static scan.
type ScanResult struct {
	Findings []Finding `json:"findings"`
	// Blocked is true when any finding is CRITICAL.
	Blocked bool `json:"blocked"`
	// Errors are files the scanner could not read or analyse.
	Errors []string `json:"scanner_errors,omitempty"`
}

// Critical returns the blocking findings.
func (r *ScanResult) Critical() []Finding {
	return slices.DeleteFunc(slices.Clone(r.Findings), func(f Finding) bool { return f.Severity != SeverityCritical })
}

// FormatFindings renders findings as DeerFlow does in block messages:
// "{rule} ({severity}) at {location}: {message} Remediation: {remediation}"
// joined with "; ".
func FormatFindings(findings []Finding) string {
	parts := make([]string, len(findings))
	for i, f := range findings {
		parts[i] = fmt.Sprintf("%s (%s) at %s: %s Remediation: %s", f.RuleID, f.Severity, f.Location(), f.Message, f.Remediation)
	}
	return strings.Join(parts, "; ")
}

// member is one member of a package to scan.
type member struct {
	// Name is the member path as stored (slash-separated for archives).
	Name string
	// Symlink marks a symbolic link; its Data is not scanned.
	Symlink bool
	// Dir marks a directory entry.
	Dir bool
	// Size is the full size; Data may hold only its first maxFileBytes+1
	// bytes.
	Size int64
	Data []byte
}

// scanMembers runs every rule over files and returns the findings, sorted by
// file (package-wide findings first) and de-duplicated by rule, file and
// line.
func scanMembers(files []member) *ScanResult {
	res := &ScanResult{}
	if len(files) > maxPackageMembers {
		res.add(newFinding("package-too-many-members", "", 0, fmt.Sprintf("%d members", len(files))))
		return res.finish()
	}
	var total int64
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b member) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range sorted {
		name := normalizeMember(f.Name)
		switch {
		case isAbsoluteMember(f.Name):
			res.add(newFinding("package-absolute-path", name, 0, f.Name))
		case slices.Contains(strings.Split(strings.ReplaceAll(f.Name, `\`, "/"), "/"), ".."):
			res.add(newFinding("package-path-traversal", name, 0, f.Name))
		case strings.Contains(f.Name, ":"):
			res.add(newFinding("package-ads-stream-name", name, 0, f.Name))
		}
		if f.Symlink {
			res.add(newFinding("package-symlink", name, 0, f.Name))
		}
		if f.Dir {
			if slices.Contains(strings.Split(name, "/"), ".git") {
				res.add(newFinding("package-git-directory", name, 0, ".git"))
			}
			continue
		}
		total += max(f.Size, 0)
		res.addAll(packageFindings(name, f))
		if f.Symlink {
			continue
		}
		text, lossy, ok := textForAnalysis(name, f.Data)
		if !ok {
			continue
		}
		res.addAll(textFindings(name, text, lossy))
	}
	if total > maxPackageBytes {
		res.add(newFinding("package-oversized-total", "", 0, fmt.Sprintf("%d bytes", total)))
	}
	return res.finish()
}

func (r *ScanResult) add(f Finding) { r.Findings = append(r.Findings, f) }

func (r *ScanResult) addAll(fs []Finding) { r.Findings = append(r.Findings, fs...) }

func (r *ScanResult) finish() *ScanResult {
	type key struct {
		rule, file string
		line       int
	}
	seen := map[key]bool{}
	out := r.Findings[:0]
	for _, f := range r.Findings {
		k := key{f.RuleID, f.File, f.Line}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
		if f.Severity == SeverityCritical {
			r.Blocked = true
		}
	}
	r.Findings = out
	slices.SortStableFunc(r.Findings, func(a, b Finding) int { return strings.Compare(a.File, b.File) })
	return r
}

func normalizeMember(name string) string {
	n := path.Clean(strings.ReplaceAll(name, `\`, "/"))
	return strings.TrimPrefix(n, "./")
}

func isAbsoluteMember(name string) bool {
	n := strings.ReplaceAll(name, `\`, "/")
	return strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':' && (n[0]|0x20) >= 'a' && (n[0]|0x20) <= 'z')
}

// packageFindings are the rules about a member's name, size and kind.
func packageFindings(name string, f member) []Finding {
	var out []Finding
	parts := strings.Split(name, "/")
	base := parts[len(parts)-1]
	if base == SkillFile && len(parts) > 1 && parts[0] != "evals" {
		out = append(out, newFinding("package-nested-skill-md", name, 0, name))
	}
	if f.Size > maxFileBytes {
		out = append(out, newFinding("package-oversized-file", name, 0, fmt.Sprintf("%d bytes", f.Size)))
	}
	if isHiddenSensitive(parts) {
		out = append(out, newFinding("package-hidden-sensitive-file", name, 0, base))
	}
	if slices.Contains(parts, ".git") {
		out = append(out, newFinding("package-git-directory", name, 0, ".git"))
	}
	if f.Symlink {
		return out
	}
	if isArchiveName(name) || looksLikeArchive(f.Data) {
		out = append(out, newFinding("package-nested-archive", name, 0, base))
	}
	if kind := executableMagic(f.Data); kind != "" {
		out = append(out, newFinding("package-executable-binary", name, 0, kind))
	}
	return out
}

var hiddenSensitive = []string{".env", ".npmrc", ".pypirc", ".netrc", "credentials", "config"}

func isHiddenSensitive(parts []string) bool {
	base := parts[len(parts)-1]
	dirs := parts[:len(parts)-1]
	if base == "credentials" && slices.Contains(dirs, ".aws") {
		return true
	}
	if base == "config" && slices.Contains(dirs, ".git") {
		return true
	}
	if !slices.Contains(hiddenSensitive, base) {
		return false
	}
	lower := strings.ToLower(base)
	return strings.HasPrefix(base, ".") || strings.Contains(lower, "credential")
}

var archiveSuffixes = []string{".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".7z", ".rar", ".whl"}

func isArchiveName(name string) bool {
	lower := strings.ToLower(name)
	return slices.ContainsFunc(archiveSuffixes, func(s string) bool { return strings.HasSuffix(lower, s) })
}

func looksLikeArchive(b []byte) bool {
	return bytes.HasPrefix(b, []byte("PK\x03\x04")) || bytes.HasPrefix(b, []byte{0x1f, 0x8b}) || bytes.HasPrefix(b, []byte("7z\xbc\xaf\x27\x1c"))
}

// executableMagic names the executable format of a file's first bytes,
// or returns "".
func executableMagic(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(b, []byte("MZ")) && bytes.IndexByte(b[:min(len(b), 128)], 0) >= 0:
		// A PE header has NUL bytes right after "MZ"; a text file that
		// happens to start with "MZ" does not.
		return "PE"
	case bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.HasPrefix(b, []byte{0xce, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(b, []byte{0xcf, 0xfa, 0xed, 0xfe}):
		return "Mach-O"
	}
	return ""
}

func readMember(p string) (member, error) {
	fh, err := os.Open(p)
	if err != nil {
		return member{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return member{}, err
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return member{}, err
	}
	return member{Size: max(st.Size(), int64(len(data))), Data: data}, nil
}

// ScanCandidate scans what a skill package would hold after a write: the
// files now in dir (none when dir is "" or missing) with updates (package
// path → new content) laid over them. Nothing is written to disk.
func ScanCandidate(dir string, updates map[string]string) (*ScanResult, error) {
	var files []member
	var scanErrs []string
	if dir != "" {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == dir && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipAll
				}
				scanErrs = append(scanErrs, err.Error())
				return nil
			}
			if p == dir {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if _, replaced := updates[rel]; replaced {
				return nil
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				files = append(files, member{Name: rel, Symlink: true})
			case d.IsDir():
				files = append(files, member{Name: rel, Dir: true})
			case d.Type().IsRegular():
				f, err := readMember(p)
				if err != nil {
					scanErrs = append(scanErrs, fmt.Sprintf("%s: %v", rel, err))
					return nil
				}
				f.Name = rel
				files = append(files, f)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("scan skill: %w", err)
		}
	}
	for name, content := range updates {
		files = append(files, member{Name: name, Size: int64(len(content)), Data: []byte(content)})
	}
	res := scanMembers(files)
	res.Errors = append(res.Errors, scanErrs...)
	return res, nil
}
