package builtin

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/customagent"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// agentEnv is a home with a custom agent store and the two agent tools.
type agentEnv struct {
	home   string
	store  *customagent.Store
	setup  *tool.Tool
	update *tool.Tool
}

func newAgentEnv(t *testing.T) *agentEnv {
	t.Helper()
	return newAgentEnvAt(t, t.TempDir())
}

func newAgentEnvAt(t *testing.T, home string) *agentEnv {
	t.Helper()
	layout, err := vpath.New(vpath.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	store := customagent.New(layout, customagent.Options{})
	cfg := &config.Config{Models: []config.Model{{Name: "gpt-known"}, {Name: "m1"}}}
	return &agentEnv{
		home:   home,
		store:  store,
		setup:  NewSetupAgent(store, nil),
		update: NewUpdateAgent(UpdateAgentOptions{Store: store, Config: cfg}),
	}
}

func (e *agentEnv) dir(user, name string) string {
	return filepath.Join(e.home, "users", user, "agents", name)
}

// seed writes an agent's files directly, as a user or DeerFlow would.
func (e *agentEnv) seed(t *testing.T, user, name string, cfg map[string]any, soul string) string {
	t.Helper()
	dir := e.dir(user, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SOUL.md"), []byte(soul), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readConfig decodes an agent folder's config.yaml into a map.
func readConfig(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func readSoul(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "SOUL.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func agentCall(user, agentName string) *tool.Call {
	return &tool.Call{ID: "call_1", UserID: user, AgentName: agentName, ThreadID: "t1"}
}
