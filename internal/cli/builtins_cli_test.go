package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
)

// The sandbox, present_files and view_image tools work from the CLI
// against real files under --home, as the given user and thread.
func TestToolsCallOnRealFiles(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	cfg := writeFile(t, dir, "config.yaml", `models:
  - {name: eyes, use: langchain_openai:ChatOpenAI, model: x, api_key: k, supports_vision: true}
tools:
  - {name: read_file, group: file:read, use: deerflow.sandbox.tools:read_file_tool}
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
`)
	data := filepath.Join(home, "users", "default", "threads", "t1", "user-data")
	for _, sub := range []string{"workspace", "outputs"} {
		if err := os.MkdirAll(filepath.Join(data, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(data, "workspace"), "a.txt", "line one\nline two\n")
	writeFile(t, filepath.Join(data, "outputs"), "report.md", "# report\n")
	// A 1x1 PNG.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
	if err := os.WriteFile(filepath.Join(data, "workspace", "dot.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, args string
		wantCode         int
		wantText         string
	}{
		{"read_file", "read_file", `{"description":"x","path":"/mnt/user-data/workspace/a.txt"}`, 0, "line one"},
		{"read_file outside the thread", "read_file", `{"description":"x","path":"/etc/passwd"}`, 1, "Error:"},
		{"present_files", "present_files", `{"filepaths":["/mnt/user-data/outputs/report.md"]}`, 0, ""},
		{"present_files outside outputs", "present_files", `{"filepaths":["/mnt/user-data/workspace/a.txt"]}`, 1, "Error:"},
		{"view_image", "view_image", `{"image_path":"/mnt/user-data/workspace/dot.png"}`, 0, ""},
		{"view_image not an image", "view_image", `{"image_path":"/mnt/user-data/workspace/a.txt"}`, 1, "Error:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", home, "tools", "call", tt.tool,
				"--thread", "t1", "--json", "--args", tt.args)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d: %s %s", code, tt.wantCode, out, errOut)
			}
			var res callJSON
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if tt.wantText != "" && (len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, tt.wantText)) {
				t.Errorf("content %s lacks %q", out, tt.wantText)
			}
		})
	}
	// present_files persisted its artifact into the thread; view_image
	// recorded metadata only.
	g := &globals{opts: (&Options{Getenv: func(string) string { return "" }}).withDefaults(), config: cfg, home: home, user: "default", logLevel: "error"}
	a, err := newApp(t.Context(), g)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.threadState(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(st.Artifacts, ",") != "/mnt/user-data/outputs/report.md" {
		t.Errorf("artifacts %v", st.Artifacts)
	}
	img, ok := st.ViewedImages["/mnt/user-data/workspace/dot.png"]
	if !ok || img.MIMEType != "image/png" {
		t.Errorf("viewed_images %v", st.ViewedImages)
	}
	// Another user cannot read t1's files.
	code, _, _ := runCLI(t, nil, "--config", cfg, "--home", home, "--user", "mallory", "tools", "call", "read_file", "--thread", "t1",
		"--args", `{"description":"x","path":"/mnt/user-data/workspace/a.txt"}`)
	if code == 0 {
		t.Error("another user read the thread's file")
	}
}

func TestSkillManageListedOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		dir := t.TempDir()
		cfg := writeFile(t, dir, "config.yaml", "models:\n  - {name: m, use: langchain_openai:ChatOpenAI, model: x}\n"+
			"skill_evolution: {enabled: "+map[bool]string{true: "true", false: "false"}[enabled]+"}\nsandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}\n")
		code, out, errOut := runCLI(t, nil, "--config", cfg, "--home", dir, "tools", "list")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if got := strings.Contains(out, "skill_manage"); got != enabled {
			t.Errorf("skill_evolution.enabled=%v: skill_manage listed = %v\n%s", enabled, got, out)
		}
	}
}

// The system prompt of a run lists the enabled skills (and not the
// disabled ones) with their /mnt/skills locations.
func TestRunPromptListsEnabledSkills(t *testing.T) {
	var system string
	srv := modeltest.NewServer(t, modeltest.Turn{Func: func(req *model.Request) modeltest.Turn {
		system = req.Messages[0].Content
		return modeltest.Turn{Text: "ok"}
	}})
	dir := t.TempDir()
	for _, name := range []string{"pdf-tools", "secret-ops"} {
		writeFile(t, mkdir(t, filepath.Join(dir, "skills", "public", name)), "SKILL.md",
			"---\nname: "+name+"\ndescription: Work with "+name+" when the user asks.\n---\n# "+name+"\n")
	}
	writeFile(t, dir, "extensions_config.json", `{"mcpServers": {}, "skills": {"secret-ops": {"enabled": false}}}`)
	cfg := writeFile(t, dir, "config.yaml", `models:
  - {name: test, use: langchain_openai:ChatOpenAI, model: scripted, api_key: k, base_url: `+srv.URL+`}
skills: {path: skills}
sandbox: {use: deerflow.sandbox.local:LocalSandboxProvider}
`)
	code, _, errOut := runCLI(t, nil, "--config", cfg, "--home", filepath.Join(dir, "home"), "run", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(system, "/mnt/skills/public/pdf-tools/SKILL.md") {
		t.Errorf("system prompt lacks the enabled skill's location:\n%s", system)
	}
	if strings.Contains(system, "/mnt/skills/public/secret-ops/SKILL.md") {
		t.Errorf("system prompt lists a disabled skill as available")
	}
}

func mkdir(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
