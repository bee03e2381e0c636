package thread

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
)

func TestMergeArtifacts(t *testing.T) {
	tests := []struct {
		name          string
		existing, upd []string
		want          []string
	}{
		{"concat and dedupe in first-seen order", []string{"a", "b"}, []string{"b", "c"}, []string{"a", "b", "c"}},
		{"nil update keeps existing", []string{"a"}, nil, []string{"a"}},
		{"empty existing takes update", nil, []string{"x", "x"}, []string{"x"}},
		{"duplicates inside existing collapse", []string{"a", "a"}, []string{}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mergeArtifacts(tt.existing, tt.upd)); diff != "" {
				t.Errorf("mergeArtifacts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeViewedImages(t *testing.T) {
	a := ViewedImage{MIMEType: "image/png", Size: 1, ActualPath: "/h/a.png"}
	b := ViewedImage{MIMEType: "image/jpeg", Size: 2, ActualPath: "/h/b.jpg"}
	a2 := ViewedImage{MIMEType: "image/png", Size: 9, ActualPath: "/h/a.png"}
	tests := []struct {
		name          string
		existing, upd map[string]ViewedImage
		want          map[string]ViewedImage
	}{
		{"empty map clears all", map[string]ViewedImage{"a": a, "b": b}, map[string]ViewedImage{}, map[string]ViewedImage{}},
		{"same key overwritten", map[string]ViewedImage{"a": a}, map[string]ViewedImage{"a": a2}, map[string]ViewedImage{"a": a2}},
		{"new key added", map[string]ViewedImage{"a": a}, map[string]ViewedImage{"b": b}, map[string]ViewedImage{"a": a, "b": b}},
		{"nil keeps", map[string]ViewedImage{"a": a}, nil, map[string]ViewedImage{"a": a}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mergeViewedImages(tt.existing, tt.upd)); diff != "" {
				t.Errorf("mergeViewedImages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergePromoted(t *testing.T) {
	tests := []struct {
		name          string
		existing, upd *Promoted
		want          *Promoted
	}{
		{"same hash unions in order", &Promoted{"h1", []string{"a", "b"}}, &Promoted{"h1", []string{"b", "c"}}, &Promoted{"h1", []string{"a", "b", "c"}}},
		{"different hash replaces", &Promoted{"h1", []string{"a"}}, &Promoted{"h2", []string{"x", "x"}}, &Promoted{"h2", []string{"x"}}},
		{"empty update keeps", &Promoted{"h1", []string{"a"}}, &Promoted{}, &Promoted{"h1", []string{"a"}}},
		{"nil update keeps", &Promoted{"h1", []string{"a"}}, nil, &Promoted{"h1", []string{"a"}}},
		{"missing existing takes update", nil, &Promoted{"h1", []string{"a"}}, &Promoted{"h1", []string{"a"}}},
		{"malformed existing replaced without error", &Promoted{"", []string{"junk"}}, &Promoted{"h1", []string{"a"}}, &Promoted{"h1", []string{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, MergePromoted(tt.existing, tt.upd)); diff != "" {
				t.Errorf("MergePromoted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeSandbox(t *testing.T) {
	tests := []struct {
		name          string
		existing, upd *Sandbox
		want          *Sandbox
		wantErr       string
	}{
		{"nil update keeps", &Sandbox{"a"}, nil, &Sandbox{"a"}, ""},
		{"nothing recorded takes update", nil, &Sandbox{"a"}, &Sandbox{"a"}, ""},
		{"same id idempotent", &Sandbox{"a"}, &Sandbox{"a"}, &Sandbox{"a"}, ""},
		{"conflicting ids raise", &Sandbox{"a"}, &Sandbox{"b"}, nil, "Conflicting sandbox state updates: 'a' != 'b'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mergeSandbox(tt.existing, tt.upd)
			if tt.wantErr != "" {
				var ce *SandboxConflictError
				if !errors.As(err, &ce) || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The delegations reducer.
func TestMergeDelegations(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	t.Run("terminal status not downgraded", func(t *testing.T) {
		got := mergeDelegations([]Delegation{{ID: "1", Status: "completed", CreatedAt: t0}}, []Delegation{{ID: "1", Status: "running", CreatedAt: t1}})
		if got[0].Status != "completed" {
			t.Errorf("status = %q, want completed", got[0].Status)
		}
	})
	t.Run("upsert keeps created_at and run_id", func(t *testing.T) {
		got := mergeDelegations([]Delegation{{ID: "1", RunID: "r1", Status: "running", CreatedAt: t0}}, []Delegation{{ID: "1", RunID: "r2", Status: "completed", CreatedAt: t1}})
		want := []Delegation{{ID: "1", RunID: "r1", Status: "completed", CreatedAt: t0}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("first-seen order", func(t *testing.T) {
		got := mergeDelegations([]Delegation{{ID: "a"}, {ID: "b"}}, []Delegation{{ID: "c"}, {ID: "a", Status: "running"}})
		var ids []string
		for _, d := range got {
			ids = append(ids, d.ID)
		}
		if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("capped at 50 most recent", func(t *testing.T) {
		var upd []Delegation
		for i := range 60 {
			upd = append(upd, Delegation{ID: string(rune('A' + i))})
		}
		got := mergeDelegations(nil, upd)
		if len(got) != maxDelegations || got[0].ID != upd[10].ID {
			t.Errorf("len = %d first = %q, want %d entries starting at %q", len(got), got[0].ID, maxDelegations, upd[10].ID)
		}
	})
}

// The skill_context reducer.
func TestMergeSkillContext(t *testing.T) {
	t.Run("dedupe by path, re-read moves to end", func(t *testing.T) {
		got := mergeSkillContext([]SkillContext{{Name: "a", Path: "/a"}, {Name: "b", Path: "/b"}}, []SkillContext{{Name: "a", Path: "/a", Description: "again"}})
		if diff := cmp.Diff([]string{"/b", "/a"}, paths(got)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if got[1].Description != "again" {
			t.Errorf("description not refreshed: %q", got[1].Description)
		}
	})
	t.Run("cap 8", func(t *testing.T) {
		var upd []SkillContext
		for i := range 10 {
			upd = append(upd, SkillContext{Path: string(rune('a' + i))})
		}
		got := mergeSkillContext(nil, upd)
		if len(got) != maxSkillContext || got[0].Path != "c" {
			t.Errorf("got %v", paths(got))
		}
	})
	t.Run("description collapsed and capped at 500", func(t *testing.T) {
		got := mergeSkillContext(nil, []SkillContext{{Path: "/a", Description: "  x \n\t y " + strings.Repeat("z", 600)}})
		d := got[0].Description
		if !strings.HasPrefix(d, "x y z") || len([]rune(d)) != 500 {
			t.Errorf("description = %q (len %d)", d[:10], len([]rune(d)))
		}
	})
}

func paths(s []SkillContext) []string {
	var out []string
	for _, e := range s {
		out = append(out, e.Path)
	}
	return out
}

func TestMergeMessages(t *testing.T) {
	m := func(id, text string) model.Message { return model.Message{ID: id, Role: model.RoleUser, Content: text} }
	tests := []struct {
		name          string
		existing, upd []model.Message
		want          []string
	}{
		{"append", []model.Message{m("1", "a")}, []model.Message{m("2", "b")}, []string{"a", "b"}},
		{"replace by id in place", []model.Message{m("1", "a"), m("2", "b")}, []model.Message{m("1", "A")}, []string{"A", "b"}},
		{"remove by id", []model.Message{m("1", "a"), m("2", "b")}, []model.Message{{ID: "1", Remove: true}}, []string{"b"}},
		{"remove all then append", []model.Message{m("1", "a"), m("2", "b")}, []model.Message{{ID: model.RemoveAllID, Remove: true}, m("3", "c")}, []string{"c"}},
		{"messages without id always append", []model.Message{m("", "a")}, []model.Message{m("", "a")}, []string{"a", "a"}},
		{"remove unknown id is a no-op", []model.Message{m("1", "a")}, []model.Message{{ID: "9", Remove: true}}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, msg := range MergeMessages(tt.existing, tt.upd) {
				got = append(got, msg.Content)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTodosReducer(t *testing.T) {
	s := &State{Todos: []Todo{{Content: "x"}}}
	if err := s.Apply(&Update{}); err != nil || len(s.Todos) != 1 {
		t.Fatalf("nil todos must keep: %v %v", s.Todos, err)
	}
	if err := s.Apply(&Update{Todos: []Todo{}}); err != nil || len(s.Todos) != 0 || s.Todos == nil {
		t.Fatalf("empty todos must clear: %#v %v", s.Todos, err)
	}
}

// Parallel tool calls of one step merge instead of overwriting: two
// present_files-style updates applied in call order both survive.
func TestParallelUpdatesBothSurvive(t *testing.T) {
	s := &State{Artifacts: []string{"/old"}}
	for _, u := range []*Update{
		{Artifacts: []string{"/mnt/user-data/outputs/a"}, Promoted: &Promoted{"h", []string{"a"}}},
		{Artifacts: []string{"/mnt/user-data/outputs/b"}, Promoted: &Promoted{"h", []string{"b"}}},
	} {
		if err := s.Apply(u); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"/old", "/mnt/user-data/outputs/a", "/mnt/user-data/outputs/b"}, s.Artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, s.Promoted.Names); diff != "" {
		t.Errorf("promoted (-want +got):\n%s", diff)
	}
}

func TestApplySandboxConflictLeavesStateUnchanged(t *testing.T) {
	s := &State{Sandbox: &Sandbox{"a"}, Artifacts: []string{"x"}}
	err := s.Apply(&Update{Sandbox: &Sandbox{"b"}, Artifacts: []string{"y"}})
	if err == nil {
		t.Fatal("want conflict error")
	}
	if diff := cmp.Diff([]string{"x"}, s.Artifacts); diff != "" {
		t.Errorf("state changed on error:\n%s", diff)
	}
}

func TestStateView_sharesMessagesWithoutAliasingAppends(t *testing.T) {
	owner := &State{Messages: make([]model.Message, 0, 8), Artifacts: []string{"a"}}
	owner.Messages = append(owner.Messages, model.Message{ID: "1", Content: "one"})
	v := owner.View()
	if len(v.Messages) != 1 || &v.Messages[0] != &owner.Messages[0] {
		t.Fatalf("view does not share the messages: %+v", v.Messages)
	}
	// An append to the view must not write into the owner's spare capacity.
	v.Messages = append(v.Messages, model.Message{ID: "view"})
	owner.Messages = append(owner.Messages, model.Message{ID: "owner"})
	if v.Messages[1].ID != "view" || owner.Messages[1].ID != "owner" {
		t.Errorf("appends aliased: view %q, owner %q", v.Messages[1].ID, owner.Messages[1].ID)
	}
	// The other parts are copies.
	v.Artifacts[0] = "changed"
	if owner.Artifacts[0] != "a" {
		t.Errorf("artifacts shared: %v", owner.Artifacts)
	}
	if (*State)(nil).View() == nil {
		t.Error("View of nil is nil")
	}
}
