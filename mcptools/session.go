package mcptools

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one live MCP client session with its teardown.
type session struct {
	cs     *mcp.ClientSession
	cancel context.CancelFunc // ends the session's lifetime context
	kill   func()             // kills a stdio server's process group; nil otherwise
	pid    int                // a stdio server's process id; 0 otherwise
	stderr *tailBuffer
	dead   chan struct{} // closed when the connection has ended

	closeOnce sync.Once
}

// alive reports whether the connection is still up.
func (s *session) alive() bool {
	select {
	case <-s.dead:
		return false
	default:
		return true
	}
}

// close shuts the session down: for stdio, stdin is closed and the server
// gets TerminateGrace to exit before SIGTERM and SIGKILL; then anything
// left in its process group is killed.
func (s *session) close() {
	s.closeOnce.Do(func() {
		_ = s.cs.Close()
		s.cancel()
		if s.kill != nil {
			s.kill()
		}
	})
}

// connect opens a session to rt, bounded by ctx; the session itself
// outlives ctx. place is the thread of a thread's stdio session (nil
// otherwise). On failure everything started is torn down in the
// background, so a hung server costs the caller no more than its deadline.
func (m *Manager) connect(ctx context.Context, rt *server, place *threadPlace) (*session, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stderr := &tailBuffer{}
	t, kill, err := m.transport(life, rt, stderr, place)
	if err != nil {
		cancel()
		return nil, err
	}
	type result struct {
		cs  *mcp.ClientSession
		err error
	}
	ch := make(chan result, 1)
	go func() {
		cs, err := rt.client.Connect(life, t, &mcp.ClientSessionOptions{ProtocolVersion: m.protocolVersion()})
		ch <- result{cs, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			cancel()
			if kill != nil {
				kill()
			}
			return nil, connectError(r.err, stderr)
		}
		s := &session{cs: r.cs, cancel: cancel, kill: kill, stderr: stderr, dead: make(chan struct{})}
		if st, ok := t.(*stdioTransport); ok {
			s.pid = st.processID()
			m.startSweeper()
		}
		if m.life.Err() != nil { // the Manager closed meanwhile
			s.close()
			return nil, errClosed
		}
		m.goBG(func() {
			_ = r.cs.Wait()
			close(s.dead)
			rt.sessionEnded(s)
		})
		return s, nil
	case <-ctx.Done():
	}
	cancel()
	if kill != nil {
		kill()
	}
	m.goBG(func() {
		if r := <-ch; r.cs != nil {
			_ = r.cs.Close()
		}
	})
	return nil, ctx.Err()
}

// connectError adds the end of the server's stderr to a failed connect.
// When the connection was lost, the server's last words may still be on
// their way through the pipe: they are waited for, briefly.
func connectError(err error, stderr *tailBuffer) error {
	if lostConnection(err) {
		stderr.settle(stderrSettle)
	}
	tail := strings.TrimSpace(stderr.String())
	if tail == "" {
		return err
	}
	if len(tail) > 300 {
		tail = "..." + tail[len(tail)-300:]
	}
	return fmt.Errorf("%w (stderr: %s)", err, tail)
}
