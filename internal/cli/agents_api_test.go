package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model/modeltest"
)

// TestServe_agentsAPISection: agents_api.enabled: false closes the
// custom-agent management routes with DeerFlow's 403 text and says so in
// /api/features; true or an absent section keeps them open.
func TestServe_agentsAPISection(t *testing.T) {
	for _, tc := range []struct {
		name, section string
		open          bool
	}{
		{"absent keeps them open", "", true},
		{"enabled true keeps them open", "agents_api:\n  enabled: true\n", true},
		{"enabled false closes them", "agents_api:\n  enabled: false\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewServer(t)
			cfg, home := e2eConfig(t, srv.URL)
			data, _ := os.ReadFile(cfg)
			if err := os.WriteFile(cfg, append(data, tc.section...), 0o644); err != nil {
				t.Fatal(err)
			}
			url, stop := startServe(t, nil, "--config", cfg, "--home", home)
			defer stop()

			resp, err := http.Get(url + "/api/agents")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := resp.StatusCode == http.StatusOK; got != tc.open {
				t.Fatalf("GET /api/agents = %d %s, want open %v", resp.StatusCode, body, tc.open)
			}
			if !tc.open && (resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "agents_api.enabled=true")) {
				t.Errorf("closed GET /api/agents = %d %s, want 403 naming agents_api.enabled", resp.StatusCode, body)
			}

			resp, err = http.Get(url + "/api/features")
			if err != nil {
				t.Fatal(err)
			}
			var features struct {
				AgentsAPI struct {
					Enabled bool `json:"enabled"`
				} `json:"agents_api"`
			}
			err = json.NewDecoder(resp.Body).Decode(&features)
			resp.Body.Close()
			if err != nil || features.AgentsAPI.Enabled != tc.open {
				t.Errorf("/api/features agents_api.enabled = %v (%v), want %v", features.AgentsAPI.Enabled, err, tc.open)
			}
		})
	}
}
