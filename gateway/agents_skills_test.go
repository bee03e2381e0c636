package gateway_test

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAgentsCRUD(t *testing.T) {
	e := newEnv(t, envOptions{tokens: tokens()})
	var check map[string]any
	e.json("GET", "/api/agents/check?name=writer", aliceToken, nil, 200, &check)
	if check["available"] != true {
		t.Fatalf("check = %v", check)
	}
	body := map[string]any{"name": "writer", "description": "Writes", "model": "test-model", "tool_groups": []string{"file:write"},
		"model_settings": map[string]any{"temperature": 0.2}, "soul": "You write."}
	var a map[string]any
	e.json("POST", "/api/agents", aliceToken, body, 201, &a)
	if a["soul"] != "You write." || a["model"] != "test-model" {
		t.Errorf("created = %v", a)
	}
	for _, c := range []struct {
		body map[string]any
		want int
	}{
		{body, 409},
		{map[string]any{"name": "bad name"}, 422},
		{map[string]any{"name": "other", "model": "nope"}, 422},
		{map[string]any{"name": "other", "model_settings": map[string]any{"temperature": 3}}, 422},
	} {
		if got := e.status("POST", "/api/agents", aliceToken, c.body); got != c.want {
			t.Errorf("POST %v = %d, want %d", c.body, got, c.want)
		}
	}
	e.json("PUT", "/api/agents/writer", aliceToken, map[string]any{"description": "Writes better"}, 200, &a)
	if a["description"] != "Writes better" || a["soul"] != "You write." {
		t.Errorf("updated = %v", a)
	}
	if got := e.status("DELETE", "/api/agents/writer", aliceToken, nil); got != 204 {
		t.Errorf("DELETE = %d", got)
	}
	if got := e.status("GET", "/api/agents/writer", aliceToken, nil); got != 404 {
		t.Errorf("GET after DELETE = %d", got)
	}
}

func TestSkillsToggle(t *testing.T) {
	e := newEnv(t, envOptions{tokens: tokens()})
	pub := filepath.Join(e.home, "skills", "public", "shared")
	own := filepath.Join(e.home, "users", "alice", "skills", "custom", "mine")
	for dir, name := range map[string]string{pub: "shared", own: "mine"} {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: A skill.\n---\nbody\n"), 0o644)
	}
	var sk map[string]any
	e.json("PUT", "/api/skills/mine", aliceToken, map[string]any{"enabled": false}, 200, &sk)
	if sk["enabled"] != false || sk["editable"] != true {
		t.Errorf("toggled = %v", sk)
	}
	if got := e.status("PUT", "/api/skills/shared", aliceToken, map[string]any{"enabled": false}); got != 403 {
		t.Errorf("non-admin toggling a public skill = %d", got)
	}
	e.json("PUT", "/api/skills/shared", rootToken, map[string]any{"enabled": false}, 200, nil)
	var list struct {
		Skills []map[string]any `json:"skills"`
	}
	e.json("GET", "/api/skills", aliceToken, nil, 200, &list)
	for _, s := range list.Skills {
		if s["enabled"] != false {
			t.Errorf("skill %v still enabled", s)
		}
	}
	ext := readExt(t, e.extPath)
	if ext["skills"].(map[string]any)["shared"].(map[string]any)["enabled"] != false {
		t.Errorf("extensions file = %v", ext)
	}
}
