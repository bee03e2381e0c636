package config

import (
	"fmt"
	"strings"
	"time"
)

// MCPTasks is the mcp_tasks section: the durable runtime that tracks the
// long-running tasks of MCP servers' submit/status/cancel toolsets
// (extensions_config.json's task_toolsets) after the run that submitted
// them has ended (DeerFlow's McpTasksConfig, package mcptasks). Every
// field has DeerFlow's default and range.
type MCPTasks struct {
	// Enabled runs the task runtime and binds list_background_tasks and
	// cancel_background_task (default false). With it off, a server's
	// task_toolsets are refused: serve, run and chat fail to start.
	Enabled bool `yaml:"enabled"`
	// PollIntervalSeconds is the time between two status polls of a task
	// when the server suggests none, and between two passes of the poller
	// (default 5, 1 to 300).
	PollIntervalSeconds int `yaml:"poll_interval_seconds"`
	// LeaseSeconds is how long a runtime holds a task it polls or
	// cancels; another replica takes it over after that (default 120, 5
	// to 3600).
	LeaseSeconds int `yaml:"lease_seconds"`
	// MaxConcurrentPolls is the most tasks one runtime polls (and the
	// most it cancels) at once (default 8, 1 to 64).
	MaxConcurrentPolls int `yaml:"max_concurrent_polls"`
	// MaxPollBackoffSeconds caps the doubling wait after failed polls or
	// cancellations (default 300, 1 to 3600).
	MaxPollBackoffSeconds int `yaml:"max_poll_backoff_seconds"`
	// InputRequiredPollIntervalSeconds is the least time between polls of
	// a task waiting for input (default 60, 5 to 3600).
	InputRequiredPollIntervalSeconds int `yaml:"input_required_poll_interval_seconds"`
	// TrackingDegradedAfterErrors is the number of failed polls in a row
	// after which list_background_tasks reports the task's tracking as
	// degraded (default 3, 1 to 100).
	TrackingDegradedAfterErrors int `yaml:"tracking_degraded_after_errors"`
	// MaxResultBytes is the largest JSON result stored whole; a larger one
	// keeps only a preview (default 65536, 1024 to 10485760).
	MaxResultBytes int `yaml:"max_result_bytes"`
	// ResultPreviewMaxChars is the length of that preview (default 2000,
	// 64 to 100000).
	ResultPreviewMaxChars int `yaml:"result_preview_max_chars"`
}

func defaultMCPTasks() MCPTasks {
	return MCPTasks{PollIntervalSeconds: 5, LeaseSeconds: 120, MaxConcurrentPolls: 8, MaxPollBackoffSeconds: 300,
		InputRequiredPollIntervalSeconds: 60, TrackingDegradedAfterErrors: 3, MaxResultBytes: 65536, ResultPreviewMaxChars: 2000}
}

// PollInterval returns poll_interval_seconds as a duration.
func (m MCPTasks) PollInterval() time.Duration { return secs(m.PollIntervalSeconds) }

// Lease returns lease_seconds as a duration.
func (m MCPTasks) Lease() time.Duration { return secs(m.LeaseSeconds) }

// MaxBackoff returns max_poll_backoff_seconds as a duration.
func (m MCPTasks) MaxBackoff() time.Duration { return secs(m.MaxPollBackoffSeconds) }

// InputRequiredInterval returns input_required_poll_interval_seconds as a
// duration.
func (m MCPTasks) InputRequiredInterval() time.Duration {
	return secs(m.InputRequiredPollIntervalSeconds)
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

func (p *parser) validateMCPTasks() {
	m := p.cfg.MCPTasks
	for _, r := range []struct {
		key    string
		v      int
		lo, hi int
	}{
		{"poll_interval_seconds", m.PollIntervalSeconds, 1, 300},
		{"lease_seconds", m.LeaseSeconds, 5, 3600},
		{"max_concurrent_polls", m.MaxConcurrentPolls, 1, 64},
		{"max_poll_backoff_seconds", m.MaxPollBackoffSeconds, 1, 3600},
		{"input_required_poll_interval_seconds", m.InputRequiredPollIntervalSeconds, 5, 3600},
		{"tracking_degraded_after_errors", m.TrackingDegradedAfterErrors, 1, 100},
		{"max_result_bytes", m.MaxResultBytes, 1024, 10_485_760},
		{"result_preview_max_chars", m.ResultPreviewMaxChars, 64, 100_000},
	} {
		if r.v < r.lo || r.v > r.hi {
			p.invalid("mcp_tasks."+r.key, "must be between %d and %d, got %d", r.lo, r.hi, r.v)
		}
	}
}

// Bounds of a task toolset's names (DeerFlow's MCP_TASK_NAME_MAX_LENGTH).
const maxTaskToolsetName = 255

// validateTaskToolsets checks a server's task_toolsets: every toolset has
// a name and its three tools, names are unique, and no raw tool plays two
// roles.
func (x *extParser) validateTaskToolsets(s *MCPServer, path string) error {
	names := map[string]bool{}
	roles := map[string]string{}
	for i, ts := range s.TaskToolsets {
		at := fmt.Sprintf("%s.task_toolsets[%d]", path, i)
		name := strings.TrimSpace(ts.Name)
		switch {
		case name == "":
			return x.serverError(s.Name, at+".name", "must not be empty")
		case len(ts.Name) > maxTaskToolsetName:
			return x.serverError(s.Name, at+".name", "must be at most %d characters", maxTaskToolsetName)
		case names[strings.ToLower(name)]:
			return x.serverError(s.Name, at+".name", "%q names another toolset of this server too", ts.Name)
		}
		names[strings.ToLower(name)] = true
		for _, r := range [][2]string{{"submit_tool", ts.SubmitTool}, {"status_tool", ts.StatusTool}, {"cancel_tool", ts.CancelTool}} {
			if strings.TrimSpace(r[1]) == "" {
				return x.serverError(s.Name, at+"."+r[0], "must name a tool of the server")
			}
			if prev, taken := roles[r[1]]; taken {
				return x.serverError(s.Name, at+"."+r[0], "tool %q is already the %s", r[1], prev)
			}
			roles[r[1]] = fmt.Sprintf("%s of toolset %q", r[0], ts.Name)
		}
	}
	return nil
}

// TaskToolsetCount returns the number of task toolsets of the enabled,
// usable servers.
func (e *Extensions) TaskToolsetCount() int {
	n := 0
	if e == nil {
		return 0
	}
	for _, s := range e.MCPServers {
		if s.Enabled && s.Err == nil {
			n += len(s.TaskToolsets)
		}
	}
	return n
}

// refuseUserTaskToolsets makes a user's own server that declares
// task_toolsets unusable (its Err says why): only the servers of the
// shared extensions file run task toolsets, since the task runtime polls
// through them after the user's run has ended.
func (x *extParser) refuseUserTaskToolsets(servers map[string]MCPServer) {
	for name, s := range servers {
		if len(s.TaskToolsets) == 0 || s.Err != nil {
			continue
		}
		s.Err = x.serverError(name, joinKey(joinKey("mcpServers", name), "task_toolsets"),
			"is not supported for a user's own server: declare the server in extensions_config.json to run its task toolsets")
		servers[name] = s
	}
}
