package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/antlerhq/antler/internal/crashtest"
	"github.com/antlerhq/antler/memory"
)

// Environment of the crash child (TestMemoryWriteCrashChild).
const (
	memCrashHomeEnv = "ANTLER_TEST_MEMORY_CRASH_HOME"
	memCrashBaseEnv = "ANTLER_TEST_MEMORY_CRASH_BASE"
)

// crashFacts is the number of facts of every document the child writes,
// so that one write is tens of kilobytes and a torn one would show.
const crashFacts = 100

// crashDoc is version n of the child's document: every fact and the
// work summary carry n.
func crashDoc(n int) *memory.Document {
	d := memory.NewDocument()
	d.User.WorkContext.Summary = fmt.Sprintf("v%d", n)
	for k := range crashFacts {
		d.Facts = append(d.Facts, memory.Fact{ID: fmt.Sprintf("fact_%08d", k), Category: "context", Confidence: 0.9,
			Content: fmt.Sprintf("v%d fact %d %s", n, k, strings.Repeat("x", 100))})
	}
	return d
}

// TestMemoryWriteSurvivesSIGKILL re-executes the test binary as a child
// that replaces a user's memory document in a loop through the Manager,
// each write a new version of every fact, and kills it with SIGKILL at a
// random moment 0-5 ms after its first write; 100 times. After each kill the
// document must load and be entirely one version (the old or the new
// document, never a mix or a torn file), never older than the one seen
// before.
func TestMemoryWriteSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	home := t.TempDir()
	cfg := section(t, "")
	mgr, err := memory.New(memory.Options{Config: cfg, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mgr.Import(t.Context(), "alice", crashDoc(0)); err != nil {
		t.Fatal(err)
	}
	const iterations = 100
	last, changed := 0, 0
	for i := range iterations {
		killChildMidWrite(t, home, (i+1)*1_000_000)
		d, err := mgr.Get(t.Context(), "alice")
		if err != nil {
			t.Fatalf("iteration %d: the document does not load: %v", i, err)
		}
		n := docVersion(t, i, d)
		if n < last {
			t.Fatalf("iteration %d: version went back from %d to %d", i, last, n)
		}
		if n != last {
			changed++
		}
		last = n
	}
	tmps, _ := filepath.Glob(filepath.Join(home, "users", "alice", ".memory.json.tmp-*"))
	t.Logf("%d kills; the version changed %d times; %d temporary files of killed writes left", iterations, changed, len(tmps))
	if changed == 0 {
		t.Error("the child never completed a write; the test proves nothing")
	}
	// The next write removes the temporary files of the killed ones once
	// they are older than a live write can be.
	old := time.Now().Add(-2 * time.Minute)
	for _, p := range tmps {
		_ = os.Chtimes(p, old, old)
	}
	if _, err := mgr.Import(t.Context(), "alice", crashDoc(last+1)); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(home, "users", "alice", ".memory.json.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files of killed writes left after a write: %v", left)
	}
}

// docVersion returns the one version of d, failing on a mixed document.
func docVersion(t *testing.T, i int, d *memory.Document) int {
	t.Helper()
	v, ok := strings.CutPrefix(d.User.WorkContext.Summary, "v")
	n, err := strconv.Atoi(v)
	if !ok || err != nil || len(d.Facts) != crashFacts {
		t.Fatalf("iteration %d: summary %q, %d facts", i, d.User.WorkContext.Summary, len(d.Facts))
	}
	for _, f := range d.Facts {
		if !strings.HasPrefix(f.Content, "v"+v+" ") {
			t.Fatalf("iteration %d: mixed document: summary v%s, fact %q", i, v, f.Content[:20])
		}
	}
	return n
}

// killChildMidWrite starts the crash child on home and SIGKILLs it
// 0-5 ms after it reports its first write done.
func killChildMidWrite(t *testing.T, home string, base int) {
	t.Helper()
	crashtest.KillAfterReady(t, "TestMemoryWriteCrashChild",
		[]string{memCrashHomeEnv + "=" + home, memCrashBaseEnv + "=" + strconv.Itoa(base)}, 5*time.Millisecond)
}

// TestMemoryWriteCrashChild is the child process of
// TestMemoryWriteSurvivesSIGKILL; it does nothing in a normal run.
func TestMemoryWriteCrashChild(t *testing.T) {
	home := os.Getenv(memCrashHomeEnv)
	if home == "" {
		t.Skip("helper process of TestMemoryWriteSurvivesSIGKILL")
	}
	base, _ := strconv.Atoi(os.Getenv(memCrashBaseEnv))
	mgr, err := memory.New(memory.Options{Config: section(t, ""), Home: home})
	if err != nil {
		t.Fatal(err)
	}
	for n := base; ; n++ {
		if _, err := mgr.Import(context.Background(), "alice", crashDoc(n)); err != nil {
			fmt.Fprintln(os.Stderr, "write failed:", err)
			os.Exit(3)
		}
		if n == base {
			fmt.Println("ready") // one write done; the kill lands in the next ones
		}
	}
}
