package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/mcptasks"
	"github.com/antlerhq/antler/store"
	"github.com/antlerhq/antler/toolset"
)

// wireMCPTasks builds the MCP task runtime when mcp_tasks is enabled,
// with the background-task tools it binds (for the lead agent and
// subagents, as DeerFlow binds them). The runtime opens the thread store
// on first use, so that commands that never submit nor poll (tools list)
// do not open it.
func (a *app) wireMCPTasks() error {
	if !a.cfg.MCPTasks.Enabled {
		return nil
	}
	rt, err := mcptasks.New(mcptasks.Options{OpenStore: a.openTaskStore, MCP: a.mcp, Config: a.cfg.MCPTasks, Logger: a.logger})
	if err != nil {
		return err
	}
	a.mcpTasks = rt
	a.builtins.ListBackgroundTasks = builtin.NewListBackgroundTasks(rt, agent.NeutralizeUntrustedTags)
	a.builtins.CancelBackgroundTask = builtin.NewCancelBackgroundTask(rt, agent.NeutralizeUntrustedTags)
	return nil
}

// openTaskStore is the thread store as the task store.
func (a *app) openTaskStore() (store.MCPTasks, error) {
	st, err := a.openStore()
	if err != nil {
		return nil, err
	}
	ts, ok := st.(store.MCPTasks)
	if !ok {
		return nil, fmt.Errorf("the thread store (%T) keeps no background tasks", st)
	}
	return ts, nil
}

// withTaskToolsets is the MCP source agents bind: task toolsets' submit
// tools submit in the background, their status and cancel tools are
// hidden (nil stays nil).
func (a *app) withTaskToolsets(mcp toolset.MCPSource) toolset.MCPSource {
	if mcp == nil {
		return nil
	}
	return mcptasks.NewSource(mcp, a.extensionsSource(), a.mcpTasks, a.logger)
}

// startMCPTaskPoller polls the background tasks until the app closes
// (serve and chat; a one-shot run leaves its tasks to them), when
// mcp_tasks is enabled. Notices of tasks that ended or ask a question go
// through n (serve's gateway starts a run on the thread); with n nil
// (chat) they wait for a process that has one.
func (a *app) startMCPTaskPoller(n mcptasks.Notifier) {
	if a.mcpTasks == nil {
		return
	}
	if n != nil {
		a.mcpTasks.AttachNotifier(n)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.mcpTasks.Run(ctx)
	}()
	a.onClose(func() error { stop(); <-done; return nil })
}

// mcpTasksError refuses task_toolsets while mcp_tasks is disabled, as
// DeerFlow refuses to start: Antler never offers such a toolset as
// synchronous tools (serve, run and chat; exit 2).
func (a *app) mcpTasksError() error {
	ext := a.loadedExtensions()
	if a.cfg.MCPTasks.Enabled || ext.TaskToolsetCount() == 0 {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(ext.MCPServers)) {
		if s := ext.MCPServers[name]; s.Enabled && s.Err == nil && len(s.TaskToolsets) > 0 {
			return &config.Error{File: ext.Path, Key: "mcpServers." + name + ".task_toolsets",
				Msg: "task toolsets need mcp_tasks.enabled: true in " + a.cfg.Path + " (Antler does not offer them as synchronous tools)"}
		}
	}
	return nil
}
