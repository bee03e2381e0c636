package memory

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/antlerhq/antler/internal/tmpl"
	"github.com/antlerhq/antler/model"
)

//go:embed update_prompt.md
var updatePromptText string

var updatePrompt = tmpl.MustParse("memory update", updatePromptText)

// Bounds of what one extraction reads and writes.
const (
	// maxConversationMessages is how many of the latest user and
	// assistant messages an extraction reads.
	maxConversationMessages = 24
	// maxMessageRunes cuts each message of the conversation.
	maxMessageRunes = 4000
	// maxNewFactsPerUpdate bounds the facts one answer may add.
	maxNewFactsPerUpdate = 20
	// maxAnswerBytes bounds the extraction model's answer.
	maxAnswerBytes = 256 << 10
)

// conversation keeps the user and assistant text messages of a turn
// (tool calls and results, and hidden messages, are left out), the
// latest maxConversationMessages, each cut; nil when there is no user
// message with an answer.
func conversation(msgs []model.Message) []model.Message {
	var out []model.Message
	hasUser, hasAnswer := false, false
	for _, msg := range msgs {
		if strings.TrimSpace(msg.Content) == "" || (msg.Role != model.RoleUser && msg.Role != model.RoleAssistant) {
			continue
		}
		if hidden, _ := msg.Meta["hide_from_ui"].(bool); hidden {
			continue
		}
		hasUser = hasUser || msg.Role == model.RoleUser
		hasAnswer = hasAnswer || msg.Role == model.RoleAssistant
		out = append(out, model.Message{Role: msg.Role, Content: cut(msg.Content, maxMessageRunes)})
	}
	if !hasUser || !hasAnswer {
		return nil
	}
	if len(out) > maxConversationMessages {
		out = out[len(out)-maxConversationMessages:]
	}
	return out
}

// process runs one extraction. A failure is logged and the turn dropped;
// the stored document is only replaced by a successful update.
func (m *Manager) process(ctx context.Context, it *item) {
	cur, err := m.storage.Load(ctx, it.userID)
	if err != nil {
		m.logger.Warn("memory: extraction skipped: cannot read the document", "user", it.userID, "err", err)
		return
	}
	stale := m.staleCandidates(cur)
	prompt, err := m.renderUpdatePrompt(cur, stale, it.msgs)
	if err != nil {
		m.logger.Error("memory: extraction prompt", "err", err)
		return
	}
	cctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	resp, err := model.Collect(cctx, m.model, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: prompt}}}, nil)
	if err != nil {
		m.logger.Warn("memory: extraction model call failed; memory unchanged", "user", it.userID, "thread", it.threadID, "err", err)
		return
	}
	up, err := parseUpdate(resp.Message.Content)
	if err != nil {
		m.logger.Warn("memory: extraction answer unusable; memory unchanged", "user", it.userID, "thread", it.threadID, "err", err)
		return
	}
	staleIDs := make(map[string]bool, len(stale))
	for _, f := range stale {
		staleIDs[f.ID] = true
	}
	if _, err := m.modify(ctx, it.userID, func(d *Document) error {
		m.apply(d, up, it.threadID, staleIDs)
		return nil
	}); err != nil {
		m.logger.Warn("memory: extraction not saved; memory unchanged", "user", it.userID, "err", err)
	}
}

func (m *Manager) renderUpdatePrompt(d *Document, stale []Fact, conv []model.Message) (string, error) {
	cur, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return "", err
	}
	var lines []string
	for _, msg := range conv {
		who := "User"
		if msg.Role == model.RoleAssistant {
			who = "Assistant"
		}
		lines = append(lines, who+": "+msg.Content)
	}
	var staleText []string
	for _, f := range stale {
		staleText = append(staleText, fmt.Sprintf("- %s [%s, created %s]: %s", f.ID, f.Category, f.CreatedAt, f.Content))
	}
	var b strings.Builder
	err = updatePrompt.Execute(&b, map[string]any{
		"Memory": string(cur), "Conversation": strings.Join(lines, "\n\n"),
		"Stale": strings.Join(staleText, "\n"), "MaxRemovals": m.b.StalenessMaxRemovals,
	})
	return b.String(), err
}

// labels are the write gate's labels of a fact or summary.
type labels struct {
	Scope      string `json:"scope"`
	Durability string `json:"durability"`
	Authority  string `json:"authority"`
}

// storable is the write gate: only what is labelled otherwise is
// refused (a missing label passes).
func (l labels) storable() bool {
	return (l.Scope == "" || l.Scope == "user") && (l.Durability == "" || l.Durability == "durable") &&
		l.Authority != "transactional"
}

type sectionUpdate struct {
	Summary      string `json:"summary"`
	ShouldUpdate bool   `json:"shouldUpdate"`
	labels
}

type newFact struct {
	Content           string  `json:"content"`
	Category          string  `json:"category"`
	Confidence        float64 `json:"confidence"`
	ExpectedValidDays float64 `json:"expected_valid_days"`
	SourceError       string  `json:"sourceError"`
	labels
}

type idRef struct {
	ID           string  `json:"id"`
	Scope        string  `json:"scope"`
	ExtendByDays float64 `json:"extend_by_days"`
}

// update is the extraction model's answer.
type update struct {
	User               map[string]sectionUpdate `json:"user"`
	History            map[string]sectionUpdate `json:"history"`
	NewFacts           []newFact                `json:"newFacts"`
	FactsToRemove      []idRef                  `json:"factsToRemove"`
	StaleFactsToRemove []idRef                  `json:"staleFactsToRemove"`
	StaleFactsToExtend []idRef                  `json:"staleFactsToExtend"`
}

// parseUpdate reads the answer: one JSON object, possibly in a Markdown
// fence or after some prose.
func parseUpdate(text string) (*update, error) {
	if len(text) > maxAnswerBytes {
		return nil, fmt.Errorf("answer of %d bytes (at most %d)", len(text), maxAnswerBytes)
	}
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return nil, fmt.Errorf("no JSON object in the answer")
	}
	var up update
	if err := json.Unmarshal([]byte(text[start:end+1]), &up); err != nil {
		return nil, fmt.Errorf("answer is not the update object: %w", err)
	}
	return &up, nil
}

// apply merges an update into d: summaries, removals, new facts (the
// write gate, the confidence threshold, duplicates), the staleness
// verdicts (on the reviewed facts only, bounded), then max_facts.
func (m *Manager) apply(d *Document, up *update, threadID string, stale map[string]bool) {
	now := m.now()
	for _, sec := range d.sections() {
		part, key, _ := strings.Cut(sec.key, ".")
		src := up.User
		if part == "history" {
			src = up.History
		}
		if u, ok := src[key]; ok && u.ShouldUpdate && u.storable() && strings.TrimSpace(u.Summary) != "" {
			*sec.s = Section{Summary: cut(strings.TrimSpace(u.Summary), MaxSummaryRunes), UpdatedAt: stamp(now)}
		}
	}
	remove := map[string]bool{}
	for _, r := range up.FactsToRemove {
		if r.Scope == "" || r.Scope == "user" {
			remove[r.ID] = true
		}
	}
	removed := 0
	for _, r := range up.StaleFactsToRemove {
		if stale[r.ID] && removed < m.b.StalenessMaxRemovals {
			remove[r.ID], removed = true, removed+1
		}
	}
	d.Facts = slices.DeleteFunc(d.Facts, func(f Fact) bool { return remove[f.ID] })
	for _, r := range up.StaleFactsToExtend {
		if i := slices.IndexFunc(d.Facts, func(f Fact) bool { return f.ID == r.ID }); i >= 0 && stale[r.ID] && r.ExtendByDays > 0 {
			age := int(now.Sub(parseStamp(d.Facts[i].CreatedAt)).Hours() / 24)
			d.Facts[i].ExpectedValidDays = min(age+int(r.ExtendByDays), m.b.StalenessMaxExtensionDays)
		}
	}
	m.addFacts(d, up.NewFacts, threadID, now)
	m.evict(d)
}

// addFacts adds the storable new facts at or over the confidence
// threshold; a duplicate raises the stored fact's confidence instead.
func (m *Manager) addFacts(d *Document, facts []newFact, threadID string, now time.Time) {
	lifetime := int(float64(m.b.StalenessAgeDays) * m.b.StalenessMaxLifetimeMult)
	for i, nf := range facts {
		if i >= maxNewFactsPerUpdate {
			break
		}
		if !nf.storable() || nf.Confidence < m.b.FactConfidenceThreshold {
			continue
		}
		f := Fact{Content: cut(strings.TrimSpace(nf.Content), MaxFactRunes), Category: nf.Category, Confidence: nf.Confidence,
			SourceError: cut(strings.TrimSpace(nf.SourceError), MaxFactRunes)}
		if f.Category != "correction" {
			f.SourceError = ""
		}
		if checkFact(&f, "newFacts") != nil {
			continue
		}
		key := contentKey(f.Content)
		if j := slices.IndexFunc(d.Facts, func(g Fact) bool { return contentKey(g.Content) == key }); j >= 0 {
			d.Facts[j].Confidence = max(d.Facts[j].Confidence, f.Confidence)
			continue
		}
		f.ID, f.CreatedAt, f.Source = newFactID(), stamp(now), threadID
		if nf.ExpectedValidDays > 0 {
			f.ExpectedValidDays = min(int(nf.ExpectedValidDays), max(lifetime, 1))
		}
		d.Facts = append(d.Facts, f)
	}
}

// staleCandidates are the facts due for the staleness review: older than
// their expected lifetime (staleness_age_days without one), outside the
// protected categories; none unless there are staleness_min_candidates.
func (m *Manager) staleCandidates(d *Document) []Fact {
	b := m.b
	if !b.StalenessReviewEnabled {
		return nil
	}
	now := m.now()
	var out []Fact
	for _, f := range d.Facts {
		if slices.Contains(b.StalenessProtected, f.Category) {
			continue
		}
		created := parseStamp(f.CreatedAt)
		if created.IsZero() {
			continue
		}
		days := f.ExpectedValidDays
		if days <= 0 {
			days = b.StalenessAgeDays
		}
		if now.Sub(created) >= time.Duration(days)*24*time.Hour {
			out = append(out, f)
		}
	}
	if len(out) < max(b.StalenessMinCandidates, 1) {
		return nil
	}
	return out
}
