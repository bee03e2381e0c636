package config

// MaxSuggestionsLimit is the largest suggestions.max_suggestions (and
// the largest n a request may ask for), DeerFlow's.
const MaxSuggestionsLimit = 5

// Suggestions is the suggestions section: the follow-up questions the
// frontend asks for after an answer (POST
// /api/threads/{id}/suggestions, DeerFlow's suggestions router).
type Suggestions struct {
	// Enabled turns them on (default true, as DeerFlow's); off, GET
	// /api/suggestions/config says so and the route answers none.
	Enabled bool `yaml:"enabled"`
	// MaxSuggestions caps how many are generated (default 3, 1 to 5).
	MaxSuggestions int `yaml:"max_suggestions"`
}

func defaultSuggestions() Suggestions { return Suggestions{Enabled: true, MaxSuggestions: 3} }

func (p *parser) validateSuggestions() {
	if v := p.cfg.Suggestions.MaxSuggestions; v < 1 || v > MaxSuggestionsLimit {
		p.invalid("suggestions.max_suggestions", "must be between 1 and %d, got %d", MaxSuggestionsLimit, v)
	}
}
