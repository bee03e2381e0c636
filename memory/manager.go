package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/model"
)

// Errors of the Manager's operations (wrapped, with the field or id).
var (
	// ErrInvalid is bad input: an empty or too long fact, a confidence
	// out of range, a document over its limits.
	ErrInvalid = errors.New("invalid memory input")
	// ErrNotFound is an unknown fact id.
	ErrNotFound = errors.New("memory fact not found")
	// ErrCapacity is a new fact evicted at once by max_facts.
	ErrCapacity = errors.New("fact was not stored because the configured memory.max_facts capacity policy evicted it")
	// ErrDuplicate is a new fact whose content is already stored.
	ErrDuplicate = errors.New("duplicate fact")
	// ErrUnsupported is an operation of a backend that keeps nothing
	// (manager_class noop).
	ErrUnsupported = errors.New("memory backend noop does not support this operation")
)

// Defaults of Options.
const (
	// DefaultModelTimeout bounds one extraction model call.
	DefaultModelTimeout = 2 * time.Minute
)

// Options configure a Manager. Config is required; every other zero
// value is documented.
type Options struct {
	// Config is the memory section. Required (config.Default has it,
	// off).
	Config config.Memory
	// Home is the data root when backend_config.storage_path is "" (the
	// Antler home); a relative storage_path is taken from it too.
	Home string
	// Storage keeps the documents; nil means a FileStorage under the
	// root (storage_class file). storage_class store needs one.
	Storage Storage
	// Model writes extractions; nil means no extraction (Enqueue drops
	// turns, logged at debug).
	Model model.ChatModel
	// ModelTimeout bounds one extraction call; 0 means 2 minutes.
	ModelTimeout time.Duration
	// Logger receives dropped extractions and write failures; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock of timestamps and the staleness review; nil means
	// time.Now.
	Now func() time.Time
	// SearchCacheUsers bounds the users whose full-text index is kept
	// between searches (least recently used dropped); 0 means
	// DefaultSearchCacheUsers (32). Each index holds at most one
	// document's facts (500).
	SearchCacheUsers int
}

// Manager owns the memory documents of every user. It is safe for
// concurrent use. Close it to drain the extraction queue.
type Manager struct {
	cfg     config.Memory
	b       config.MemoryBackend
	storage Storage
	model   model.ChatModel
	timeout time.Duration
	logger  *slog.Logger
	now     func() time.Time
	queue   *queue
	index   *ftsCache

	mu sync.Mutex // serialises every read-modify-write of a document
}

// New returns a manager for the memory section.
func New(opts Options) (*Manager, error) {
	b := opts.Config.BackendConfig
	m := &Manager{cfg: opts.Config, b: b, storage: opts.Storage, model: opts.Model,
		timeout: cmp.Or(opts.ModelTimeout, DefaultModelTimeout), logger: opts.Logger, now: opts.Now,
		index: newFTSCache(opts.SearchCacheUsers)}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.storage == nil {
		if b.StorageClass == "store" {
			return nil, errors.New("memory: storage_class store needs the database store")
		}
		root := b.StoragePath
		if root == "" || !filepath.IsAbs(root) {
			if opts.Home == "" {
				return nil, errors.New("memory: no home for the memory documents")
			}
			root = filepath.Join(opts.Home, root)
		}
		m.storage = &FileStorage{Root: root, Filename: b.ManifestFilename}
	}
	m.queue = newQueue(m, time.Duration(b.DebounceSeconds)*time.Second, b.QueueMaxDepth)
	return m, nil
}

// Enabled reports whether memory is on (injection, extraction, tools).
func (m *Manager) Enabled() bool { return m != nil && m.cfg.MemoryOn() }

// ToolMode reports whether the model manages memory with the tools.
func (m *Manager) ToolMode() bool { return m.Enabled() && m.cfg.Mode == "tool" }

// Config returns the memory section the manager runs with.
func (m *Manager) Config() config.Memory { return m.cfg }

func (m *Manager) supported() error {
	if m.cfg.ManagerClass == "noop" {
		return ErrUnsupported
	}
	return nil
}

// Get returns a user's document (an empty one for a new user).
func (m *Manager) Get(ctx context.Context, userID string) (*Document, error) {
	if err := m.supported(); err != nil {
		return nil, err
	}
	return m.storage.Load(ctx, userID)
}

// modify runs fn on a copy of a user's document and saves the result,
// serialised with every other write. An error from fn saves nothing.
func (m *Manager) modify(ctx context.Context, userID string, fn func(d *Document) error) (*Document, error) {
	if err := m.supported(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.storage.Load(ctx, userID)
	if err != nil {
		return nil, err
	}
	d := cur.clone()
	if err := fn(d); err != nil {
		return nil, err
	}
	d.LastUpdated = stamp(m.now())
	if err := m.storage.Save(ctx, userID, d); err != nil {
		return nil, err
	}
	return d, nil
}

// Clear replaces a user's document with an empty one.
func (m *Manager) Clear(ctx context.Context, userID string) (*Document, error) {
	return m.modify(ctx, userID, func(d *Document) error {
		*d = *NewDocument()
		return nil
	})
}

// Import replaces a user's document with doc, checked (ErrInvalid names
// the bad field), its facts bounded by max_facts.
func (m *Manager) Import(ctx context.Context, userID string, doc *Document) (*Document, error) {
	in := doc.clone()
	if err := in.check(m.now()); err != nil {
		return nil, err
	}
	return m.modify(ctx, userID, func(d *Document) error {
		*d = *in
		m.evict(d)
		return nil
	})
}

// FactInput is a new fact.
type FactInput struct {
	Content    string
	Category   string
	Confidence float64
	// Source is recorded on the fact; "" means "manual".
	Source string
}

// CreateFact adds a fact and returns the document and the fact's id.
// Content equal to a stored fact's (ignoring case and surrounding space)
// is ErrDuplicate; a fact max_facts evicts at once is ErrCapacity.
func (m *Manager) CreateFact(ctx context.Context, userID string, in FactInput) (*Document, string, error) {
	f := Fact{Content: in.Content, Category: in.Category, Confidence: in.Confidence, Source: cmp.Or(in.Source, "manual")}
	if err := checkFact(&f, "fact"); err != nil {
		return nil, "", err
	}
	f.ID, f.CreatedAt = newFactID(), stamp(m.now())
	d, err := m.modify(ctx, userID, func(d *Document) error {
		key := contentKey(f.Content)
		if slices.ContainsFunc(d.Facts, func(g Fact) bool { return contentKey(g.Content) == key }) {
			return ErrDuplicate
		}
		d.Facts = append(d.Facts, f)
		m.evict(d)
		if !slices.ContainsFunc(d.Facts, func(g Fact) bool { return g.ID == f.ID }) {
			return ErrCapacity
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return d, f.ID, nil
}

// FactPatch changes the fields that are set.
type FactPatch struct {
	Content    *string
	Category   *string
	Confidence *float64
}

// UpdateFact changes a fact's set fields.
func (m *Manager) UpdateFact(ctx context.Context, userID, id string, p FactPatch) (*Document, error) {
	return m.modify(ctx, userID, func(d *Document) error {
		i := slices.IndexFunc(d.Facts, func(f Fact) bool { return f.ID == id })
		if i < 0 {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		f := d.Facts[i]
		if p.Content != nil {
			f.Content = *p.Content
		}
		if p.Category != nil {
			f.Category = *p.Category
		}
		if p.Confidence != nil {
			f.Confidence = *p.Confidence
		}
		if err := checkFact(&f, "fact"); err != nil {
			return err
		}
		f.UpdatedAt = stamp(m.now())
		d.Facts[i] = f
		return nil
	})
}

// DeleteFact removes a fact.
func (m *Manager) DeleteFact(ctx context.Context, userID, id string) (*Document, error) {
	return m.modify(ctx, userID, func(d *Document) error {
		n := len(d.Facts)
		d.Facts = slices.DeleteFunc(d.Facts, func(f Fact) bool { return f.ID == id })
		if len(d.Facts) == n {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return nil
	})
}

// evict drops the lowest-confidence facts (the oldest first among equals)
// until max_facts hold, DeerFlow's confidence policy.
func (m *Manager) evict(d *Document) {
	maxFacts := cmp.Or(m.b.MaxFacts, 100)
	if len(d.Facts) <= maxFacts {
		return
	}
	order := slices.Clone(d.Facts)
	slices.SortStableFunc(order, func(a, b Fact) int {
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return strings.Compare(b.CreatedAt, a.CreatedAt)
	})
	keep := map[string]bool{}
	for _, f := range order[:maxFacts] {
		keep[f.ID] = true
	}
	d.Facts = slices.DeleteFunc(d.Facts, func(f Fact) bool { return !keep[f.ID] })
}

// contentKey is a fact's identity for duplicates.
func contentKey(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Close drains the pending extractions within the section's
// shutdown_flush_timeout_seconds (ctx may end it sooner); what is left
// then is dropped and logged. Enqueue is a no-op afterwards, and the
// search indexes are closed (a search falls back to substring matching).
func (m *Manager) Close(ctx context.Context) error {
	timeout := time.Duration(m.cfg.ShutdownFlushTimeoutSeconds * float64(time.Second))
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer m.index.close()
	return m.queue.close(ctx)
}
