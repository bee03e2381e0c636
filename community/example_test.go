package community_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/antlerhq/antler/community"
)

func ExampleExtractHTML() {
	page := `<html><head><title>Deer | Notes</title></head><body>
<nav><a href="/">Home</a></nav>
<article><h1>Deer</h1><p>Red deer move to the valleys in <em>autumn</em>. See the <a href="/map">map</a>.</p></article>
</body></html>`
	p, err := community.ExtractHTML(strings.NewReader(page), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Document())
	// Output:
	// # Deer | Notes
	//
	// Red deer move to the valleys in *autumn*. See the [map](/map).
}

func ExampleFetcher_Fetch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "hello from a local server")
	}))
	defer srv.Close()

	// The SSRF guard refuses loopback addresses by default.
	guarded, _ := community.NewFetcher(community.FetchOptions{})
	defer guarded.Close()
	_, err := guarded.Fetch(context.Background(), srv.URL)
	fmt.Println(err)

	// allow_private_addresses: true opts out.
	open, _ := community.NewFetcher(community.FetchOptions{AllowPrivateAddresses: true})
	defer open.Close()
	doc, _ := open.Fetch(context.Background(), srv.URL)
	fmt.Println(strings.SplitN(doc, "\n\n", 2)[1])
	// Output:
	// Refusing to fetch a private, loopback, or metadata address
	// hello from a local server
}
