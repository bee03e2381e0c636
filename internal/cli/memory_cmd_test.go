package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/memory"
)

// memoryImport is a document as DeerFlow's Memory page exports it.
const memoryImport = `{
  "version": "1.0",
  "lastUpdated": "2026-01-02T03:04:05Z",
  "user": {"workContext": {"summary": "Builds Antler", "updatedAt": "2026-01-02T03:04:05Z"}},
  "facts": [
    {"id": "fact_aaaa0001", "content": "Prefers tabs over spaces", "category": "preference", "confidence": 0.95,
     "createdAt": "2026-01-02T03:04:05Z", "source": "thread-1"},
    {"id": "fact_aaaa0002", "content": "Lives in\nLisbon", "category": "context", "confidence": 0.7,
     "createdAt": "2026-01-03T03:04:05Z", "source": "manual"}
  ]
}`

// memoryCLI runs `antler memory` commands on one config and home.
type memoryCLI struct {
	t         *testing.T
	dir, home string
	cfg       string
}

func newMemoryCLI(t *testing.T, config string) *memoryCLI {
	dir := t.TempDir()
	return &memoryCLI{t: t, dir: dir, home: filepath.Join(dir, "home"), cfg: writeFile(t, dir, "config.yaml", config)}
}

func (m *memoryCLI) run(user string, args ...string) (int, string, string) {
	m.t.Helper()
	return runCLI(m.t, nil, append([]string{"--config", m.cfg, "--home", m.home, "--user", user, "memory"}, args...)...)
}

// ok runs a command that must succeed and returns its stdout.
func (m *memoryCLI) ok(user string, args ...string) string {
	m.t.Helper()
	code, out, errOut := m.run(user, args...)
	if code != 0 {
		m.t.Fatalf("memory %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
	}
	return out
}

func TestMemoryCmd_importListShowForgetExport(t *testing.T) {
	m := newMemoryCLI(t, "models: []\n")
	in := writeFile(t, m.dir, "in.json", memoryImport)
	if out := m.ok("alice", "import", in); out != "Imported 2 facts into the memory of user \"alice\"\n" {
		t.Errorf("import: %q", out)
	}

	list := m.ok("alice", "list", "--width", "80")
	want := "ID             CATEGORY    CONFIDENCE  CREATED     CONTENT\n" +
		"fact_aaaa0001  preference  0.95        2026-01-02  Prefers tabs over spaces\n" +
		"fact_aaaa0002  context     0.70        2026-01-03  Lives in Lisbon\n"
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	var facts []memory.Fact
	if err := json.Unmarshal([]byte(m.ok("alice", "list", "--json")), &facts); err != nil || len(facts) != 2 || facts[1].Content != "Lives in\nLisbon" {
		t.Errorf("list --json: %v %+v", err, facts)
	}

	show := m.ok("alice", "show", "fact_aaaa0001")
	for _, s := range []string{"ID:         fact_aaaa0001\n", "Category:   preference\n", "Confidence: 0.95\n",
		"Source:     thread-1\n", "\nPrefers tabs over spaces\n"} {
		if !strings.Contains(show, s) {
			t.Errorf("show lacks %q:\n%s", s, show)
		}
	}
	var f memory.Fact
	if err := json.Unmarshal([]byte(m.ok("alice", "show", "--json", "fact_aaaa0002")), &f); err != nil || f.ID != "fact_aaaa0002" {
		t.Errorf("show --json: %v %+v", err, f)
	}

	if out := m.ok("alice", "forget", "fact_aaaa0002"); out != "Forgot fact_aaaa0002: Lives in Lisbon\n" {
		t.Errorf("forget: %q", out)
	}
	var doc memory.Document
	if err := json.Unmarshal([]byte(m.ok("alice", "export")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Facts) != 1 || doc.Facts[0].ID != "fact_aaaa0001" || doc.User.WorkContext.Summary != "Builds Antler" {
		t.Errorf("export after forget: %+v", doc)
	}

	// Export to a file, clear, and import the file back.
	file := filepath.Join(m.dir, "backup.json")
	if out := m.ok("alice", "export", "-o", file); out != "Exported 1 fact of user \"alice\" to "+file+"\n" {
		t.Errorf("export -o: %q", out)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("export file: %v %v", fi, err)
	}
	if out := m.ok("alice", "forget", "--all", "--yes"); out != "Forgot the whole memory of user \"alice\" (1 fact)\n" {
		t.Errorf("forget --all: %q", out)
	}
	if out := m.ok("alice", "list"); out != "No memory facts for user \"alice\"\n" {
		t.Errorf("list after forget --all: %q", out)
	}
	m.ok("alice", "import", file)
	if out := m.ok("alice", "list", "--width", "80"); !strings.Contains(out, "fact_aaaa0001") || strings.Contains(out, "fact_aaaa0002") {
		t.Errorf("list after re-import:\n%s", out)
	}
	// The document is where the gateway reads it.
	if _, err := os.Stat(filepath.Join(m.home, "users", "alice", "memory.json")); err != nil {
		t.Error(err)
	}
}

// TestMemoryCmd_scopedToUser: every command works on the --user's
// document only.
func TestMemoryCmd_scopedToUser(t *testing.T) {
	m := newMemoryCLI(t, "models: []\n")
	m.ok("alice", "import", writeFile(t, m.dir, "in.json", memoryImport))
	if out := m.ok("default", "list"); out != "No memory facts for user \"default\"\n" {
		t.Errorf("default user's list: %q", out)
	}
	if code, _, errOut := m.run("bob", "forget", "fact_aaaa0001"); code != 2 || !strings.Contains(errOut, `user "bob" has no memory fact "fact_aaaa0001"`) {
		t.Errorf("bob forgets alice's fact: exit %d %q", code, errOut)
	}
	if code, _, _ := m.run("bob", "show", "fact_aaaa0001"); code != 2 {
		t.Errorf("bob shows alice's fact: exit %d", code)
	}
	m.ok("bob", "forget", "--all", "--yes")
	if out := m.ok("alice", "list", "--width", "80"); !strings.Contains(out, "fact_aaaa0001") || !strings.Contains(out, "fact_aaaa0002") {
		t.Errorf("alice's memory after bob's commands:\n%s", out)
	}
}

// TestMemoryCmd_storagePath: the memory section's storage_path places
// the documents, as for serve.
func TestMemoryCmd_storagePath(t *testing.T) {
	m := newMemoryCLI(t, "models: []\nmemory:\n  enabled: true\n  backend_config:\n    storage_path: mem\n")
	m.ok("default", "import", writeFile(t, m.dir, "in.json", memoryImport))
	if _, err := os.Stat(filepath.Join(m.home, "mem", "users", "default", "memory.json")); err != nil {
		t.Error(err)
	}
}

func TestMemoryCmd_errors(t *testing.T) {
	m := newMemoryCLI(t, "models: []\n")
	m.ok("default", "import", writeFile(t, m.dir, "in.json", memoryImport))
	for _, c := range []struct {
		name string
		file string // written to a file passed to import when set
		args []string
		code int
		// err must match stderr.
		err string
	}{
		{name: "forget all unconfirmed", args: []string{"forget", "--all"}, code: 2, err: `--all deletes the whole memory of user "default", every fact and summary: add --yes to confirm`},
		{name: "forget id and all", args: []string{"forget", "--all", "--yes", "fact_aaaa0001"}, code: 2, err: `give a fact id or --all, not both`},
		{name: "forget nothing", args: []string{"forget"}, code: 2, err: `give the id of the fact to forget`},
		{name: "show unknown", args: []string{"show", "fact_nope"}, code: 2, err: `user "default" has no memory fact "fact_nope" \(antler memory list shows its 2 facts\)`},
		{name: "bad user", args: []string{"--user", "../x", "list"}, code: 2, err: `--user: "../x" is not a valid user id`},
		{name: "import missing", args: []string{"import", "/nonexistent/m.json"}, code: 2, err: `/nonexistent/m.json: cannot read`},
		{name: "import syntax", file: "{\n  \"facts\": [\n    {\"content\": \"x\",}\n  ]\n}", code: 2, err: `bad.json:3: invalid JSON: invalid character '}'`},
		{name: "import wrong type", file: "{\n  \"facts\": [\n    {\"content\": 5}\n  ]\n}", code: 2, err: `bad.json:3: facts.content: must be a JSON string, not number`},
		{name: "import not an object", file: `[1, 2]`, code: 2, err: `bad.json: not a memory document: the top level must be a JSON object`},
		{name: "import empty content", file: `{"facts": [{"content": "ok"}, {"content": " "}]}`, code: 2, err: `bad.json: facts\[1\].content is empty`},
		{name: "import bad confidence", file: `{"facts": [{"content": "ok", "confidence": 7}]}`, code: 2, err: `bad.json: facts\[0\].confidence must be between 0 and 1, got 7`},
		{name: "import empty file", file: " \n", code: 2, err: `bad.json: empty: a memory document is a JSON object`},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.file != "" {
				args = []string{"import", writeFile(t, m.dir, "bad.json", c.file)}
			}
			var code int
			var errOut string
			if len(args) > 0 && args[0] == "--user" {
				code, _, errOut = runCLI(t, nil, append([]string{"--config", m.cfg, "--home", m.home, "--user", args[1], "memory"}, args[2:]...)...)
			} else {
				code, _, errOut = m.run("default", args...)
			}
			if code != c.code || !regexp.MustCompile(c.err).MatchString(errOut) {
				t.Errorf("memory %s: exit %d, stderr %q; want %d matching %q", strings.Join(args, " "), code, errOut, c.code, c.err)
			}
		})
	}
	// Nothing refused changed the memory.
	if out := m.ok("default", "list", "--width", "80"); strings.Count(out, "fact_aaaa000") != 2 {
		t.Errorf("memory after refused commands:\n%s", out)
	}
}

func TestMemoryCmd_noopBackend(t *testing.T) {
	m := newMemoryCLI(t, "models: []\nmemory:\n  enabled: true\n  manager_class: noop\n")
	code, _, errOut := m.run("default", "list")
	if code != 2 || !strings.Contains(errOut, "memory.manager_class: noop keeps no memory document") {
		t.Errorf("list with noop: exit %d %q", code, errOut)
	}
}
