package subagent

import (
	"context"
	"strconv"
	"sync"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/tool"
)

// limitNotice is DeerFlow's text appended to a response whose task calls
// were all dropped because the run's delegation budget is spent.
const limitNotice = "[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has been reached. Continue using the subagent results already collected, execute remaining simple work directly, or summarize the remaining work instead of launching more subagents."

// StopSubagentLimitCapped is the stop reason stamped on such a response
// (message Meta "stop_reason").
const StopSubagentLimitCapped = "subagent_limit_capped"

// ContextMaxTotalSubagents is the runtime context key of a run's
// per-run task limit (DeerFlow's max_total_subagents).
const ContextMaxTotalSubagents = builtin.ContextMaxTotalSubagents

// DeerFlow's limits: per response 3 (1..4), per run 6 (1..50). Antler
// raises the ceilings to the configured values when those are larger.
const (
	defaultMaxConcurrent = 3
	ceilMaxConcurrent    = 4
	defaultMaxTotal      = 6
	ceilMaxTotal         = 50
)

// Limits are the task caps of one run.
type Limits struct {
	// MaxConcurrent is the number of task calls kept per model response.
	MaxConcurrent int
	// MaxTotal is the number of tasks one run may launch.
	MaxTotal int
}

// ResolveLimits returns the limits of a run that requested maxConcurrent
// and maxTotal (0: not requested). Unrequested values come from the
// configuration (subagents.max_concurrent, default 3;
// subagents.max_total_per_run, default 6). Values are clamped to
// DeerFlow's ranges, 1..4 and 1..50, whose upper ends rise to the
// configured values when these are larger: a configuration of 200 allows
// 200, a request alone cannot exceed what the operator configured.
func ResolveLimits(cfg config.Subagents, maxConcurrent, maxTotal int) Limits {
	confConc := cfg.MaxConcurrent
	if confConc <= 0 {
		confConc = defaultMaxConcurrent
	}
	confTotal := cfg.MaxTotalPerRun
	if confTotal <= 0 {
		confTotal = defaultMaxTotal
	}
	if maxConcurrent == 0 {
		maxConcurrent = confConc
	}
	if maxTotal == 0 {
		maxTotal = confTotal
	}
	return Limits{
		MaxConcurrent: min(max(maxConcurrent, 1), max(ceilMaxConcurrent, confConc)),
		MaxTotal:      min(max(maxTotal, 1), max(ceilMaxTotal, confTotal)),
	}
}

// LimitHook adapts LimitMiddleware to agent.FactoryOptions.SubagentLimit,
// which passes the run's per-response limit. The per-run limit is read
// from each model call's runtime context (ContextMaxTotalSubagents) and
// defaults to subagents.max_total_per_run; both go through
// ResolveLimits.
func LimitHook(cfg *config.Config) func(maxConcurrent int) tool.ModelMiddleware {
	var sub config.Subagents
	if cfg != nil {
		sub = cfg.Subagents
	}
	return func(maxConcurrent int) tool.ModelMiddleware {
		return newLimiter(func(call *tool.ModelCall) Limits {
			return ResolveLimits(sub, maxConcurrent, contextInt(call.Context, ContextMaxTotalSubagents))
		}).middleware
	}
}

// LimitMiddleware is DeerFlow's SubagentLimitMiddleware as a model
// middleware. After each model response it keeps the first allowed task
// calls and every non-task call, where allowed is the smaller of
// l.MaxConcurrent and what is left of l.MaxTotal for the run. Tasks
// already launched in the run are counted from the state's delegation
// ledger (entries tagged with the run id; all entries when the run has
// no id) and from the calls this middleware let through, whichever is
// larger: the ledger keeps only 50 entries, so large configured limits
// need the second count. When a response's task calls are all dropped
// and nothing else is left, limitNotice (DeerFlow's "[SUBAGENT LIMIT REACHED] ..." text) is appended to its text and its
// Meta "stop_reason" is set to StopSubagentLimitCapped. l is used as
// given; see ResolveLimits.
func LimitMiddleware(l Limits) tool.ModelMiddleware {
	return newLimiter(func(*tool.ModelCall) Limits { return l }).middleware
}

type limiter struct {
	limits func(*tool.ModelCall) Limits

	mu      sync.Mutex
	allowed map[string]int // guarded by mu: task calls let through, per run id
}

func newLimiter(limits func(*tool.ModelCall) Limits) *limiter {
	return &limiter{limits: limits, allowed: map[string]int{}}
}

// maxTrackedRuns bounds the per-run counters of a long-lived limiter.
const maxTrackedRuns = 1024

func (l *limiter) middleware(next tool.ModelHandler) tool.ModelHandler {
	return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
		resp, err := next(ctx, call)
		if err != nil || resp == nil {
			return resp, err
		}
		calls := resp.Message.ToolCalls
		tasks := 0
		for _, tc := range calls {
			if tc.Name == builtin.TaskName {
				tasks++
			}
		}
		if tasks == 0 {
			return resp, nil
		}
		lim := l.limits(call)
		if call.RunID == "" {
			call.Log().Warn("subagent limit: the run has no id; counting every delegation of the thread")
		}
		ledger := countDelegations(call.State, call.RunID)
		l.mu.Lock()
		prior := max(ledger, l.allowed[call.RunID])
		allowed := min(lim.MaxConcurrent, max(0, lim.MaxTotal-prior))
		kept := min(tasks, allowed)
		if len(l.allowed) >= maxTrackedRuns {
			clear(l.allowed)
		}
		l.allowed[call.RunID] = prior + kept
		l.mu.Unlock()
		if tasks <= allowed {
			return resp, nil
		}
		out := make([]model.ToolCall, 0, len(calls)-tasks+kept)
		seen := 0
		for _, tc := range calls {
			if tc.Name == builtin.TaskName {
				seen++
				if seen > kept {
					continue
				}
			}
			out = append(out, tc)
		}
		call.Log().Warn("truncated excess task calls", "dropped", tasks-kept, "max_concurrent", lim.MaxConcurrent,
			"max_total", lim.MaxTotal, "prior_delegations", prior)
		r := *resp
		r.Message.ToolCalls = out
		// The run's budget is used up (not merely this response's cap):
		// tell the model, even when other tool calls go ahead (DeerFlow
		// subagents/executor.py).
		if prior+kept >= lim.MaxTotal {
			if r.Message.Content != "" {
				r.Message.Content += "\n\n"
			}
			r.Message.Content += limitNotice
			meta := make(map[string]any, len(r.Message.Meta)+1)
			for k, v := range r.Message.Meta {
				meta[k] = v
			}
			meta["stop_reason"] = StopSubagentLimitCapped
			r.Message.Meta = meta
		}
		return &r, nil
	}
}

// countDelegations counts the distinct delegation ids of the run (of the
// whole thread when runID is "").
func countDelegations(s *thread.State, runID string) int {
	if s == nil {
		return 0
	}
	ids := map[string]bool{}
	for _, d := range s.Delegations {
		if d.ID == "" || (runID != "" && d.RunID != runID) {
			continue
		}
		ids[d.ID] = true
	}
	return len(ids)
}

// contextInt reads an integer from the runtime context (0 when absent).
func contextInt(c map[string]any, key string) int {
	switch v := c[key].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}
