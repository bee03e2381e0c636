package review

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxArtifactChars bounds the text of all semantic artifacts of one
// review, in characters (DeerFlow's 80,000).
const MaxArtifactChars = 80_000

// Artifact is a text file handed to the model for a semantic review,
// marked as untrusted data.
type Artifact struct {
	Content             string `json:"content"`
	Path                string `json:"path"`
	Truncated           bool   `json:"truncated"`
	UntrustedReviewData bool   `json:"untrusted_review_data"`
}

// SemanticArtifacts returns the text files a semantic review reads, in
// path order: SKILL.md, and the .md, .json, .txt, .yaml and .yml files
// under references/, templates/ and evals/, together at most
// MaxArtifactChars characters (the file that crosses the bound is cut and
// marked truncated, and the rest are left out).
func SemanticArtifacts(s *Snapshot) []Artifact {
	out := []Artifact{}
	remaining := MaxArtifactChars
	for _, f := range s.Files {
		if f.Kind != KindText || f.Content == nil || !isSemanticArtifact(f.Path) {
			continue
		}
		content := *f.Content
		truncated := false
		if utf8.RuneCountInString(content) > remaining {
			content = firstRunes(content, remaining)
			truncated = true
		}
		out = append(out, Artifact{Path: f.Path, Content: content, Truncated: truncated, UntrustedReviewData: true})
		remaining -= utf8.RuneCountInString(content)
		if remaining <= 0 {
			break
		}
	}
	return out
}

var (
	artifactDirs       = []string{"references/", "templates/", "evals/"}
	artifactExtensions = []string{".md", ".json", ".txt", ".yaml", ".yml"}
)

func isSemanticArtifact(p string) bool {
	if p == SkillFile {
		return true
	}
	return slices.ContainsFunc(artifactDirs, func(d string) bool { return strings.HasPrefix(p, d) }) &&
		slices.ContainsFunc(artifactExtensions, func(e string) bool { return strings.HasSuffix(p, e) })
}

// firstRunes returns the first n characters of s.
func firstRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// MarshalStable encodes v as compact JSON without HTML escaping ('<'
// stays '<'), as DeerFlow's stable_json_dumps: the review types declare
// their fields in the sorted order of their JSON names and maps are
// written with sorted keys, so equal values give equal bytes.
func MarshalStable(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
