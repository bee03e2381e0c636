package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/antlerhq/antler/config"
)

// Client says how Antler presents itself to authorization servers. The
// zero value registers dynamically as "Antler" with http.DefaultClient.
type Client struct {
	// Name is the client_name of a dynamic registration; "" is "Antler".
	Name string
	// MetadataURL is the URL of Antler's client ID metadata document (an
	// https URL with a path), used as the client ID where the authorization
	// server supports such documents; "" uses none.
	MetadataURL string
	// HTTPClient makes every metadata, registration and token request;
	// nil is http.DefaultClient.
	HTTPClient *http.Client
}

func (c Client) httpClient() *http.Client {
	if c.HTTPClient == nil {
		return http.DefaultClient
	}
	return c.HTTPClient
}

// preregistered returns the client configured for srv (oauth.grant_type
// authorization_code with a client_id), or nil.
func preregistered(srv config.MCPServer) *oauthex.ClientCredentials {
	o := srv.OAuth
	if o == nil || !o.Enabled || o.GrantType != config.GrantAuthorizationCode || o.ClientID == "" {
		return nil
	}
	c := &oauthex.ClientCredentials{ClientID: o.ClientID}
	if o.ClientSecret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
	}
	return c
}

// flowConfig is one authorization code flow for one user and server.
type flowConfig struct {
	client      Client
	srv         config.MCPServer
	redirectURL string
	fetch       auth.AuthorizationCodeFetcher
	// extraScopes are requested besides the discovered ones (step-up).
	extraScopes []string
	// save stores the record a successful exchange produced.
	save func(*Record) error
	// initial, when non-nil, is the token source until the flow runs.
	initial oauth2.TokenSource
	// newSource wraps a fresh record in the refreshing source sessions use.
	newSource func(context.Context, *Record) oauth2.TokenSource
}

// newCodeHandler builds the SDK's authorization code handler: discovery,
// registration (client ID metadata document, then pre-registration, then
// dynamic registration), scope selection, PKCE S256, the resource
// parameter and the token exchange are the SDK's; the scopes configured
// for the server replace the discovered ones, and the record of the
// exchange is saved before the session uses it.
func newCodeHandler(fc flowConfig) (*auth.AuthorizationCodeHandler, error) {
	name := fc.client.Name
	if name == "" {
		name = "Antler"
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: preregistered(fc.srv),
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{fc.redirectURL}, ClientName: name,
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		}},
		RedirectURL:              fc.redirectURL,
		AuthorizationCodeFetcher: fc.fetch,
		RequestRefreshToken:      true,
		Client:                   fc.client.httpClient(),
		InitialTokenSource:       fc.initial,
	}
	if fc.client.MetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: fc.client.MetadataURL}
	}
	var configured []string
	if o := fc.srv.OAuth; o != nil && o.Enabled {
		configured = strings.Fields(o.Scope)
	}
	if len(configured) > 0 || len(fc.extraScopes) > 0 {
		cfg.ScopeFilter = func(discovered []string) []string {
			out := discovered
			if len(configured) > 0 {
				out = configured
			}
			for _, s := range fc.extraScopes {
				if !slices.Contains(out, s) {
					out = append(slices.Clip(out), s)
				}
			}
			return out
		}
	}
	cfg.NewTokenSource = func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
		rec := &Record{URL: fc.srv.URL, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
			TokenURL: oc.Endpoint.TokenURL, AuthStyle: oc.Endpoint.AuthStyle, Scopes: oc.Scopes}
		rec.setToken(tok)
		if err := fc.save(rec); err != nil {
			return nil, fmt.Errorf("storing the tokens of MCP server '%s': %w", fc.srv.Name, err)
		}
		return fc.newSource(ctx, rec), nil
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("MCP server '%s': %w", fc.srv.Name, err)
	}
	return h, nil
}

// Interactive runs the whole authorization code flow inside a session
// when the server asks for authorization, with Fetch bringing the code
// back, and stores the tokens in Store (mcptools.Authorizer). It suits
// authorization servers that approve without a human (the conformance
// suite's, tests); people log in through [Begin].
type Interactive struct {
	Client
	Store Store
	// Fetch obtains the code for an authorization URL, e.g. [AutoApprove].
	Fetch auth.AuthorizationCodeFetcher
	// RedirectURL is registered and sent as redirect_uri.
	RedirectURL string
	// Refresh configures the refreshing of the stored tokens.
	Refresh Refresh
}

// OAuthHandler returns the handler of user's session with srv.
func (i *Interactive) OAuthHandler(ctx context.Context, srv config.MCPServer, user string) (auth.OAuthHandler, error) {
	if i.Store == nil || i.Fetch == nil || i.RedirectURL == "" {
		return nil, errors.New("mcpauth: Interactive needs Store, Fetch and RedirectURL")
	}
	rs := i.Refresh.with(i.Client, i.Store, user, srv.Name)
	rec, err := i.Store.Load(ctx, user, srv.Name)
	if err != nil {
		return nil, err
	}
	var initial oauth2.TokenSource
	if rec != nil && rec.URL == srv.URL {
		initial = rs.source(ctx, rec)
	}
	return newCodeHandler(flowConfig{client: i.Client, srv: srv, redirectURL: i.RedirectURL, fetch: i.Fetch,
		save:      func(r *Record) error { return i.Store.Save(context.WithoutCancel(ctx), user, srv.Name, r) },
		initial:   initial,
		newSource: rs.source})
}

// AutoApprove returns a fetcher for authorization servers that redirect
// straight back: it requests the authorization URL without following the
// redirect and reads code, state and iss from its Location.
func AutoApprove(client *http.Client) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		c := *Client{HTTPClient: client}.httpClient()
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
		}
		return ResultFromRedirect(loc.Query())
	}
}
