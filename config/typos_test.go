package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The typos of issue #22 and more: each is reported at its file:line with
// its key path and the nearest known key.

func TestTypos_configYAML(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // the whole error
	}{
		{
			name: "modles at the top level",
			doc:  "config_version: 34\nmodles:\n  - {name: m, use: u, model: x}\n",
			want: `config.yaml:2: modles: unknown key "modles" (did you mean "models"?)`,
		},
		{
			name: "tool_serach at the top level",
			doc:  "models: []\n\ntool_serach:\n  enabled: true\n",
			want: `config.yaml:3: tool_serach: unknown key "tool_serach" (did you mean "tool_search"?)`,
		},
		{
			name: "memroy, a DeerFlow section, at the top level",
			doc:  "memroy:\n  enabled: true\n",
			want: `config.yaml:1: memroy: unknown key "memroy" (did you mean "memory"?)`,
		},
		{
			name: "title.max_wrds",
			doc:  "title:\n  enabled: true\n  max_wrds: 4\n",
			want: `config.yaml:3: title.max_wrds: unknown key "max_wrds" (did you mean "max_words"?)`,
		},
		{
			name: "sandbox.allow_host_bsh beside provider keys",
			doc:  "sandbox:\n  use: x:Y\n  image: img\n  allow_host_bsh: true\n",
			want: `config.yaml:4: sandbox.allow_host_bsh: unknown key "allow_host_bsh" (did you mean "allow_host_bash"?)`,
		},
		{
			name: "loop_detection.warn_treshold",
			doc:  "loop_detection:\n  warn_treshold: 2\n",
			want: `config.yaml:2: loop_detection.warn_treshold: unknown key "warn_treshold" (did you mean "warn_threshold"?)`,
		},
		{
			name: "comand in an acp agent",
			doc:  "acp_agents:\n  codex:\n    description: d\n    comand: codex-acp\n",
			want: `config.yaml:4: acp_agents.codex.comand: unknown key "comand" (did you mean "command"?)`,
		},
		{
			name: "system_promt in a custom subagent",
			doc:  "subagents:\n  custom_agents:\n    a:\n      description: d\n      system_promt: p\n",
			want: `config.yaml:5: subagents.custom_agents.a.system_promt: unknown key "system_promt" (did you mean "system_prompt"?)`,
		},
		{
			name: "read_only misspelt in a mount, a list item",
			doc:  "sandbox:\n  mounts:\n    - host_path: /a\n      container_path: /b\n      readonly: true\n",
			want: `config.yaml:5: sandbox.mounts[0].readonly: unknown key "readonly" (did you mean "read_only"?)`,
		},
		{
			name: "fail_close in guardrails",
			doc:  "guardrails:\n  fail_close: true\n",
			want: `config.yaml:2: guardrails.fail_close: unknown key "fail_close" (did you mean "fail_closed"?)`,
		},
		{
			name: "no near key lists the known keys",
			doc:  "tool_search:\n  zzz: 1\n",
			want: `config.yaml:2: tool_search.zzz: unknown key "zzz" (known keys: auto_context_percent, auto_promote_top_k, auto_tool_count, defer, embeddings, enabled, max_results, provider_search, tools)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tt.doc), nil)
			if err == nil {
				t.Fatalf("Parse accepted the typo")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestTypos_modelKeyWarns: DeerFlow passes a model entry's unknown keys to
// the model class, which sends them in the request, so an unknown one is
// a warning naming the nearest key the providers read and where the key
// goes, not an error.
func TestTypos_modelKeyWarns(t *testing.T) {
	doc := "models:\n  - name: gpt\n    use: langchain_openai:ChatOpenAI\n    model: gpt-4o\n    context_window: 128000\n    max_token: 4096\n    temprature: 0.2\n" +
		"  - name: gem\n    use: antler:gemini\n    model: gemini-2.5-pro\n    top_kk: 3\n"
	c, err := Parse("config.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	sends := func(use string) bool { return use != "antler:gemini" }
	got := c.UnknownModelKeys("config.yaml", []string{"api_key", "max_tokens", "temperature", "top_k"}, sends)
	const sent = "; passed through: sent in the request body, as DeerFlow sends a model keyword argument it does not know"
	want := []string{
		`config.yaml:6: models[0].max_token: unknown key "max_token" (did you mean "max_tokens"?)` + sent,
		`config.yaml:7: models[0].temprature: unknown key "temprature" (did you mean "temperature"?)` + sent,
		`config.yaml:11: models[1].top_kk: unknown key "top_kk" (did you mean "top_k"?); not sent: the provider of "antler:gemini" takes no extra request fields (DeerFlow would pass it to the model class)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	wantOpts := map[string]any{"max_token": 4096, "temprature": 0.2}
	if diff := cmp.Diff(wantOpts, UnknownModelOptions(c.Models[0], []string{"api_key", "max_tokens", "temperature"})); diff != "" {
		t.Errorf("UnknownModelOptions (-want +got):\n%s", diff)
	}
}

func TestTypos_extensionsJSON(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{
			name: "mcpServer at the top level",
			doc:  "{\n  \"mcpServer\": {\n    \"fs\": {\"command\": \"npx\"}\n  }\n}\n",
			want: `x.json:2: mcpServer: unknown key "mcpServer" (did you mean "mcpServers"?)`,
		},
		{
			name: "tool_call_timout in a server",
			doc:  "{\"mcpServers\": {\n  \"fs\": {\n    \"command\": \"npx\",\n    \"tool_call_timout\": 30\n  }\n}}\n",
			want: `x.json:4: mcpServers.fs.tool_call_timout: unknown key "tool_call_timout" (did you mean "tool_call_timeout"?)`,
		},
		{
			name: "the same key name in two servers is placed at its own line",
			doc:  "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\", \"comand\": 1},\n  \"b\": {\"command\": \"x\"}\n}}\n",
			want: `x.json:2: mcpServers.a.comand: unknown key "comand" (did you mean "command"?)`,
		},
		{
			name: "token_ulr in oauth",
			doc:  "{\"mcpServers\": {\"h\": {\"type\": \"http\", \"url\": \"http://h\",\n  \"oauth\": {\n    \"token_ulr\": \"https://a/t\"}}}}\n",
			want: `x.json:3: mcpServers.h.oauth.token_ulr: unknown key "token_ulr" (did you mean "token_url"?)`,
		},
		{
			name: "enabeld in a skill",
			doc:  "{\"skills\": {\n  \"pdf\": {\"enabeld\": false}\n}}\n",
			want: `x.json:2: skills.pdf.enabeld: unknown key "enabeld" (did you mean "enabled"?)`,
		},
		{
			name: "submit_tol in a task toolset, a list item",
			doc:  "{\"mcpServers\": {\"t\": {\"command\": \"x\", \"task_toolsets\": [\n  {\"name\": \"n\", \"submit_tol\": \"s\"}\n]}}}\n",
			want: `x.json:2: mcpServers.t.task_toolsets[0].submit_tol: unknown key "submit_tol" (did you mean "submit_tool"?)`,
		},
		{
			name: "routng in a tool override",
			doc:  "{\"mcpServers\": {\"t\": {\"command\": \"x\", \"tools\": {\"search\": {\n  \"routng\": {\"mode\": \"prefer\"}}}}}}\n",
			want: `x.json:2: mcpServers.t.tools.search.routng: unknown key "routng" (did you mean "routing"?)`,
		},
		{
			name: "keyword in routing",
			doc:  "{\"mcpServers\": {\"t\": {\"command\": \"x\",\n \"routing\": {\"mode\": \"prefer\",\n  \"keyword\": [\"a\"]}}}}\n",
			want: `x.json:3: mcpServers.t.routing.keyword: unknown key "keyword" (did you mean "keywords"?)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseExtensions("x.json", []byte(tt.doc), nil)
			if err == nil {
				t.Fatalf("ParseExtensions accepted the typo")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestTypos_everyOneReported: several unknown keys are all reported, in
// file order, each at its line.
func TestTypos_everyOneReported(t *testing.T) {
	doc := "{\n \"mcpServer\": {},\n \"mcpServers\": {\"s\": {\"command\": \"x\",\n  \"cmd\": \"y\"}},\n \"skils\": {}\n}\n"
	_, err := ParseExtensions("x.json", []byte(doc), nil)
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	var at []string
	for _, l := range lines {
		at = append(at, strings.SplitN(l, ": ", 3)[0]+": "+strings.SplitN(l, ": ", 3)[1])
	}
	if diff := cmp.Diff([]string{"x.json:2: mcpServer", "x.json:4: mcpServers.s.cmd", "x.json:5: skils"}, at); diff != "" {
		t.Errorf("positions (-want +got):\n%s\n%v", diff, err)
	}
}

func TestNearestKey(t *testing.T) {
	known := []string{"models", "tool_search", "tools", "title"}
	tests := []struct {
		key, want string
		close     bool
	}{
		{"modles", "models", true},   // a swap costs 1
		{"MODELS", "models", true},   // case is ignored
		{"tool", "tools", true},      // a deletion
		{"tite", "title", true},      // short keys allow one edit
		{"sandbox", "models", false}, // far from everything
	}
	for _, tt := range tests {
		got, close := NearestKey(tt.key, known)
		if close != tt.close || close && got != tt.want {
			t.Errorf("NearestKey(%q) = %q, %v; want %q, %v", tt.key, got, close, tt.want, tt.close)
		}
	}
	if _, ok := NearestKey("x", nil); ok {
		t.Error("NearestKey with no known keys reported a match")
	}
}

func TestMCPServerKeys_fromTheEntryTypes(t *testing.T) {
	keys := MCPServerKeys()
	for _, want := range []string{"command", "oauth", "routing", "session_init_timeout", "tool_call_timeout", "transport", "tools"} {
		if _, ok := slices.BinarySearch(keys, want); !ok {
			t.Errorf("MCPServerKeys() = %v, missing %q", keys, want)
		}
	}
	if slices.Contains(keys, "tool_call_timout") || !slices.IsSorted(keys) {
		t.Errorf("MCPServerKeys() = %v", keys)
	}
}
