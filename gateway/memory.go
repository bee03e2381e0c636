package gateway

import (
	"errors"
	"net/http"
	"strings"

	"github.com/antlerhq/antler/memory"
	"github.com/antlerhq/antler/model"
)

// The memory routes (DeerFlow's gateway/routers/memory.py): the caller's
// own memory document, in DeerFlow's shapes. Every route answers the
// whole document after the change, as DeerFlow's do.

// memoryManager answers 501 when the gateway has no memory.
func (s *Server) memoryManager(w http.ResponseWriter) *memory.Manager {
	if s.opts.Memory == nil {
		writeError(w, http.StatusNotImplemented, "Memory is not configured on this server.")
		return nil
	}
	return s.opts.Memory
}

// writeMemory answers a memory operation's document or its error.
func (s *Server) writeMemory(w http.ResponseWriter, doc *memory.Document, err error, op, factID string) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, doc)
	case errors.Is(err, memory.ErrNotFound):
		writeError(w, http.StatusNotFound, "Memory fact '%s' not found.", factID)
	case errors.Is(err, memory.ErrDuplicate):
		writeError(w, http.StatusConflict, "A fact with the same content already exists.")
	case errors.Is(err, memory.ErrCapacity):
		writeError(w, http.StatusConflict, "Fact was not stored because the configured memory.max_facts capacity policy evicted it")
	case errors.Is(err, memory.ErrInvalid):
		writeError(w, http.StatusBadRequest, "%s", invalidDetail(err))
	case errors.Is(err, memory.ErrUnsupported):
		writeError(w, http.StatusNotImplemented, "Operation '%s' not supported by memory backend 'noop'.", op)
	default:
		s.logger.Error("memory operation failed", "op", op, "err", err)
		writeError(w, http.StatusInternalServerError, "Failed to %s.", op)
	}
}

func (s *Server) getMemory(w http.ResponseWriter, r *http.Request, u *principal) {
	if m := s.memoryManager(w); m != nil {
		doc, err := m.Get(r.Context(), u.ID)
		s.writeMemory(w, doc, err, "get memory", "")
	}
}

func (s *Server) exportMemory(w http.ResponseWriter, r *http.Request, u *principal) {
	if m := s.memoryManager(w); m != nil {
		doc, err := m.Get(r.Context(), u.ID)
		s.writeMemory(w, doc, err, "export memory", "")
	}
}

func (s *Server) clearMemory(w http.ResponseWriter, r *http.Request, u *principal) {
	if m := s.memoryManager(w); m != nil {
		doc, err := m.Clear(r.Context(), u.ID)
		s.writeMemory(w, doc, err, "clear memory", "")
	}
}

func (s *Server) importMemory(w http.ResponseWriter, r *http.Request, u *principal) {
	m := s.memoryManager(w)
	if m == nil {
		return
	}
	in := memory.NewDocument()
	if !s.decodeJSON(w, r, in) {
		return
	}
	doc, err := m.Import(r.Context(), u.ID, in)
	s.writeMemory(w, doc, err, "import memory", "")
}

// invalidDetail is the 400 text of a refused fact: DeerFlow's texts for
// an empty content and a confidence out of range, the field-naming error
// otherwise (an import names the fact, facts[i]).
func invalidDetail(err error) string {
	msg := err.Error()
	switch {
	case strings.HasSuffix(msg, ": fact.content is empty"):
		return "Memory fact content cannot be empty."
	case strings.Contains(msg, ": fact.confidence must be"):
		return "Invalid confidence value; must be between 0 and 1."
	}
	return msg
}

// factBody is the body of POST and PATCH /api/memory/facts; a field
// left out of a PATCH keeps its value.
type factBody struct {
	Content    *string  `json:"content"`
	Category   *string  `json:"category"`
	Confidence *float64 `json:"confidence"`
}

// check refuses what DeerFlow's request models refuse with 422 before
// the handler runs: a content of length 0 (POST needs one) and a
// confidence outside 0..1. A content of spaces passes here and is the
// manager's 400, as in DeerFlow.
func (b *factBody) check(w http.ResponseWriter, create bool) bool {
	switch {
	case create && b.Content == nil:
		writeError(w, http.StatusUnprocessableEntity, "Field 'content' is required.")
	case b.Content != nil && *b.Content == "":
		writeError(w, http.StatusUnprocessableEntity, "Field 'content' should have at least 1 character.")
	case b.Confidence != nil && (*b.Confidence < 0 || *b.Confidence > 1):
		writeError(w, http.StatusUnprocessableEntity, "Field 'confidence' should be between 0 and 1.")
	default:
		return true
	}
	return false
}

func (s *Server) createMemoryFact(w http.ResponseWriter, r *http.Request, u *principal) {
	m := s.memoryManager(w)
	if m == nil {
		return
	}
	var b factBody
	if !s.decodeJSON(w, r, &b) || !b.check(w, true) {
		return
	}
	in := memory.FactInput{Content: *b.Content, Category: "context", Confidence: 0.5}
	if b.Category != nil {
		in.Category = *b.Category
	}
	if b.Confidence != nil {
		in.Confidence = *b.Confidence
	}
	doc, _, err := m.CreateFact(r.Context(), u.ID, in)
	s.writeMemory(w, doc, err, "create memory fact", "")
}

func (s *Server) patchMemoryFact(w http.ResponseWriter, r *http.Request, u *principal) {
	m := s.memoryManager(w)
	if m == nil {
		return
	}
	var b factBody
	if !s.decodeJSON(w, r, &b) || !b.check(w, false) {
		return
	}
	id := r.PathValue("id")
	doc, err := m.UpdateFact(r.Context(), u.ID, id, memory.FactPatch{Content: b.Content, Category: b.Category, Confidence: b.Confidence})
	s.writeMemory(w, doc, err, "update memory fact", id)
}

func (s *Server) deleteMemoryFact(w http.ResponseWriter, r *http.Request, u *principal) {
	if m := s.memoryManager(w); m != nil {
		id := r.PathValue("id")
		doc, err := m.DeleteFact(r.Context(), u.ID, id)
		s.writeMemory(w, doc, err, "delete memory fact", id)
	}
}

// userQuery is the text of the run's last user message, which ranks the
// memory facts of the prompt.
func userQuery(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}
