package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/antlerhq/antler/memory"
)

// benchWords make up the benchmark's facts: sentences of 6 to 14 words
// of a 200-word vocabulary, as extracted facts are.
var benchWords = func() []string {
	base := strings.Fields(`user prefers works lives uses likes project team golang python rust typescript
editor neovim vscode tabs spaces morning evening coffee tea berlin lisbon tokyo billing service api database
postgres sqlite kubernetes docker deploy friday release review tests benchmark latency memory cache index
search prompt agent model claude openai gemini deepseek frontend backend gateway config yaml json markdown
concise answers detailed explanations examples code comments english german spanish japanese children dog
cat running cycling music jazz piano books history science math statistics finance startup company acme
manager engineer designer researcher student teacher meeting calendar email slack github gitlab linux mac
windows terminal shell bash zsh vim emacs keyboard layout dvorak qwerty monitor laptop desk office remote
travel flights hotels trains budget savings vegetarian vegan allergies peanuts gym yoga sleep schedule
deadline quarter roadmap goals metrics dashboards alerts oncall incidents postmortem security privacy`)
	return base
}()

// benchFacts returns n facts of a fixed pseudo-random text.
func benchFacts(n int) []memory.Fact {
	r := rand.New(rand.NewPCG(1, 2))
	facts := make([]memory.Fact, n)
	for i := range facts {
		words := make([]string, 6+r.IntN(9))
		for j := range words {
			words[j] = benchWords[r.IntN(len(benchWords))]
		}
		facts[i] = memory.Fact{ID: fmt.Sprintf("fact_%08x", i), Content: strings.Join(words, " "),
			Category: []string{"preference", "context", "knowledge", "goal"}[i%4], Confidence: 0.5 + float64(i%50)/100}
	}
	return facts
}

// BenchmarkPrompt measures the <memory> block of one run (the document
// read, the facts ranked against the user's message, the budget), cold
// (a new manager each time, so the full-text index is built) and warm
// (the index of the unchanged document reused).
//
//	go test -run '^$' -bench 'Prompt|Search' -benchmem ./memory
func BenchmarkPrompt(b *testing.B) {
	for _, n := range []int{100, 500} {
		home := b.TempDir()
		cfg := section(b, fmt.Sprintf("  backend_config:\n    max_facts: %d\n", n))
		setup, err := memory.New(memory.Options{Config: cfg, Home: home})
		if err != nil {
			b.Fatal(err)
		}
		d := memory.NewDocument()
		d.Facts = benchFacts(n)
		if _, err := setup.Import(context.Background(), "u", d); err != nil {
			b.Fatal(err)
		}
		query := "which editor and shell does the user like for golang code review"
		b.Run(fmt.Sprintf("facts=%d/cold", n), func(b *testing.B) {
			for b.Loop() {
				m, _ := memory.New(memory.Options{Config: cfg, Home: home})
				if p, err := m.Prompt(b.Context(), "u", query); err != nil || p == "" {
					b.Fatal(err)
				}
				m.Close(b.Context())
			}
		})
		b.Run(fmt.Sprintf("facts=%d/warm", n), func(b *testing.B) {
			m, _ := memory.New(memory.Options{Config: cfg, Home: home})
			defer m.Close(b.Context())
			for b.Loop() {
				if p, err := m.Prompt(b.Context(), "u", query); err != nil || p == "" {
					b.Fatal(err)
				}
			}
			if _, builds := memory.SearchCacheStats(m); builds != 1 {
				b.Fatalf("%d index builds, want 1", builds)
			}
		})
		b.Run(fmt.Sprintf("facts=%d/search-warm", n), func(b *testing.B) {
			m, _ := memory.New(memory.Options{Config: cfg, Home: home})
			defer m.Close(b.Context())
			for b.Loop() {
				if _, err := m.Search(b.Context(), "u", "neovim terminal", "", 10); err != nil {
					b.Fatal(err)
				}
			}
		})
		setup.Close(context.Background())
	}
}
