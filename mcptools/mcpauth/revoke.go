package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// revokeTimeout bounds a whole revocation (metadata and requests).
const revokeTimeout = 15 * time.Second

// ErrNoRevocation says that the authorization server announces no
// revocation endpoint: the tokens stay valid until they expire.
var ErrNoRevocation = errors.New("the authorization server announces no revocation endpoint")

// Revoke asks the authorization server that issued rec's tokens to revoke
// them (RFC 7009): the refresh token, then the access token. The endpoint
// is the revocation_endpoint of the authorization server metadata at the
// token endpoint's origin (RFC 8414's and OpenID's well-known locations).
// It is best effort: the caller deletes the record whatever it returns.
func Revoke(ctx context.Context, c Client, rec *Record) error {
	ctx, cancel := context.WithTimeout(ctx, revokeTimeout)
	defer cancel()
	endpoint, err := revocationEndpoint(ctx, c.httpClient(), rec.TokenURL)
	if err != nil {
		return err
	}
	for _, t := range []struct{ token, hint string }{{rec.RefreshToken, "refresh_token"}, {rec.AccessToken, "access_token"}} {
		if t.token == "" {
			continue
		}
		if err := revokeOne(ctx, c.httpClient(), endpoint, rec, t.token, t.hint); err != nil {
			return err
		}
	}
	return nil
}

func revocationEndpoint(ctx context.Context, hc *http.Client, tokenURL string) (string, error) {
	u, err := url.Parse(tokenURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the stored token endpoint %q is not a URL", tokenURL)
	}
	origin := u.Scheme + "://" + u.Host
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+p, nil)
		if err != nil {
			return "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		var meta struct {
			RevocationEndpoint string `json:"revocation_endpoint"`
		}
		derr := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && derr == nil {
			if meta.RevocationEndpoint == "" {
				return "", ErrNoRevocation
			}
			if r, err := url.Parse(meta.RevocationEndpoint); err != nil || (r.Scheme != "https" && r.Scheme != "http") {
				return "", fmt.Errorf("revocation_endpoint %q is not an http(s) URL", meta.RevocationEndpoint)
			}
			return meta.RevocationEndpoint, nil
		}
	}
	return "", fmt.Errorf("no authorization server metadata at %s", origin)
}

// revokeOne sends one revocation request, authenticated as the token
// requests of rec's client are.
func revokeOne(ctx context.Context, hc *http.Client, endpoint string, rec *Record, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	basic := rec.ClientSecret != "" && rec.AuthStyle != oauth2.AuthStyleInParams
	if !basic {
		form.Set("client_id", rec.ClientID)
		if rec.ClientSecret != "" {
			form.Set("client_secret", rec.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(rec.ClientID), url.QueryEscape(rec.ClientSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("revoking the %s: %w", hint, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoking the %s: the authorization server answered HTTP %d", hint, resp.StatusCode)
	}
	return nil
}
