package gateway

import (
	"net/http"
	"strings"
	"unicode/utf8"
)

type inputPolishRequest struct {
	Text     *string `json:"text"`
	Locale   string  `json:"locale"`
	ThreadID string  `json:"thread_id"`
}

// inputPolishInstruction is the system instruction of the rewrite
// (DeerFlow's pre-send prompt optimizer, in Antler's words).
const inputPolishInstruction = "You improve a user's draft message to an AI agent before it is sent.\n" +
	"Rewrite the rough draft into a clearer instruction. Do not carry out the task.\n" +
	"Keep the user's language, intent, names, file paths, URLs, code blocks and any leading slash command exactly as they are.\n" +
	"Where the draft implies them, state the goal, scope, constraints and the output wanted.\n" +
	"Turn vague quality words ('better', 'nice', 'polished') into concrete, general quality criteria.\n" +
	"Add no facts, context, tools, file names, dates, numbers or preferences the draft does not imply.\n" +
	"Prefer one short paragraph or a short bullet list, under 180 words unless the draft is longer.\n" +
	"Answer with the rewritten draft only: no markdown wrapper, no explanation, no alternatives."

// inputPolish is POST /api/input-polish (DeerFlow's input_polish
// router): the draft, trimmed and at most input_polish.max_chars
// characters, rewritten by input_polish.model_name or the default model.
// Nothing is stored and no run starts. Off, it is 404; an empty or too
// long draft is 400; a failed model call or an empty rewrite is 503.
func (s *Server) inputPolish(w http.ResponseWriter, r *http.Request, _ *principal) {
	cfg := s.cfg.InputPolish
	if !cfg.Enabled {
		writeError(w, http.StatusNotFound, "Input polishing is disabled")
		return
	}
	var req inputPolishRequest
	if !s.decodeJSON(w, r, &req) {
		return
	}
	if req.Text == nil {
		writeError(w, http.StatusUnprocessableEntity, "text: field required")
		return
	}
	text := strings.TrimSpace(*req.Text)
	if text == "" {
		writeError(w, http.StatusBadRequest, "Input text is required")
		return
	}
	if utf8.RuneCountInString(text) > cfg.MaxChars {
		writeError(w, http.StatusBadRequest, "Input text exceeds %d characters", cfg.MaxChars)
		return
	}
	locale := strings.TrimSpace(req.Locale)
	if locale == "" {
		locale = "the draft's own language"
	}
	raw, err := s.oneShot(r.Context(), cfg.ModelName, inputPolishInstruction,
		"Locale hint: "+locale+"\n\nRewrite this draft, keeping its intent:\n<draft>\n"+text+"\n</draft>")
	if err != nil {
		s.logger.Warn("input polish: the model call failed", "thread_id", req.ThreadID, "err", err)
		writeError(w, http.StatusServiceUnavailable, "Failed to polish input")
		return
	}
	// A draft may mention a literal <think>: only whole blocks go.
	rewritten := stripCodeFence(stripThinkBlocks(raw, false))
	if rewritten == "" {
		writeError(w, http.StatusServiceUnavailable, "Failed to polish input")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rewritten_text": rewritten, "changed": rewritten != text})
}
