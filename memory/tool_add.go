package memory

import (
	"context"
	_ "embed"
	"strings"

	"github.com/antlerhq/antler/tool"
)

//go:embed tool_add.md
var addToolDescription string

type addArgs struct {
	Content    string   `json:"content" jsonschema:"The fact to remember. Be specific and factual."`
	Category   string   `json:"category,omitempty" jsonschema:"Category label (default context): preference, correction, behavior, knowledge, goal, context."`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"How certain the fact is, 0.0 to 1.0 (default 0.7); higher for explicit statements."`
}

type statusResult struct {
	FactID string `json:"fact_id"`
	Status string `json:"status"`
}

func (m *Manager) addTool() *tool.Tool {
	return tool.New(AddToolName, strings.TrimSpace(addToolDescription),
		func(ctx context.Context, call *tool.Call, in addArgs) (*statusResult, error) {
			user, err := callUser(call)
			if err != nil {
				return nil, err
			}
			conf := 0.7
			if in.Confidence != nil {
				conf = *in.Confidence
			}
			_, id, err := m.CreateFact(ctx, user, FactInput{Content: in.Content, Category: in.Category, Confidence: conf, Source: "tool"})
			if err != nil {
				return nil, ensureCtx(ctx, toolError(err, ""))
			}
			return &statusResult{FactID: id, Status: "added"}, nil
		})
}
