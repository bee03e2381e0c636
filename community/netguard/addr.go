package netguard

import "net/netip"

// specialPrefixes are the ranges, beyond what netip's predicates cover,
// that a server-side fetch must not reach: RFC 6890 special-purpose
// blocks, CGNAT (which holds some clouds' metadata service), benchmarking
// and documentation ranges, and deprecated IPv6 forms.
var specialPrefixes = mustPrefixes(
	"0.0.0.0/8",       // "this network"; 0.0.0.0 reaches the local host
	"100.64.0.0/10",   // CGNAT, shared address space (100.100.100.200 metadata)
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // TEST-NET-1
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // TEST-NET-2
	"203.0.113.0/24",  // TEST-NET-3
	"240.0.0.0/4",     // reserved, includes 255.255.255.255
	"::/96",           // unspecified, loopback, IPv4-compatible (deprecated)
	"64:ff9b:1::/48",  // local-use NAT64
	"100::/64",        // discard-only
	"2001::/23",       // IETF protocol assignments, Teredo
	"2001:db8::/32",   // documentation
	"3fff::/20",       // documentation
	"5f00::/16",       // SRv6 SIDs
	"fec0::/10",       // site-local (deprecated)
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Blocked reports whether a is an address a server-side fetch must not
// connect to: anything that is not a public unicast address. That covers
// private (10/8, 172.16/12, 192.168/16, fc00::/7), loopback, link-local
// (169.254/16 with the 169.254.169.254 metadata service, fe80::/10),
// multicast, unspecified, CGNAT, reserved and documentation ranges, and
// IPv6 forms that embed such an IPv4 address (IPv4-mapped, NAT64, 6to4).
// An invalid address is blocked.
func Blocked(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("").Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return true
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return Blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(a):
			return Blocked(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return false
}
