package sandbox

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/thread"
	"github.com/antlerhq/antler/vpath"
)

// Provider hands out sandboxes. Antler implements one provider, the local
// one ([LocalProvider]); the interface lets callers and tests substitute
// their own.
type Provider interface {
	// Acquire returns the sandbox of (user, thread), creating its folders
	// on first use. An invalid id is an error.
	Acquire(ctx context.Context, user, thread string) (*Sandbox, error)
	// Layout returns the virtual path layout the sandboxes use.
	Layout() *vpath.Layout
}

// defaultMaxSandboxes is the size of the local provider's LRU cache.
const defaultMaxSandboxes = 256

// LocalOptions configure [NewLocal]. The zero value is ready to use.
type LocalOptions struct {
	// MaxSandboxes bounds the per-thread sandboxes kept in memory (with
	// their read marks and locks); 0 means 256. An
	// evicted sandbox is recreated on the next Acquire, without marks.
	MaxSandboxes int
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// LocalProvider is DeerFlow's LocalSandboxProvider: sandboxes are plain
// host folders laid out by a vpath.Layout, cached LRU per thread.
// It is safe for concurrent use.
type LocalProvider struct {
	// immutable after NewLocal
	layout *vpath.Layout
	max    int
	logger *slog.Logger

	mu    sync.Mutex
	lru   *list.List               // guarded by mu; front = most recent; values *Sandbox
	byKey map[string]*list.Element // guarded by mu; key = Sandbox.ID
}

// NewLocal returns a local provider over layout.
func NewLocal(layout *vpath.Layout, opts LocalOptions) *LocalProvider {
	p := &LocalProvider{layout: layout, max: opts.MaxSandboxes, logger: opts.Logger,
		lru: list.New(), byKey: map[string]*list.Element{}}
	if p.max <= 0 {
		p.max = defaultMaxSandboxes
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	return p
}

// FromConfig returns the local provider for home and cfg (skills path,
// container path, mounts). A sandbox.use other than the local provider is
// an error: Antler implements only LocalSandboxProvider.
func FromConfig(home string, cfg *config.Config, logger *slog.Logger) (*LocalProvider, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	if use := cfg.Sandbox.Use; use != "" && !config.IsLocalSandboxProvider(use) {
		return nil, fmt.Errorf("sandbox.use %q is not supported: Antler implements only %s", use, config.LocalSandboxProvider)
	}
	layout, err := vpath.FromConfig(home, cfg, nil)
	if err != nil {
		return nil, err
	}
	return NewLocal(layout, LocalOptions{Logger: logger}), nil
}

// Layout implements [Provider].
func (p *LocalProvider) Layout() *vpath.Layout { return p.layout }

// Acquire implements [Provider].
func (p *LocalProvider) Acquire(ctx context.Context, user, threadID string) (*Sandbox, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := "local:" + user + ":" + threadID
	p.mu.Lock()
	if el, ok := p.byKey[id]; ok {
		p.lru.MoveToFront(el)
		sb := el.Value.(*Sandbox)
		p.mu.Unlock()
		return sb, nil
	}
	p.mu.Unlock()

	// Create the folders outside the lock; MkdirAll is idempotent.
	paths, err := p.layout.EnsureThreadDirs(user, threadID)
	if err != nil {
		return nil, err
	}
	p.sweep(id, paths.UserData)
	p.mu.Lock()
	defer p.mu.Unlock()
	if el, ok := p.byKey[id]; ok { // another caller won the race
		p.lru.MoveToFront(el)
		return el.Value.(*Sandbox), nil
	}
	sb := &Sandbox{id: id, user: user, thread: threadID, layout: p.layout, paths: paths,
		masker: p.layout.Masker(user, threadID)}
	p.byKey[id] = p.lru.PushFront(sb)
	for p.lru.Len() > p.max {
		old := p.lru.Back()
		p.lru.Remove(old)
		delete(p.byKey, old.Value.(*Sandbox).id)
		p.logger.Debug("sandbox evicted", "sandbox_id", old.Value.(*Sandbox).id)
	}
	return sb, nil
}

// sweep removes the temporary files that atomic writes left in the
// thread's user-data folder (see sweepTempFiles) when its sandbox is
// opened, that is on its first Acquire by this process and after an
// eviction. Failures are logged; they never fail the Acquire.
func (p *LocalProvider) sweep(id, userData string) {
	n, err := sweepTempFiles(userData, time.Now())
	switch {
	case errors.Is(err, errSweepBound):
		p.logger.Info("sandbox: temporary file sweep stopped at its entry bound", "sandbox_id", id, "max_entries", maxSweepEntries, "removed", n)
	case err != nil:
		p.logger.Warn("sandbox: temporary file sweep failed", "sandbox_id", id, "error", err, "removed", n)
	case n > 0:
		p.logger.Info("sandbox: removed temporary files left by interrupted writes", "sandbox_id", id, "removed", n)
	}
}

// Len returns the number of cached sandboxes.
func (p *LocalProvider) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lru.Len()
}

// Close drops the cached sandboxes. The provider stays usable.
func (p *LocalProvider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lru.Init()
	clear(p.byKey)
	return nil
}

// isLocalSandboxID reports whether id names a local sandbox ("local" or
// "local:...").
func isLocalSandboxID(id string) bool {
	return id == "local" || len(id) > 6 && id[:6] == "local:"
}

// Sandbox is the sandbox of one thread. Its identity fields are immutable;
// its read marks and locks are safe for concurrent use.
type Sandbox struct {
	id, user, thread string
	layout           *vpath.Layout
	paths            vpath.ThreadPaths
	masker           *vpath.Masker

	reads     ReadTracker
	fileLocks pathLocks // serialises read-modify-write inside the tools
	gateLocks pathLocks // serialises the read-before-write gate with the tool call

	writtenMu sync.Mutex
	written   map[string]bool // guarded by writtenMu; host paths whose content had virtual paths made host paths
}

// ID returns the sandbox id, "local:{user}:{thread}".
func (s *Sandbox) ID() string { return s.id }

// User returns the user id.
func (s *Sandbox) User() string { return s.user }

// Thread returns the thread id.
func (s *Sandbox) Thread() string { return s.thread }

// Layout returns the layout.
func (s *Sandbox) Layout() *vpath.Layout { return s.layout }

// Paths returns the thread's host folders.
func (s *Sandbox) Paths() vpath.ThreadPaths { return s.paths }

// Reads returns the sandbox's read marks.
func (s *Sandbox) Reads() *ReadTracker { return &s.reads }

// ThreadData returns the thread_data state value for this sandbox.
func (s *Sandbox) ThreadData() *thread.ThreadData {
	return &thread.ThreadData{WorkspacePath: s.paths.Workspace, UploadsPath: s.paths.Uploads, OutputsPath: s.paths.Outputs}
}

// Resolve checks a virtual path for this thread (see vpath.Layout.ResolveTarget).
func (s *Sandbox) Resolve(virtual string, access vpath.Access) (vpath.Target, error) {
	return s.layout.ResolveTarget(s.user, s.thread, virtual, access)
}

// Mask replaces this thread's host paths in text by virtual ones.
func (s *Sandbox) Mask(text string) string { return s.masker.Mask(text) }

func (s *Sandbox) markWritten(host string, rewritten bool) {
	s.writtenMu.Lock()
	defer s.writtenMu.Unlock()
	if rewritten {
		if s.written == nil {
			s.written = map[string]bool{}
		}
		s.written[host] = true
	} else {
		delete(s.written, host)
	}
}

func (s *Sandbox) wasRewritten(host string) bool {
	s.writtenMu.Lock()
	defer s.writtenMu.Unlock()
	return s.written[host]
}
