package skills

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

func toolDefs(names ...string) []model.ToolDefinition {
	var out []model.ToolDefinition
	for _, n := range names {
		out = append(out, model.ToolDefinition{Name: n})
	}
	return out
}

func defNames(defs []model.ToolDefinition) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

type policyRun struct {
	p *Policy
}

// visible runs the model middleware and returns the tool names the model
// was offered and the request it got.
func (r policyRun) visible(t *testing.T, state *thread.State, tools ...string) ([]string, *model.Request) {
	t.Helper()
	var seen *model.Request
	h := tool.ChainModel(func(ctx context.Context, c *tool.ModelCall) (*model.Response, error) {
		seen = c.Request
		return &model.Response{}, nil
	}, r.p.ModelMiddleware())
	req := &model.Request{Messages: state.Messages, Tools: toolDefs(tools...)}
	if _, err := h(t.Context(), &tool.ModelCall{Request: req, State: state, UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	return defNames(seen.Tools), seen
}

// call runs the tool middleware and reports whether the tool ran.
func (r policyRun) call(t *testing.T, state *thread.State, name string) (bool, string) {
	t.Helper()
	ran := false
	h := tool.Chain(func(ctx context.Context, c *tool.Call, args json.RawMessage) (*tool.Result, error) {
		ran = true
		return tool.Text("ok"), nil
	}, r.p.ToolMiddleware())
	res, err := h(t.Context(), &tool.Call{Name: name, UserID: "u", State: state}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return ran, res.TextContent()
}

func userState(text string, sc ...thread.SkillContext) *thread.State {
	return &thread.State{Messages: []model.Message{{Role: model.RoleUser, Content: text}}, SkillContext: sc}
}

// Passive enabled skills don't restrict; a slash
// skill restricts schemas and execution; read_file and tool_search stay
// available; a promoted tool not in allowed-tools remains blocked.
func TestSkillToolPolicy(t *testing.T) {
	e := newTestEnv(t)
	e.public(t, "restricted", "name: restricted\ndescription: r\nallowed-tools: [bash]")
	e.public(t, "open", "name: open\ndescription: o")
	e.public(t, "empty", "name: empty\ndescription: e\nallowed-tools: []")
	r := policyRun{NewPolicy(PolicyOptions{Store: e.store})}
	all := []string{"bash", "web_search", "read_file", "tool_search", "mcp_promoted"}

	t.Run("passive enabled skills do not restrict", func(t *testing.T) {
		got, _ := r.visible(t, userState("please research"), all...)
		if diff := cmp.Diff(all, got); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		if ran, _ := r.call(t, userState("please research"), "web_search"); !ran {
			t.Error("web_search blocked without an active skill")
		}
	})

	t.Run("slash skill restricts schemas", func(t *testing.T) {
		got, req := r.visible(t, userState("/restricted do it"), all...)
		if diff := cmp.Diff([]string{"bash", "read_file", "tool_search"}, got); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		last := req.Messages[len(req.Messages)-1]
		if hidden, _ := last.Meta[hiddenMetaKey].(bool); !hidden || !strings.Contains(last.Content, "# Body") ||
			!strings.Contains(last.Content, "/mnt/skills/public/restricted/SKILL.md") {
			t.Errorf("activated skill not injected: %+v", last)
		}
	})

	t.Run("slash skill restricts execution", func(t *testing.T) {
		st := userState("/restricted do it")
		for name, want := range map[string]bool{"bash": true, "read_file": true, "tool_search": true, "web_search": false, "mcp_promoted": false} {
			ran, text := r.call(t, st, name)
			if ran != want {
				t.Errorf("%s ran = %v, want %v", name, ran, want)
			}
			if !want && text != "Error: Tool '"+name+"' is not allowed by the active skill policy." {
				t.Errorf("%s blocked text = %q", name, text)
			}
		}
	})

	t.Run("promoted tool stays blocked", func(t *testing.T) {
		// tool_search promoted mcp_promoted: it is in the state but not in
		// the skill's allowed-tools.
		st := userState("/restricted go")
		st.Promoted = &thread.Promoted{CatalogHash: "h", Names: []string{"mcp_promoted"}}
		got, _ := r.visible(t, st, all...)
		if strings.Contains(strings.Join(got, ","), "mcp_promoted") {
			t.Errorf("promoted tool visible: %v", got)
		}
		if ran, _ := r.call(t, st, "mcp_promoted"); ran {
			t.Error("promoted tool ran")
		}
	})

	t.Run("slash dominates later reads", func(t *testing.T) {
		st := userState("/restricted go", thread.SkillContext{Name: "open", Path: "/mnt/skills/public/open/SKILL.md"})
		if got, _ := r.visible(t, st, all...); !cmp.Equal(got, []string{"bash", "read_file", "tool_search"}) {
			t.Errorf("tools = %v", got)
		}
	})

	t.Run("loaded skill without slash restricts", func(t *testing.T) {
		st := userState("go", thread.SkillContext{Name: "restricted", Path: "/mnt/skills/public/restricted/SKILL.md"})
		if ran, _ := r.call(t, st, "web_search"); ran {
			t.Error("web_search ran while a loaded skill restricts it")
		}
		// A loaded skill that declares nothing adds no restriction.
		st = userState("go", thread.SkillContext{Name: "open", Path: "/mnt/skills/public/open/SKILL.md"})
		if ran, _ := r.call(t, st, "web_search"); !ran {
			t.Error("legacy allow-all skill restricted web_search")
		}
	})

	t.Run("declared empty allows only the always-allowed tools", func(t *testing.T) {
		if got, _ := r.visible(t, userState("/empty"), all...); !cmp.Equal(got, []string{"read_file", "tool_search"}) {
			t.Errorf("tools = %v", got)
		}
	})

	t.Run("reserved and unknown slash names do not activate", func(t *testing.T) {
		for _, text := range []string{"/help", "/nope do", " /restricted", "/restricted-x"} {
			if got, _ := r.visible(t, userState(text), all...); len(got) != len(all) {
				t.Errorf("%q restricted tools to %v", text, got)
			}
		}
	})

	t.Run("agent allowlist excludes the skill", func(t *testing.T) {
		r := policyRun{NewPolicy(PolicyOptions{Store: e.store, Allowlist: []string{"open"}})}
		if got, _ := r.visible(t, userState("/restricted go"), all...); len(got) != len(all) {
			t.Errorf("skill outside the allowlist activated: %v", got)
		}
	})

	t.Run("registry error fails closed", func(t *testing.T) {
		broken := NewStore(Options{SkillsPath: e.skillsPath, Home: e.home, EnabledState: func(context.Context) (map[string]bool, error) {
			return nil, errors.New("boom")
		}})
		r := policyRun{NewPolicy(PolicyOptions{Store: broken})}
		if got, _ := r.visible(t, userState("/open go"), all...); !cmp.Equal(got, []string{"read_file", "tool_search"}) {
			t.Errorf("tools = %v, want only the always-allowed ones", got)
		}
		// Without an active skill nothing is loaded and nothing restricted.
		if got, _ := r.visible(t, userState("go"), all...); len(got) != len(all) {
			t.Errorf("tools = %v", got)
		}
	})
}

func TestSlashName(t *testing.T) {
	for text, want := range map[string]string{
		"/deep-research topic": "deep-research", "/a": "a", "/a\nmore": "a",
		"/A": "", "/a_b": "", "/status": "", "hello /a": "", "/a--b": "", "/-a": "",
	} {
		got, ok := slashName(text)
		if got != want || ok != (want != "") {
			t.Errorf("slashName(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
}

// A Policy without its own allowlist takes a run's from the runtime
// context ("available_skills", set by the lead-agent factory for a custom
// agent), so one Policy serves every agent.
func TestPolicyAllowlistFromRunContext(t *testing.T) {
	e := newTestEnv(t)
	e.public(t, "restricted", "name: restricted\ndescription: r\nallowed-tools: [bash]")
	p := NewPolicy(PolicyOptions{Store: e.store})
	st := userState("/restricted do it")
	offered := func(rc map[string]any) []string {
		var seen *model.Request
		h := tool.ChainModel(func(ctx context.Context, c *tool.ModelCall) (*model.Response, error) {
			seen = c.Request
			return &model.Response{}, nil
		}, p.ModelMiddleware())
		if _, err := h(t.Context(), &tool.ModelCall{Request: &model.Request{Messages: st.Messages, Tools: toolDefs("bash", "web_search")},
			State: st, UserID: "u", Context: rc}); err != nil {
			t.Fatal(err)
		}
		return defNames(seen.Tools)
	}
	if diff := cmp.Diff([]string{"bash"}, offered(nil)); diff != "" {
		t.Errorf("no run allowlist (-want +got):\n%s", diff)
	}
	// The agent may not use "restricted": its slash activation is inert.
	if diff := cmp.Diff([]string{"bash", "web_search"}, offered(map[string]any{"available_skills": []string{"other"}})); diff != "" {
		t.Errorf("run allowlist excluding the skill (-want +got):\n%s", diff)
	}
	ran := false
	h := tool.Chain(func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
		ran = true
		return tool.Text("ok"), nil
	}, p.ToolMiddleware())
	if _, err := h(t.Context(), &tool.Call{Name: "web_search", UserID: "u", State: st,
		Context: map[string]any{"available_skills": []string{"other"}}}, json.RawMessage(`{}`)); err != nil || !ran {
		t.Errorf("web_search blocked although the agent cannot use the skill: ran=%v err=%v", ran, err)
	}
}
