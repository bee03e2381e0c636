package skills

import (
	"fmt"
	"strings"
	"testing"
)

func TestRenderPrompt_listsEnabledSkillsInAllowlist(t *testing.T) {
	sk := []Skill{
		{Name: "alpha", Description: "Use <b> & more", Category: CategoryPublic, RelPath: "team/alpha", Enabled: true},
		{Name: "mine", Description: "Mine", Category: CategoryCustom, RelPath: "mine", Enabled: true},
		{Name: "off", Description: "Off", Category: CategoryPublic, RelPath: "off", Enabled: false},
	}
	got := RenderPrompt(sk, PromptOptions{})
	for _, want := range []string{
		"<skill_system>",
		"<available_skills>\n    <skill>\n        <name>alpha</name>\n        <description>Use &lt;b&gt; &amp; more [built-in]</description>\n        <location>/mnt/skills/public/team/alpha/SKILL.md</location>\n    </skill>\n",
		"<description>Mine [custom, editable]</description>\n        <location>/mnt/skills/custom/mine/SKILL.md</location>",
		"<disabled_skills>", "    - off (public)\n</disabled_skills>",
		"**Skills are located at:** /mnt/skills",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "skill_manage") {
		t.Error("self-evolution text without SkillEvolution")
	}

	if got := RenderPrompt(sk, PromptOptions{Allowlist: []string{"mine"}}); strings.Contains(got, "alpha") || !strings.Contains(got, "<name>mine</name>") {
		t.Errorf("allowlist not applied:\n%s", got)
	}
	if got := RenderPrompt(sk, PromptOptions{Allowlist: []string{"off"}}); got != "" {
		t.Errorf("allowlist with no enabled skill = %q, want empty", got)
	}
	if got := RenderPrompt(sk, PromptOptions{Allowlist: []string{}}); got != "" {
		t.Errorf("empty allowlist = %q, want empty", got)
	}
	if got := RenderPrompt(nil, PromptOptions{}); got != "" {
		t.Errorf("no skills = %q, want empty", got)
	}
	got = RenderPrompt(nil, PromptOptions{SkillEvolution: true, ContainerPath: "/skills"})
	if !strings.Contains(got, "skill_manage(action=\"create\"") || !strings.Contains(got, "**Skills are located at:** /skills") || strings.Contains(got, "<available_skills>") {
		t.Errorf("evolution-only prompt:\n%s", got)
	}
}

func ExampleRenderPrompt() {
	section := RenderPrompt([]Skill{
		{Name: "deep-research", Description: "Research a topic in depth", Category: CategoryPublic, RelPath: "deep-research", Enabled: true},
	}, PromptOptions{})
	start := strings.Index(section, "<available_skills>")
	end := strings.Index(section, "</available_skills>")
	fmt.Println(section[start : end+len("</available_skills>")])
	// Output:
	// <available_skills>
	//     <skill>
	//         <name>deep-research</name>
	//         <description>Research a topic in depth [built-in]</description>
	//         <location>/mnt/skills/public/deep-research/SKILL.md</location>
	//     </skill>
	// </available_skills>
}
