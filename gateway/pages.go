package gateway

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/store"
)

// Page sizes of GET .../messages/page.
const (
	defaultPageSize = 100
	maxPageSize     = 500
)

// messagesPage is GET /api/threads/{tid}/messages/page[?before_seq=N&limit=L]:
// the visible history (the newest state's messages with the turns
// summarised away put back, see visibleMessages) as rows with seq =
// position + 1, ascending within a page, pages walking backwards. The
// visible history only grows at its end, so seq values are stable.
// has_more is true when older rows exist, and next_before_seq is then the
// first row's seq (null otherwise), as DeerFlow's frontend validates.
func (s *Server) messagesPage(w http.ResponseWriter, r *http.Request, u *principal) {
	th, ok := s.ownThread(w, r, u)
	if !ok {
		return
	}
	limit := min(max(queryInt(r, "limit", defaultPageSize), 1), maxPageSize)
	var msgs []model.Message
	created := ""
	cp, err := s.store.LatestCheckpoint(r.Context(), th.ID)
	switch {
	case err == nil:
		created = isoTime(cp.CreatedAt)
		if msgs, err = s.visibleMessages(r.Context(), cp); err != nil {
			s.internal(w, "cannot read the thread history", err)
			return
		}
	case !errors.Is(err, store.ErrNotFound):
		s.internal(w, "cannot read the thread state", err)
		return
	}
	// The MCP servers' questions waiting for the user (elicit.go).
	msgs = append(msgs, s.pendingCards(th.ID)...)
	end := len(msgs) // exclusive index of the page's last row
	if v := r.URL.Query().Get("before_seq"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusUnprocessableEntity, "before_seq must be a positive integer")
			return
		}
		end = min(n-1, len(msgs))
	}
	start := max(end-limit, 0)
	runs := messageRuns(msgs)
	rows := make([]any, 0, end-start)
	for i := start; i < end; i++ {
		m := msgs[i]
		d := messageDict(m)
		rid := runs[i]
		if rid != "" {
			d["run_id"] = rid
		}
		rows = append(rows, map[string]any{"seq": i + 1, "run_id": nilIfEmpty(rid), "content": d,
			"metadata": map[string]any{"caller": "lead_agent"}, "created_at": created})
	}
	var next any
	hasMore := start > 0
	if hasMore {
		next = start + 1
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": rows, "has_more": hasMore, "next_before_seq": next})
}

// messageRuns returns the run id of each message: the one stamped in its
// metadata (human and assistant messages), else for a tool message the
// run of the assistant message that called it, else the run of the
// message before it.
func messageRuns(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	byCall := map[string]string{}
	prev := ""
	for i, m := range msgs {
		rid, _ := m.Meta["run_id"].(string)
		if rid == "" && m.Role == model.RoleTool {
			rid = byCall[m.ToolCallID]
		}
		if rid == "" {
			rid = prev
		}
		for _, tc := range m.ToolCalls {
			byCall[tc.ID] = rid
		}
		out[i], prev = rid, rid
	}
	return out
}
