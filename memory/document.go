package memory

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of a document. A document or a field over them is refused
// (import, the routes, the tools) or cut (what the extraction model
// writes).
const (
	// DocumentVersion is the version field of a new document.
	DocumentVersion = "1.0"
	// MaxDocumentBytes bounds a stored or imported document.
	MaxDocumentBytes = 1 << 20
	// MaxFactRunes bounds a fact's content.
	MaxFactRunes = 2000
	// MaxSummaryRunes bounds one summary of the user or history sections.
	MaxSummaryRunes = 4000
	// MaxCategoryRunes bounds a category label.
	MaxCategoryRunes = 64
	// hardMaxFacts bounds the facts of an imported document before the
	// max_facts eviction, whatever the config says.
	hardMaxFacts = 500
)

// Section is one summary of the user or history part, as DeerFlow's
// ContextSection.
type Section struct {
	Summary   string `json:"summary"`
	UpdatedAt string `json:"updatedAt"`
}

// UserContext is the document's user part.
type UserContext struct {
	WorkContext     Section `json:"workContext"`
	PersonalContext Section `json:"personalContext"`
	TopOfMind       Section `json:"topOfMind"`
}

// History is the document's history part.
type History struct {
	RecentMonths       Section `json:"recentMonths"`
	EarlierContext     Section `json:"earlierContext"`
	LongTermBackground Section `json:"longTermBackground"`
}

// Fact is one remembered fact, in DeerFlow's shape.
type Fact struct {
	ID         string  `json:"id"`
	Content    string  `json:"content"`
	Category   string  `json:"category"`
	Confidence float64 `json:"confidence"`
	CreatedAt  string  `json:"createdAt"`
	// Source is the thread the fact came from, "manual" for the routes
	// and the CLI, "tool" for memory_add, "import" for an imported fact
	// without one.
	Source string `json:"source"`
	// SourceError is the mistake a correction fact records, if any.
	SourceError string `json:"sourceError,omitempty"`
	// UpdatedAt is set when the fact was edited.
	UpdatedAt string `json:"updatedAt,omitempty"`
	// ExpectedValidDays is the model's estimate of the fact's lifetime,
	// which the staleness review uses (0: staleness_age_days).
	ExpectedValidDays int `json:"expectedValidDays,omitempty"`
}

// Document is one user's memory, DeerFlow's memory document.
type Document struct {
	Version     string      `json:"version"`
	LastUpdated string      `json:"lastUpdated"`
	User        UserContext `json:"user"`
	History     History     `json:"history"`
	Facts       []Fact      `json:"facts"`
}

// NewDocument returns an empty document.
func NewDocument() *Document {
	return &Document{Version: DocumentVersion, Facts: []Fact{}}
}

// clone returns a deep copy of d.
func (d *Document) clone() *Document {
	c := *d
	c.Facts = append([]Fact(nil), d.Facts...)
	if c.Facts == nil {
		c.Facts = []Fact{}
	}
	return &c
}

// sections lists the document's six summaries with their keys.
func (d *Document) sections() []struct {
	key string
	s   *Section
} {
	return []struct {
		key string
		s   *Section
	}{
		{"user.workContext", &d.User.WorkContext}, {"user.personalContext", &d.User.PersonalContext},
		{"user.topOfMind", &d.User.TopOfMind}, {"history.recentMonths", &d.History.RecentMonths},
		{"history.earlierContext", &d.History.EarlierContext}, {"history.longTermBackground", &d.History.LongTermBackground},
	}
}

// check validates an imported or stored document and fills in what a
// partial document leaves out (version, ids, categories, timestamps). It
// names the first bad field.
func (d *Document) check(now time.Time) error {
	if d.Version == "" {
		d.Version = DocumentVersion
	}
	for _, sec := range d.sections() {
		if n := utf8.RuneCountInString(sec.s.Summary); n > MaxSummaryRunes {
			return fmt.Errorf("%w: %s.summary has %d characters (at most %d)", ErrInvalid, sec.key, n, MaxSummaryRunes)
		}
	}
	if len(d.Facts) > hardMaxFacts {
		return fmt.Errorf("%w: %d facts (at most %d)", ErrInvalid, len(d.Facts), hardMaxFacts)
	}
	if d.Facts == nil {
		d.Facts = []Fact{}
	}
	seen := map[string]bool{}
	for i := range d.Facts {
		f := &d.Facts[i]
		if err := checkFact(f, fmt.Sprintf("facts[%d]", i)); err != nil {
			return err
		}
		if f.ID == "" || seen[f.ID] {
			f.ID = newFactID()
		}
		seen[f.ID] = true
		if f.CreatedAt == "" {
			f.CreatedAt = stamp(now)
		}
		if f.Source == "" {
			f.Source = "import"
		}
	}
	return nil
}

// checkFact validates and normalises one fact's content, category and
// confidence; at names it in the error.
func checkFact(f *Fact, at string) error {
	f.Content = strings.TrimSpace(f.Content)
	switch n := utf8.RuneCountInString(f.Content); {
	case n == 0:
		return fmt.Errorf("%w: %s.content is empty", ErrInvalid, at)
	case n > MaxFactRunes:
		return fmt.Errorf("%w: %s.content has %d characters (at most %d)", ErrInvalid, at, n, MaxFactRunes)
	}
	f.Category = strings.TrimSpace(f.Category)
	if f.Category == "" {
		f.Category = "context"
	}
	if utf8.RuneCountInString(f.Category) > MaxCategoryRunes {
		return fmt.Errorf("%w: %s.category is longer than %d characters", ErrInvalid, at, MaxCategoryRunes)
	}
	if math.IsNaN(f.Confidence) || f.Confidence < 0 || f.Confidence > 1 {
		return fmt.Errorf("%w: %s.confidence must be between 0 and 1, got %v", ErrInvalid, at, f.Confidence)
	}
	return nil
}

// newFactID returns a fresh id in DeerFlow's form, fact_ and 8 hex digits.
func newFactID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "fact_" + hex.EncodeToString(b[:])
}

// stamp formats t as the document's timestamps (UTC ISO 8601).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// parseStamp reads a document timestamp; the zero time when it cannot.
func parseStamp(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// cut shortens s to at most n runes.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
