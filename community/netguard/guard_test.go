package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// fakeResolver maps names to addresses; unknown names do not resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ss, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ss {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func TestBlocked(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"169.254.169.254", true},
		{"10.0.0.1", true},
		{"10.255.255.255", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"100.64.0.1", true},
		{"100.100.100.200", true},
		{"0.0.0.0", true},
		{"255.255.255.255", true},
		{"224.0.0.1", true},
		{"fc00::1", true},
		{"fd00:ec2::254", true},
		{"fe80::1", true},
		{"::", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.1.2.3", true},
		{"::127.0.0.1", true},
		{"64:ff9b::7f00:1", true},
		{"2002:7f00:1::", true},
		{"2001:db8::1", true},
		{"fec0::1", true},
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"172.32.0.1", false},
		{"100.128.0.1", false},
		{"2606:4700:4700::1111", false},
		{"64:ff9b::808:808", false},
		{"::ffff:8.8.8.8", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := Blocked(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("Blocked(%s) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	if !Blocked(netip.Addr{}) {
		t.Error("Blocked(invalid) = false, want true")
	}
}

func TestCheckURL(t *testing.T) {
	const refused = "Refusing to fetch a private, loopback, or metadata address"
	tests := []struct {
		name  string
		url   string
		allow bool
		want  string // "" = accepted
	}{
		{"public", "https://example.com/a?b=c", false, ""},
		{"public ip", "http://8.8.8.8/", false, ""},
		{"ftp", "ftp://example.com/", false, "Only http:// and https:// URLs are supported"},
		{"file", "file:///etc/passwd", false, "Only http:// and https:// URLs are supported"},
		{"no scheme", "example.com", false, "Only http:// and https:// URLs are supported"},
		{"empty host", "http://:80/", false, "URL host could not be parsed"},
		{"loopback v4", "http://127.0.0.1:8080/", false, refused},
		{"loopback v6", "http://[::1]/", false, refused},
		{"metadata", "http://169.254.169.254/latest/meta-data/", false, refused},
		{"ten", "http://10.1.2.3/", false, refused},
		{"localhost", "http://localhost:3000/", false, refused},
		{"localhost upper dot", "http://LOCALHOST./", false, refused},
		{"sub localhost", "http://api.localhost/", false, refused},
		{"gcp metadata", "http://metadata.google.internal/computeMetadata/v1/", false, refused},
		{"mapped", "http://[::ffff:127.0.0.1]/", false, refused},
		{"allowed loopback", "http://127.0.0.1/", true, ""},
		{"allowed still needs http", "gopher://127.0.0.1/", true, "Only http:// and https:// URLs are supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Guard{AllowPrivate: tt.allow}
			_, err := g.CheckURLString(tt.url)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("CheckURLString(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	res := fakeResolver{
		"public.test":   {"93.184.216.34"},
		"loop.test":     {"127.0.0.1"},
		"loop6.test":    {"::1"},
		"mixed.test":    {"93.184.216.34", "10.0.0.5"},
		"metadata.test": {"169.254.169.254"},
	}
	tests := []struct {
		host  string
		allow bool
		kind  Kind // 0 = accepted
	}{
		{"public.test", false, 0},
		{"loop.test", false, KindBlocked},
		{"loop6.test", false, KindBlocked},
		{"mixed.test", false, KindBlocked},
		{"metadata.test", false, KindBlocked},
		{"nowhere.test", false, KindUnresolved},
		{"loop.test", true, 0},
		{"localhost", false, KindBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			g := &Guard{AllowPrivate: tt.allow, Resolver: res}
			_, err := g.Resolve(t.Context(), tt.host)
			var kind Kind
			var ge *Error
			if errors.As(err, &ge) {
				kind = ge.Kind
			} else if err != nil {
				t.Fatalf("Resolve: unexpected error %v", err)
			}
			if kind != tt.kind {
				t.Errorf("Resolve(%q) kind = %v (%v), want %v", tt.host, kind, err, tt.kind)
			}
		})
	}
}

// TestDialContextRebinding proves that a name resolving to loopback is
// refused at connection time, and that with the opt-out the connection
// goes to the address the guard's resolver returned.
func TestDialContextRebinding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("inside"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	res := fakeResolver{"rebind.test": {"127.0.0.1"}}
	target := "http://rebind.test:" + port + "/"

	for _, allow := range []bool{false, true} {
		g := &Guard{AllowPrivate: allow, Resolver: res}
		tr := &http.Transport{DialContext: g.DialContext(nil)}
		c := &http.Client{Transport: tr}
		resp, err := c.Get(target)
		if allow {
			if err != nil {
				t.Fatalf("allow: Get: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("allow: status %d", resp.StatusCode)
			}
		} else {
			var ge *Error
			if !errors.As(err, &ge) || ge.Kind != KindBlocked {
				t.Fatalf("guarded: Get error = %v, want a KindBlocked *Error", err)
			}
		}
		tr.CloseIdleConnections()
	}
}

// TestControlRefusesLoopback checks the last line of defence on its own:
// even a dialer asked for a literal loopback address never connects.
func TestControlRefusesLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g := &Guard{}
	d := net.Dialer{Control: g.Control}
	_, err = d.DialContext(t.Context(), "tcp", ln.Addr().String())
	var ge *Error
	if !errors.As(err, &ge) || ge.Kind != KindBlocked {
		t.Fatalf("dial error = %v, want KindBlocked", err)
	}
	for _, a := range []string{"[::1]:80", "169.254.169.254:80", "10.0.0.1:443"} {
		if err := g.Control("tcp", a, nil); err == nil {
			t.Errorf("Control(%s) = nil, want refusal", a)
		}
	}
	if err := g.Control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("Control(public) = %v", err)
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "http://127.0.0.1/", "http://[::1]:80/", "http://0x7f000001/",
		"https://[::ffff:169.254.169.254]/", "http://LocalHost./", "http://[fe80::1%25eth0]/",
		"http://user:pass@10.0.0.1:99/", "javascript:alert(1)", "http://%31%32%37.0.0.1/",
	} {
		f.Add(s)
	}
	g := &Guard{}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := g.CheckURLString(raw)
		if err != nil {
			var ge *Error
			if !errors.As(err, &ge) {
				t.Fatalf("CheckURLString(%q) error %v is not *Error", raw, err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		h := normalizeHost(u.Hostname())
		if a, err := netip.ParseAddr(h); err == nil && Blocked(a) {
			t.Fatalf("accepted blocked literal %s from %q", a, raw)
		}
		if blockedName(h) {
			t.Fatalf("accepted blocked name %q", h)
		}
	})
}
