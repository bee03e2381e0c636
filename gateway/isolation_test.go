package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model/modeltest"
)

const (
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789"
	rootToken  = "root-token-0123456789"
)

func tokens() []config.GatewayToken {
	return []config.GatewayToken{{Token: aliceToken, UserID: "alice"}, {Token: bobToken, UserID: "bob"},
		{Token: rootToken, UserID: "root", Admin: true}}
}

// TestIsolation: user A's token cannot read, list, stream, download or
// modify anything of user B (threads, runs, artifacts, uploads, agents,
// skills); every attempt is 404 or 403 and nothing of B's changes.
func TestIsolation(t *testing.T) {
	m := reportScript()
	e := newEnv(t, envOptions{model: m, tokens: tokens()})

	// Bob's world: a thread with a run, an artifact and an upload, an
	// agent, a custom skill.
	tb := uuid.NewString()
	if code, _ := e.upload(tb, bobToken, map[string]string{"secret.txt": "bob's data"}); code != 200 {
		t.Fatalf("bob upload = %d", code)
	}
	resp := e.startStream(tb, bobToken, runBody(tb, humanInput("report", nil)))
	rid, _ := runIDFrom(resp.Header.Get("Content-Location"), tb)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	e.json("POST", "/api/agents", bobToken, map[string]any{"name": "bob-agent", "description": "Bob's", "soul": "I am Bob's."}, 201, nil)
	skillDir := filepath.Join(e.home, "users", "bob", "skills", "custom", "bob-skill")
	os.MkdirAll(skillDir, 0o755)
	os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte("---\nname: bob-skill\ndescription: Bob's own skill.\n---\n# Bob\n"), 0o644)
	var sk struct {
		Skills []map[string]any `json:"skills"`
	}
	e.json("GET", "/api/skills", bobToken, nil, 200, &sk)
	if len(sk.Skills) != 1 || sk.Skills[0]["name"] != "bob-skill" {
		t.Fatalf("bob's skills = %v", sk.Skills)
	}

	snapshot := func() []byte {
		var hist []map[string]any
		e.json("POST", "/api/threads/"+tb+"/history", bobToken, map[string]any{"limit": 100}, 200, &hist)
		var th, agents map[string]any
		e.json("GET", "/api/threads/"+tb, bobToken, nil, 200, &th)
		e.json("GET", "/api/agents", bobToken, nil, 200, &agents)
		ext, _ := os.ReadFile(e.extPath)
		var up map[string]any
		e.json("GET", "/api/threads/"+tb+"/uploads/list", bobToken, nil, 200, &up)
		art := e.do("GET", "/api/threads/"+tb+"/artifacts/mnt/user-data/outputs/report.md", bobToken, nil)
		body, _ := io.ReadAll(art.Body)
		art.Body.Close()
		var b bytes.Buffer
		for _, v := range []any{len(hist), th["updated_at"], th["metadata"], agents, string(ext), up["count"], string(body)} {
			b.WriteString(jsonString(v))
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	before := snapshot()

	base := "/api/threads/" + tb
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", base, nil},
		{"GET", "/api/langgraph/threads/" + tb, nil},
		{"GET", base + "/state", nil},
		{"POST", base + "/state", map[string]any{"values": map[string]any{"title": "pwned"}}},
		{"POST", base + "/history", map[string]any{"limit": 1}},
		{"GET", base + "/messages/page", nil},
		{"PATCH", base, map[string]any{"metadata": map[string]any{"deerflow_pinned": true}}},
		{"DELETE", base, nil},
		{"POST", "/api/threads", map[string]any{"thread_id": tb}},
		{"POST", base + "/runs/stream", runBody(tb, humanInput("hijack", nil))},
		{"GET", base + "/runs", nil},
		{"GET", base + "/runs/" + rid, nil},
		{"GET", base + "/runs/" + rid + "/stream", nil},
		{"POST", base + "/runs/" + rid + "/cancel", nil},
		{"GET", base + "/artifacts/mnt/user-data/outputs/report.md", nil},
		{"GET", base + "/artifacts/mnt/user-data/uploads/secret.txt", nil},
		{"GET", base + "/uploads/list", nil},
		{"DELETE", base + "/uploads/secret.txt", nil},
		{"GET", "/api/agents/bob-agent", nil},
		{"PUT", "/api/agents/bob-agent", map[string]any{"description": "pwned"}},
		{"DELETE", "/api/agents/bob-agent", nil},
		{"GET", "/api/skills/bob-skill", nil},
		{"PUT", "/api/skills/bob-skill", map[string]any{"enabled": false}},
		{"GET", "/api/mcp/config", nil},
		{"PUT", "/api/mcp/config", map[string]any{"mcp_servers": map[string]any{}}},
		{"POST", "/api/mcp/cache/reset", nil},
	} {
		if got := e.status(c.method, c.path, aliceToken, c.body); got != 404 && got != 403 {
			t.Errorf("alice %s %s = %d, want 404 or 403", c.method, c.path, got)
		}
	}
	// Uploading into Bob's thread.
	if code, _ := e.upload(tb, aliceToken, map[string]string{"x.txt": "x"}); code != 404 {
		t.Errorf("alice upload into bob's thread = %d", code)
	}
	// Lists show none of Bob's.
	var threads []map[string]any
	e.json("POST", "/api/threads/search", aliceToken, map[string]any{"limit": 100}, 200, &threads)
	if len(threads) != 0 {
		t.Errorf("alice sees threads %v", threads)
	}
	var agents struct {
		Agents []map[string]any `json:"agents"`
	}
	e.json("GET", "/api/agents", aliceToken, nil, 200, &agents)
	if len(agents.Agents) != 0 {
		t.Errorf("alice sees agents %v", agents.Agents)
	}
	e.json("GET", "/api/skills", aliceToken, nil, 200, &sk)
	if len(sk.Skills) != 0 {
		t.Errorf("alice sees skills %v", sk.Skills)
	}
	// Alice may create her own agent of the same name; Bob's is untouched.
	e.json("POST", "/api/agents", aliceToken, map[string]any{"name": "bob-agent", "description": "Alice's"}, 201, nil)
	e.status("DELETE", "/api/agents/bob-agent", aliceToken, nil)

	if after := snapshot(); !bytes.Equal(before, after) {
		t.Errorf("bob's data changed:\nbefore %s\nafter  %s", before, after)
	}
	if e.resets.n != 0 {
		t.Errorf("MCP cache was reset %d times", e.resets.n)
	}
	var me map[string]any
	e.json("GET", "/api/v1/auth/me", aliceToken, nil, 200, &me)
	if me["id"] != "alice" || me["system_role"] != "user" {
		t.Errorf("me = %v", me)
	}

	// Without a valid token: 401, also under the langgraph prefix.
	for _, tok := range []string{"", "wrong"} {
		for _, p := range []string{"/api/models", "/api/langgraph/threads/search"} {
			if got := e.status("GET", p, tok, nil); got != 401 {
				t.Errorf("GET %s with token %q = %d, want 401", p, tok, got)
			}
		}
	}
	if got := e.status("GET", "/healthz", "", nil); got != 200 {
		t.Errorf("healthz = %d", got)
	}
}

// TestNoTokensServesDefaultUser: without tokens every request is the
// default user, an admin, and nothing answers 401.
func TestNoTokensServesDefaultUser(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.New()})
	if !e.gw.RequiresLoopback() || e.gw.DefaultUserID() != "default" {
		t.Fatalf("RequiresLoopback %v, default user %q", e.gw.RequiresLoopback(), e.gw.DefaultUserID())
	}
	var me map[string]any
	e.json("GET", "/api/v1/auth/me", "whatever", nil, 200, &me)
	if me["id"] != "default" || me["system_role"] != "admin" || me["email"] != "default@antler.local" {
		t.Errorf("me = %v", me)
	}
	if got := e.status("GET", "/api/mcp/config", "", nil); got != http.StatusOK {
		t.Errorf("mcp config = %d", got)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
