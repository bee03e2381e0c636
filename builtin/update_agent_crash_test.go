package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/internal/crashtest"
)

// Environment of the crash child (TestUpdateAgentCrashChild).
const (
	crashHomeEnv = "ANTLER_TEST_UPDATE_AGENT_CRASH_HOME"
	crashBaseEnv = "ANTLER_TEST_UPDATE_AGENT_CRASH_BASE"
)

// TestUpdateAgentSurvivesSIGKILL re-executes the test binary as a child
// that calls update_agent in a loop, each call rewriting both SOUL.md and
// config.yaml with a new version number, and kills it with SIGKILL at a
// random moment 0-5 ms after it starts updating; 200 times. After each
// kill the agent must load and be entirely one version (description and
// soul agree), never older than the version seen before, and recovery
// must leave no staging or commit folder behind.
func TestUpdateAgentSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	e := newAgentEnv(t)
	dir := e.seed(t, "alice", testAgent, map[string]any{"name": testAgent, "description": "v0"}, "soul v0")
	iterations := 200
	var lastVersion, interrupted, changed int
	start := time.Now()
	for i := range iterations {
		crashtest.KillAfterReady(t, "TestUpdateAgentCrashChild",
			[]string{crashHomeEnv + "=" + e.home, crashBaseEnv + "=" + strconv.Itoa((i+1)*1_000_000)}, 5*time.Millisecond)

		if pending(dir) {
			interrupted++
		}
		a, err := e.store.Load("alice", testAgent)
		if err != nil {
			t.Fatalf("iteration %d: agent does not load: %v", i, err)
		}
		v, ok := strings.CutPrefix(a.Config.Description, "v")
		sv, sok := strings.CutPrefix(a.Soul, "soul v")
		if !ok || !sok || v != sv {
			t.Fatalf("iteration %d: mixed agent: description %q, soul %q", i, a.Config.Description, a.Soul)
		}
		n, _ := strconv.Atoi(v)
		if n < lastVersion {
			t.Fatalf("iteration %d: version went back from %d to %d", i, lastVersion, n)
		}
		if n != lastVersion {
			changed++
		}
		lastVersion = n
		if pending(dir) {
			t.Fatalf("iteration %d: recovery left an update folder", i)
		}
		if a.Config.Name != testAgent {
			t.Fatalf("iteration %d: name %q", i, a.Config.Name)
		}
	}
	t.Logf("%d kills in %v; %d landed inside an update (recovered on load); the version changed %d times",
		iterations, time.Since(start).Round(time.Millisecond), interrupted, changed)
	if changed == 0 {
		t.Error("the child never completed an update; the test proves nothing")
	}
}

// pending reports whether an update folder is left in dir.
func pending(dir string) bool {
	for _, d := range []string{".staging", ".commit"} {
		if _, err := os.Lstat(filepath.Join(dir, d)); err == nil {
			return true
		}
	}
	return false
}

// TestUpdateAgentCrashChild is the child process of
// TestUpdateAgentSurvivesSIGKILL; it does nothing in a normal run.
func TestUpdateAgentCrashChild(t *testing.T) {
	home := os.Getenv(crashHomeEnv)
	if home == "" {
		t.Skip("helper process of TestUpdateAgentSurvivesSIGKILL")
	}
	base, _ := strconv.Atoi(os.Getenv(crashBaseEnv))
	e := newAgentEnvAt(t, home)
	fmt.Println("ready")
	for n := base; ; n++ {
		res := callTool(t, e.update, agentCall("alice", testAgent), map[string]any{
			"description": fmt.Sprintf("v%d", n),
			"soul":        fmt.Sprintf("soul v%d", n),
		})
		if res.IsError {
			fmt.Fprintln(os.Stderr, "update failed:", res.TextContent())
			os.Exit(3)
		}
	}
}
