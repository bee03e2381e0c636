package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// The texts of the token budget, as DeerFlow has them (its frontend and
// its prompts rely on the bracketed prefixes).
const (
	tokenBudgetWarningText  = "[TOKEN BUDGET WARNING] You have used %s of your %s %s token budget (%.0f%%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary."
	tokenBudgetExceededText = "[TOKEN BUDGET EXCEEDED] The %s token usage (%s) has exceeded the safety limit (%s). Producing final answer with results collected so far."
	// TokenBudgetWarningName names the user message that carries the
	// warning (DeerFlow's budget_warning).
	TokenBudgetWarningName = "budget_warning"
)

// TokenBudget is DeerFlow's TokenBudgetMiddleware: it adds up the usage
// the model responses of one run report (input, output and their sum)
// and compares the highest fraction of its limits (the total, and the
// input and output limits when set) with two thresholds. At the warning
// threshold, once per run, the next request carries a user message named
// budget_warning (the state is never changed, so a response's tool calls
// keep their results next to them). At the hard-stop threshold the
// response's tool calls are dropped and the exceeded text is appended to
// its content, so that it becomes the final answer; the run stops with
// StopTokenCapped. It never fails a run.
//
// A TokenBudget counts one run at a time: a call with another run id
// starts a new count, so it holds no state for past runs. Build one per
// agent (NewTokenBudget); it is safe for concurrent use.
type TokenBudget struct {
	cfg config.TokenBudget

	mu      sync.Mutex
	runID   string      // guarded by mu: the run being counted
	used    model.Usage // guarded by mu: TotalTokens is input + output
	pending string      // guarded by mu: the warning for the next request
	warned  bool        // guarded by mu
	capped  bool        // guarded by mu
}

// NewTokenBudget returns the budget cfg describes; a disabled cfg makes a
// middleware that passes every call through.
func NewTokenBudget(cfg config.TokenBudget) *TokenBudget { return &TokenBudget{cfg: cfg} }

// Capped reports whether the hard stop fired in the run counted last
// (DeerFlow's consume_stop_reason, without the consuming: the budget
// belongs to one agent).
func (b *TokenBudget) Capped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.capped
}

// Middleware returns the model middleware.
func (b *TokenBudget) Middleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if !b.cfg.Enabled {
				return next(ctx, call)
			}
			if warning := b.drain(call.RunID); warning != "" {
				c := *call
				req := call.Request.Clone()
				req.Messages = append(req.Messages, model.Message{Role: model.RoleUser,
					Name: TokenBudgetWarningName, Content: warning})
				c.Request = req
				call = &c
			}
			resp, err := next(ctx, call)
			if err != nil || resp == nil {
				return resp, err
			}
			stop := b.count(call, resp.Usage)
			if stop == "" {
				return resp, nil
			}
			return hardStop(resp, stop), nil
		}
	}
}

// drain starts the count when runID is a new run and returns the queued
// warning, if any.
func (b *TokenBudget) drain(runID string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if runID != b.runID {
		b.runID, b.used, b.pending, b.warned, b.capped = runID, model.Usage{}, "", false, false
	}
	w := b.pending
	b.pending = ""
	return w
}

// count adds a response's usage and returns the exceeded text when the
// hard stop fires; it queues the warning when the warning threshold is
// reached for the first time.
func (b *TokenBudget) count(call *tool.ModelCall, u model.Usage) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	in, out := max(u.InputTokens, 0), max(u.OutputTokens, 0)
	b.used.InputTokens += in
	b.used.OutputTokens += out
	b.used.TotalTokens += in + out
	if b.used.TotalTokens <= 0 {
		return ""
	}
	frac, reason, used, limit := b.highest()
	switch {
	case frac >= b.cfg.HardStopThreshold:
		b.capped = true
		if call.Logger != nil {
			call.Logger.Warn("token budget hard stop", "run_id", call.RunID, "limit", reason, "used", used, "budget", limit)
		}
		return fmt.Sprintf(tokenBudgetExceededText, reason, thousands(used), thousands(int64(limit)))
	case frac >= b.cfg.WarnThreshold && !b.warned:
		b.warned = true
		b.pending = fmt.Sprintf(tokenBudgetWarningText, thousands(used), thousands(int64(limit)), reason, frac*100)
		if call.Logger != nil {
			call.Logger.Info("token budget warning", "run_id", call.RunID, "limit", reason, "percent", frac*100)
		}
	}
	return ""
}

// highest returns the highest fraction of the limits, with the limit's
// name ("total", "input" or "output"), its usage and the limit; the first
// listed wins a tie, as in DeerFlow.
func (b *TokenBudget) highest() (frac float64, reason string, used int64, limit int) {
	type share struct {
		reason string
		used   int64
		limit  int
	}
	shares := []share{{"total", b.used.TotalTokens, b.cfg.MaxTokens}}
	if b.cfg.MaxInputTokens > 0 {
		shares = append(shares, share{"input", b.used.InputTokens, b.cfg.MaxInputTokens})
	}
	if b.cfg.MaxOutputTokens > 0 {
		shares = append(shares, share{"output", b.used.OutputTokens, b.cfg.MaxOutputTokens})
	}
	for _, s := range shares {
		if s.limit <= 0 {
			continue
		}
		if f := float64(s.used) / float64(s.limit); f > frac {
			frac, reason, used, limit = f, s.reason, s.used, s.limit
		}
	}
	return frac, reason, used, limit
}

// hardStop returns resp without its tool calls, text appended to its
// content, and the stop reason token_capped on its message.
func hardStop(resp *model.Response, text string) *model.Response {
	// DeerFlow separates the text from an empty content too.
	return capped(resp, resp.Message.Content+"\n\n"+text, StopTokenCapped, nil)
}

// thousands formats n with comma thousands separators (Python's "{:,}").
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
