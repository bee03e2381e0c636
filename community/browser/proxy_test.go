package browser

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/antlerhq/antler/community/netguard"
)

// fakeDNS resolves public.test to a public address; other names fail.
type fakeDNS struct{}

func (fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if host == "public.test" {
		return []net.IPAddr{{IP: net.ParseIP("93.184.216.34")}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// testProxy starts a guard proxy whose "public" address reaches target.
func testProxy(t *testing.T, target string) *guardProxy {
	t.Helper()
	g := &netguard.Guard{Resolver: fakeDNS{}, Action: "browse",
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, target)
		}}
	p, err := startProxy(g, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p
}

// connect sends CONNECT host to the proxy and returns the connection and
// the status line.
func connect(t *testing.T, p *guardProxy, host string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	// Skip the headers.
	for {
		line, err := br.ReadString('\n')
		if err != nil || line == "\r\n" {
			break
		}
	}
	return c, br, strings.TrimSpace(status)
}

// TestProxyTunnels checks CONNECT (https): a public host is tunnelled, a
// loopback or metadata one refused and recorded, an unresolved one a
// 502 that is not a refusal; closing the proxy ends open tunnels.
func TestProxyTunnels(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "over tls")
	}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the tunnel closed mid-handshake below
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	p := testProxy(t, tlsSrv.Listener.Addr().String())

	for _, tt := range []struct{ host, want string }{
		{tlsSrv.Listener.Addr().String(), "403"},
		{"169.254.169.254:443", "403"},
		{"localhost:443", "403"},
		{"nowhere.test:443", "502"},
	} {
		if _, _, status := connect(t, p, tt.host); !strings.Contains(status, tt.want) {
			t.Errorf("CONNECT %s: %q, want %s", tt.host, status, tt.want)
		}
	}
	blocked := p.takeBlocked()
	if len(blocked) != 3 || !strings.HasPrefix(blocked[1], "https://169.254.169.254:443 (Refusing to browse") {
		t.Errorf("blocked = %q, want the three refusals", blocked)
	}
	if again := p.takeBlocked(); len(again) != 0 {
		t.Errorf("takeBlocked kept %q", again)
	}

	c, br, status := connect(t, p, "public.test:443")
	if !strings.Contains(status, "200") {
		t.Fatalf("CONNECT public.test: %q", status)
	}
	tc := tls.Client(&bufConn{Conn: c, r: br}, &tls.Config{InsecureSkipVerify: true})
	fmt.Fprint(tc, "GET / HTTP/1.1\r\nHost: public.test\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "over tls" {
		t.Errorf("through the tunnel: %q", body)
	}

	_, br2, status := connect(t, p, "public.test:443")
	if !strings.Contains(status, "200") {
		t.Fatalf("second CONNECT: %q", status)
	}
	p.close()
	if _, err := br2.ReadByte(); err == nil {
		t.Error("a tunnel outlived the proxy's close")
	}
}

// TestProxyForwards checks plain http: a public URL is forwarded, a
// private one (also as a redirect target the browser follows) refused.
func TestProxyForwards(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s path=%s", r.Host, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	p := testProxy(t, srv.Listener.Addr().String())
	proxyURL, _ := url.Parse("http://" + p.addr())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	get := func(u string) (int, string) {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://public.test/a?token=secret"); code != 200 || body != "host=public.test path=/a" {
		t.Errorf("public page: %d %q", code, body)
	}
	if code, body := get(srv.URL + "/private"); code != 403 || !strings.Contains(body, "Blocked by Antler's SSRF guard") {
		t.Errorf("loopback page: %d %q", code, body)
	}
	if code, _ := get("http://[::ffff:169.254.169.254]/latest"); code != 403 {
		t.Errorf("mapped metadata address: %d", code)
	}
	blocked := p.takeBlocked()
	if len(blocked) != 2 || !strings.HasPrefix(blocked[0], srv.URL+"/private (") {
		t.Errorf("blocked = %q", blocked)
	}
	for _, b := range blocked {
		if strings.Contains(b, "token") || strings.Contains(b, "?") {
			t.Errorf("a refusal keeps the query: %q", b)
		}
	}
}

// bufConn reads through the reader that already buffered the
// connection's first bytes.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }
