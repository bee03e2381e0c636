package mcptools

import (
	"net/http"
	"time"

	"github.com/antlerhq/antler/config"
)

// TokenSource exposes the OAuth token cache to the tests.
type TokenSource = tokenSource

func NewTokenSource(cfg config.OAuth, c *http.Client, now func() time.Time) *TokenSource {
	return newTokenSource(cfg, c, now)
}

// Hold takes the per-server lock, as a token request in flight does.
func (t *tokenSource) Hold() (release func()) {
	t.lock <- struct{}{}
	return func() { <-t.lock }
}

// The limits and defaults the tests pin, and the result conversion they
// check directly.
const (
	DefaultToolCallTimeout = defaultToolCallTimeout
	DefaultProtocolVersion = defaultProtocolVersion
	MaxSnapshotFiles       = maxSnapshotFiles
)

var ConvertResult = convertResult

// SweepIdle closes the stdio processes idle for longer than IdleTimeout,
// as the background sweeper does.
func (m *Manager) SweepIdle() { m.pool.sweep() }

// Processes returns the number of stdio processes open and the bound that
// applies now.
func (m *Manager) Processes() (n, bound int) { return m.pool.processes() }

// TreeRSS is the /proc measurement of a process tree's resident memory.
var TreeRSS = treeRSS
