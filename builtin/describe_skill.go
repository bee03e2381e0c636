package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// DescribeSkillName is the name of the describe_skill tool.
const DescribeSkillName = "describe_skill"

//go:embed describe_skill.md
var describeSkillDescription string

// SkillLoader loads a user's skills (skills.Store.Load).
type SkillLoader func(ctx context.Context, user string) ([]skills.Skill, error)

// DescribeSkillOptions configure NewDescribeSkill.
type DescribeSkillOptions struct {
	// Load loads the calling user's skills; required.
	Load SkillLoader
	// ContainerPath is the sandbox path of the skills; "" =
	// vpath.DefaultSkillsContainerPath.
	ContainerPath string
}

type describeSkillArgs struct {
	Name string `json:"name" jsonschema:"A skill name, select:a,b for exact names, or words describing the task."`
}

// NewDescribeSkill returns describe_skill, DeerFlow's deferred skill
// discovery (skills.deferred_discovery): it searches the calling user's
// enabled skills, within the run's skill allowlist (the runtime context's
// available_skills), and returns their metadata. It writes no state.
func NewDescribeSkill(o DescribeSkillOptions) *tool.Tool {
	if o.Load == nil {
		panic("builtin.NewDescribeSkill: Load is nil")
	}
	base := o.ContainerPath
	if base == "" {
		base = vpath.DefaultSkillsContainerPath
	}
	return tool.New(DescribeSkillName, strings.TrimSpace(describeSkillDescription),
		func(ctx context.Context, call *tool.Call, in describeSkillArgs) (*tool.Result, error) {
			user, allowed := "default", []string(nil)
			if call != nil {
				user, allowed = callUserID(call), contextStrings(call, ContextAvailableSkills)
			}
			all, err := o.Load(ctx, user)
			if err != nil && all == nil {
				return nil, fmt.Errorf("describe_skill: load the skills of %q: %w", user, err)
			}
			matched := skills.NewCatalog(all, allowed).Search(in.Name)
			if len(matched) == 0 {
				return tool.Text("No skills matched: " + in.Name), nil
			}
			return tool.Text(renderSkillMetadata(matched, base)), nil
		})
}

// renderSkillMetadata is the answer: a block per skill with its
// description and mutability label, allowed tools and SKILL.md location,
// every value from the skill's frontmatter HTML-escaped so that it cannot
// forge a tag of the prompt.
func renderSkillMetadata(matched []skills.Skill, base string) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
	blocks := make([]string, len(matched))
	for i, s := range matched {
		label := "[built-in]"
		if s.Category == skills.CategoryCustom {
			label = "[custom, editable]"
		}
		allowedTools := "(all)"
		if len(s.AllowedTools) > 0 {
			allowedTools = strings.Join(s.AllowedTools, ", ")
		}
		blocks[i] = "## Skill: " + esc(s.Name) + "\n- Description: " + esc(s.Description) + " " + label +
			"\n- Allowed tools: " + esc(allowedTools) + "\n- Location: " + esc(s.ContainerFile(base))
	}
	return strings.Join(blocks, "\n\n")
}
