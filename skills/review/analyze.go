package review

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/antlerhq/antler/skills"
)

// Facts are a review's deterministic facts (DeerFlow's review-facts.v1).
// Fields are in the sorted order of their JSON names.
type Facts struct {
	AnalyzerErrors []ReaderError `json:"analyzer_errors"`
	Completeness   Completeness  `json:"completeness"`
	Evals          Evals         `json:"evals"`
	Findings       []Finding     `json:"findings"`
	Profile        Profile       `json:"profile"`
	ReaderErrors   []ReaderError `json:"reader_errors"`
	Resources      Resources     `json:"resources"`
	SchemaVersion  string        `json:"schema_version"`
	Subject        FactsSubject  `json:"subject"`
	Summary        Summary       `json:"summary"`
}

// FactsSubject identifies the reviewed package.
type FactsSubject struct {
	Category *string `json:"category"`
	// DeclaredName is the frontmatter's name, trimmed; nil when SKILL.md
	// has none.
	DeclaredName  *string `json:"declared_name"`
	DisplayRef    string  `json:"display_ref"`
	PackageDigest string  `json:"package_digest"`
	Source        string  `json:"source"`
}

// Completeness says how much of the package the facts cover.
type Completeness struct {
	// NotAssessed names what was not checked: full_package when the
	// snapshot was truncated, skillscan when the scanner failed.
	NotAssessed         []string `json:"not_assessed"`
	PackageEnumerated   bool     `json:"package_enumerated"`
	TextContentComplete bool     `json:"text_content_complete"`
	Truncated           bool     `json:"truncated"`
}

// Analyze turns a snapshot into facts under profile: the SKILL.md checks,
// the package checks (nested SKILL.md, symlinks, nested archives, hidden
// credential files), the resource graph, the eval manifests and the
// static scanner (skills.ScanCandidate) over the text files, eval
// fixtures left out. It reads nothing but the snapshot.
func Analyze(s *Snapshot, profile Profile) *Facts {
	files := make(map[string]File, len(s.Files))
	for _, f := range s.Files {
		files[f.Path] = f
	}
	var findings []Finding
	var declared *string
	switch root, ok := files[SkillFile]; {
	case !ok:
		findings = append(findings, finding("structure.missing-skill-md", SeverityBlocker, "",
			"Package root does not contain SKILL.md.", "Add exactly one SKILL.md at the package root."))
	case root.Kind != KindText || root.Content == nil:
		findings = append(findings, finding("structure.skill-md-not-text", SeverityBlocker, SkillFile,
			"Root SKILL.md is not readable UTF-8 text.", "Store SKILL.md as UTF-8 Markdown with YAML frontmatter."))
	default:
		var fs []Finding
		declared, fs = analyzeSkillMD(*root.Content, profile)
		findings = append(findings, fs...)
	}
	findings = append(findings, packageFindings(s)...)
	resources, rf, graphComplete := buildResources(s, files)
	findings = append(findings, rf...)
	evals, ef := analyzeEvals(s)
	findings = append(findings, ef...)

	var notAssessed []string
	analyzerErrors := []ReaderError{}
	if !graphComplete {
		analyzerErrors = append(analyzerErrors, ReaderError{Code: "resource_graph_truncated",
			Message: fmt.Sprintf("Package holds more than %d references; the rest were not followed", maxRefsPerPackage)})
		notAssessed = append(notAssessed, "resource_graph")
	}
	sf, err := scanFindings(s)
	if err != nil {
		analyzerErrors = append(analyzerErrors, ReaderError{Code: "skillscan_failed", Message: "ScanError"})
		notAssessed = append(notAssessed, "skillscan")
	}
	findings = append(findings, sf...)
	if s.Truncated {
		notAssessed = append(notAssessed, "full_package")
	}
	slices.Sort(notAssessed)
	if findings == nil {
		findings = []Finding{}
	}
	sortFindings(findings)
	return &Facts{
		SchemaVersion: FactsSchemaVersion,
		Subject: FactsSubject{DisplayRef: s.Subject.DisplayRef, Source: s.Subject.Source,
			Category: s.Subject.Category, DeclaredName: declared, PackageDigest: PackageDigest(s)},
		Profile: profile,
		Completeness: Completeness{
			PackageEnumerated:   !slices.ContainsFunc(s.ReaderErrors, func(e ReaderError) bool { return e.Code == codeRootNotFound }),
			TextContentComplete: !s.Truncated,
			Truncated:           s.Truncated,
			NotAssessed:         slices.Compact(append([]string{}, notAssessed...)),
		},
		Summary:        summarize(findings),
		Findings:       findings,
		Resources:      resources,
		Evals:          evals,
		ReaderErrors:   slices.Clone(s.ReaderErrors),
		AnalyzerErrors: analyzerErrors,
	}
}

// packageFindings are the checks of the package's file list: nested
// SKILL.md files (outside eval fixtures), symlinks, nested archives and
// hidden credential or package-manager files.
func packageFindings(s *Snapshot) []Finding {
	var out []Finding
	for _, f := range s.Files {
		if path.Base(f.Path) == SkillFile && f.Path != SkillFile && !isEvalFixtureSkillMD(f.Path) {
			out = append(out, finding("structure.nested-skill-md", SeverityBlocker, f.Path,
				"Nested SKILL.md files are not allowed in a single skill package.", "Keep exactly one SKILL.md at the package root."))
		}
		if f.Kind == KindSymlink {
			fd := finding("package.symlink", SeverityWarning, f.Path, "Package contains a symlink entry.",
				"Replace symlinks with ordinary files inside the skill package.")
			fd.Evidence = f.Target
			out = append(out, fd)
		}
		if isNestedArchive(f.Path) {
			out = append(out, finding("package.nested-archive", SeverityWarning, f.Path, "Package contains a nested archive.",
				"Unpack and review nested archives before packaging the skill."))
		}
		if isHiddenSensitive(f.Path) {
			out = append(out, finding("package.hidden-sensitive-file", SeverityWarning, f.Path, "Package contains a hidden sensitive file.",
				"Remove hidden credential or package-manager config files."))
		}
	}
	return out
}

// isEvalFixtureSkillMD reports an eval fixture's own SKILL.md
// (evals/fixtures/<case>/.../SKILL.md), which is test data.
func isEvalFixtureSkillMD(p string) bool {
	return path.Base(p) == SkillFile && skills.IsEvalFixturePath(path.Dir(p))
}

var nestedArchiveSuffixes = []string{".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".7z", ".rar", ".whl"}

func isNestedArchive(p string) bool {
	lower := strings.ToLower(p)
	return slices.ContainsFunc(nestedArchiveSuffixes, func(s string) bool { return strings.HasSuffix(lower, s) })
}

func isHiddenSensitive(p string) bool {
	return slices.ContainsFunc(strings.Split(p, "/"), func(part string) bool {
		return part == ".env" || part == ".npmrc" || part == ".pypirc" || part == ".netrc"
	})
}

// scanSeverity maps the static scanner's severities to review ones.
func scanSeverity(s skills.Severity) Severity {
	switch s {
	case skills.SeverityCritical:
		return SeverityBlocker
	case skills.SeverityHigh:
		return SeverityError
	case skills.SeverityLow:
		return SeverityInfo
	}
	return SeverityWarning
}

// scanFindings runs the static scanner over the snapshot's text files
// (eval fixtures left out) and adapts its findings.
func scanFindings(s *Snapshot) ([]Finding, error) {
	updates := map[string]string{}
	for _, f := range s.Files {
		if f.Kind == KindText && f.Content != nil && !skills.IsEvalFixturePath(f.Path) {
			updates[f.Path] = *f.Content
		}
	}
	if len(updates) == 0 {
		return nil, nil
	}
	res, err := skills.ScanCandidate("", updates)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, sf := range res.Findings {
		f := Finding{RuleID: sf.RuleID, Source: sourceSkillScan, Profile: ProfileDeerFlow, Severity: scanSeverity(sf.Severity),
			Message: sf.Message, Remediation: sf.Remediation, SkillScanSeverity: string(sf.Severity)}
		if sf.File != "" {
			file := sf.File
			f.Path = &file
		}
		if sf.Line > 0 {
			line := sf.Line
			f.Line = &line
		}
		if sf.Evidence != "" {
			f.Evidence = sf.Evidence
		}
		out = append(out, f)
	}
	for _, e := range res.Errors {
		f := Finding{RuleID: "skillscan.scanner-error", Source: sourceSkillScan, Profile: ProfileDeerFlow, Severity: SeverityWarning,
			Message: "SkillScan reported an analyzer error.", Remediation: "Inspect the referenced file and rerun the review.", Evidence: e}
		out = append(out, f)
	}
	return out, nil
}
