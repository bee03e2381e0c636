package cli

import (
	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/tool"
)

// wireToolProgress builds the tool_progress section's guard when it is
// enabled: one for the app, so that its per-thread state outlives a run.
func (a *app) wireToolProgress() {
	if a.cfg.ToolProgress.Enabled {
		a.toolProgress = agent.NewToolProgressGuard(a.cfg.ToolProgress, a.logger)
	}
}

// toolProgressTool is the guard's tool middleware, innermost of the
// embedder's as DeerFlow places it (just outside tool error handling), or
// none when the section is disabled.
func (a *app) toolProgressTool() []tool.Middleware {
	if a.toolProgress == nil {
		return nil
	}
	return []tool.Middleware{a.toolProgress.ToolMiddleware()}
}

// toolProgressModel is the guard's model middleware, which adds its hints
// to the next model request (one that changes nothing when disabled).
func (a *app) toolProgressModel() tool.ModelMiddleware {
	if a.toolProgress == nil {
		return func(next tool.ModelHandler) tool.ModelHandler { return next }
	}
	return a.toolProgress.ModelMiddleware()
}
