package cpmsg

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

func msgs(from, n int) []model.Message {
	var out []model.Message
	for i := from; i < from+n; i++ {
		out = append(out, model.Message{ID: fmt.Sprintf("m%d", i), Role: model.RoleUser, Content: fmt.Sprint("message ", i)})
	}
	return out
}

// written plans st after parent, gives its new rows ids from next on,
// and returns the Parent of the written checkpoint.
func written(t *testing.T, st *thread.State, parent *Parent, kept int, id string, next *int64) (*Plan, *Parent) {
	t.Helper()
	p, err := NewPlan(st, parent, kept)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range p.New {
		*next++
		p.Refs[i].ID = *next
	}
	ranges, err := p.Ranges()
	if err != nil {
		t.Fatal(err)
	}
	return p, p.Parent(id, ranges)
}

// TestNewPlanEncodesOnlyAfterKept: the kept messages are not encoded (an
// unencodable one there does not fail the plan) and reuse the parent's
// rows; the rest are encoded.
func TestNewPlanEncodesOnlyAfterKept(t *testing.T) {
	var next int64
	history := msgs(0, 100)
	_, parent := written(t, &thread.State{Messages: history}, nil, 0, "c1", &next)
	// In memory the history may hold what JSON cannot encode; the kept
	// part is never encoded again.
	history[3].Artifact = func() {}
	st := &thread.State{Messages: append(history, msgs(100, 2)...)}
	if _, err := NewPlan(st, parent, 0); err == nil {
		t.Fatal("a plan without kept messages encoded every message: want the unencodable one to fail it")
	}
	p, child := written(t, st, parent, 100, "c2", &next)
	if p.Kept != 100 || len(p.Refs) != 2 || len(p.New) != 2 || p.Drops {
		t.Fatalf("plan: kept %d, %d refs, %d new, drops %v; want 100, 2, 2, false", p.Kept, len(p.Refs), len(p.New), p.Drops)
	}
	want := EncodeRanges(append(append([]int64(nil), parent.IDs...), 101, 102))
	if string(child.Ranges) != string(want) || string(child.Ranges) != "[[1,102]]" {
		t.Errorf("ranges %s, want %s", child.Ranges, want)
	}
	history[3].Artifact = nil
	if diff := cmp.Diff(append(msgs(0, 100), msgs(100, 2)...), child.Messages); diff != "" {
		t.Errorf("the child's decoded messages (-want +got):\n%s", diff)
	}
}

// TestPlanParentExtendsInPlaceOnce: the first child that extends all of
// a parent's messages appends to the parent's slices in place; a second
// child of the same parent (a branch) copies, and neither sees the
// other's messages.
func TestPlanParentExtendsInPlaceOnce(t *testing.T) {
	var next int64
	_, parent := written(t, &thread.State{Messages: msgs(0, 10)}, nil, 0, "c1", &next)
	a := &thread.State{Messages: append(msgs(0, 10), msgs(10, 1)...)}
	b := &thread.State{Messages: append(msgs(0, 10), model.Message{ID: "b", Role: model.RoleUser, Content: "branch"})}
	_, ca := written(t, a, parent, 10, "ca", &next)
	_, cb := written(t, b, parent, 10, "cb", &next)
	if &ca.IDs[0] != &parent.IDs[0] || &ca.Messages[0] != &parent.Messages[0] {
		t.Error("the first child copied its parent's slices")
	}
	if &cb.IDs[0] == &parent.IDs[0] || &cb.Messages[0] == &parent.Messages[0] || &cb.Hashes[0] == &parent.Hashes[0] {
		t.Error("the second child shares its parent's slices: it would write where the first child's are")
	}
	if diff := cmp.Diff(a.Messages, ca.Messages); diff != "" {
		t.Errorf("first child (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(b.Messages, cb.Messages); diff != "" {
		t.Errorf("second child (-want +got):\n%s", diff)
	}
	if len(parent.IDs) != 10 || len(parent.Messages) != 10 {
		t.Errorf("the parent changed: %d ids, %d messages", len(parent.IDs), len(parent.Messages))
	}
}

// TestPlanWithoutKeptMatchesByContent: without a promise every message is
// encoded and matched against the parent's by content, so an edit or a
// removal is written and marks the parent.
func TestPlanWithoutKeptMatchesByContent(t *testing.T) {
	var next int64
	_, parent := written(t, &thread.State{Messages: msgs(0, 5)}, nil, 0, "c1", &next)
	edited := msgs(0, 5)
	edited[2].Content = "edited"
	p, child := written(t, &thread.State{Messages: edited}, parent, 0, "c2", &next)
	if len(p.New) != 1 || !p.Drops {
		t.Fatalf("%d new, drops %v; want 1 new and drops", len(p.New), p.Drops)
	}
	if child.Messages != nil {
		t.Error("a child reusing rows it has no body of kept decoded messages")
	}
	if got := child.IDs; got[2] != 6 || got[1] != parent.IDs[1] || got[3] != parent.IDs[3] {
		t.Errorf("ids %v", got)
	}
}

// TestCacheLookup: a read reuses an entry only for the same checkpoint
// and message list.
func TestCacheLookup(t *testing.T) {
	var next int64
	var c Cache
	_, p := written(t, &thread.State{Messages: msgs(0, 3)}, nil, 0, "c1", &next)
	c.Put("t", p)
	for _, tc := range []struct {
		name, id, ranges string
		hit              bool
	}{
		{"same", "c1", "[[1,3]]", true},
		{"another checkpoint", "c2", "[[1,3]]", false},
		{"another message list", "c1", "[[1,2]]", false},
	} {
		if got := c.Lookup("t", tc.id, []byte(tc.ranges)) != nil; got != tc.hit {
			t.Errorf("%s: hit %v, want %v", tc.name, got, tc.hit)
		}
	}
	if c.Lookup("other", "c1", []byte("[[1,3]]")) != nil {
		t.Error("another thread's lookup hit")
	}
}

// TestCacheBound: past CacheBytes the least recently used threads lose
// their decoded messages (not their ids), and a thread over a quarter of
// the bound never keeps them.
func TestCacheBound(t *testing.T) {
	var c Cache
	big := strings.Repeat("x", 1<<20)
	entry := func(id string, mib int) *Parent {
		ms := make([]model.Message, mib)
		for i := range ms {
			ms[i] = model.Message{Content: big}
		}
		body, _ := json.Marshal(ms[0])
		ids := make([]int64, mib)
		return &Parent{CheckpointID: id, IDs: ids, Hashes: make([]Hash, mib), Messages: ms, Bytes: int64(mib * len(body))}
	}
	per := CacheBytes / 4 / (1 << 20) // MiB per thread that still fits
	n := CacheBytes/(1<<20)/per + 2
	for i := range n {
		c.Put(fmt.Sprint("t", i), entry("c", per-1))
	}
	if c.size > CacheBytes {
		t.Errorf("cache holds %d bytes of messages, bound %d", c.size, CacheBytes)
	}
	if c.Get("t0", "c") == nil || c.Get("t0", "c").Messages != nil {
		t.Error("the least recently used thread kept its messages (or lost its ids)")
	}
	if c.Get(fmt.Sprint("t", n-1), "c").Messages == nil {
		t.Error("the newest thread lost its messages")
	}
	huge := entry("c", per+1)
	c.Put("huge", huge)
	if c.Get("huge", "c").Messages != nil {
		t.Error("a thread over a quarter of the bound kept its messages")
	}
}
