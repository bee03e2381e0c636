package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/tool"
)

// moderationModel answers every moderation request with decide(content).
type moderationModel struct {
	calls  atomic.Int32
	decide func(prompt string) string
}

func (m *moderationModel) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	m.calls.Add(1)
	reply := `{"decision":"allow","reason":"ok"}`
	if m.decide != nil {
		reply = m.decide(req.Messages[len(req.Messages)-1].Content)
	}
	return func(yield func(model.Event, error) bool) {
		yield(model.Event{Response: &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: reply}}}, nil)
	}
}

type manageEnv struct {
	store *skills.Store
	model *moderationModel
	tool  *tool.Tool
	home  string
	sp    string
}

func newManageEnv(t *testing.T) *manageEnv {
	t.Helper()
	e := &manageEnv{home: t.TempDir(), sp: t.TempDir(), model: &moderationModel{}}
	e.store = skills.NewStore(skills.Options{SkillsPath: e.sp, Home: e.home})
	e.tool = NewSkillManage(SkillManageOptions{Store: e.store, Model: e.model})
	return e
}

func skillContent(name, body string) string {
	return "---\nname: " + name + "\ndescription: Demo skill\n---\n" + body
}

func (e *manageEnv) call(t *testing.T, user string, args map[string]any) (string, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := e.tool.Handler(t.Context(), &tool.Call{Name: SkillManageName, UserID: user, ThreadID: "t1"}, raw)
	if err != nil {
		t.Fatalf("Go error: %v", err)
	}
	return res.TextContent(), res.IsError
}

func failure(kind, msg string) string {
	return "Error: Tool 'skill_manage' failed with " + kind + ": " + msg + ". Continue with available context, or choose an alternative tool."
}

// Create+patch (single occurrence by default),
// public skill not patchable, support-path traversal rejected, static
// CRITICAL blocks before the LLM, per-user isolation.
func TestSkillManage(t *testing.T) {
	t.Run("create and patch one occurrence by default", func(t *testing.T) {
		e := newManageEnv(t)
		got, isErr := e.call(t, "alice", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "step A\nstep A\n")})
		if isErr || got != "Created custom skill 'demo'." {
			t.Fatalf("create = %q", got)
		}
		got, _ = e.call(t, "alice", map[string]any{"action": "patch", "name": "demo", "find": "step A", "replace": "step B"})
		if got != "Patched custom skill 'demo' (1 replacement(s) applied, 2 match(es) found)." {
			t.Errorf("patch = %q", got)
		}
		content, _ := e.store.ReadCustom("alice", "demo")
		if !strings.HasSuffix(content, "step B\nstep A\n") {
			t.Errorf("content = %q", content)
		}
		got, _ = e.call(t, "alice", map[string]any{"action": "patch", "name": "demo", "find": "step", "replace": "x", "expected_count": 3})
		if got != failure("ValueError", "Expected 3 replacements but found 2.") {
			t.Errorf("expected_count mismatch = %q", got)
		}
		got, _ = e.call(t, "alice", map[string]any{"action": "patch", "name": "demo", "find": "step", "replace": "stage", "expected_count": 2})
		if got != "Patched custom skill 'demo' (2 replacement(s) applied, 2 match(es) found)." {
			t.Errorf("patch all = %q", got)
		}
		got, _ = e.call(t, "alice", map[string]any{"action": "patch", "name": "demo", "find": "missing", "replace": "x"})
		if got != failure("ValueError", "Patch target not found in SKILL.md.") {
			t.Errorf("patch missing = %q", got)
		}
		got, _ = e.call(t, "alice", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "")})
		if got != failure("ValueError", "Custom skill 'demo' already exists.") {
			t.Errorf("create twice = %q", got)
		}
		hist, err := e.store.History("alice", "demo")
		if err != nil || len(hist) != 3 || hist[0].Action != "create" || hist[1].Action != "patch" || hist[0].Author != "agent" ||
			hist[0].ThreadID == nil || *hist[0].ThreadID != "t1" || hist[1].PrevContent == nil {
			t.Errorf("history = %+v, %v", hist, err)
		}
	})

	t.Run("public skill is not patchable", func(t *testing.T) {
		e := newManageEnv(t)
		writeSkill(t, filepath.Join(e.sp, "public", "pub", "SKILL.md"), skillContent("pub", "body\n"))
		for _, action := range []string{"patch", "edit", "write_file", "delete"} {
			got, isErr := e.call(t, "alice", map[string]any{"action": action, "name": "pub", "find": "body", "replace": "x", "content": skillContent("pub", "x"), "path": "references/a.md"})
			want := failure("ValueError", "'pub' is a built-in skill. To customise it, create a new skill with the same name under skills/custom/.")
			if !isErr || got != want {
				t.Errorf("%s = %q, want %q", action, got, want)
			}
		}
		got, _ := e.call(t, "alice", map[string]any{"action": "rename", "name": "pub"})
		if got != failure("ValueError", "'pub' is a read-only skill (built-in or legacy shared). To customise it, create your own version with the same name.") {
			t.Errorf("unknown action on public = %q", got)
		}
		got, _ = e.call(t, "alice", map[string]any{"action": "rename", "name": "other"})
		if got != failure("ValueError", "Unsupported action 'rename'.") {
			t.Errorf("unknown action = %q", got)
		}
	})

	t.Run("support path traversal rejected", func(t *testing.T) {
		e := newManageEnv(t)
		e.call(t, "alice", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "")})
		for path, msg := range map[string]string{
			"../../escape.md":         "Supporting file path must not contain parent-directory traversal.",
			"references/../../x.md":   "Supporting file path must not contain parent-directory traversal.",
			"/etc/passwd":             "Supporting file path must be relative.",
			"notes/a.md":              "Supporting files must live under one of: assets, references, scripts, templates.",
			"references/":             "Supporting file path must include a filename.",
			"../../../../../../tmp/x": "Supporting file path must not contain parent-directory traversal.",
		} {
			got, _ := e.call(t, "alice", map[string]any{"action": "write_file", "name": "demo", "path": path, "content": "x"})
			if got != failure("ValueError", msg) {
				t.Errorf("write_file %q = %q", path, got)
			}
		}
		got, _ := e.call(t, "alice", map[string]any{"action": "remove_file", "name": "demo", "path": "../SKILL.md"})
		if got != failure("ValueError", "Supporting file path must not contain parent-directory traversal.") {
			t.Errorf("remove_file traversal = %q", got)
		}
		if _, err := os.Stat(filepath.Join(e.store.CustomDir("alice", "demo"), "SKILL.md")); err != nil {
			t.Errorf("SKILL.md gone: %v", err)
		}
	})

	t.Run("static CRITICAL blocks before the LLM", func(t *testing.T) {
		e := newManageEnv(t)
		e.call(t, "alice", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "")})
		before := e.model.calls.Load()
		got, isErr := e.call(t, "alice", map[string]any{"action": "write_file", "name": "demo", "path": "scripts/boom.sh", "content": "#!/bin/sh\n:(){ :|:& };:\n"})
		if !isErr || !strings.HasPrefix(got, "Error: Tool 'skill_manage' failed with ValueError: Static security scan blocked skill 'demo': resource-fork-bomb (CRITICAL) at scripts/boom.sh:2") {
			t.Errorf("write_file = %q", got)
		}
		if n := e.model.calls.Load(); n != before {
			t.Errorf("moderation model called %d times after a static block", n-before)
		}
		if _, err := os.Stat(filepath.Join(e.store.CustomDir("alice", "demo"), "scripts", "boom.sh")); err == nil {
			t.Error("blocked file was written")
		}
		// The same holds for SKILL.md itself.
		got, _ = e.call(t, "alice", map[string]any{"action": "edit", "name": "demo", "content": skillContent("demo", "fetch http://169.254.169.254/latest\n")})
		if !strings.Contains(got, "network-cloud-metadata (CRITICAL)") {
			t.Errorf("edit = %q", got)
		}
	})

	t.Run("per-user isolation", func(t *testing.T) {
		e := newManageEnv(t)
		e.call(t, "alice", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "alice\n")})
		got, _ := e.call(t, "bob", map[string]any{"action": "patch", "name": "demo", "find": "alice", "replace": "bob"})
		if got != failure("FileNotFoundError", "Custom skill 'demo' not found.") {
			t.Errorf("bob patching alice's skill = %q", got)
		}
		got, _ = e.call(t, "bob", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "bob\n")})
		if got != "Created custom skill 'demo'." {
			t.Errorf("bob create = %q", got)
		}
		a, _ := e.store.ReadCustom("alice", "demo")
		b, _ := e.store.ReadCustom("bob", "demo")
		if !strings.HasSuffix(a, "alice\n") || !strings.HasSuffix(b, "bob\n") {
			t.Errorf("contents mixed: alice %q bob %q", a, b)
		}
		e.call(t, "bob", map[string]any{"action": "delete", "name": "demo"})
		if !e.store.CustomExists("alice", "demo") || e.store.CustomExists("bob", "demo") {
			t.Error("delete crossed users")
		}
	})
}

func writeSkill(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSkillManageActions(t *testing.T) {
	e := newManageEnv(t)
	steps := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "create", "name": " demo "}, failure("ValueError", "content is required for create.")},
		{map[string]any{"action": "create", "name": "Demo", "content": "x"}, failure("ValueError", "Skill name must be hyphen-case using lowercase letters, digits, and hyphens only.")},
		{map[string]any{"action": "create", "name": "demo", "content": skillContent("other", "")}, failure("ValueError", "Frontmatter name 'other' must match requested skill name 'demo'.")},
		{map[string]any{"action": "create", "name": "demo", "content": "no frontmatter"}, failure("ValueError", "No YAML frontmatter found")},
		{map[string]any{"action": "edit", "name": "demo", "content": skillContent("demo", "")}, failure("FileNotFoundError", "Custom skill 'demo' not found.")},
		{map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "v1\n")}, "Created custom skill 'demo'."},
		{map[string]any{"action": "edit", "name": "demo"}, failure("ValueError", "content is required for edit.")},
		{map[string]any{"action": "edit", "name": "demo", "content": skillContent("demo", "v2\n")}, "Updated custom skill 'demo'."},
		{map[string]any{"action": "patch", "name": "demo", "find": "v2"}, failure("ValueError", "find and replace are required for patch.")},
		{map[string]any{"action": "write_file", "name": "demo", "path": "references/a.md"}, failure("ValueError", "path and content are required for write_file.")},
		{map[string]any{"action": "write_file", "name": "demo", "path": "references/a.md", "content": "notes\n"}, "Wrote 'references/a.md' for custom skill 'demo'."},
		{map[string]any{"action": "write_file", "name": "demo", "path": "references/SKILL.md", "content": skillContent("demo", "")}, ""},
		{map[string]any{"action": "remove_file", "name": "demo"}, failure("ValueError", "path is required for remove_file.")},
		{map[string]any{"action": "remove_file", "name": "demo", "path": "references/b.md"}, failure("FileNotFoundError", "Supporting file 'references/b.md' not found for skill 'demo'.")},
		{map[string]any{"action": "remove_file", "name": "demo", "path": "references/a.md"}, "Removed 'references/a.md' from custom skill 'demo'."},
		{map[string]any{"action": "delete", "name": "demo"}, "Deleted custom skill 'demo'."},
		{map[string]any{"action": "delete", "name": "demo"}, failure("FileNotFoundError", "Custom skill 'demo' not found.")},
	}
	for i, s := range steps {
		got, _ := e.call(t, "u", s.args)
		if s.want == "" {
			if !strings.Contains(got, "package-nested-skill-md (CRITICAL)") {
				t.Errorf("step %d %v = %q, want a nested SKILL.md block", i, s.args, got)
			}
			continue
		}
		if got != s.want {
			t.Errorf("step %d %v =\n %q\nwant\n %q", i, s.args, got, s.want)
		}
	}
	hist, _ := e.store.History("u", "demo")
	var actions []string
	for _, h := range hist {
		actions = append(actions, h.Action)
	}
	if got := strings.Join(actions, ","); got != "create,edit,write_file,remove_file,delete" {
		t.Errorf("history actions = %s", got)
	}
}

func TestSkillManageModeration(t *testing.T) {
	e := newManageEnv(t)
	e.model.decide = func(prompt string) string {
		switch {
		case strings.Contains(prompt, "BLOCKME"):
			return `{"decision":"block","reason":"prompt injection"}`
		case strings.Contains(prompt, "Executable: true"):
			return `{"decision":"warn","reason":"calls an external API"}`
		}
		return `{"decision":"allow","reason":"ok"}`
	}
	e.call(t, "u", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "")})
	got, _ := e.call(t, "u", map[string]any{"action": "edit", "name": "demo", "content": skillContent("demo", "BLOCKME\n")})
	if got != failure("ValueError", "Security scan blocked the write: prompt injection") {
		t.Errorf("blocked = %q", got)
	}
	got, _ = e.call(t, "u", map[string]any{"action": "write_file", "name": "demo", "path": "scripts/run.py", "content": "print('hi')\n"})
	if got != failure("ValueError", "Security scan rejected executable content: calls an external API") {
		t.Errorf("executable warn = %q", got)
	}
	// A warn on non-executable content is written.
	got, _ = e.call(t, "u", map[string]any{"action": "write_file", "name": "demo", "path": "references/run.md", "content": "Executable: true\n"})
	if got != "Wrote 'references/run.md' for custom skill 'demo'." {
		t.Errorf("reference warn = %q", got)
	}

	// Without a moderation model every write fails closed.
	closed := NewSkillManage(SkillManageOptions{Store: e.store})
	res, _ := closed.Handler(t.Context(), &tool.Call{UserID: "u"}, json.RawMessage(`{"action":"edit","name":"demo","content":"---\nname: demo\ndescription: d\n---\n"}`))
	if res.TextContent() != failure("ValueError", "Security scan blocked the write: Security scan unavailable for skill content; manual review required.") {
		t.Errorf("no model = %q", res.TextContent())
	}
}

func TestSkillManageConcurrentWritesSerialise(t *testing.T) {
	e := newManageEnv(t)
	e.call(t, "u", map[string]any{"action": "create", "name": "demo", "content": skillContent("demo", "count: 0\n")})
	// Each patch reads the current count and must see the previous write:
	// lost updates would leave "count: N" with N < 20 or patches failing.
	const n = 20
	var wg sync.WaitGroup
	var failed atomic.Int32
	var mu sync.Mutex
	next := 0
	for range n {
		wg.Go(func() {
			for {
				mu.Lock()
				cur := next
				mu.Unlock()
				raw, _ := json.Marshal(map[string]any{"action": "patch", "name": "demo", "find": fmt.Sprintf("count: %d\n", cur), "replace": fmt.Sprintf("count: %d\n", cur+1)})
				res, err := e.tool.Handler(context.Background(), &tool.Call{UserID: "u"}, raw)
				if err != nil {
					failed.Add(1)
					return
				}
				if !res.IsError {
					mu.Lock()
					next = max(next, cur+1)
					mu.Unlock()
					return
				}
				// Another writer won this round; retry with the new count.
			}
		})
	}
	wg.Wait()
	content, _ := e.store.ReadCustom("u", "demo")
	if failed.Load() != 0 || !strings.HasSuffix(content, fmt.Sprintf("count: %d\n", n)) {
		t.Errorf("after %d concurrent patches content = %q (failed %d)", n, content, failed.Load())
	}
	hist, _ := e.store.History("u", "demo")
	if len(hist) != n+1 {
		t.Errorf("history has %d records, want %d", len(hist), n+1)
	}
	for i := 1; i < len(hist); i++ {
		if *hist[i].PrevContent != *hist[i-1].NewContent {
			t.Fatalf("record %d prev_content does not follow record %d: writes interleaved", i, i-1)
		}
	}
}

func TestSkillManageSchema(t *testing.T) {
	e := newManageEnv(t)
	if e.tool.Name != "skill_manage" || e.tool.Description != "Manage custom skills under skills/custom/." {
		t.Errorf("tool = %q %q", e.tool.Name, e.tool.Description)
	}
	var schema struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(e.tool.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if strings.Join(schema.Required, ",") != "action,name" || len(schema.Properties) != 7 {
		t.Errorf("schema = %s", e.tool.InputSchema)
	}
}
