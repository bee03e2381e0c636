package subagent

import (
	"context"
	"fmt"
	"sync"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/tool"
)

// Texts of the token budget (Antler's wording; DeerFlow's middleware is
// not part of the reference).
const (
	budgetWarningText = "[TOKEN BUDGET WARNING] You have used %d of your %d-token budget. Wrap up: finish the essential work and give your final answer soon."
	budgetWarningName = "token_budget_warning"
)

// budget is the token budget of one execution. It counts the usage every
// model response reports; past the warning threshold the next request
// carries a warning, and once the hard limit is reached a response's tool
// calls are dropped so that its text becomes the final answer (stop
// reason token_capped; a capped run without text fails). It never raises.
type budget struct {
	cfg config.TokenBudget

	mu       sync.Mutex
	used     model.Usage // guarded by mu
	warnNext bool        // guarded by mu: the next request gets the warning
	warned   bool        // guarded by mu
	capped   bool        // guarded by mu
}

func newBudget(cfg config.TokenBudget) *budget { return &budget{cfg: cfg} }

// wasCapped reports whether the hard limit stopped the run.
func (b *budget) wasCapped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.capped
}

// over reports whether u has reached the fraction f of the budget's
// limits.
func (b *budget) over(u model.Usage, f float64) bool {
	reach := func(v int64, limit int) bool { return limit > 0 && float64(v) >= f*float64(limit) }
	return reach(u.TotalTokens, b.cfg.MaxTokens) || reach(u.InputTokens, b.cfg.MaxInputTokens) ||
		reach(u.OutputTokens, b.cfg.MaxOutputTokens)
}

func (b *budget) middleware() tool.ModelMiddleware {
	return func(next tool.ModelHandler) tool.ModelHandler {
		return func(ctx context.Context, call *tool.ModelCall) (*model.Response, error) {
			if !b.cfg.Enabled {
				return next(ctx, call)
			}
			b.mu.Lock()
			warn, used := b.warnNext, b.used
			b.warnNext = false
			b.mu.Unlock()
			if warn {
				req := call.Request.Clone()
				m := model.UserText(fmt.Sprintf(budgetWarningText, used.TotalTokens, b.cfg.MaxTokens))
				m.Name = budgetWarningName
				req.Messages = append(req.Messages, m)
				c := *call
				c.Request = req
				call = &c
			}
			resp, err := next(ctx, call)
			if err != nil || resp == nil {
				return resp, err
			}
			hard := b.cfg.HardStopThreshold
			if hard <= 0 {
				hard = 1
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			b.used = b.used.Add(resp.Usage)
			if b.over(b.used, hard) {
				if len(resp.Message.ToolCalls) > 0 {
					r := *resp
					r.Message.ToolCalls = nil
					b.capped = true
					return &r, nil
				}
				return resp, nil
			}
			if !b.warned && b.cfg.WarnThreshold > 0 && b.over(b.used, b.cfg.WarnThreshold) {
				b.warned, b.warnNext = true, true
			}
			return resp, nil
		}
	}
}
