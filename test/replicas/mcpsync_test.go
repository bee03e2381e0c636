package replicas_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/store/postgres/pgtest"
)

// TestMCPConfigSharedThroughPostgres: replicas that do not share a disk
// (each has its own home and extensions_config.json) share the MCP
// configuration through the database: a change made through A's admin
// route is used by B's next run, and an operator's edit of B's file
// reaches A's next run.
func TestMCPConfigSharedThroughPostgres(t *testing.T) {
	url, schema := pgtest.Schema(t)
	m := modeltest.FromScript(modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: model.RoleUser, Tool: "facts_lookup", Reply: modeltest.Turn{Text: "facts bound"}},
		{LastRole: model.RoleUser, Reply: modeltest.Turn{Text: "no facts"}},
	}})
	homeA, homeB := t.TempDir(), t.TempDir()
	empty := []byte(`{"mcpServers": {}, "skills": {}}`)
	for _, h := range []string{homeA, homeB} {
		if err := os.WriteFile(filepath.Join(h, "extensions_config.json"), empty, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := startInprocOpts(t, url, schema, homeA, m, inprocOptions{extensions: true})
	b := startInprocOpts(t, url, schema, homeB, m, inprocOptions{extensions: true})
	ca, cb := newClient(t, a.url), newClient(t, b.url)
	answer := func(c *client, tid string) string {
		t.Helper()
		resp := c.do("POST", "/api/threads/"+tid+"/runs/stream", runBody("which tools?"))
		frames, err := readStream(resp.Body)
		resp.Body.Close()
		if err != nil || checkFrames(frames, 1) != nil {
			t.Fatalf("run %s: %v %v", tid, eventsOf(frames), err)
		}
		_, st := getJSON(c, "/api/threads/"+tid+"/state")
		msgs, _ := st["values"].(map[string]any)["messages"].([]any)
		return msgs[len(msgs)-1].(map[string]any)["content"].(string)
	}
	if got := answer(cb, "t-before"); got != "no facts" {
		t.Fatalf("before any change B answered %q", got)
	}

	facts := factsServer(t)
	ca.json("PUT", "/api/mcp/config", map[string]any{"mcp_servers": map[string]any{
		"facts": map[string]any{"enabled": true, "type": "http", "url": facts}}}, 200, nil)
	if got := answer(cb, "t-after-put"); got != "facts bound" {
		t.Errorf("B's next run after A's change answered %q", got)
	}
	dataB, _ := os.ReadFile(filepath.Join(homeB, "extensions_config.json"))
	if !strings.Contains(string(dataB), facts) {
		t.Errorf("B's file after A's change: %s", dataB)
	}
	var cfgB map[string]any
	cb.json("GET", "/api/mcp/config", nil, 200, &cfgB)
	if servers, _ := cfgB["mcp_servers"].(map[string]any); servers["facts"] == nil {
		t.Errorf("B's MCP config route: %v", cfgB)
	}

	// An operator disables the server in B's file by hand.
	edited := strings.Replace(string(dataB), `"enabled": true`, `"enabled": false`, 1)
	if edited == string(dataB) {
		edited = strings.Replace(string(dataB), `"enabled":true`, `"enabled":false`, 1)
	}
	if err := os.WriteFile(filepath.Join(homeB, "extensions_config.json"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "A to pull B's edit", func() bool {
		dataA, _ := os.ReadFile(filepath.Join(homeA, "extensions_config.json"))
		return string(dataA) == edited
	})
	if got := answer(ca, "t-after-edit"); got != "no facts" {
		t.Errorf("A's next run after the edit on B answered %q", got)
	}
	var tools []map[string]any
	ca.json("GET", "/api/tools", nil, 200, &tools)
	if slices.ContainsFunc(tools, func(tl map[string]any) bool { return tl["name"] == "facts_lookup" }) {
		t.Errorf("A still lists facts_lookup")
	}
}
