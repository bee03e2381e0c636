package skills

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func catalogSkills() []Skill {
	return []Skill{
		{Name: "data-analysis", Description: "Analyse CSV and Excel data with pandas and draw charts.", Enabled: true},
		{Name: "deep-research", Description: "Research a topic across many web sources and cite them.", Enabled: true},
		{Name: "podcast-generation", Description: "Turn a text into a two-voice podcast script and audio.", Enabled: true},
		{Name: "chart-visualization", Description: "Draw a chart from data.", Enabled: true},
		{Name: "ppt-generation", Description: "Create slides for a presentation.", Enabled: true},
		{Name: "frontend-design", Description: "Design web pages.", Enabled: true},
		{Name: "old-skill", Description: "A chart skill the user turned off.", Enabled: false},
	}
}

func names(ss []Skill) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func TestCatalogSearch(t *testing.T) {
	c := NewCatalog(catalogSkills(), nil)
	tests := []struct {
		name, query string
		want        []string
	}{
		{"select keeps catalogue order", "select:ppt-generation, data-analysis", []string{"data-analysis", "ppt-generation"}},
		{"select of a disabled skill", "select:old-skill", nil},
		{"regex: name matches before description matches", "chart", []string{"chart-visualization", "data-analysis"}},
		{"natural query in any word order", "visualize a chart of sales data", []string{"data-analysis", "chart-visualization"}},
		{"required name part ranked by the rest", "+generation audio", []string{"podcast-generation", "ppt-generation"}},
		{"invalid regex: no literal match, then shared words", "chart(", []string{"data-analysis", "chart-visualization"}},
		{"blank", "   ", nil},
		{"bare plus", "+", nil},
		{"nothing shared", "kubernetes", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, names(c.Search(tt.query))); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestCatalogSearch_capsAndAllowlist(t *testing.T) {
	var many []Skill
	for _, n := range []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"} {
		many = append(many, Skill{Name: "skill-" + n, Description: "common words", Enabled: true})
	}
	c := NewCatalog(many, nil)
	if got := len(c.Search("common")); got != CatalogMaxResults {
		t.Errorf("keyword search returned %d skills, want %d", got, CatalogMaxResults)
	}
	if got := len(c.Search("select:skill-a1,skill-a2,skill-a3,skill-a4,skill-a5,skill-a6,skill-a7")); got != 7 {
		t.Errorf("select returned %d skills, want all 7", got)
	}
	c = NewCatalog(catalogSkills(), []string{"ppt-generation"})
	if diff := cmp.Diff([]string{"ppt-generation"}, c.Names()); diff != "" {
		t.Errorf("names under an allowlist (-want +got):\n%s", diff)
	}
	if got := c.Search("chart"); len(got) != 0 {
		t.Errorf("search found %v outside the allowlist", names(got))
	}
}

func TestRenderIndexPrompt(t *testing.T) {
	sk := append(catalogSkills(), Skill{Name: "x<y", Description: "d", Enabled: true})
	got := RenderIndexPrompt(sk, PromptOptions{})
	for _, want := range []string{
		"<skill_index>\nchart-visualization, data-analysis, deep-research, frontend-design, podcast-generation, ppt-generation, x&lt;y\n</skill_index>",
		"`describe_skill`", "**Skills are located at:** /mnt/skills",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"Analyse CSV", "old-skill", "<available_skills>", "skill_manage"} {
		if strings.Contains(got, absent) {
			t.Errorf("prompt holds %q:\n%s", absent, got)
		}
	}
	if got := RenderIndexPrompt(sk, PromptOptions{Allowlist: []string{}}); got != "" {
		t.Errorf("empty allowlist = %q, want empty", got)
	}
	if got := RenderIndexPrompt(nil, PromptOptions{SkillEvolution: true}); !strings.Contains(got, "skill_manage") {
		t.Errorf("self-evolution without skills lacks its text:\n%s", got)
	}
}
