package deferred

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// TestFilterPromotionsOnlyAppend promotes tools one after another, as a
// thread does over several tool_search calls, and checks that each
// request's tool list is the previous one with the new definitions
// appended: the bytes a provider caches as the prompt's prefix stay the
// same. The deferred tools sit between bound tools in the agent's list, so
// a filter that kept the bound order would insert them in the middle.
func TestFilterPromotionsOnlyAppend(t *testing.T) {
	catalog := []*tool.Tool{
		fakeTool("gh", "gh_issue", "Create an issue.", nil),
		fakeTool("gh", "gh_pr", "Open a pull request.", nil),
		fakeTool("gh", "gh_merge", "Merge a pull request.", nil),
	}
	c := NewCatalog(catalog)
	defs := []model.ToolDefinition{{Name: "read_file", Description: "Read a file."}}
	for _, tl := range catalog {
		defs = append(defs, tl.Definition())
	}
	defs = append(defs, model.ToolDefinition{Name: "invoke_acp_agent"}, model.ToolDefinition{Name: ToolSearchName})

	var seen []model.ToolDefinition
	h := tool.ChainModel(func(_ context.Context, call *tool.ModelCall) (*model.Response, error) {
		seen = call.Request.Tools
		return &model.Response{}, nil
	}, c.FilterModel())
	steps := []struct {
		promoted []string
		want     []string
	}{
		{nil, []string{"read_file", "invoke_acp_agent", ToolSearchName}},
		{[]string{"gh_merge"}, []string{"read_file", "invoke_acp_agent", ToolSearchName, "gh_merge"}},
		{[]string{"gh_merge", "gh_issue"}, []string{"read_file", "invoke_acp_agent", ToolSearchName, "gh_merge", "gh_issue"}},
		{[]string{"gh_merge", "gh_issue", "gh_pr"}, []string{"read_file", "invoke_acp_agent", ToolSearchName, "gh_merge", "gh_issue", "gh_pr"}},
	}
	var prev []byte
	for i, s := range steps {
		st := &thread.State{Promoted: &thread.Promoted{CatalogHash: c.Hash(), Names: s.promoted}}
		req := &model.Request{Tools: defs, Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
		if _, err := h(t.Context(), &tool.ModelCall{Request: req, State: st}); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range seen {
			names = append(names, d.Name)
		}
		if diff := cmp.Diff(s.want, names); diff != "" {
			t.Fatalf("step %d: tools (-want +got):\n%s", i, diff)
		}
		b, err := json.Marshal(seen)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && !bytes.HasPrefix(b, prev[:len(prev)-1]) {
			t.Errorf("step %d: the request's tools do not start with the previous request's:\n%s\n%s", i, prev, b)
		}
		prev = b
		if len(req.Tools) != len(defs) || req.Tools[1].Name != "gh_issue" {
			t.Fatalf("step %d: the filter changed the caller's request", i)
		}
	}
}
