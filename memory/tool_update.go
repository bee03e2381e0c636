package memory

import (
	"context"
	_ "embed"
	"strings"

	"github.com/antlerhq/antler/tool"
)

//go:embed tool_update.md
var updateToolDescription string

type updateArgs struct {
	FactID     string   `json:"fact_id" jsonschema:"The fact's id, from memory_search."`
	Content    *string  `json:"content,omitempty" jsonschema:"New text (unchanged if omitted)."`
	Category   *string  `json:"category,omitempty" jsonschema:"New category (unchanged if omitted)."`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"New confidence, 0.0 to 1.0 (unchanged if omitted)."`
}

func (m *Manager) updateTool() *tool.Tool {
	return tool.New(UpdateToolName, strings.TrimSpace(updateToolDescription),
		func(ctx context.Context, call *tool.Call, in updateArgs) (*statusResult, error) {
			user, err := callUser(call)
			if err != nil {
				return nil, err
			}
			p := FactPatch{Content: trimmed(in.Content), Category: trimmed(in.Category), Confidence: in.Confidence}
			if _, err := m.UpdateFact(ctx, user, in.FactID, p); err != nil {
				return nil, ensureCtx(ctx, toolError(err, in.FactID))
			}
			return &statusResult{FactID: in.FactID, Status: "updated"}, nil
		})
}
