package review

import (
	"fmt"
	"slices"
)

// Report is a static review report (DeerFlow's review-report.v1) made
// from facts alone. Fields are in the sorted order of their JSON names.
type Report struct {
	// Assurance is always static_only: nothing was run.
	Assurance          string        `json:"assurance"`
	Dimensions         []Dimension   `json:"dimensions"`
	Evidence           Evidence      `json:"evidence"`
	Issues             []Issue       `json:"issues"`
	Readiness          string        `json:"readiness"`
	RecommendedActions []string      `json:"recommended_actions"`
	Review             ReviewInfo    `json:"review"`
	SchemaVersion      string        `json:"schema_version"`
	Subject            ReportSubject `json:"subject"`
}

// The readiness verdicts.
const (
	ReadinessBlocked          = "blocked"
	ReadinessRevise           = "revise"
	ReadinessPublishCandidate = "publish_candidate"
)

// Dimension is one reviewed dimension: pass, concern or blocker.
type Dimension struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Summary string `json:"summary"`
}

// Evidence says what the report rests on; a static report has no runs,
// baseline or retained artifacts.
type Evidence struct {
	Baseline          any      `json:"baseline"`
	FactsComplete     bool     `json:"facts_complete"`
	Limitations       []string `json:"limitations"`
	RetainedArtifacts []any    `json:"retained_artifacts"`
	RuntimeRuns       []any    `json:"runtime_runs"`
}

// Issue is a finding of severity warning or above, as a report issue:
// blocker, major (an error) or minor (a warning).
type Issue struct {
	Confidence           string  `json:"confidence"`
	ID                   string  `json:"id"`
	Impact               string  `json:"impact"`
	Line                 *int    `json:"line"`
	Path                 *string `json:"path"`
	Problem              string  `json:"problem"`
	Remediation          string  `json:"remediation"`
	Severity             string  `json:"severity"`
	SuggestedReplacement *string `json:"suggested_replacement"`
}

// ReviewInfo says how the review was made.
type ReviewInfo struct {
	CompletedAt        string   `json:"completed_at"`
	FactsSchemaVersion string   `json:"facts_schema_version"`
	Profile            Profile  `json:"profile"`
	ReviewerModel      string   `json:"reviewer_model"`
	Scope              []string `json:"scope"`
}

// ReportSubject identifies the package.
type ReportSubject struct {
	DisplayRef    string `json:"display_ref"`
	PackageDigest string `json:"package_digest"`
}

// deterministicReviewer is the reviewer_model of a static report.
const deterministicReviewer = "deterministic-review-core"

// Readiness is the verdict facts support: blocked with a blocker,
// revise with an error (or, for a review of scope "all", with anything
// not assessed), publish_candidate otherwise.
func Readiness(f *Facts, scope []string) string {
	switch {
	case f.Summary.Blockers > 0:
		return ReadinessBlocked
	case f.Summary.Errors > 0:
		return ReadinessRevise
	case slices.Contains(scope, "all") && len(f.Completeness.NotAssessed) > 0:
		return ReadinessRevise
	}
	return ReadinessPublishCandidate
}

// BuildReport makes the static report of facts for scope (nil or empty:
// ["all"]); completedAt is its RFC 3339 UTC completion time.
func BuildReport(f *Facts, scope []string, completedAt string) *Report {
	if len(scope) == 0 {
		scope = []string{"all"}
	}
	readiness := Readiness(f, scope)
	issues := []Issue{}
	for i, fd := range f.Findings {
		sev := issueSeverity(fd.Severity)
		if sev == "" {
			continue
		}
		issues = append(issues, Issue{
			ID: fmt.Sprintf("deterministic.%d.%s", i+1, fd.RuleID), Severity: sev, Confidence: "high",
			Path: fd.Path, Line: fd.Line, Problem: fd.Message,
			Impact:      "Deterministic review finding affects package readiness or maintainability.",
			Remediation: fd.Remediation,
		})
	}
	limitations := []string{}
	if f.Completeness.Truncated {
		limitations = append(limitations, "Package content was truncated; omitted content was not assessed.")
	}
	for _, e := range f.ReaderErrors {
		limitations = append(limitations, fmt.Sprintf("Reader error %s: %s", e.Code, e.Message))
	}
	for _, e := range f.AnalyzerErrors {
		limitations = append(limitations, fmt.Sprintf("Analyzer error %s: %s", e.Code, e.Message))
	}
	return &Report{
		SchemaVersion: ReportSchemaVersion,
		Subject:       ReportSubject{DisplayRef: f.Subject.DisplayRef, PackageDigest: f.Subject.PackageDigest},
		Review: ReviewInfo{Scope: slices.Clone(scope), Profile: f.Profile, FactsSchemaVersion: f.SchemaVersion,
			ReviewerModel: deterministicReviewer, CompletedAt: completedAt},
		Readiness:  readiness,
		Assurance:  "static_only",
		Dimensions: dimensions(f),
		Issues:     issues,
		Evidence: Evidence{FactsComplete: !f.Completeness.Truncated, RuntimeRuns: []any{},
			RetainedArtifacts: []any{}, Limitations: limitations},
		RecommendedActions: recommendedActions(f, readiness),
	}
}

// issueSeverity is a finding's issue severity ("" for an info finding,
// which is no issue).
func issueSeverity(s Severity) string {
	switch s {
	case SeverityBlocker:
		return "blocker"
	case SeverityError:
		return "major"
	case SeverityWarning:
		return "minor"
	}
	return ""
}

func dimensions(f *Facts) []Dimension {
	s := f.Summary
	status := "pass"
	switch {
	case s.Blockers > 0:
		status = "blocker"
	case s.Errors > 0 || s.Warnings > 0:
		status = "concern"
	}
	evidence := "pass"
	if f.Evals.CaseCount == 0 {
		evidence = "concern"
	}
	return []Dimension{
		{ID: "structure", Status: status,
			Summary: fmt.Sprintf("%d blocker(s), %d error(s), %d warning(s)", s.Blockers, s.Errors, s.Warnings)},
		{ID: "evidence_quality", Status: evidence, Summary: fmt.Sprintf("%d eval case(s) detected", f.Evals.CaseCount)},
	}
}

// recommendedActions are the remediations of the first five findings,
// none for a publish candidate.
func recommendedActions(f *Facts, readiness string) []string {
	out := []string{}
	if readiness == ReadinessPublishCandidate {
		return out
	}
	for _, fd := range f.Findings[:min(5, len(f.Findings))] {
		out = append(out, fd.RuleID+": "+fd.Remediation)
	}
	return out
}
