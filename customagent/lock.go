package customagent

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// locks serialises access to one agent: a mutex per agent inside the
// process, and a file lock (flock on Unix) across processes.
type locks struct {
	mu sync.Mutex
	m  map[string]*keyLock // guarded by mu; entries live while referenced
}

type keyLock struct {
	mu   sync.Mutex
	refs int // guarded by locks.mu
}

// lock takes the agent lock for (user, dir name); lockFile is the file the
// process-wide lock is taken on (created if missing; its folder must
// exist). The returned function releases both locks.
func (l *locks) lock(key, lockFile string) (func(), error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*keyLock{}
	}
	k := l.m[key]
	if k == nil {
		k = &keyLock{}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()

	k.mu.Lock()
	release := func() {
		k.mu.Unlock()
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	f, err := os.OpenFile(lockFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		release()
		return nil, fmt.Errorf("open agent lock %s: %w", filepath.Base(lockFile), err)
	}
	if err := flock(f); err != nil {
		_ = f.Close()
		release()
		return nil, fmt.Errorf("lock agent: %w", err)
	}
	return func() {
		_ = funlock(f)
		_ = f.Close()
		release()
	}, nil
}
