package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/antlerhq/antler/config"
)

// Limits of a suggestions request (Antler's): the messages and the
// characters of the conversation passed to the model, the newest kept.
const (
	suggestionsMaxMessages = 50
	suggestionsMaxChars    = 32_000
	// defaultSuggestionsN is n when the request has none (DeerFlow's).
	defaultSuggestionsN = 3
)

// suggestionsConfig is GET /api/suggestions/config: the suggestions
// section as set.
func (s *Server) suggestionsConfig(w http.ResponseWriter, _ *http.Request, _ *principal) {
	writeJSON(w, http.StatusOK, map[string]any{"enabled": s.cfg.Suggestions.Enabled,
		"max_suggestions": s.cfg.Suggestions.MaxSuggestions})
}

type suggestionMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type suggestionsRequest struct {
	Messages  []suggestionMessage `json:"messages"`
	N         *int                `json:"n"`
	ModelName string              `json:"model_name"`
}

// suggestions is POST /api/threads/{tid}/suggestions (DeerFlow's
// suggestions router): up to n short follow-up questions the user might
// ask next, from the recent messages the frontend sends, written by the
// model the request names or the default one. Off, without messages,
// and when the model fails or answers no JSON list, the answer is an
// empty list, as DeerFlow's; the frontend ignores errors anyway.
func (s *Server) suggestions(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	var req suggestionsRequest
	if !s.decodeJSON(w, r, &req) {
		return
	}
	if req.Messages == nil {
		writeError(w, http.StatusUnprocessableEntity, "messages: field required")
		return
	}
	n := defaultSuggestionsN
	if req.N != nil {
		if *req.N < 1 || *req.N > config.MaxSuggestionsLimit {
			writeError(w, http.StatusUnprocessableEntity, "n: must be between 1 and %d, got %d", config.MaxSuggestionsLimit, *req.N)
			return
		}
		n = *req.N
	}
	none := map[string]any{"suggestions": []string{}}
	if !s.cfg.Suggestions.Enabled {
		writeJSON(w, http.StatusOK, none)
		return
	}
	n = min(n, s.cfg.Suggestions.MaxSuggestions)
	conversation := formatConversation(req.Messages)
	if conversation == "" {
		writeJSON(w, http.StatusOK, none)
		return
	}
	if req.ModelName != "" && !s.authz.AllowModel(r.Context(), s.authzPrincipal(u), req.ModelName) {
		s.logger.Warn("suggestions: model not allowed for the caller", "thread_id", th.ID, "model", req.ModelName)
		writeJSON(w, http.StatusOK, none)
		return
	}
	raw, err := s.oneShot(r.Context(), req.ModelName, suggestionsInstruction(n),
		fmt.Sprintf("Conversation so far:\n%s\n\nWrite %d follow-up questions.", conversation, n))
	if err != nil {
		s.logger.Warn("suggestions: the model call failed", "thread_id", th.ID, "err", err)
		writeJSON(w, http.StatusOK, none)
		return
	}
	out := []string{}
	for _, q := range parseStringList(raw) {
		if len(out) == n {
			break
		}
		if q = strings.TrimSpace(strings.ReplaceAll(q, "\n", " ")); q != "" {
			out = append(out, q)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"suggestions": out})
}

// suggestionsInstruction is the system instruction asking for n
// questions as a JSON array (DeerFlow's requirements in Antler's words).
func suggestionsInstruction(n int) string {
	return fmt.Sprintf("You suggest what the user could ask next in this conversation.\n"+
		"From the conversation below, write EXACTLY %d short follow-up questions the user might ask.\n"+
		"Rules:\n"+
		"- Each question follows from the conversation.\n"+
		"- Write them in the user's language.\n"+
		"- Keep each short (about 20 words, or 40 Chinese characters, at most).\n"+
		"- No numbering, no markdown, nothing else.\n"+
		"- Answer with a JSON array of strings and nothing more.\n", n)
}

// formatConversation renders the newest messages as "User: ..." and
// "Assistant: ..." lines (another role keeps its name), within
// suggestionsMaxMessages and suggestionsMaxChars.
func formatConversation(msgs []suggestionMessage) string {
	if len(msgs) > suggestionsMaxMessages {
		msgs = msgs[len(msgs)-suggestionsMaxMessages:]
	}
	lines := make([]string, 0, len(msgs))
	for _, m := range msgs {
		content := strings.TrimSpace(m.Content)
		switch strings.ToLower(strings.TrimSpace(m.Role)) {
		case "user", "human":
			lines = append(lines, "User: "+content)
		case "assistant", "ai":
			lines = append(lines, "Assistant: "+content)
		default:
			lines = append(lines, m.Role+": "+content)
		}
	}
	text := strings.TrimSpace(strings.Join(lines, "\n"))
	if len(text) > suggestionsMaxChars {
		text = strings.ToValidUTF8(text[len(text)-suggestionsMaxChars:], "")
	}
	return text
}

// parseStringList reads the JSON array of strings in a model's answer:
// think blocks and a code fence removed, then from the first [ to the
// last ]. Items that are not strings, and blank ones, are dropped; an
// answer without such an array gives none.
func parseStringList(text string) []string {
	c := stripCodeFence(stripThinkBlocks(text, true))
	start, end := strings.Index(c, "["), strings.LastIndex(c, "]")
	if start < 0 || end <= start {
		return nil
	}
	var items []any
	if err := json.Unmarshal([]byte(c[start:end+1]), &items); err != nil {
		return nil
	}
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}
