package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model/modeltest"
)

func TestDoctor(t *testing.T) {
	srv := modeltest.NewServer(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", `models:
  - name: local
    use: langchain_openai:ChatOpenAI
    model: scripted
    api_key: test-key
    base_url: `+srv.URL+`
  - name: unreachable
    use: langchain_openai:ChatOpenAI
    model: x
    api_key: k
    base_url: http://127.0.0.1:1/v1
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
acp_agents:
  shell: {command: sh, description: a shell}
  ghost: {command: antler-no-such-agent, description: missing}
`)
	code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "doctor", "--json", "--timeout", "5s")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (failing checks); stderr %s", code, errOut)
	}
	var checks []check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{}
	for _, c := range checks {
		got[c.Check+"/"+c.Name] = c.Status
	}
	want := map[string]string{
		"config/" + cfg:     "ok",
		"extensions/-":      "ok",
		"env/-":             "ok",
		"authorization/-":   "ok",
		"tools/assembly":    "ok",
		"model/local":       "ok",
		"model/unreachable": "fail",
		"acp/shell":         "ok",
		"acp/ghost":         "fail",
		"skills/default":    "ok",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checks (-want +got):\n%s\n%s", diff, out)
	}
}

func TestDoctorBadConfigFails(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "tools:\n  - {name: x, group: g, use: nope:nope}\nsandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
	code, out, _ := runCLI(t, nil, "--config", cfg, "--home", dir, "doctor")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (a config check fails)", code)
	}
	if want := "fail  tools"; !strings.Contains(out, want) {
		t.Errorf("output %q lacks %q", out, want)
	}
}
