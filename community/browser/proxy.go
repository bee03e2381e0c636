package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/antlerhq/antler/community/netguard"
)

// Limits of a session's proxy.
const (
	// maxProxyConns bounds the connections Chromium holds open to one
	// session's proxy at a time; more wait in the listen queue.
	maxProxyConns = 64
	// proxyDialTimeout bounds the guard's lookup and connect.
	proxyDialTimeout = 15 * time.Second
	// proxyIdle closes an idle client or tunnel connection.
	proxyIdle = 2 * time.Minute
	// maxBlocked is how many refused URLs a session remembers between
	// two actions.
	maxBlocked = 8
)

// guardProxy is one session's forward proxy on 127.0.0.1: plain HTTP
// requests are forwarded and CONNECT tunnels opened only through the
// guard's dial, so a refused address is never connected to. It records
// the refused URLs for the next tool result.
type guardProxy struct {
	ln     net.Listener
	srv    *http.Server
	tr     *http.Transport
	guard  *netguard.Guard
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	logger *slog.Logger
	slots  chan struct{}

	mu      sync.Mutex
	blocked []string          // guarded by mu; newest last, at most maxBlocked
	tunnels map[net.Conn]bool // guarded by mu; hijacked client conns
	closed  bool              // guarded by mu
	wg      sync.WaitGroup    // tunnels' copy goroutines
}

// startProxy listens on a free loopback port and serves until close.
func startProxy(guard *netguard.Guard, logger *slog.Logger) (*guardProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("browser: start the guard proxy: %w", err)
	}
	p := &guardProxy{ln: ln, guard: guard, logger: logger, slots: make(chan struct{}, maxProxyConns),
		tunnels: map[net.Conn]bool{}}
	p.dial = guard.DialContext(&net.Dialer{Timeout: proxyDialTimeout})
	p.tr = &http.Transport{DialContext: p.dial, Proxy: nil, MaxIdleConnsPerHost: 4,
		IdleConnTimeout: proxyIdle, TLSHandshakeTimeout: proxyDialTimeout, ResponseHeaderTimeout: maxTimeout}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del("Proxy-Connection")
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport:    p.tr,
		ErrorHandler: p.forwardError,
		ErrorLog:     log.New(io.Discard, "", 0),
	}
	p.srv = &http.Server{Handler: p.handler(rp), ReadHeaderTimeout: proxyDialTimeout, IdleTimeout: proxyIdle,
		MaxHeaderBytes: 64 << 10, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// addr is the proxy's host:port.
func (p *guardProxy) addr() string { return p.ln.Addr().String() }

func (p *guardProxy) handler(forward http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case p.slots <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-p.slots }()
		if r.Method == http.MethodConnect {
			p.tunnel(w, r)
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "this proxy serves absolute URLs only", http.StatusBadRequest)
			return
		}
		if err := p.guard.CheckURL(r.URL); err != nil {
			p.refuse(w, r.URL.String(), err)
			return
		}
		forward.ServeHTTP(w, r)
	})
}

// forwardError answers a plain request the guard or the network refused.
func (p *guardProxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	var ge *netguard.Error
	if errors.As(err, &ge) {
		p.refuse(w, r.URL.String(), err)
		return
	}
	http.Error(w, "Bad gateway: "+err.Error(), http.StatusBadGateway)
}

// refuse records a refused URL and answers 403; a host that does not
// resolve is a plain 502, not a refusal.
func (p *guardProxy) refuse(w http.ResponseWriter, raw string, err error) {
	var ge *netguard.Error
	if errors.As(err, &ge) && ge.Kind == netguard.KindUnresolved {
		http.Error(w, "Bad gateway: "+err.Error(), http.StatusBadGateway)
		return
	}
	shown := redactURL(raw)
	p.logger.Warn("browser request refused by the SSRF guard", "url", shown, "err", err)
	p.mu.Lock()
	p.blocked = append(p.blocked, shown+" ("+err.Error()+")")
	if len(p.blocked) > maxBlocked {
		p.blocked = p.blocked[len(p.blocked)-maxBlocked:]
	}
	p.mu.Unlock()
	http.Error(w, "Blocked by Antler's SSRF guard: "+err.Error(), http.StatusForbidden)
}

// takeBlocked returns and forgets the refused URLs.
func (p *guardProxy) takeBlocked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.blocked
	p.blocked = nil
	return out
}

// tunnel serves CONNECT host:port through the guard's dial.
func (p *guardProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target := &url.URL{Scheme: "https", Host: r.Host}
	if err := p.guard.CheckURL(target); err != nil {
		p.refuse(w, target.String(), err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), proxyDialTimeout)
	up, err := p.dial(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		var ge *netguard.Error
		if errors.As(err, &ge) {
			p.refuse(w, target.String(), err)
			return
		}
		http.Error(w, "Bad gateway: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(client) {
		client.Close()
		up.Close()
		return
	}
	defer p.untrack(client)
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		up.Close()
		return
	}
	p.pipe(client, buf.Reader, up)
}

// pipe copies both ways until either side ends or is idle for
// proxyIdle, then closes both.
func (p *guardProxy) pipe(client net.Conn, pending io.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn, r io.Reader) {
		buf := make([]byte, 32<<10)
		for {
			_ = src.SetReadDeadline(time.Now().Add(proxyIdle))
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go cp(up, client, pending) // pending reads through to client
	go cp(client, up, up)
	<-done
	client.Close()
	up.Close()
	<-done
}

func (p *guardProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.tunnels[c] = true
	p.wg.Add(1)
	return true
}

func (p *guardProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, c)
	p.mu.Unlock()
	p.wg.Done()
}

// close stops the proxy and ends its tunnels.
func (p *guardProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil {
		_ = p.srv.Close()
	}
	p.wg.Wait()
	p.tr.CloseIdleConnections()
}

// redactURL drops a URL's query, fragment and credentials, so that a log
// line or a tool result cannot leak tokens (DeerFlow's
// redact_browser_url).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "<unparsable-url>"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}
