package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// fixture is a home with one provider and its tools.
type fixture struct {
	home     string
	layout   *vpath.Layout
	provider *LocalProvider
	tools    *Tools
	cfg      *config.Config
	byName   map[string]*tool.Tool
}

type fixtureOpts struct {
	hostBash bool
	rbw      *bool // read_before_write.enabled; nil = default (on)
	mutate   func(*config.Config)
	toolsOpt func(*ToolsOptions)
}

func newFixture(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	home := t.TempDir()
	skills := filepath.Join(home, "skills-src")
	mustDo(t, os.MkdirAll(filepath.Join(skills, "public", "pdf"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(skills, "public", "pdf", "SKILL.md"), []byte("---\nname: pdf\n---\nbody\n"), 0o644))
	cfg := config.Default()
	cfg.Sandbox.AllowHostBash = o.hostBash
	cfg.Skills.Path = skills
	if o.rbw != nil {
		cfg.ReadBeforeWrite.Enabled = *o.rbw
	}
	if o.mutate != nil {
		o.mutate(cfg)
	}
	layout, err := vpath.FromConfig(home, cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	p := NewLocal(layout, LocalOptions{})
	opts := &ToolsOptions{Config: cfg, Getenv: func(string) string { return "" }}
	if o.toolsOpt != nil {
		o.toolsOpt(opts)
	}
	tl := NewTools(p, *opts)
	f := &fixture{home: home, layout: layout, provider: p, tools: tl, cfg: cfg, byName: map[string]*tool.Tool{}}
	for _, x := range tl.All() {
		f.byName[x.Name] = x
	}
	return f
}

func (f *fixture) paths(t testing.TB, user, thread string) vpath.ThreadPaths {
	t.Helper()
	tp, err := f.layout.EnsureThreadDirs(user, thread)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// call runs the named tool as (user, thread) with args and returns the
// result; a Go error fails the test.
func (f *fixture) call(t testing.TB, user, thread, name string, args map[string]any) *tool.Result {
	t.Helper()
	tl := f.byName[name]
	if tl == nil {
		t.Fatalf("no tool %s", name)
	}
	if _, ok := args["description"]; !ok {
		args["description"] = "test"
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if bt, ok := t.(*testing.B); ok {
		ctx = bt.Context()
	}
	res, err := tl.Handler(ctx, &tool.Call{ID: "c1", Name: name, UserID: user, ThreadID: thread}, raw)
	if err != nil {
		t.Fatalf("%s(%v): Go error %v", name, args, err)
	}
	return res
}

// text runs the tool and returns its text.
func (f *fixture) text(t testing.TB, user, thread, name string, args map[string]any) string {
	t.Helper()
	return f.call(t, user, thread, name, args).TextContent()
}

func mustDo(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantPrefix(t testing.TB, got, prefix string) {
	t.Helper()
	if !strings.HasPrefix(got, prefix) {
		t.Errorf("got %q, want prefix %q", got, prefix)
	}
}

func ptr[T any](v T) *T { return &v }

func sleepMillis(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

type cfgT = config.Config

func defaultCfg() *config.Config { return config.Default() }
