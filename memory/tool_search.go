package memory

import (
	"context"
	_ "embed"
	"strings"

	"github.com/antlerhq/antler/tool"
)

//go:embed tool_search.md
var searchToolDescription string

type searchArgs struct {
	Query    string `json:"query" jsonschema:"Natural-language query matched against the facts' text."`
	Category string `json:"category,omitempty" jsonschema:"Only facts of this category (preference, correction, context, ...)."`
	Limit    int    `json:"limit,omitempty" jsonschema:"Maximum results (default 10, at most 50)."`
}

type searchResult struct {
	Results []Fact `json:"results"`
	Count   int    `json:"count"`
}

func (m *Manager) searchTool() *tool.Tool {
	return tool.New(SearchToolName, strings.TrimSpace(searchToolDescription),
		func(ctx context.Context, call *tool.Call, in searchArgs) (*searchResult, error) {
			user, err := callUser(call)
			if err != nil {
				return nil, err
			}
			limit := in.Limit
			if limit <= 0 {
				limit = 10
			}
			facts, err := m.Search(ctx, user, in.Query, in.Category, limit)
			if err != nil {
				return nil, ensureCtx(ctx, toolError(err, ""))
			}
			return &searchResult{Results: facts, Count: len(facts)}, nil
		})
}
