package skills

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FrontmatterReview is a SKILL.md read the way a package review
// (skills/review) inspects it: every field check is recorded instead of
// stopping at the first failure as [ValidateContent] does.
type FrontmatterReview struct {
	// Keys are the frontmatter keys, in order of first appearance.
	Keys []string
	// Name and Description are the values of name and description
	// (untrimmed) when they are YAML strings; HasName and HasDescription
	// say whether they were.
	Name, Description       string
	HasName, HasDescription bool
	// Body is the text after the closing fence.
	Body string
	// AllowedToolsErr is set when allowed-tools is present and not a list
	// of non-empty strings; RequiredSecretsErr when required-secrets is
	// present and not a list. Their texts are DeerFlow's.
	AllowedToolsErr, RequiredSecretsErr error
	// SecretsAutonomousInvalid is set when secrets-autonomous is present
	// and not a boolean (a YAML null counts as absent).
	SecretsAutonomousInvalid bool
}

// UnknownKeys returns the keys a SKILL.md may not use (outside
// DeerFlow's shared frontmatter schema), sorted.
func (f *FrontmatterReview) UnknownKeys() []string {
	var out []string
	for _, k := range f.Keys {
		if !slices.Contains(allowedKeys, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// ReviewFrontmatter splits and decodes a SKILL.md's frontmatter for a
// review. The error, when the frontmatter cannot be read at all, carries
// DeerFlow's text ("No YAML frontmatter found", "Invalid YAML in
// frontmatter: ...", "Frontmatter must be a YAML dictionary") and no host
// path.
func ReviewFrontmatter(content string) (*FrontmatterReview, error) {
	front, body, err := splitFrontmatter(content)
	if err != nil {
		return nil, err
	}
	fm, err := decodeFrontmatter(front)
	if err != nil {
		return nil, fmt.Errorf("Invalid YAML in frontmatter: %s", yamlMessage(err))
	}
	if fm == nil {
		return nil, errors.New("Frontmatter must be a YAML dictionary")
	}
	r := &FrontmatterReview{Keys: slices.Clone(fm.keys), Body: body}
	if n := fm.values["name"]; isString(n) {
		r.Name, r.HasName = n.Value, true
	}
	if n := fm.values["description"]; isString(n) {
		r.Description, r.HasDescription = n.Value, true
	}
	if n, ok := fm.values["allowed-tools"]; ok {
		if _, err := parseAllowedTools(n); err != nil {
			r.AllowedToolsErr = fmt.Errorf("allowed-tools in SKILL.md %s", err.Error())
		}
	}
	if n, ok := fm.values["required-secrets"]; ok {
		if _, _, err := parseSecrets(n); err != nil {
			r.RequiredSecretsErr = errors.New("required-secrets in SKILL.md must be a list")
		}
	}
	if n, ok := fm.values["secrets-autonomous"]; ok && !isNull(n) {
		r.SecretsAutonomousInvalid = n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool"
	}
	return r, nil
}

// IsEvalFixturePath reports whether a package path lies inside an eval
// fixture folder (evals/fixtures/<case>/...), whose files are test data
// for the skill rather than part of it.
func IsEvalFixturePath(p string) bool {
	parts := strings.Split(strings.ReplaceAll(p, `\`, "/"), "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "evals" {
			return parts[i+1] == "fixtures"
		}
	}
	return false
}
