package review

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/skills"
)

// skillNameRe is a hyphen-case skill name.
var skillNameRe = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// The length limits of a name and a description, in characters:
// DeerFlow's, and the Agent Skills format's display recommendation.
const (
	maxNameChars                = 64
	maxDescriptionChars         = 1024
	agentSkillsDescriptionChars = 200
)

// analyzeSkillMD checks the root SKILL.md and returns its declared name
// (nil without one) and the findings.
func analyzeSkillMD(content string, profile Profile) (*string, []Finding) {
	fm, err := skills.ReviewFrontmatter(content)
	if err != nil {
		return nil, []Finding{finding("structure.invalid-frontmatter", SeverityBlocker, SkillFile, err.Error(),
			"Use YAML frontmatter bounded by --- fences with name and description fields.")}
	}
	var out []Finding
	if unknown := fm.UnknownKeys(); len(unknown) > 0 {
		f := finding("structure.unknown-frontmatter-field", SeverityWarning, SkillFile,
			"Unknown frontmatter field(s): "+strings.Join(unknown, ", "),
			"Remove unsupported fields or add them to the shared DeerFlow frontmatter schema.")
		f.Evidence = unknown
		out = append(out, f)
	}
	var declared *string
	name := strings.TrimSpace(fm.Name)
	switch {
	case !fm.HasName || name == "":
		out = append(out, finding("structure.missing-name", SeverityBlocker, SkillFile,
			"Frontmatter is missing a non-empty name.", "Add a hyphen-case skill name."))
	case !skillNameRe.MatchString(name) || utf8.RuneCountInString(name) > maxNameChars:
		declared = &name
		f := finding("structure.invalid-name", SeverityError, SkillFile,
			"Skill name must be hyphen-case using lowercase letters, digits, and hyphens.", "Rename the skill using lowercase hyphen-case.")
		f.Evidence = name
		out = append(out, f)
	default:
		declared = &name
	}
	desc := strings.TrimSpace(fm.Description)
	switch {
	case !fm.HasDescription || desc == "":
		out = append(out, finding("structure.missing-description", SeverityBlocker, SkillFile,
			"Frontmatter is missing a non-empty description.", "Add a concise description that states what the skill does and when to invoke it."))
	case utf8.RuneCountInString(desc) > maxDescriptionChars:
		out = append(out, finding("structure.description-too-long", SeverityError, SkillFile,
			"Description exceeds DeerFlow's 1024 character limit.", "Shorten the description and move detailed guidance into the body."))
	}
	if strings.TrimSpace(fm.Body) == "" {
		out = append(out, finding("structure.empty-body", SeverityError, SkillFile,
			"SKILL.md has no instruction body after frontmatter.", "Add executable workflow instructions after the frontmatter."))
	}
	if fm.AllowedToolsErr != nil {
		out = append(out, finding("structure.invalid-allowed-tools", SeverityError, SkillFile, fm.AllowedToolsErr.Error(),
			"Declare allowed-tools as a YAML list of non-empty strings."))
	}
	if fm.RequiredSecretsErr != nil {
		out = append(out, finding("structure.invalid-required-secrets", SeverityError, SkillFile, fm.RequiredSecretsErr.Error(),
			"Declare required-secrets as a YAML list."))
	}
	if fm.SecretsAutonomousInvalid {
		out = append(out, finding("structure.invalid-secrets-autonomous", SeverityError, SkillFile,
			"secrets-autonomous must be a boolean.", "Use true or false for secrets-autonomous."))
	}
	if profile == ProfileAgentSkills {
		out = append(out, agentSkillsFindings(desc, fm.HasDescription, declared)...)
	}
	return declared, out
}

// agentSkillsFindings are the portability recommendations of the
// agentskills profile.
func agentSkillsFindings(desc string, hasDesc bool, declared *string) []Finding {
	var out []Finding
	if hasDesc && utf8.RuneCountInString(desc) > agentSkillsDescriptionChars {
		f := finding("agentskills.description-length", SeverityWarning, SkillFile,
			"Description is longer than the Agent Skills recommended display length.", "Keep the description concise and move detail into the body.")
		f.Profile = ProfileAgentSkills
		out = append(out, f)
	}
	if declared != nil && utf8.RuneCountInString(*declared) > maxNameChars {
		f := finding("agentskills.name-length", SeverityWarning, SkillFile,
			"Skill name is longer than the portability profile recommends.", "Use a shorter package name for cross-client portability.")
		f.Profile = ProfileAgentSkills
		out = append(out, f)
	}
	return out
}
