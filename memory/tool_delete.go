package memory

import (
	"context"
	_ "embed"
	"strings"

	"github.com/antlerhq/antler/tool"
)

//go:embed tool_delete.md
var deleteToolDescription string

type deleteArgs struct {
	FactID string `json:"fact_id" jsonschema:"The fact's id, from memory_search."`
}

func (m *Manager) deleteTool() *tool.Tool {
	return tool.New(DeleteToolName, strings.TrimSpace(deleteToolDescription),
		func(ctx context.Context, call *tool.Call, in deleteArgs) (*statusResult, error) {
			user, err := callUser(call)
			if err != nil {
				return nil, err
			}
			if _, err := m.DeleteFact(ctx, user, in.FactID); err != nil {
				return nil, ensureCtx(ctx, toolError(err, in.FactID))
			}
			return &statusResult{FactID: in.FactID, Status: "deleted"}, nil
		})
}
