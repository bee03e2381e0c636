package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/chromedp/chromedp"
)

// launchTimeout bounds Chromium's start.
const launchTimeout = 30 * time.Second

// errSessionClosed is returned to a call that waited for a session that
// was closed meanwhile.
var errSessionClosed = errors.New("the browser session was closed (browser_close, or the end of the run); call browser_navigate to start a new one")

// session is one thread's browser: its own Chromium process, profile and
// guard proxy, and one tab. Actions take turns (turn); the manager's
// fields (pins, lastUsed) are guarded by the manager's mutex.
type session struct {
	thread string
	opts   Options
	logger *slog.Logger

	// turn is held by the one action running (capacity 1).
	turn chan struct{}

	// Set by launch, under turn. tab is chromedp's context of the tab:
	// chromedp addresses its browser through a context, so a session
	// keeps it for its lifetime (not a request's context).
	tab         context.Context
	cancelTab   context.CancelFunc
	cancelAlloc context.CancelFunc
	proxy       *guardProxy
	launched    bool
	closed      bool

	// Guarded by Manager.mu.
	pins     int
	lastUsed time.Time
}

func newSession(thread string, o Options, logger *slog.Logger, now time.Time) *session {
	return &session{thread: thread, opts: o, logger: logger.With("thread_id", thread),
		turn: make(chan struct{}, 1), lastUsed: now}
}

// take waits for the session's turn, or for ctx.
func (s *session) take(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *session) give() { <-s.turn }

// launch starts Chromium behind a new guard proxy, once, under turn.
func (s *session) launch(ctx context.Context, execPath string) error {
	if s.closed {
		return errSessionClosed
	}
	if s.launched && s.tab.Err() == nil {
		return nil
	}
	if s.launched { // Chromium died (crash, OOM kill): start afresh
		s.logger.Warn("the thread's Chromium has stopped; starting a new one")
		s.stop()
	}
	proxy, err := startProxy(s.opts.guard(), s.logger)
	if err != nil {
		return err
	}
	w, h := s.opts.viewport()
	opts := slices.Clone(chromedp.DefaultExecAllocatorOptions[:])
	opts = append(opts,
		chromedp.ProxyServer("http://"+proxy.addr()),
		// Loopback too goes through the proxy (Chromium bypasses it for
		// loopback by default), and WebRTC may not send UDP around it.
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.WindowSize(w, h),
	)
	if execPath != "" {
		opts = append(opts, chromedp.ExecPath(execPath))
	}
	if !s.opts.headless() {
		opts = append(opts, chromedp.VisibleWindow)
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root with its sandbox
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx,
		chromedp.WithLogf(func(f string, a ...any) { s.logger.Debug("chromedp: " + fmt.Sprintf(f, a...)) }),
		chromedp.WithErrorf(func(f string, a ...any) { s.logger.Debug("chromedp error: " + fmt.Sprintf(f, a...)) }))
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(tab) }()
	timer := time.NewTimer(launchTimeout)
	defer timer.Stop()
	select {
	case err = <-started:
	case <-timer.C:
		err = fmt.Errorf("chromium did not start within %s", launchTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		s.closed = true // a call waiting for this session fails too
		cancelTab()
		cancelAlloc()
		proxy.close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("cannot start Chromium: %w", err)
	}
	s.tab, s.cancelTab, s.cancelAlloc, s.proxy, s.launched = tab, cancelTab, cancelAlloc, proxy, true
	s.logger.Info("browser session started", "headless", s.opts.headless())
	return nil
}

// shutdown stops Chromium (waiting for it and its profile's removal)
// and the proxy, under turn.
func (s *session) shutdown() {
	s.closed = true
	if !s.launched {
		return
	}
	s.stop()
	s.logger.Info("browser session closed")
}

// stop ends Chromium and the proxy of a launched session, under turn.
func (s *session) stop() {
	s.launched = false
	s.cancelTab()
	s.cancelAlloc()
	s.proxy.close()
}

// runAction runs a on the session's tab with the session's timeout (or
// limit, when shorter and positive), also ended by the caller's ctx. A
// caller's cancellation is returned as ctx.Err(); a timeout as a
// model-facing error.
func runAction[T any](ctx context.Context, s *session, limit time.Duration, a chromedp.Action[T]) (T, error) {
	d := s.opts.timeout()
	if limit > 0 && limit < d {
		d = limit
	}
	actx, cancel := context.WithTimeout(s.tab, d)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	v, err := chromedp.Run(actx, a)
	switch {
	case err == nil:
		return v, nil
	case ctx.Err() != nil:
		return v, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || actx.Err() != nil:
		return v, fmt.Errorf("timed out after %s", d)
	}
	return v, err
}
