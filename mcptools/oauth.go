package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/antlerhq/antler/config"
)

// oauthPostTimeout bounds one token request (DeerFlow's mcp/oauth.py).
const oauthPostTimeout = 15 * time.Second

// defaultExpiresIn is used when the token response has no usable expiry.
const defaultExpiresIn = 3600 * time.Second

// tokenSource fetches and caches the OAuth access token of one server
// (client_credentials or refresh_token grant) and renders the
// Authorization header value. It is safe for concurrent use; one token
// request runs at a time per server.
type tokenSource struct {
	cfg    config.OAuth // immutable
	client *http.Client // immutable
	now    func() time.Time

	// lock is a one-slot semaphore rather than a mutex so that a caller
	// whose context ends while waiting gives up without ever holding it.
	lock chan struct{}

	// guarded by lock:
	header       string
	expiresAt    time.Time
	refreshToken string // rotated refresh tokens live in memory only
}

func newTokenSource(cfg config.OAuth, client *http.Client, now func() time.Time) *tokenSource {
	return &tokenSource{cfg: cfg, client: client, now: now, lock: make(chan struct{}, 1), refreshToken: cfg.RefreshToken}
}

// Header returns "<token_type> <access_token>", fetching a token when none
// is cached or the cached one expires within the refresh skew.
func (t *tokenSource) Header(ctx context.Context) (string, error) {
	select {
	case t.lock <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-t.lock }()
	// Checked under the lock, so concurrent callers that waited reuse the
	// token the first one fetched.
	if t.header != "" && !t.expiring() {
		return t.header, nil
	}
	if err := t.fetch(ctx); err != nil {
		return "", err
	}
	return t.header, nil
}

func (t *tokenSource) expiring() bool {
	skew := time.Duration(max(t.cfg.RefreshSkewSeconds, 0)) * time.Second
	return !t.expiresAt.After(t.now().Add(skew))
}

// form builds the token request body: extra_token_params first, then the
// reserved fields, so that extras can never override them.
func (t *tokenSource) form() (url.Values, error) {
	c := t.cfg
	v := url.Values{}
	for k, val := range c.ExtraTokenParams {
		v.Set(k, val)
	}
	v.Set("grant_type", c.GrantType)
	switch c.GrantType {
	case "refresh_token":
		if t.refreshToken == "" {
			return nil, fmt.Errorf("OAuth refresh_token grant requires refresh_token")
		}
		v.Set("refresh_token", t.refreshToken)
		if c.ClientID != "" {
			v.Set("client_id", c.ClientID)
		}
		if c.ClientSecret != "" {
			v.Set("client_secret", c.ClientSecret)
		}
	default: // client_credentials
		if c.ClientID == "" || c.ClientSecret == "" {
			return nil, fmt.Errorf("OAuth client_credentials requires client_id and client_secret")
		}
		v.Set("client_id", c.ClientID)
		v.Set("client_secret", c.ClientSecret)
	}
	if c.Scope != "" {
		v.Set("scope", c.Scope)
	}
	if c.Audience != "" {
		v.Set("audience", c.Audience)
	}
	return v, nil
}

func (t *tokenSource) fetch(ctx context.Context) error {
	form, err := t.form()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, oauthPostTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("OAuth token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("OAuth token request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("OAuth token request: reading response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The body of an error response carries no secrets of ours; keep
		// a short excerpt for the operator.
		return fmt.Errorf("OAuth token request failed: HTTP %d %s", resp.StatusCode, excerpt(body, 200))
	}
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err != nil {
		return fmt.Errorf("OAuth token response is not a JSON object: %w", err)
	}
	token, _ := fields[t.cfg.TokenField].(string)
	if token == "" {
		return fmt.Errorf("OAuth token response missing '%s'", t.cfg.TokenField)
	}
	typ, _ := fields[t.cfg.TokenTypeField].(string)
	if typ == "" {
		typ = t.cfg.DefaultTokenType
	}
	t.header = typ + " " + token
	t.expiresAt = t.now().Add(expiresIn(fields[t.cfg.ExpiresInField]))
	if rt, _ := fields["refresh_token"].(string); rt != "" {
		t.refreshToken = rt
	}
	return nil
}

// expiresIn reads an expires_in value: a number or a numeric string of
// seconds; anything else means an hour. The minimum is one second, the
// maximum a century.
func expiresIn(v any) time.Duration {
	var secs float64
	switch v := v.(type) {
	case float64:
		secs = v
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return defaultExpiresIn
		}
		secs = f
	default:
		return defaultExpiresIn
	}
	if secs != secs { // NaN
		return defaultExpiresIn
	}
	// Capped so that a "never expires" value cannot overflow Duration.
	const maxExpiresIn = 100 * 365 * 24 * time.Hour
	return time.Duration(min(max(secs, 1), maxExpiresIn.Seconds()) * float64(time.Second))
}

func excerpt(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
