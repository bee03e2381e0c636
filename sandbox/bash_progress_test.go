package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/tool"
)

// TestBash_reportsProgressWhileRunning: a running command reports its
// elapsed time and lines of output through the call's event sink. The
// command waits for a file the test creates once a report has counted
// its two lines, so the test depends on no timing.
func TestBash_reportsProgressWhileRunning(t *testing.T) {
	f := newFixture(t, fixtureOpts{hostBash: true,
		mutate:   func(c *config.Config) { c.Sandbox.BashCommandTimeout = 60 },
		toolsOpt: func(o *ToolsOptions) { o.BashProgressEvery = 5 * time.Millisecond }})
	tp := f.paths(t, "u1", "t1")
	release := filepath.Join(tp.Workspace, "release")
	var (
		mu      sync.Mutex
		reports []tool.Progress
		once    sync.Once
	)
	call := &tool.Call{ID: "c1", Name: "bash", UserID: "u1", ThreadID: "t1", Emit: func(event string, data any) {
		p, ok := data.(tool.Progress)
		if event != tool.ProgressEvent || !ok {
			return
		}
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
		if p.Progress >= 2 {
			once.Do(func() { _ = os.WriteFile(release, nil, 0o644) })
		}
	}}
	args, _ := json.Marshal(map[string]any{"description": "wait", "command": "echo one; echo two; while [ ! -e release ]; do sleep 0.01; done; echo done"})
	res, err := f.byName["bash"].Handler(t.Context(), call, args)
	if err != nil || res.TextContent() != "one\ntwo\ndone\n" {
		t.Fatalf("bash: %q %v", res.TextContent(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	msg := regexp.MustCompile(`^running for \d+s, [0-3] lines of output$`)
	last := -1.0
	for _, p := range reports {
		if p.Name != "bash" || !msg.MatchString(p.Message) || p.Progress < last {
			t.Errorf("report %+v", p)
		}
		last = p.Progress
	}
	if last < 2 {
		t.Errorf("no report counted the two lines: %+v", reports)
	}
}
