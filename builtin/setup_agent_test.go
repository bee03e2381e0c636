package builtin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Setup_agent rejects invalid and absolute names
// before writing, and an empty or blank soul without overwriting existing
// SOUL.md files.
func TestSetupAgent(t *testing.T) {
	t.Run("invalid names rejected before writing", func(t *testing.T) {
		e := newAgentEnv(t)
		outside := filepath.Join(filepath.Dir(e.home), "outside-target")
		for _, name := range []string{"../../../outside-target/evil", filepath.Join(e.home, "outside-agent"), "a_b", "has space"} {
			res := callTool(t, e.setup, agentCall("alice", name), map[string]any{"soul": "test soul", "description": "desc"})
			wantError(t, res, "Error: Invalid agent name '"+name+"'. Must match pattern: ^[A-Za-z0-9-]+$")
		}
		if _, err := os.Stat(filepath.Join(e.home, "users")); !os.IsNotExist(err) {
			t.Errorf("something was written: %v", err)
		}
		if _, err := os.Stat(filepath.Join(outside, "evil")); !os.IsNotExist(err) {
			t.Errorf("traversal target written: %v", err)
		}
		if _, err := os.Stat(filepath.Join(e.home, "outside-agent")); !os.IsNotExist(err) {
			t.Errorf("absolute target written: %v", err)
		}
	})
	t.Run("empty or blank soul refused", func(t *testing.T) {
		e := newAgentEnv(t)
		dir := e.seed(t, "alice", "test-agent", map[string]any{"name": "test-agent"}, "original per-agent soul")
		global := filepath.Join(e.home, "SOUL.md")
		if err := os.WriteFile(global, []byte("original global soul"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, soul := range []string{"", "   \n\t  "} {
			for _, name := range []string{"test-agent", ""} {
				res := callTool(t, e.setup, agentCall("alice", name), map[string]any{"soul": soul, "description": "desc"})
				wantError(t, res, "Error: soul content is empty; refusing to create agent with an empty SOUL.md")
				if res.Meta[CreatedAgentNameKey] != nil {
					t.Error("created_agent_name set on failure")
				}
			}
		}
		if got := readSoul(t, dir); got != "original per-agent soul" {
			t.Errorf("per-agent SOUL.md = %q", got)
		}
		if data, _ := os.ReadFile(global); string(data) != "original global soul" {
			t.Errorf("global SOUL.md = %q", data)
		}
		if _, err := os.Stat(e.dir("alice", "new-agent")); !os.IsNotExist(err) {
			t.Error("a folder was created")
		}
	})
}

func TestSetupAgentCreates(t *testing.T) {
	e := newAgentEnv(t)
	res := callTool(t, e.setup, agentCall("auth-user-42", "My-Agent"), map[string]any{"soul": "# My Agent", "description": "A test agent", "skills": []string{}})
	if res.IsError || res.TextContent() != "Agent 'My-Agent' created successfully!" || res.Meta[CreatedAgentNameKey] != "My-Agent" {
		t.Fatalf("result %q meta %v", res.TextContent(), res.Meta)
	}
	dir := e.dir("auth-user-42", "my-agent")
	if diff := cmp.Diff(map[string]any{"name": "My-Agent", "description": "A test agent", "skills": []any{}}, readConfig(t, dir)); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if got := readSoul(t, dir); got != "# My Agent" {
		t.Errorf("soul %q", got)
	}
	if _, err := os.Stat(e.dir("default", "my-agent")); !os.IsNotExist(err) {
		t.Error("written for the default user too")
	}
	// The name can come from the runtime context; skills omitted stays absent.
	call := agentCall("alice", "")
	call.Context = map[string]any{"agent_name": "ctx-agent"}
	res = callTool(t, e.setup, call, map[string]any{"soul": "s", "description": ""})
	if res.IsError {
		t.Fatal(res.TextContent())
	}
	if diff := cmp.Diff(map[string]any{"name": "ctx-agent", "description": ""}, readConfig(t, e.dir("alice", "ctx-agent"))); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestSetupAgentWithoutNameWritesDefaultSoul(t *testing.T) {
	e := newAgentEnv(t)
	res := callTool(t, e.setup, agentCall("alice", ""), map[string]any{"soul": "global soul", "description": "d"})
	if res.IsError || res.TextContent() != "Agent 'None' created successfully!" {
		t.Fatalf("result %q", res.TextContent())
	}
	if v, ok := res.Meta[CreatedAgentNameKey]; !ok || v != nil {
		t.Errorf("created_agent_name = %v, %v; want nil", v, ok)
	}
	if data, _ := os.ReadFile(filepath.Join(e.home, "SOUL.md")); string(data) != "global soul" {
		t.Errorf("default soul %q", data)
	}
}
