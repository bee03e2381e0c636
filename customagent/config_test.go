package customagent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"

	"github.com/antlerhq/antler/customagent"
)

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"reviewer", true},
		{"Code-Reviewer-2", true},
		{"", false},
		{"a_b", false},
		{"../evil", false},
		{"/abs/path", false},
		{"a b", false},
		{"a.b", false},
		{"ünï", false},
	} {
		err := customagent.ValidateName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil {
			want := "Invalid agent name '" + tc.name + "'. Must match pattern: ^[A-Za-z0-9-]+$"
			if err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}
		}
	}
}

func TestParseConfig(t *testing.T) {
	tru := true
	temp, maxTok := 0.2, 12000
	for _, tc := range []struct {
		name    string
		in      string
		want    *customagent.Config
		wantErr string
	}{
		{name: "empty file", in: "", want: &customagent.Config{Name: "dir"}},
		{name: "null document", in: "~\n", want: &customagent.Config{Name: "dir"}},
		{name: "all fields", in: `name: x
description: d
model: m1
tool_groups: [web]
skills: []
model_settings: {temperature: 0.2, max_tokens: 12000}
thinking_enabled: true
reasoning_effort: high
`, want: &customagent.Config{Name: "x", Description: "d", Model: "m1", ToolGroups: []string{"web"}, Skills: []string{},
			ModelSettings: &customagent.ModelSettings{Temperature: &temp, MaxTokens: &maxTok}, ThinkingEnabled: &tru, ReasoningEffort: "high"}},
		{name: "nulls are absent", in: "name: x\nmodel: null\nskills: null\ntool_groups: ~\n", want: &customagent.Config{Name: "x"}},
		{name: "not a mapping", in: "- a\n", wantErr: "config.yaml:1: the document must be a mapping"},
		{name: "string for a list", in: "name: x\nskills: web\n", wantErr: "config.yaml:2: skills: must be a list of strings"},
		{name: "number for a string", in: "description: 3\n", wantErr: "config.yaml:1: description: must be a string"},
		{name: "bad effort", in: "reasoning_effort: extreme\n", wantErr: "reasoning_effort: must be low, medium, high or null"},
		{name: "temperature range", in: "model_settings: {temperature: 3}\n", wantErr: "temperature must be a number from 0 to 2"},
		{name: "max tokens range", in: "model_settings: {max_tokens: 0}\n", wantErr: "max_tokens must be an integer from 1 to 200000"},
		{name: "model settings extra key", in: "model_settings: {top_p: 1}\n", wantErr: `unknown key "top_p"`},
		{name: "duplicate key", in: "name: a\nname: b\n", wantErr: "duplicate key"},
		{name: "invalid yaml", in: "name: [\n", wantErr: "invalid YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := customagent.ParseConfig([]byte(tc.in), "dir")
			if tc.wantErr != "" {
				var ce *customagent.ConfigError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a ConfigError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(customagent.Config{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarshalKeepsOrderAndUnknownKeys(t *testing.T) {
	in := `name: x
description: d
github:
  installation_id: 140594274
  bindings:
    - repo: owner/repo
      triggers:
        issue_comment: {require_mention: true}
reasoning_effort: low
model_settings:
  temperature: 1
custom_key: [1, 2]
`
	c, err := customagent.ParseConfig([]byte(in), "x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"github", "custom_key"}, c.ExtraKeys()); diff != "" {
		t.Errorf("extra keys (-want +got):\n%s", diff)
	}
	c.Description = "new"
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 0; i < len(doc.Content[0].Content); i += 2 {
		keys = append(keys, doc.Content[0].Content[i].Value)
	}
	if diff := cmp.Diff([]string{"name", "description", "model_settings", "reasoning_effort", "github", "custom_key"}, keys); diff != "" {
		t.Errorf("key order (-want +got):\n%s\n%s", diff, out)
	}
	var before, after map[string]any
	_ = yaml.Unmarshal([]byte(in), &before)
	_ = yaml.Unmarshal(out, &after)
	before["description"] = "new"
	before["model_settings"] = map[string]any{"temperature": 1.0}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	again, err := customagent.ParseConfig(out, "x")
	if err != nil {
		t.Fatal(err)
	}
	if *again.ModelSettings.Temperature != 1 {
		t.Errorf("temperature = %v", *again.ModelSettings.Temperature)
	}
	var gh struct {
		InstallationID int `yaml:"installation_id"`
	}
	if ok, err := again.Extra("github", &gh); !ok || err != nil || gh.InstallationID != 140594274 {
		t.Errorf("Extra(github) = %v %v %+v", ok, err, gh)
	}
}

func TestMarshalKeepsEmptyListsAndDropsNil(t *testing.T) {
	c := &customagent.Config{Name: "x", Skills: []string{}}
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "name: x\ndescription: \"\"\nskills: []\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add("name: x\nskills: [a]\ngithub: {installation_id: 1}\n")
	f.Add("model_settings: {temperature: 0.5, max_tokens: 10}\nthinking_enabled: false\n")
	f.Add("- 1\n")
	f.Add("description: |\n  multi\n  line\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := customagent.ParseConfig([]byte(in), "dir")
		if err != nil {
			return
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		c2, err := customagent.ParseConfig(out, "dir")
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if diff := cmp.Diff(c, c2, cmpopts.IgnoreUnexported(customagent.Config{})); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(c.ExtraKeys(), c2.ExtraKeys()); diff != "" {
			t.Fatalf("extra keys (-first +second):\n%s", diff)
		}
	})
}

func TestParseConfigMCP(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          string
		wantPlugins []string
		wantTools   map[string][]string
		wantErr     string
	}{
		{name: "absent: every server", in: "name: a\n"},
		{name: "empty: none", in: "mcp_plugins: []\n", wantPlugins: []string{}},
		{name: "servers and tools", in: "mcp_plugins: [github, notes]\nmcp_tools:\n  github: [search_code]\n",
			wantPlugins: []string{"github", "notes"}, wantTools: map[string][]string{"github": {"search_code"}}},
		{name: "tools without plugins", in: "mcp_tools: {github: [a]}\n", wantTools: map[string][]string{"github": {"a"}}},
		{name: "tools of an unbound server", in: "mcp_plugins: [a]\nmcp_tools:\n  b: [x]\n", wantErr: "config.yaml:3: mcp_tools: server 'b' is not in mcp_plugins"},
		{name: "plugins not a list", in: "mcp_plugins: github\n", wantErr: "config.yaml:1: mcp_plugins: must be a list of strings"},
		{name: "tools not a mapping", in: "mcp_tools: [a]\n", wantErr: "config.yaml:1: mcp_tools: must be a mapping"},
		{name: "empty plugin", in: "mcp_plugins: ['']\n", wantErr: "mcp_plugins: empty server name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := customagent.ParseConfig([]byte(tc.in), "dir")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(tc.wantPlugins, c.MCPPlugins) || (tc.wantPlugins == nil) != (c.MCPPlugins == nil) {
				t.Errorf("MCPPlugins = %#v, want %#v", c.MCPPlugins, tc.wantPlugins)
			}
			if diff := cmp.Diff(tc.wantTools, c.MCPTools); diff != "" {
				t.Errorf("MCPTools (-want +got):\n%s", diff)
			}
			// A rewrite keeps both, with the nil / empty distinction.
			out, err := c.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			back, err := customagent.ParseConfig(out, "dir")
			if err != nil {
				t.Fatalf("re-parse of %s: %v", out, err)
			}
			if (back.MCPPlugins == nil) != (c.MCPPlugins == nil) || !cmp.Equal(back.MCPPlugins, c.MCPPlugins, cmpopts.EquateEmpty()) ||
				!cmp.Equal(back.MCPTools, c.MCPTools) || len(back.ExtraKeys()) != 0 {
				t.Errorf("round trip of\n%s: plugins %#v tools %#v extra %v", out, back.MCPPlugins, back.MCPTools, back.ExtraKeys())
			}
		})
	}
}
