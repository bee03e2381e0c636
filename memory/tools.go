package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/antlerhq/antler/tool"
)

// Names of the memory tools (mode "tool").
const (
	SearchToolName = "memory_search"
	AddToolName    = "memory_add"
	UpdateToolName = "memory_update"
	DeleteToolName = "memory_delete"
)

// Tools returns the memory tools of mode "tool" (DeerFlow's
// agents/memory/tools.py), nil in every other mode. Each acts on the
// calling run's user. A model-fixable failure (an unknown id, an empty or
// duplicate fact) is an "Error: ..." result; a storage failure too, so
// that the run goes on.
func (m *Manager) Tools() []*tool.Tool {
	if !m.ToolMode() {
		return nil
	}
	return []*tool.Tool{m.searchTool(), m.addTool(), m.updateTool(), m.deleteTool()}
}

// toolError turns an operation's error into the model's error text.
func toolError(err error, id string) error {
	switch {
	case errors.Is(err, ErrNotFound):
		//lint:ignore ST1005 the tool result the model reads
		return fmt.Errorf("Error: Fact not found: %s", id)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	//lint:ignore ST1005 the tool result the model reads
	return fmt.Errorf("Error: %v", err)
}

// callUser is the calling run's user.
func callUser(call *tool.Call) (string, error) {
	if call == nil || call.UserID == "" {
		//lint:ignore ST1005 the tool result the model reads
		return "", errors.New("Error: the user of this run is not known")
	}
	return call.UserID, nil
}

// ensureCtx passes cancellation through as a Go error.
func ensureCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}
