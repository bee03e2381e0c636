// Package netguard is the SSRF guard of Antler's web tools: it refuses
// outbound connections to private, loopback, link-local, CGNAT,
// unique-local, reserved and cloud-metadata addresses.
//
// Start with [Guard]. [Guard.CheckURL] screens a URL before a request (and
// before every redirect); [Guard.DialContext] is the http.Transport dial
// function that resolves the host itself, refuses if any resolved address
// is blocked, and connects only to the addresses it checked, with a
// [net.Dialer] Control hook that checks the socket address once more. The
// address connected to is therefore the address that was checked, so DNS
// rebinding and redirects cannot get around the guard.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// Resolver looks up a host's addresses. *net.Resolver implements it; tests
// inject a fake to make a name resolve to loopback.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Kind classifies a refusal.
type Kind int

// The refusal kinds. Their messages are DeerFlow's (url_safety.py).
const (
	// KindScheme: the URL is not http or https.
	KindScheme Kind = iota + 1
	// KindHost: the URL has no host that can be parsed.
	KindHost
	// KindUnresolved: the host does not resolve.
	KindUnresolved
	// KindBlocked: the host is, or resolves to, a blocked address.
	KindBlocked
)

// Error is a refusal. Its message is model-facing and carries no "Error: "
// prefix; tools add it.
type Error struct {
	Kind Kind
	// Action is the verb of the message ("fetch").
	Action string
	// Host is the host that was refused, when known.
	Host string
	// Addr is the blocked address, when one was found.
	Addr netip.Addr
	// Err is the underlying resolver error for KindUnresolved.
	Err error
}

func (e *Error) Error() string {
	switch e.Kind {
	case KindScheme:
		return "Only http:// and https:// URLs are supported"
	case KindHost:
		return "URL host could not be parsed"
	case KindUnresolved:
		return "URL host could not be resolved"
	default:
		return fmt.Sprintf("Refusing to %s a private, loopback, or metadata address", cmpOr(e.Action, "fetch"))
	}
}

func (e *Error) Unwrap() error { return e.Err }

// Guard screens URLs and connections. The zero value blocks private
// addresses and resolves with net.DefaultResolver. A Guard is immutable
// after first use and safe for concurrent use.
type Guard struct {
	// AllowPrivate turns the address checks off (config
	// allow_private_addresses: true). The scheme check stays.
	AllowPrivate bool
	// Resolver resolves host names for CheckURL and DialContext; nil
	// means net.DefaultResolver.
	Resolver Resolver
	// Action is the verb of refusal messages; "" means "fetch".
	Action string
	// Dial, if set, makes the connection to an address the guard has
	// already resolved and checked, in place of a net.Dialer with the
	// Control hook. Tests use it to route a public-looking address to a
	// loopback server; production code leaves it nil.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (g *Guard) resolver() Resolver {
	if g == nil || g.Resolver == nil {
		return net.DefaultResolver
	}
	return g.Resolver
}

func (g *Guard) refuse(host string, addr netip.Addr) *Error {
	return &Error{Kind: KindBlocked, Action: g.Action, Host: host, Addr: addr}
}

// blockedNames are refused before any resolution.
var blockedNames = []string{"localhost", "metadata.google.internal", "metadata"}

// normalizeHost lowercases h and strips one trailing dot and IPv6
// brackets.
func normalizeHost(h string) string {
	h = strings.TrimSpace(h)
	h = strings.TrimPrefix(strings.TrimSuffix(h, "]"), "[")
	h = strings.TrimSuffix(h, ".")
	return strings.ToLower(h)
}

// blockedName reports whether host is a name refused without resolution:
// localhost and its subdomains, and the cloud metadata names.
func blockedName(host string) bool {
	h := normalizeHost(host)
	for _, n := range blockedNames {
		if h == n {
			return true
		}
	}
	return strings.HasSuffix(h, ".localhost")
}

// CheckURL screens u without a network round trip: http or https only, a
// parsable host, no blocked name, no blocked IP literal. Host names are
// resolved and checked when DialContext connects, so that the check and
// the connection use the same addresses.
func (g *Guard) CheckURL(u *url.URL) error {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Error{Kind: KindScheme, Action: g.action()}
	}
	host := u.Hostname()
	if normalizeHost(host) == "" {
		return &Error{Kind: KindHost, Action: g.action()}
	}
	if g != nil && g.AllowPrivate {
		return nil
	}
	if blockedName(host) {
		return g.refuse(host, netip.Addr{})
	}
	if a, err := netip.ParseAddr(normalizeHost(host)); err == nil && Blocked(a) {
		return g.refuse(host, a)
	}
	return nil
}

// CheckURLString parses raw and screens it with CheckURL.
func (g *Guard) CheckURLString(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(raw)), "http") {
			return nil, &Error{Kind: KindHost, Action: g.action()}
		}
		return nil, &Error{Kind: KindScheme, Action: g.action()}
	}
	if err := g.CheckURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

func (g *Guard) action() string {
	if g == nil {
		return ""
	}
	return g.Action
}

// Resolve returns the addresses of host (an IP literal is its own
// address), refusing blocked names and, unless AllowPrivate, any host with
// a blocked address among its addresses.
func (g *Guard) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	h := normalizeHost(host)
	if h == "" {
		return nil, &Error{Kind: KindHost, Action: g.action()}
	}
	allow := g != nil && g.AllowPrivate
	if !allow && blockedName(h) {
		return nil, g.refuse(host, netip.Addr{})
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(h); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ips, err := g.resolver().LookupIPAddr(ctx, h)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &Error{Kind: KindUnresolved, Action: g.action(), Host: host, Err: err}
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip.IP); ok {
				addrs = append(addrs, a.Unmap().WithZone(ip.Zone))
			}
		}
		if len(addrs) == 0 {
			return nil, &Error{Kind: KindUnresolved, Action: g.action(), Host: host}
		}
	}
	if !allow {
		for _, a := range addrs {
			if Blocked(a) {
				return nil, g.refuse(host, a)
			}
		}
	}
	return addrs, nil
}

// DialContext returns a dial function for http.Transport. It resolves the
// host with the guard's resolver, refuses it if any address is blocked,
// and then connects to the checked addresses in order with d, whose
// Control hook (set on a copy) re-checks the socket address. d may be nil.
func (g *Guard) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var dialer net.Dialer
	if d != nil {
		dialer = *d
	}
	if g == nil || !g.AllowPrivate {
		prev := dialer.Control
		dialer.Control = func(network, address string, c syscall.RawConn) error {
			if err := g.Control(network, address, c); err != nil {
				return err
			}
			if prev != nil {
				return prev(network, address, c)
			}
			return nil
		}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, &Error{Kind: KindHost, Action: g.action(), Err: err}
		}
		addrs, err := g.Resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		dial := dialer.DialContext
		if g != nil && g.Dial != nil {
			dial = g.Dial
		}
		var errs []error
		for _, a := range addrs {
			conn, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return conn, nil
			}
			if ctx.Err() != nil {
				return nil, err
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// Control is a net.Dialer Control hook that refuses a connection whose
// socket address is blocked. It is the last line of defence: whatever
// resolved the name, the kernel is never asked to connect to a blocked
// address.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	if g != nil && g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Kind: KindHost, Action: g.action(), Host: address, Err: err}
	}
	if Blocked(ap.Addr()) {
		return g.refuse(address, ap.Addr())
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
