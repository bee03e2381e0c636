package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"
)

// maxRecordSize bounds one stored record file.
const maxRecordSize = 64 << 10

// Record is what a login leaves for one user and server: the client it
// registered and the tokens it was given.
type Record struct {
	// URL is the MCP server's URL the tokens were issued for (the
	// resource); a record for another URL is not used.
	URL string `json:"url"`
	// Issuer is the authorization server that issued the tokens.
	Issuer string `json:"issuer,omitempty"`

	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`

	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`

	Saved time.Time `json:"saved"`
}

// Token returns the record's tokens.
func (r *Record) Token() *oauth2.Token {
	return &oauth2.Token{AccessToken: r.AccessToken, TokenType: r.TokenType, RefreshToken: r.RefreshToken, Expiry: r.Expiry}
}

// setToken replaces the record's tokens with t; a refresh response without
// a refresh token keeps the one the record had.
func (r *Record) setToken(t *oauth2.Token) {
	r.AccessToken, r.TokenType, r.Expiry = t.AccessToken, t.TokenType, t.Expiry
	if t.RefreshToken != "" {
		r.RefreshToken = t.RefreshToken
	}
}

// config is the oauth2 configuration that refreshes the record's tokens.
func (r *Record) config() *oauth2.Config {
	return &oauth2.Config{ClientID: r.ClientID, ClientSecret: r.ClientSecret, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: r.TokenURL, AuthStyle: r.AuthStyle}}
}

// String shows the record without its secrets.
func (r *Record) String() string {
	return fmt.Sprintf("mcpauth.Record{URL:%q Issuer:%q ClientID:%q ClientSecret:%s AccessToken:%s RefreshToken:%s Expiry:%s}",
		r.URL, r.Issuer, r.ClientID, mask(r.ClientSecret), mask(r.AccessToken), mask(r.RefreshToken), r.Expiry.Format(time.RFC3339))
}

// GoString is String, so that %#v masks too.
func (r *Record) GoString() string { return r.String() }

// LogValue logs the record without its secrets.
func (r *Record) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", r.URL), slog.String("issuer", r.Issuer), slog.String("client_id", r.ClientID),
		slog.Bool("refreshable", r.RefreshToken != ""), slog.Time("expiry", r.Expiry))
}

func mask(s string) string {
	if s == "" {
		return `""`
	}
	return "***"
}

// Store keeps each user's record per MCP server. Load returns (nil, nil)
// when there is none.
type Store interface {
	Load(ctx context.Context, user, server string) (*Record, error)
	Save(ctx context.Context, user, server string, r *Record) error
	Delete(ctx context.Context, user, server string) error
}

// FileStore keeps records as files Dir/<user>/<server>.json, created 0600
// in directories 0700 and replaced atomically. User and server names are
// path-escaped; "", "." and ".." are refused.
type FileStore struct {
	Dir string
}

// Path is the file of the record of user and server.
func (f FileStore) Path(user, server string) (string, error) {
	if f.Dir == "" {
		return "", errors.New("mcpauth: FileStore has no directory")
	}
	for _, n := range []struct{ what, v string }{{"user", user}, {"server", server}} {
		if n.v == "" || n.v == "." || n.v == ".." {
			return "", fmt.Errorf("mcpauth: invalid %s name %q", n.what, n.v)
		}
	}
	return filepath.Join(f.Dir, url.PathEscape(user), url.PathEscape(server)+".json"), nil
}

// Load reads the record of user and server.
func (f FileStore) Load(_ context.Context, user, server string) (*Record, error) {
	p, err := f.Path(user, server)
	if err != nil {
		return nil, err
	}
	fh, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxRecordSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > maxRecordSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", p, maxRecordSize)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &r, nil
}

// Save writes the record of user and server atomically (temporary file in
// the same directory, then rename), readable by the owner only.
func (f FileStore) Save(_ context.Context, user, server string, r *Record) error {
	p, err := f.Path(user, server)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*.json") // created 0600
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), p)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", p, werr)
	}
	return nil
}

// Delete removes the record of user and server; a missing one is no error.
func (f FileStore) Delete(_ context.Context, user, server string) error {
	p, err := f.Path(user, server)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
