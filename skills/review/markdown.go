package review

import (
	"fmt"
	"strings"
)

// Locale is the language of a rendered report: its headings and the
// labels beside the machine values (which stay in English).
type Locale string

// The locales.
const (
	LocaleEN Locale = "en"
	LocaleZH Locale = "zh"
)

// markdownText is the text of one locale.
type markdownText struct {
	title, summary, scope, findings, dimensions, evidence, actions string
	readiness, assurance                                           map[string]string
}

func textFor(l Locale) markdownText {
	if l == LocaleZH {
		return markdownText{
			title: "# 技能审查报告", summary: "## 摘要", scope: "## 范围与完整性", findings: "## 问题",
			dimensions: "## 维度审查", evidence: "## 证据", actions: "## 建议动作",
			readiness: map[string]string{ReadinessBlocked: "不可发布", ReadinessRevise: "需修订", ReadinessPublishCandidate: "可作为发布候选"},
			assurance: map[string]string{"static_only": "仅静态审查", "trigger_checked": "触发已检查",
				"behavior_verified": "行为已验证", "regression_verified": "回归已验证"},
		}
	}
	return markdownText{
		title: "# Skill Review Report", summary: "## Executive Summary", scope: "## Scope and Completeness",
		findings: "## Findings", dimensions: "## Dimension Review", evidence: "## Evidence", actions: "## Recommended Actions",
		readiness: map[string]string{ReadinessBlocked: "Not ready", ReadinessRevise: "Needs revision", ReadinessPublishCandidate: "Publish candidate"},
		assurance: map[string]string{"static_only": "Static review only", "trigger_checked": "Trigger checked",
			"behavior_verified": "Behavior verified", "regression_verified": "Regression verified"},
	}
}

// RenderMarkdown renders a report (with the completeness of facts, when
// given) as Markdown in locale l. Booleans read True and False as in
// DeerFlow's rendering.
func RenderMarkdown(r *Report, f *Facts, l Locale) string {
	t := textFor(l)
	label := func(m map[string]string, k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return k
	}
	lines := []string{
		t.title, "", t.summary,
		"- Subject: " + r.Subject.DisplayRef,
		"- Digest: " + r.Subject.PackageDigest,
		fmt.Sprintf("- Readiness: %s (%s)", r.Readiness, label(t.readiness, r.Readiness)),
		fmt.Sprintf("- Assurance: %s (%s)", r.Assurance, label(t.assurance, r.Assurance)),
		"", t.scope,
		"- Scope: " + strings.Join(r.Review.Scope, ", "),
		"- Profile: " + string(r.Review.Profile),
	}
	if f != nil {
		notAssessed := strings.Join(f.Completeness.NotAssessed, ", ")
		if notAssessed == "" {
			notAssessed = "(none)"
		}
		lines = append(lines, "- Truncated: "+pyBool(f.Completeness.Truncated), "- Not assessed: "+notAssessed)
	}
	lines = append(lines, "", t.findings)
	if len(r.Issues) == 0 {
		lines = append(lines, "- No deterministic or semantic issues were reported.")
	}
	for _, is := range r.Issues {
		loc := "<package>"
		if is.Path != nil && *is.Path != "" {
			loc = *is.Path
		}
		if is.Line != nil {
			loc = fmt.Sprintf("%s:%d", loc, *is.Line)
		}
		lines = append(lines, fmt.Sprintf("- %s %s at %s: %s", is.Severity, is.ID, loc, is.Problem))
	}
	lines = append(lines, "", t.dimensions)
	for _, d := range r.Dimensions {
		lines = append(lines, fmt.Sprintf("- %s: %s - %s", d.ID, d.Status, d.Summary))
	}
	lines = append(lines, "", t.evidence, "- Facts complete: "+pyBool(r.Evidence.FactsComplete))
	for _, l := range r.Evidence.Limitations {
		lines = append(lines, "- Limitation: "+l)
	}
	lines = append(lines, "", t.actions)
	if len(r.RecommendedActions) == 0 {
		lines = append(lines, "- No required action within the assessed scope.")
	}
	for _, a := range r.RecommendedActions {
		lines = append(lines, "- "+a)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), " \t\r\n") + "\n"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
