package gateway

import (
	"errors"
	"math"
	"net/http"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/store"
)

// tokenUsageStatuses are the run statuses a thread's token usage sums:
// DeerFlow's success and error, with Antler's interrupted (a run that
// stopped to ask for clarification, which DeerFlow ends as success).
// Cancelled runs (DeerFlow's interrupted) and runs still going are left
// out, as DeerFlow leaves them out.
var tokenUsageStatuses = map[string]bool{store.RunSuccess: true, store.RunError: true, store.RunInterrupted: true}

// modelTokens is one model's entry of by_model.
type modelTokens struct {
	Tokens int64 `json:"tokens"`
	// Runs counts the runs the model appeared in.
	Runs int `json:"runs"`
}

// threadTokenUsage is GET /api/threads/{tid}/token-usage: the token usage
// the thread's finished runs recorded (DeerFlow's aggregate_tokens_by_thread)
// and the approximate size of its current messages against the context
// window of the model its latest run used (context_usage, null when the
// state cannot be read). Another user's thread is 404, like a missing one.
func (s *Server) threadTokenUsage(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	runs, err := s.store.ListRuns(r.Context(), th.ID)
	if err != nil {
		s.internal(w, "cannot list runs", err)
		return
	}
	var total store.RunUsage
	totalRuns := 0
	byModel := map[string]*modelTokens{}
	addModel := func(name string, tokens int64) {
		e := byModel[name]
		if e == nil {
			e = &modelTokens{}
			byModel[name] = e
		}
		e.Tokens += tokens
		e.Runs++
	}
	for _, run := range runs {
		if !tokenUsageStatuses[run.Status] {
			continue
		}
		totalRuns++
		ru := run.Usage
		if ru == nil {
			ru = &store.RunUsage{} // ended before usage was recorded
		}
		total.InputTokens += ru.InputTokens
		total.OutputTokens += ru.OutputTokens
		total.TotalTokens += ru.TotalTokens
		total.LeadAgentTokens += ru.LeadAgentTokens
		total.SubagentTokens += ru.SubagentTokens
		total.MiddlewareTokens += ru.MiddlewareTokens
		if len(ru.ByModel) == 0 {
			// DeerFlow's fallback: the whole run on its model.
			name := ru.ModelName
			if name == "" {
				name = store.UnknownModel
			}
			addModel(name, ru.TotalTokens)
			continue
		}
		for name, mu := range ru.ByModel {
			addModel(name, mu.TotalTokens)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"thread_id":           th.ID,
		"total_tokens":        total.TotalTokens,
		"total_input_tokens":  total.InputTokens,
		"total_output_tokens": total.OutputTokens,
		"total_runs":          totalRuns,
		"by_model":            byModel,
		"by_caller": map[string]int64{
			store.CallerLeadAgent:  total.LeadAgentTokens,
			store.CallerSubagent:   total.SubagentTokens,
			store.CallerMiddleware: total.MiddlewareTokens,
		},
		"context_usage": s.contextUsage(r, th.ID, runs),
	})
}

// contextUsage is {token_count, max_context_tokens, percentage}: the
// approximate tokens of the thread's latest messages (the count
// summarization uses) against the context_window of the latest run's
// model, else of the default model; max_context_tokens and percentage are
// null when the model sets no context_window. nil when the state cannot
// be read.
func (s *Server) contextUsage(r *http.Request, threadID string, runs []*store.Run) map[string]any {
	count := 0
	cp, err := s.store.LatestCheckpoint(r.Context(), threadID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		s.logger.Warn("cannot read the thread state for its context usage", "thread_id", threadID, "err", err)
		return nil
	case cp.State != nil:
		count = agent.ApproxTokens(cp.State.Messages)
	}
	modelName := ""
	for _, run := range runs { // newest first
		if run.Usage != nil && run.Usage.ModelName != "" {
			modelName = run.Usage.ModelName
			break
		}
	}
	m, ok := s.cfg.Model(modelName)
	if !ok {
		m, ok = s.cfg.DefaultModel()
	}
	out := map[string]any{"token_count": count, "max_context_tokens": nil, "percentage": nil}
	if ok {
		if window := m.ContextWindow(); window > 0 {
			out["max_context_tokens"] = window
			out["percentage"] = math.Round(float64(count)/float64(window)*1000) / 10
		}
	}
	return out
}
