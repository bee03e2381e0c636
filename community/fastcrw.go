package community

import (
	"cmp"
	"net/http"
	"os"
	"strings"
)

// defaultFastCRWBase is fastCRW's managed service, DeerFlow's default.
const defaultFastCRWBase = "https://fastcrw.com/api"

// newFastCRW returns the Firecrawl-compatible client for fastCRW: the key
// from api_key or CRW_API_KEY (optional: a self-hosted server may need
// none) and the base from base_url, CRW_API_URL or the managed service,
// as DeerFlow reads them.
func newFastCRW(o *ProviderOptions, c *http.Client) *firecrawl {
	get := o.Getenv
	if get == nil {
		get = os.Getenv
	}
	base := strings.TrimRight(cmp.Or(o.BaseURL, o.Endpoint, strings.TrimSpace(get("CRW_API_URL")), defaultFastCRWBase), "/")
	return &firecrawl{name: "fastCRW", base: base, key: o.apiKey("CRW_API_KEY"), keyVar: "CRW_API_KEY", client: c}
}
