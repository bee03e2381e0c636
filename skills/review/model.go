package review

import (
	"cmp"
	"errors"
	"path"
	"slices"
	"strings"
)

// The schema versions of the three documents, DeerFlow's.
const (
	SnapshotSchemaVersion = "deerflow.skill-package-snapshot.v1"
	FactsSchemaVersion    = "deerflow.skill-review.facts.v1"
	ReportSchemaVersion   = "deerflow.skill-review.report.v1"
)

// Profile is the validation profile of a review.
type Profile string

// The profiles: DeerFlow's own rules, and those plus the portability
// recommendations of the Agent Skills format.
const (
	ProfileDeerFlow    Profile = "deerflow"
	ProfileAgentSkills Profile = "agentskills"
)

// Severity is a finding's severity.
type Severity string

// The severities, most severe first.
const (
	SeverityBlocker Severity = "blocker"
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// rank orders severities, most severe first; an unknown one sorts last.
func (s Severity) rank() int {
	switch s {
	case SeverityBlocker:
		return 0
	case SeverityError:
		return 1
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 3
	}
	return 99
}

// Limits bound what a reader takes from a package. A zero field means
// its default (the Default* constants).
type Limits struct {
	// MaxFiles is the most files (and symlinks) read (DeerFlow: 4096).
	MaxFiles int `json:"max_files"`
	// MaxFileBytes is the most bytes of one file (DeerFlow: 64 MiB); a
	// larger file is listed as binary without content.
	MaxFileBytes int64 `json:"max_file_bytes"`
	// MaxTotalBytes is the most bytes of all files together (DeerFlow:
	// 512 MiB); reading stops there.
	MaxTotalBytes int64 `json:"max_total_bytes"`
	// MaxArchiveDirectoryBytes is the most bytes of a ZIP archive's
	// central directory (and end records) read to list its members
	// (Antler's: 2 MiB). Listing a ZIP archive holds every member's
	// header in memory; this keeps an archive of millions of tiny
	// members from growing memory. It is not part of the snapshot's
	// JSON, which has DeerFlow's three limits.
	MaxArchiveDirectoryBytes int64 `json:"-"`
}

// DeerFlow's package limits, and Antler's bound of an archive's central
// directory: the defaults of [Limits].
const (
	DefaultMaxFiles                 = 4096
	DefaultMaxFileBytes             = 64 << 20
	DefaultMaxTotalBytes            = 512 << 20
	DefaultMaxArchiveDirectoryBytes = 2 << 20
)

// withDefaults fills the zero (or negative) fields with the defaults.
func (l Limits) withDefaults() Limits {
	return Limits{
		MaxFiles:                 cmp.Or(max(l.MaxFiles, 0), DefaultMaxFiles),
		MaxFileBytes:             cmp.Or(max(l.MaxFileBytes, 0), DefaultMaxFileBytes),
		MaxTotalBytes:            cmp.Or(max(l.MaxTotalBytes, 0), DefaultMaxTotalBytes),
		MaxArchiveDirectoryBytes: cmp.Or(max(l.MaxArchiveDirectoryBytes, 0), DefaultMaxArchiveDirectoryBytes),
	}
}

// The errors of NormalizePath, DeerFlow's texts.
var (
	errEmptyPath     = errors.New("path must not be empty")
	errAbsolutePath  = errors.New("absolute paths are not allowed")
	errRootPath      = errors.New("path must not resolve to package root")
	errTraversalPath = errors.New("path must not contain parent-directory traversal")
)

// NormalizePath returns a package-relative path in its clean slash form
// ("references/../SKILL.md" is "SKILL.md"), or an error for a path that
// is empty, absolute, the package root itself, or climbs out of the
// package. Backslashes count as slashes and surrounding white space is
// dropped.
func NormalizePath(p string) (string, error) {
	raw := strings.TrimSpace(strings.ReplaceAll(p, `\`, "/"))
	if raw == "" {
		return "", errEmptyPath
	}
	if strings.HasPrefix(raw, "/") {
		return "", errAbsolutePath
	}
	clean := path.Clean(raw)
	if clean == "." {
		return "", errRootPath
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", errTraversalPath
	}
	return clean, nil
}

// Finding is one review finding (DeerFlow's make_finding). Fields are in
// the sorted order of their JSON names.
type Finding struct {
	Evidence    any      `json:"evidence"`
	Line        *int     `json:"line"`
	Message     string   `json:"message"`
	Path        *string  `json:"path"`
	Profile     Profile  `json:"profile"`
	Remediation string   `json:"remediation"`
	RuleID      string   `json:"rule_id"`
	Severity    Severity `json:"severity"`
	// SkillScanSeverity is the static scanner's own severity (CRITICAL,
	// HIGH, MEDIUM, LOW), only on its findings.
	SkillScanSeverity string `json:"skillscan_severity,omitempty"`
	Source            string `json:"source"`
}

// Sources of findings.
const (
	sourceCore      = "review-core"
	sourceSkillScan = "skillscan"
)

// finding returns a review-core finding of the deerflow profile about
// p ("" for the package as a whole).
func finding(rule string, sev Severity, p, message, remediation string) Finding {
	f := Finding{RuleID: rule, Source: sourceCore, Profile: ProfileDeerFlow, Severity: sev,
		Message: message, Remediation: remediation}
	if p != "" {
		f.Path = &p
	}
	return f
}

// sortFindings orders findings by severity, path, line (none last), rule
// and message, as DeerFlow's sort_findings.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Severity.rank(), b.Severity.rank()),
			cmp.Compare(deref(a.Path), deref(b.Path)),
			cmp.Compare(lineKey(a.Line), lineKey(b.Line)),
			cmp.Compare(a.RuleID, b.RuleID),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func lineKey(l *int) int {
	if l == nil {
		return 1_000_000_000
	}
	return *l
}

// Summary counts findings by severity.
type Summary struct {
	Blockers int `json:"blockers"`
	Errors   int `json:"errors"`
	Infos    int `json:"infos"`
	Warnings int `json:"warnings"`
}

func summarize(fs []Finding) Summary {
	var s Summary
	for _, f := range fs {
		switch f.Severity {
		case SeverityBlocker:
			s.Blockers++
		case SeverityError:
			s.Errors++
		case SeverityWarning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	return s
}
