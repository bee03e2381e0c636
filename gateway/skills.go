package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/antlerhq/antler/skills"
)

func skillJSON(sk skills.Skill) map[string]any {
	return map[string]any{"name": sk.Name, "description": sk.Description, "license": nilIfEmpty(sk.License),
		"category": string(sk.Category), "enabled": sk.Enabled, "editable": sk.Editable()}
}

// listSkills is GET /api/skills: the public skills and the caller's own
// custom skills, with their enable state.
func (s *Server) listSkills(w http.ResponseWriter, r *http.Request, u *principal) {
	out := []any{}
	if s.opts.Skills != nil {
		list, err := s.opts.Skills.Load(r.Context(), u.ID)
		if err != nil {
			s.internal(w, "cannot list skills", err)
			return
		}
		for _, sk := range list {
			out = append(out, skillJSON(sk))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"skills": out})
}

// getSkill is GET /api/skills/{name}.
func (s *Server) getSkill(w http.ResponseWriter, r *http.Request, u *principal) {
	sk, ok := s.findSkill(w, r, u)
	if ok {
		writeJSON(w, http.StatusOK, skillJSON(sk))
	}
}

func (s *Server) findSkill(w http.ResponseWriter, r *http.Request, u *principal) (skills.Skill, bool) {
	name := r.PathValue("name")
	if s.opts.Skills == nil {
		writeError(w, http.StatusNotFound, "Skill '%s' not found", name)
		return skills.Skill{}, false
	}
	sk, found, err := s.opts.Skills.Get(r.Context(), u.ID, name)
	if err != nil {
		s.internal(w, "cannot read skills", err)
		return skills.Skill{}, false
	}
	if !found {
		writeError(w, http.StatusNotFound, "Skill '%s' not found", name)
		return skills.Skill{}, false
	}
	return sk, true
}

// putSkill is PUT /api/skills/{name} {"enabled": bool}: writes the skills
// map of the extensions file (atomically). A public or legacy skill is
// shared by every user, so only an admin may toggle it; a custom skill
// only its owner (another user's is 404).
func (s *Server) putSkill(w http.ResponseWriter, r *http.Request, u *principal) {
	var body struct {
		Enabled *bool `json:"enabled"`
	}
	if !s.decodeJSON(w, r, &body) {
		return
	}
	if body.Enabled == nil {
		writeError(w, http.StatusUnprocessableEntity, "enabled is required")
		return
	}
	sk, ok := s.findSkill(w, r, u)
	if !ok {
		return
	}
	if sk.Category != skills.CategoryCustom && !u.Admin {
		writeError(w, http.StatusForbidden, "Admin privileges required to change a shared skill.")
		return
	}
	s.extMu.Lock()
	err := s.setSkillEnabled(sk.Name, *body.Enabled)
	s.extMu.Unlock()
	if err != nil {
		s.internal(w, "cannot update the extensions config: "+err.Error(), err)
		return
	}
	sk.Enabled = *body.Enabled
	writeJSON(w, http.StatusOK, skillJSON(sk))
}

func (s *Server) setSkillEnabled(name string, enabled bool) error {
	top, err := s.readExtensions()
	if err != nil {
		return err
	}
	sks, err := rawObject(top, "skills")
	if err != nil {
		return err
	}
	entry := map[string]json.RawMessage{}
	if raw, ok := sks[name]; ok {
		_ = json.Unmarshal(raw, &entry)
	}
	entry["enabled"], _ = json.Marshal(enabled)
	sks[name], _ = json.Marshal(entry)
	top["skills"], _ = json.Marshal(sks)
	return s.writeExtensions(top)
}
