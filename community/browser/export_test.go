package browser

// WaitClosed waits for the sessions being shut down.
func (m *Manager) WaitClosed() { m.closing.Wait() }

// SessionDone returns a channel closed when thread's current browser has
// stopped (its tab's context ended), nil without a session.
func (m *Manager) SessionDone(thread string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[thread]
	if s == nil || s.tab == nil {
		return nil
	}
	return s.tab.Done()
}

// ProxyAddr is thread's guard proxy's address, "" without a session.
func (m *Manager) ProxyAddr(thread string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[thread]; s != nil && s.proxy != nil {
		return s.proxy.addr()
	}
	return ""
}

// EvictIdle runs the janitor's pass now.
func (m *Manager) EvictIdle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evictIdleLocked(m.o.Now())
}

// KillBrowser stops thread's Chromium behind the session's back, as a
// crash would.
func (m *Manager) KillBrowser(thread string) {
	m.mu.Lock()
	s := m.sessions[thread]
	m.mu.Unlock()
	s.turn <- struct{}{}
	s.cancelAlloc()
	<-s.turn
}
