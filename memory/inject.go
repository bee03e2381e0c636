package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Prompt returns the <memory> block of a user's system prompt, "" when
// there is nothing to inject or injection is off. In middleware mode the
// facts are chosen within max_injection_tokens: the guaranteed
// categories (corrections) first, within guaranteed_token_budget, then
// the facts matching query (full-text search; "" matches none), then the
// rest by confidence. In tool mode only the summaries are injected; the
// model searches the facts. A document that cannot be read is an error.
func (m *Manager) Prompt(ctx context.Context, userID, query string) (string, error) {
	if !m.Enabled() || !m.cfg.InjectionEnabled {
		return "", nil
	}
	d, err := m.storage.Load(ctx, userID)
	if err != nil {
		return "", err
	}
	var matched []string
	if !m.ToolMode() && strings.TrimSpace(query) != "" {
		if matched, err = m.matchIDs(ctx, userID, d.Facts, query, "", len(d.Facts)); err != nil {
			m.logger.Warn("memory: full-text ranking failed; facts ranked by confidence", "err", err)
			matched = nil
		}
	}
	body := m.format(d, matched)
	if body == "" {
		return "", nil
	}
	return "<memory>\n" + body + "\n</memory>", nil
}

// escapeMemory keeps stored text from closing the <memory> block.
var escapeMemory = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// format renders DeerFlow's injection text: the user context, the
// history, then the facts, within the token budget.
func (m *Manager) format(d *Document, matched []string) string {
	var parts []string
	summaries := func(title string, items [][2]string) {
		var lines []string
		for _, it := range items {
			if s := strings.TrimSpace(it[1]); s != "" {
				lines = append(lines, "- "+it[0]+": "+escapeMemory.Replace(s))
			}
		}
		if len(lines) > 0 {
			parts = append(parts, title+":\n"+strings.Join(lines, "\n"))
		}
	}
	summaries("User Context", [][2]string{{"Work", d.User.WorkContext.Summary},
		{"Personal", d.User.PersonalContext.Summary}, {"Current Focus", d.User.TopOfMind.Summary}})
	summaries("History", [][2]string{{"Recent", d.History.RecentMonths.Summary},
		{"Earlier", d.History.EarlierContext.Summary}, {"Background", d.History.LongTermBackground.Summary}})
	budget := cmp.Or(m.b.MaxInjectionTokens, 2000) - estimateTokens(strings.Join(parts, "\n\n"))
	if !m.ToolMode() {
		if lines := m.factLines(d.Facts, matched, budget); len(lines) > 0 {
			parts = append(parts, "Facts:\n"+strings.Join(lines, "\n"))
		}
	}
	return strings.Join(parts, "\n\n")
}

// factLine is one fact as injected.
func factLine(f Fact) string {
	line := fmt.Sprintf("- [%s | %.2f] %s", escapeMemory.Replace(f.Category), f.Confidence, escapeMemory.Replace(f.Content))
	if f.SourceError != "" {
		line += " (avoid: " + escapeMemory.Replace(f.SourceError) + ")"
	}
	return line
}

// factLines picks the injected facts: guaranteed categories first within
// their own budget, then the matched facts, then by confidence, each
// while it fits.
func (m *Manager) factLines(facts []Fact, matched []string, budget int) []string {
	budget -= estimateTokens("Facts:\n")
	rank := make(map[string]int, len(matched))
	for i, id := range matched {
		rank[id] = i + 1
	}
	order := slices.Clone(facts)
	slices.SortStableFunc(order, func(a, b Fact) int {
		ra, rb := rank[a.ID], rank[b.ID]
		switch {
		case ra != 0 && rb != 0:
			return cmp.Compare(ra, rb)
		case ra != 0:
			return -1
		case rb != 0:
			return 1
		}
		return cmp.Compare(b.Confidence, a.Confidence)
	})
	var lines []string
	used := map[string]bool{}
	guaranteed := m.b.GuaranteedTokenBudget
	for _, f := range order {
		if !slices.Contains(m.b.GuaranteedCategories, f.Category) {
			continue
		}
		l := factLine(f)
		if n := estimateTokens(l) + 1; n <= guaranteed {
			guaranteed -= n
			lines, used[f.ID] = append(lines, l), true
		}
	}
	for _, f := range order {
		if used[f.ID] {
			continue
		}
		l := factLine(f)
		n := estimateTokens(l) + 1
		if n > budget {
			continue
		}
		budget -= n
		lines = append(lines, l)
	}
	return lines
}

// estimateTokens is the character-based token estimate (DeerFlow's
// "char" counting, used for "tiktoken" too): a CJK character or kana is
// a token, other text four characters a token.
func estimateTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + (other+3)/4
}
