package skills

import (
	_ "embed"
	"slices"
	"strings"

	"github.com/antlerhq/antler/internal/tmpl"
	"github.com/antlerhq/antler/vpath"
)

//go:embed prompt.md
var promptText string

//go:embed prompt_evolution.md
var evolutionText string

var promptTemplate = tmpl.MustParse("skills", promptText)

// PromptOptions configures RenderPrompt.
type PromptOptions struct {
	// Allowlist limits the listed skills to these names (a custom agent's
	// or subagent's skills); nil lists every skill, an empty non-nil list
	// none.
	Allowlist []string
	// ContainerPath is the sandbox path of the skills; "" =
	// [vpath.DefaultSkillsContainerPath].
	ContainerPath string
	// SkillEvolution adds the self-evolution instructions for
	// skill_manage (skill_evolution.enabled).
	SkillEvolution bool
}

// RenderPrompt renders the <skill_system> block: the enabled skills as
// <available_skills> entries (name, description with a "[custom,
// editable]" or "[built-in]" label, and the SKILL.md location the agent
// reads with read_file) and the disabled ones in a <disabled_skills> list
// the agent must not use. Values are HTML-escaped so that a skill's
// frontmatter cannot close a tag of the prompt.
//
// The result is "" when there is nothing to say: no skills and no
// self-evolution, or an allowlist that matches no enabled skill.
func RenderPrompt(skills []Skill, opts PromptOptions) string {
	base := opts.ContainerPath
	if base == "" {
		base = vpath.DefaultSkillsContainerPath
	}
	allowed := func(name string) bool { return opts.Allowlist == nil || slices.Contains(opts.Allowlist, name) }
	var enabled, disabled []Skill
	for _, s := range skills {
		if s.Enabled {
			enabled = append(enabled, s)
		} else {
			disabled = append(disabled, s)
		}
	}
	if len(enabled) == 0 && len(disabled) == 0 && !opts.SkillEvolution {
		return ""
	}
	if opts.Allowlist != nil && !slices.ContainsFunc(enabled, func(s Skill) bool { return allowed(s.Name) }) {
		return ""
	}
	var avail strings.Builder
	for _, s := range enabled {
		if !allowed(s.Name) {
			continue
		}
		if avail.Len() == 0 {
			avail.WriteString("<available_skills>\n")
		}
		avail.WriteString("    <skill>\n        <name>" + escape(s.Name) + "</name>\n        <description>" +
			escape(s.Description) + " " + mutabilityLabel(s) + "</description>\n        <location>" +
			escape(s.ContainerFile(base)) + "</location>\n    </skill>\n")
	}
	if avail.Len() > 0 {
		avail.WriteString("</available_skills>")
	}
	var dis strings.Builder
	for _, s := range disabled {
		if !allowed(s.Name) {
			continue
		}
		if dis.Len() == 0 {
			dis.WriteString("<disabled_skills>\nThese skills are INSTALLED but DISABLED. Do not read, reference or use them, their SKILL.md,\n" +
				"supporting files or workflows, even though their files exist: the user has turned them off.\n")
		}
		dis.WriteString("    - " + escape(s.Name) + " (" + string(s.Category) + ")\n")
	}
	if dis.Len() > 0 {
		dis.WriteString("</disabled_skills>")
	}
	evolution := ""
	if opts.SkillEvolution {
		evolution = evolutionText
	}
	var b strings.Builder
	_ = promptTemplate.Execute(&b, map[string]string{
		"ContainerPath": base,
		"Evolution":     evolution,
		"Available":     avail.String(),
		"Disabled":      dis.String(),
	})
	return b.String()
}

func mutabilityLabel(s Skill) string {
	if s.Category == CategoryCustom {
		return "[custom, editable]"
	}
	return "[built-in]"
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape is Python's html.escape(s, quote=False).
func escape(s string) string { return htmlEscaper.Replace(s) }

//go:embed prompt_index.md
var indexPromptText string

var indexPromptTemplate = tmpl.MustParse("skills-index", indexPromptText)

// RenderIndexPrompt renders the <skill_system> block of deferred skill
// discovery (skills.deferred_discovery): the enabled, allowed skills by
// name only in a <skill_index>, which describe_skill searches for their
// metadata. Disabled skills are not named. The result is "" when no
// skill is listed and self-evolution is off.
func RenderIndexPrompt(skills []Skill, opts PromptOptions) string {
	base := opts.ContainerPath
	if base == "" {
		base = vpath.DefaultSkillsContainerPath
	}
	names := NewCatalog(skills, opts.Allowlist).Names()
	if len(names) == 0 && !opts.SkillEvolution {
		return ""
	}
	for i, n := range names {
		names[i] = escape(n)
	}
	evolution := ""
	if opts.SkillEvolution {
		evolution = evolutionText
	}
	var b strings.Builder
	_ = indexPromptTemplate.Execute(&b, map[string]string{
		"ContainerPath": base,
		"Evolution":     evolution,
		"Names":         strings.Join(names, ", "),
	})
	return b.String()
}
