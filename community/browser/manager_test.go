package browser

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestManagerCapacity checks the cap without a browser: sessions in use
// are never evicted, so a thread beyond the cap is refused until one is
// released, and then the least recently used idle session makes room.
func TestManagerCapacity(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	m := NewManager(ManagerOptions{MaxSessions: 2, Now: func() time.Time { return now }})
	t.Cleanup(func() { _ = m.Close() })
	a, err := m.pin("a", Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	b, err := m.pin("b", Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.pin("c", Options{}, true); err == nil || !strings.Contains(err.Error(), "capacity is full (2 sessions in use)") {
		t.Fatalf("a third thread with both sessions in use: %v", err)
	}
	if _, err := m.pin("none", Options{}, false); err != ErrNoSession {
		t.Errorf("pin without create = %v, want ErrNoSession", err)
	}
	now = now.Add(time.Second)
	m.unpin(b)
	now = now.Add(time.Second)
	m.unpin(a) // a is now the more recently used
	c, err := m.pin("c", Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Threads()
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a", "c"}, got); diff != "" {
		t.Errorf("threads (-want +got):\n%s", diff)
	}
	m.unpin(c)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.pin("d", Options{}, true); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("pin after Close = %v", err)
	}
}
