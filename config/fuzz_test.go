package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "deerflow-config.example.yaml")); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"models:\n  - name: a\n    use: b\n    model: c\n    api_key: $KEY\n",
		"sandbox:\n  use: x\n  mounts: [{host_path: a, container_path: /b}]\n",
		"a: &x {b: *x}\n",
		"tools: [*undefined]\n",
		"subagents: {custom_agents: {a: null}, agents: {b: {model: $M}}}\n",
		"acp_agents: {c: {command: x, description: y, env: {K: $K}}}\n",
		"- a\n",
		"<<: {tools: []}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env := func(k string) (string, bool) { return "v", strings.HasPrefix(k, "K") }
		c, err := Parse("fuzz.yaml", data, env)
		if err == nil && c == nil {
			t.Fatal("nil config without error")
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}

func FuzzEnvRef(f *testing.F) {
	for _, s := range []string{"", "$", "$$", "$HOME", "plain", "$A B", "x$Y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, ok := envRef(s)
		isRef := len(s) >= 2 && s[0] == '$'
		if ok != isRef || (ok && name != s[1:]) || (!ok && name != "") {
			t.Fatalf("envRef(%q) = %q, %v", s, name, ok)
		}
	})
}

func FuzzParseExtensions(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "extensions_config.example.json")); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"", "{}", "[]", "null", `{"mcpServers": {"a": null}}`,
		`{"mcpServers": {"a": {"type": "http", "url": "$U", "headers": {"H": "$H"}, "oauth": {"enabled": true}}}}`,
		`{"mcpServers": {"a": {"routing": {"priority": -5}, "session_init_timeout": "x"}}}`,
		`{"skills": {"a": {}}, "middlewares": "x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseExtensions("fuzz.json", data, func(k string) (string, bool) { return "v", k == "U" })
		if err == nil && e == nil {
			t.Fatal("nil extensions without error")
		}
	})
}
