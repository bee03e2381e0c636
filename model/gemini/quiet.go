package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// The SDK prints a read error that ends a stream (a cancelled turn, a
// dropped connection) through Go's standard logger before returning it,
// which would put a stray "Error context canceled" line on the user's
// terminal. quietTransport hands the SDK a body whose failed read looks
// like the end of the stream and keeps the error in a slot that Generate
// put in the request's context; Generate then reports it itself.

type readErrKey struct{}

// readErr is the slot of one Generate call.
type readErr struct {
	mu  sync.Mutex
	err error
}

func (s *readErr) set(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *readErr) get() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func withReadErr(ctx context.Context) (context.Context, *readErr) {
	s := &readErr{}
	return context.WithValue(ctx, readErrKey{}, s), s
}

// quietTransport wraps base (nil = http.DefaultTransport).
type quietTransport struct{ base http.RoundTripper }

func (t quietTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if slot, ok := req.Context().Value(readErrKey{}).(*readErr); ok {
		resp.Body = quietBody{ReadCloser: resp.Body, slot: slot}
	}
	return resp, nil
}

type quietBody struct {
	io.ReadCloser
	slot *readErr
}

func (b quietBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.slot.set(err)
		return n, io.EOF
	}
	return n, err
}

// quietClient returns c (nil = a default client) with its transport
// wrapped in quietTransport.
func quietClient(c *http.Client) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	out.Transport = quietTransport{base: out.Transport}
	return out
}
