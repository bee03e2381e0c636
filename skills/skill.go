package skills

import (
	"path"
	"strings"

	"github.com/antlerhq/antler/vpath"
)

// SkillFile is the name of a skill package's main file.
const SkillFile = "SKILL.md"

// Category says where a skill comes from.
type Category string

// The skill categories, in discovery order: a later category shadows an
// earlier one that has a skill of the same name.
const (
	// CategoryPublic skills are bundled with the installation and
	// read-only ({skills_path}/public/<dir>/SKILL.md).
	CategoryPublic Category = "public"
	// CategoryLegacy skills are pre-isolation global custom skills,
	// read-only ({skills_path}/custom/<dir>/SKILL.md).
	CategoryLegacy Category = "legacy"
	// CategoryCustom skills belong to one user and are editable through
	// skill_manage ({home}/users/{user}/skills/custom/<name>/SKILL.md).
	CategoryCustom Category = "custom"
)

// Secret is one entry of a skill's required-secrets list.
type Secret struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional,omitempty"`
}

// Skill is a discovered skill package.
type Skill struct {
	Name        string
	Description string
	// License is empty when the frontmatter has none.
	License string
	// AllowedTools is nil when the frontmatter does not declare
	// allowed-tools (no restriction) and an empty, non-nil slice when it
	// declares an empty list (no business tools).
	AllowedTools []string
	// RequiredSecrets lists the secrets the skill asks for.
	RequiredSecrets []Secret
	// SecretsAutonomous is the secrets-autonomous flag (default true).
	SecretsAutonomous bool

	Category Category
	// Dir is the host directory of the package and File its SKILL.md.
	Dir  string
	File string
	// RelPath is the package directory relative to its category root,
	// slash-separated ("my-skill" or "team/my-skill").
	RelPath string
	// Enabled is the state from the extensions file (no entry = true).
	Enabled bool
	// Body is the markdown after the frontmatter.
	Body string
}

// Editable reports whether skill_manage may change the skill.
func (s Skill) Editable() bool { return s.Category == CategoryCustom }

// ContainerFile returns the path of the skill's SKILL.md inside the
// sandbox: {base}/{category}/{relative dir}/SKILL.md. An empty base is
// [vpath.DefaultSkillsContainerPath].
func (s Skill) ContainerFile(base string) string {
	if base == "" {
		base = vpath.DefaultSkillsContainerPath
	}
	rel := s.RelPath
	if rel == "" {
		rel = s.Name
	}
	return path.Join(strings.TrimRight(base, "/"), string(s.Category), rel, SkillFile)
}

// ContainerDir returns the package directory inside the sandbox.
func (s Skill) ContainerDir(base string) string { return path.Dir(s.ContainerFile(base)) }
