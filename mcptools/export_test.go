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
