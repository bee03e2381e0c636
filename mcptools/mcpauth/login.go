package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/config"
)

// DefaultLoginTimeout bounds a login when LoginOptions.Timeout is 0.
const DefaultLoginTimeout = 10 * time.Minute

// ErrNotAsked is returned by Begin when the server let the client in
// without asking for authorization: there is nothing to log in to.
var ErrNotAsked = errors.New("the MCP server did not ask for authorization")

// LoginOptions configures Begin.
type LoginOptions struct {
	Client
	// Store receives the tokens.
	Store Store
	// Timeout bounds the whole login, the human's part included; 0 is
	// DefaultLoginTimeout.
	Timeout time.Duration
	// Scopes are requested besides the discovered (or configured) ones,
	// e.g. those of an insufficient_scope challenge.
	Scopes []string
	// Implementation names Antler's MCP client in the session the login
	// opens; nil is "antler".
	Implementation *mcp.Implementation
}

// Flow is one login in progress: the human opens URL, the authorization
// server redirects to the redirect URL, and whoever receives the redirect
// hands its query to Complete; Wait returns once the tokens are stored.
type Flow struct {
	// URL is the authorization URL to open.
	URL string
	// State is the state parameter of URL, which the redirect carries back.
	State string

	cancel context.CancelFunc
	result chan *auth.AuthorizationResult // one slot
	once   sync.Once
	done   chan struct{}
	err    error // set before done is closed
}

// Begin starts the login of user to srv (a streamable HTTP server) with
// redirectURL as the redirect URI: it opens a session, whose first request
// the server answers with 401, discovers the authorization server,
// registers, and returns once the authorization URL is known. The flow
// then runs in the background until Complete, the timeout, or Cancel.
func Begin(ctx context.Context, o LoginOptions, user string, srv config.MCPServer, redirectURL string) (*Flow, error) {
	if srv.Type != "http" {
		return nil, fmt.Errorf("MCP server '%s' uses the %s transport; authorization applies to http servers", srv.Name, srv.Type)
	}
	if o.Store == nil {
		return nil, errors.New("mcpauth: Begin needs a Store")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultLoginTimeout
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	f := &Flow{cancel: cancel, result: make(chan *auth.AuthorizationResult, 1), done: make(chan struct{})}
	urls := make(chan string, 1)
	var saved atomic.Bool
	rs := Refresh{}.with(o.Client, o.Store, user, srv.Name)
	h, err := newCodeHandler(flowConfig{client: o.Client, srv: srv, redirectURL: redirectURL, extraScopes: o.Scopes,
		fetch: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			select {
			case urls <- args.URL:
			default:
				return nil, errors.New("the server asked for authorization twice in one login")
			}
			select {
			case r := <-f.result:
				return r, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the authorization redirect: %w", ctx.Err())
			}
		},
		save: func(r *Record) error {
			r.Saved = time.Now()
			if err := o.Store.Save(lctx, user, srv.Name, r); err != nil {
				return err
			}
			saved.Store(true)
			return nil
		},
		newSource: rs.source,
	})
	if err != nil {
		cancel()
		return nil, err
	}
	impl := o.Implementation
	if impl == nil {
		impl = &mcp.Implementation{Name: "antler", Version: "login"}
	}
	go func() {
		defer close(f.done)
		defer cancel()
		t := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: o.httpClient(), OAuthHandler: h, DisableStandaloneSSE: true}
		cs, err := mcp.NewClient(impl, nil).Connect(lctx, t, nil)
		if err == nil {
			err = cs.Close()
			if !saved.Load() {
				err = ErrNotAsked
			}
		}
		f.err = err
	}()
	select {
	case u := <-urls:
		f.URL = u
		if pu, err := url.Parse(u); err == nil {
			f.State = pu.Query().Get("state")
		}
		return f, nil
	case <-f.done:
		if f.err == nil {
			f.err = ErrNotAsked
		}
		return nil, f.err
	case <-ctx.Done():
		cancel()
		<-f.done
		return nil, ctx.Err()
	}
}

// Complete hands the query of the authorization redirect to the flow.
func (f *Flow) Complete(q url.Values) error {
	r, err := ResultFromRedirect(q)
	if err != nil {
		f.cancel()
		return err
	}
	ok := false
	f.once.Do(func() { f.result <- r; ok = true })
	if !ok {
		return errors.New("this login was completed already")
	}
	return nil
}

// Wait returns once the flow ended: nil when the tokens are stored.
func (f *Flow) Wait(ctx context.Context) error {
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done is closed when the flow ended.
func (f *Flow) Done() <-chan struct{} { return f.done }

// Cancel ends the flow.
func (f *Flow) Cancel() { f.cancel() }
