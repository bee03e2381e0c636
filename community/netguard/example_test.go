package netguard_test

import (
	"fmt"

	"github.com/antlerhq/antler/community/netguard"
)

func ExampleGuard_CheckURLString() {
	g := &netguard.Guard{}
	for _, u := range []string{
		"https://example.com/",
		"http://169.254.169.254/latest/meta-data/",
		"file:///etc/passwd",
	} {
		_, err := g.CheckURLString(u)
		fmt.Printf("%s: %v\n", u, err)
	}
	// Output:
	// https://example.com/: <nil>
	// http://169.254.169.254/latest/meta-data/: Refusing to fetch a private, loopback, or metadata address
	// file:///etc/passwd: Only http:// and https:// URLs are supported
}
