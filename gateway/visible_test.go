package gateway

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
)

// msgs builds messages from "id:text" (an empty id for ":text").
func msgs(specs ...string) []model.Message {
	out := make([]model.Message, 0, len(specs))
	for _, s := range specs {
		id, text, _ := strings.Cut(s, ":")
		out = append(out, model.Message{ID: id, Role: model.RoleUser, Content: text})
	}
	return out
}

func specs(ms []model.Message) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.ID+":"+m.Content)
	}
	return out
}

func TestWeave(t *testing.T) {
	for _, tc := range []struct {
		name         string
		newer, older []model.Message
		want         []string
	}{
		{"nothing removed", msgs("a:1", "b:2", "c:3"), msgs("a:1", "b:2"), []string{"a:1", "b:2", "c:3"}},
		{"summarised head", msgs("c:3", "d:4"), msgs("a:1", "b:2", "c:3"), []string{"a:1", "b:2", "c:3", "d:4"}},
		// DeerFlow keeps the current request (and date reminders) even
		// when the cut falls after it: the removed turns after it go back
		// between it and the kept tail.
		{"rescued request", msgs("q:ask", "d:4", "e:5"), msgs("a:1", "q:ask", "b:2", "c:3", "d:4"),
			[]string{"a:1", "q:ask", "b:2", "c:3", "d:4", "e:5"}},
		{"replaced in place keeps the newer copy", msgs("b:new"), msgs("a:1", "b:old"), []string{"a:1", "b:new"}},
		{"nothing shared", msgs("x:9"), msgs("a:1", "b:2"), []string{"a:1", "b:2", "x:9"}},
		{"removed after the last shared one", msgs("a:1", "x:9"), msgs("a:1", "b:2"), []string{"a:1", "b:2", "x:9"}},
		// Messages without ids match by content from the end: the kept
		// copy is the later one, so the removed earlier copy comes back.
		{"without ids", msgs(":ok", "c:3"), msgs(":ok", "b:2", ":ok", "c:3"), []string{":ok", "b:2", ":ok", "c:3"}},
		{"without ids, nothing removed", msgs(":ok", ":ok", "c:3"), msgs(":ok", ":ok"), []string{":ok", ":ok", "c:3"}},
		{"removal markers are skipped", msgs("c:3"), append([]model.Message{{ID: model.RemoveAllID, Remove: true}}, msgs("b:2", "c:3")...),
			[]string{"b:2", "c:3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newer := specs(tc.newer)
			got := weave(tc.newer, tc.older)
			if diff := cmp.Diff(tc.want, specs(got)); diff != "" {
				t.Errorf("weave (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(newer, specs(tc.newer)); diff != "" {
				t.Errorf("weave changed newer:\n%s", diff)
			}
			if l := lacks(tc.newer, tc.older); l != (len(got) > len(tc.newer)) {
				t.Errorf("lacks = %v, but weave added %d messages", l, len(got)-len(tc.newer))
			}
		})
	}
}
