package builtin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/tool"
)

func TestDescribeSkill(t *testing.T) {
	var loadedFor []string
	load := func(_ context.Context, user string) ([]skills.Skill, error) {
		loadedFor = append(loadedFor, user)
		return []skills.Skill{
			{Name: "data-analysis", Description: "Analyse <b>CSV</b> data.", Category: skills.CategoryPublic, RelPath: "data-analysis",
				AllowedTools: []string{"read_file", "bash"}, Enabled: true},
			{Name: "my-report", Description: "Write the weekly report.", Category: skills.CategoryCustom, RelPath: "my-report", Enabled: true},
			{Name: "off", Description: "Analyse nothing.", Category: skills.CategoryPublic, RelPath: "off", Enabled: false},
		}, nil
	}
	tl := builtin.NewDescribeSkill(builtin.DescribeSkillOptions{Load: load})
	tests := []struct {
		name    string
		context map[string]any
		query   string
		want    string
	}{
		{name: "metadata of a match, escaped", context: map[string]any{"user_id": "alice"}, query: "select:data-analysis",
			want: "## Skill: data-analysis\n- Description: Analyse &lt;b&gt;CSV&lt;/b&gt; data. [built-in]\n- Allowed tools: read_file, bash\n- Location: /mnt/skills/public/data-analysis/SKILL.md"},
		{name: "custom skill, no allowed-tools", context: map[string]any{"user_id": "alice"}, query: "weekly report",
			want: "## Skill: my-report\n- Description: Write the weekly report. [custom, editable]\n- Allowed tools: (all)\n- Location: /mnt/skills/custom/my-report/SKILL.md"},
		{name: "disabled skills are not found", context: map[string]any{"user_id": "alice"}, query: "select:off", want: "No skills matched: select:off"},
		{name: "the run's allowlist applies", context: map[string]any{"user_id": "alice", builtin.ContextAvailableSkills: []string{"my-report"}},
			query: "select:data-analysis", want: "No skills matched: select:data-analysis"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tl.Handler(t.Context(), &tool.Call{Name: builtin.DescribeSkillName, Context: tt.context}, []byte(`{"name":`+quote(tt.query)+`}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.TextContent(); got != tt.want || res.IsError {
				t.Errorf("result (error %v):\n%s\nwant:\n%s", res.IsError, got, tt.want)
			}
		})
	}
	if loadedFor[0] != "alice" {
		t.Errorf("loaded the skills of %q, want the caller's", loadedFor[0])
	}

	failing := builtin.NewDescribeSkill(builtin.DescribeSkillOptions{Load: func(context.Context, string) ([]skills.Skill, error) {
		return nil, errors.New("disk gone")
	}})
	if res, err := failing.Handler(t.Context(), &tool.Call{}, []byte(`{"name":"x"}`)); err != nil || !res.IsError || !strings.Contains(res.TextContent(), "disk gone") {
		t.Errorf("a store that cannot load = %v, %+v; want an error result naming the cause", err, res)
	}
	res, err := tl.Handler(t.Context(), &tool.Call{}, []byte(`{}`))
	if err != nil || !res.IsError {
		t.Errorf("missing name: %v, %+v; want an error result", err, res)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
