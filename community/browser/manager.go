package browser

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Defaults of ManagerOptions.
const (
	// DefaultMaxSessions bounds the live sessions (Chromium processes).
	// DeerFlow allows 32 sessions in one gateway; each is a whole
	// browser here, so Antler keeps fewer.
	DefaultMaxSessions = 8
	// DefaultIdleTimeout closes a session unused this long (DeerFlow's
	// 30 minutes).
	DefaultIdleTimeout = 30 * time.Minute
)

// ErrNoSession is returned by an action on a thread without a session.
var ErrNoSession = errors.New("no browser session is open in this thread; start one with browser_navigate")

// ManagerOptions configure a Manager. The zero value finds Chromium on
// the PATH and keeps at most 8 sessions, each closed after 30 idle
// minutes.
type ManagerOptions struct {
	// ExecPath is the Chromium or Chrome binary; "" is FindChromium's.
	ExecPath string
	// MaxSessions bounds the live sessions; 0 means DefaultMaxSessions.
	// When all of them are in use, a new thread's call is refused.
	MaxSessions int
	// IdleTimeout closes a session unused this long; 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Logger receives session starts, closes and guard refusals; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock of idle eviction; nil is time.Now.
	Now func() time.Time
}

// Manager keeps one browser session per thread. It is safe for
// concurrent use; the program that makes it calls Close.
type Manager struct {
	o      ManagerOptions
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[string]*session // guarded by mu
	closed   bool                // guarded by mu
	stop     chan struct{}       // closes the janitor; nil until it runs
	closing  sync.WaitGroup      // sessions being shut down
	janitor  sync.WaitGroup      // the idle janitor
}

// chromiumNames are the executables FindChromium looks up, in order.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// FindChromium returns the first of chromium, chromium-browser,
// google-chrome, google-chrome-stable and headless-shell on the PATH:
// the browser a Manager without ExecPath starts.
func FindChromium() (string, error) {
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium on the PATH (looked for %s); install it, e.g. apt-get install -y chromium", strings.Join(chromiumNames, ", "))
}

// NewManager returns a Manager. No browser starts before a tool needs
// one.
func NewManager(o ManagerOptions) *Manager {
	if o.ExecPath == "" {
		o.ExecPath, _ = FindChromium() // none: chromedp's own search fails with its error
	}
	o.MaxSessions = cmp.Or(o.MaxSessions, DefaultMaxSessions)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	if o.Now == nil {
		o.Now = time.Now
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{o: o, logger: logger.With("component", "browser"), sessions: map[string]*session{}}
}

// acquire returns thread's session, launched and with its turn taken;
// the caller calls m.release. Without a session, create makes one (with
// o, evicting idle sessions and, at the cap, the least recently used
// unpinned one) and !create returns ErrNoSession.
func (m *Manager) acquire(ctx context.Context, thread string, o Options, create bool) (*session, error) {
	s, err := m.pin(thread, o, create)
	if err != nil {
		return nil, err
	}
	if err := s.take(ctx); err != nil {
		m.unpin(s)
		return nil, err
	}
	if err := s.launch(ctx, m.o.ExecPath); err != nil {
		s.give()
		m.unpin(s)
		m.drop(s)
		return nil, err
	}
	return s, nil
}

// release gives back the turn and the pin acquire took.
func (m *Manager) release(s *session) {
	s.give()
	m.unpin(s)
}

func (m *Manager) pin(thread string, o Options, create bool) (*session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("the browser manager is closed")
	}
	now := m.o.Now()
	s := m.sessions[thread]
	if s == nil {
		if !create {
			return nil, ErrNoSession
		}
		m.evictIdleLocked(now)
		if len(m.sessions) >= m.o.MaxSessions && !m.evictLRULocked() {
			return nil, fmt.Errorf("browser session capacity is full (%d sessions in use); close a browser session before opening another", m.o.MaxSessions)
		}
		s = newSession(thread, o, m.logger, now)
		m.sessions[thread] = s
		m.startJanitorLocked()
	}
	s.pins++
	s.lastUsed = now
	return s, nil
}

func (m *Manager) unpin(s *session) {
	m.mu.Lock()
	s.pins--
	s.lastUsed = m.o.Now()
	m.mu.Unlock()
}

// drop forgets s if it is still its thread's session (a failed launch).
func (m *Manager) drop(s *session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions[s.thread] == s {
		delete(m.sessions, s.thread)
	}
}

// CloseThread closes thread's session, if it has one, and reports
// whether it had. The session leaves at once (a later call opens a new
// one); its browser stops in the background after the action running in
// it, if any, ends.
func (m *Manager) CloseThread(thread string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[thread]
	if s == nil {
		return false
	}
	delete(m.sessions, thread)
	m.closeLocked(s)
	return true
}

// closeLocked shuts s down in the background; m.mu is held.
func (m *Manager) closeLocked(s *session) {
	m.closing.Add(1)
	go func() {
		defer m.closing.Done()
		s.turn <- struct{}{} // after the running action; each is bounded
		s.shutdown()
		<-s.turn
	}()
}

// evictIdleLocked closes the unpinned sessions unused for IdleTimeout.
func (m *Manager) evictIdleLocked(now time.Time) {
	for id, s := range m.sessions {
		if s.pins == 0 && now.Sub(s.lastUsed) >= m.o.IdleTimeout {
			m.logger.Info("closing an idle browser session", "thread_id", id)
			delete(m.sessions, id)
			m.closeLocked(s)
		}
	}
}

// evictLRULocked closes the least recently used unpinned session and
// reports whether there was one.
func (m *Manager) evictLRULocked() bool {
	var lru *session
	for _, s := range m.sessions {
		if s.pins == 0 && (lru == nil || s.lastUsed.Before(lru.lastUsed)) {
			lru = s
		}
	}
	if lru == nil {
		return false
	}
	m.logger.Info("closing the least recently used browser session for a new thread", "thread_id", lru.thread)
	delete(m.sessions, lru.thread)
	m.closeLocked(lru)
	return true
}

// startJanitorLocked starts, once, the goroutine that evicts idle
// sessions between calls.
func (m *Manager) startJanitorLocked() {
	if m.stop != nil {
		return
	}
	m.stop = make(chan struct{})
	every := min(max(m.o.IdleTimeout/4, time.Second), time.Minute)
	m.janitor.Add(1)
	go func(stop <-chan struct{}) {
		defer m.janitor.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				m.mu.Lock()
				m.evictIdleLocked(m.o.Now())
				m.mu.Unlock()
			}
		}
	}(m.stop)
}

// Threads returns the threads with a live session, in no order.
func (m *Manager) Threads() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		out = append(out, id)
	}
	return out
}

// Close closes every session and waits for their browsers to stop. Later
// calls are refused.
func (m *Manager) Close() error {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		for id, s := range m.sessions {
			delete(m.sessions, id)
			m.closeLocked(s)
		}
		if m.stop != nil {
			close(m.stop)
		}
	}
	m.mu.Unlock()
	m.janitor.Wait()
	m.closing.Wait()
	return nil
}
