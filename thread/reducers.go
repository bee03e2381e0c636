package thread

import (
	"slices"
	"strings"
	"time"

	"github.com/antlerhq/antler/model"
)

// MergeMessages is LangGraph's add_messages: a message whose ID matches
// an existing one replaces it in place; a removal marker deletes the
// message with its ID, or every message for model.RemoveAllID; anything
// else is appended.
func MergeMessages(existing, updates []model.Message) []model.Message {
	out := slices.Clone(existing)
	index := make(map[string]int, len(out))
	for i, m := range out {
		if m.ID != "" {
			index[m.ID] = i
		}
	}
	removed := false
	for _, m := range updates {
		if m.Remove {
			if m.ID == model.RemoveAllID {
				out = out[:0]
				clear(index)
				continue
			}
			if i, ok := index[m.ID]; ok {
				out[i].Remove = true // tombstone, compacted below
				delete(index, m.ID)
				removed = true
			}
			continue
		}
		if m.ID != "" {
			if i, ok := index[m.ID]; ok {
				out[i] = m
				continue
			}
			index[m.ID] = len(out)
		}
		out = append(out, m)
	}
	if removed {
		out = slices.DeleteFunc(out, func(m model.Message) bool { return m.Remove })
	}
	return out
}

// mergeSandbox keeps the existing sandbox when the update is nil or has
// the same id, takes the update when nothing is recorded, and reports a
// conflict when the ids differ.
func mergeSandbox(existing, update *Sandbox) (*Sandbox, error) {
	switch {
	case update == nil:
		return existing, nil
	case existing == nil || existing.SandboxID == "":
		u := *update
		return &u, nil
	case update.SandboxID == "" || update.SandboxID == existing.SandboxID:
		return existing, nil
	default:
		return nil, &SandboxConflictError{Existing: existing.SandboxID, New: update.SandboxID}
	}
}

// mergeArtifacts concatenates and removes duplicates, keeping the order
// in which each path was first seen. A nil update keeps existing.
func mergeArtifacts(existing, update []string) []string {
	if update == nil {
		return existing
	}
	seen := make(map[string]bool, len(existing)+len(update))
	out := make([]string, 0, len(existing)+len(update))
	for _, list := range [][]string{existing, update} {
		for _, a := range list {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// mergeViewedImages merges per key with the update winning. A nil update
// keeps existing; a non-nil empty update clears every entry.
func mergeViewedImages(existing, update map[string]ViewedImage) map[string]ViewedImage {
	if update == nil {
		return existing
	}
	if len(update) == 0 {
		return map[string]ViewedImage{}
	}
	out := make(map[string]ViewedImage, len(existing)+len(update))
	for k, v := range existing {
		out[k] = v
	}
	for k, v := range update {
		out[k] = v
	}
	return out
}

// MergePromoted keeps existing for an empty update; replaces it when the
// catalogue hash differs (or existing is missing or malformed); and
// unions names in first-seen order when the hash is the same.
func MergePromoted(existing, update *Promoted) *Promoted {
	if update == nil || (update.CatalogHash == "" && len(update.Names) == 0) {
		return existing
	}
	if existing == nil || existing.CatalogHash == "" || existing.CatalogHash != update.CatalogHash {
		return &Promoted{CatalogHash: update.CatalogHash, Names: dedupe(nil, update.Names)}
	}
	return &Promoted{CatalogHash: existing.CatalogHash, Names: dedupe(existing.Names, update.Names)}
}

func dedupe(a, b []string) []string {
	seen := make(map[string]bool, len(a)+len(b))
	out := make([]string, 0, len(a)+len(b))
	for _, list := range [][]string{a, b} {
		for _, n := range list {
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// maxDelegations is how many delegation ledger entries a thread keeps.
const maxDelegations = 50

// Delegation is one entry of the task delegation ledger.
type Delegation struct {
	ID          string    `json:"id"`
	RunID       string    `json:"run_id,omitempty"`
	Description string    `json:"description,omitempty"`
	Type        string    `json:"subagent_type,omitempty"`
	Status      string    `json:"status"`
	Result      string    `json:"result,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// isTerminalStatus reports whether a delegation status is final: such an
// entry never goes back to a running state.
func isTerminalStatus(s string) bool {
	switch s {
	case "completed", "failed", "cancelled", "timed_out", "polling_timed_out":
		return true
	}
	return false
}

// mergeDelegations upserts by id in first-seen order. An entry in a
// terminal status is never downgraded to a non-terminal one, the original
// CreatedAt and RunID are kept, and only the maxDelegations most recent
// entries survive.
func mergeDelegations(existing, update []Delegation) []Delegation {
	out := slices.Clone(existing)
	index := make(map[string]int, len(out))
	for i, d := range out {
		index[d.ID] = i
	}
	for _, d := range update {
		i, ok := index[d.ID]
		if !ok {
			index[d.ID] = len(out)
			out = append(out, d)
			continue
		}
		old := out[i]
		if isTerminalStatus(old.Status) && !isTerminalStatus(d.Status) {
			continue
		}
		if !old.CreatedAt.IsZero() {
			d.CreatedAt = old.CreatedAt
		}
		if old.RunID != "" {
			d.RunID = old.RunID
		}
		out[i] = d
	}
	if len(out) > maxDelegations {
		out = slices.Clone(out[len(out)-maxDelegations:])
	}
	return out
}

// maxSkillContext is how many loaded skills a thread remembers.
const maxSkillContext = 8

// maxSkillDescription caps a remembered skill description, in characters.
const maxSkillDescription = 500

// SkillContext records a skill file the agent has read.
type SkillContext struct {
	Name        string    `json:"name"`
	Path        string    `json:"path"`
	Description string    `json:"description,omitempty"`
	LoadedAt    time.Time `json:"loaded_at"`
}

// mergeSkillContext de-duplicates by path (a re-read moves the entry to
// the end), collapses whitespace in descriptions and caps them at 500
// characters, and keeps the maxSkillContext most recent entries.
func mergeSkillContext(existing, update []SkillContext) []SkillContext {
	out := slices.Clone(existing)
	for _, e := range update {
		e.Description = capRunes(strings.Join(strings.Fields(e.Description), " "), maxSkillDescription)
		out = slices.DeleteFunc(out, func(o SkillContext) bool { return o.Path == e.Path })
		out = append(out, e)
	}
	if len(out) > maxSkillContext {
		out = slices.Clone(out[len(out)-maxSkillContext:])
	}
	return out
}

func capRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
