package community

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/antlerhq/antler/config"
)

// ProviderOptions are the config keys every web tool shares. The zero
// value selects each tool's default provider with its defaults.
type ProviderOptions struct {
	// Provider picks the backend; "" is the tool's default (see each
	// tool's options).
	Provider string `yaml:"provider"`
	// APIKey authenticates keyed providers. "" falls back to the
	// provider's environment variable (TAVILY_API_KEY,
	// BRAVE_SEARCH_API_KEY, JINA_API_KEY), as DeerFlow does.
	APIKey string `yaml:"api_key"`
	// BaseURL is the provider's base URL; "" is the public service (for
	// SearXNG, DeerFlow's http://localhost:8088). Endpoint is an alias.
	BaseURL  string `yaml:"base_url"`
	Endpoint string `yaml:"endpoint"`
	// Timeout is the request timeout in seconds; 0 means the tool's
	// default. TimeoutS is DeerFlow's timeout_s alias.
	Timeout  float64 `yaml:"timeout"`
	TimeoutS float64 `yaml:"timeout_s"`
	// Proxy is an http(s) proxy URL for provider requests. The direct
	// fetcher never uses a proxy (its SSRF guard must see the address it
	// connects to).
	Proxy string `yaml:"proxy"`
	// TrustEnv (default true) lets provider requests use the
	// HTTP(S)_PROXY environment variables.
	TrustEnv *bool `yaml:"trust_env"`

	// HTTPClient, if set, is used for provider requests instead of a
	// client built from Timeout, Proxy and TrustEnv (tests, custom TLS).
	HTTPClient *http.Client `yaml:"-"`
	// Logger receives diagnostics; nil discards.
	Logger *slog.Logger `yaml:"-"`
	// Getenv reads the API-key environment variables; nil is os.Getenv.
	Getenv func(string) string `yaml:"-"`
}

// DecodeOptions decodes a config entry's extra keys (config.ToolEntry's
// Options) into dst, a pointer to FetchOptions, SearchOptions or
// ImageSearchOptions. Decoding is strict: each unknown key (with the
// nearest known one) and each value of the wrong type is a *config.Error
// whose Key is the option's key, without file or line, which
// toolset.Registry.BuildTool fills in from the entry; several are joined
// with errors.Join, in key order.
func DecodeOptions(options map[string]any, dst any) error {
	known := optionKeys(reflect.TypeOf(dst).Elem())
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(options)) {
		if !slices.Contains(known, k) {
			errs = append(errs, &config.Error{Key: k, Msg: config.UnknownKeyMsg(k, known)})
			continue
		}
		// One key at a time, so that a type error names its key.
		raw, err := yaml.Marshal(map[string]any{k: options[k]})
		if err != nil {
			errs = append(errs, &config.Error{Key: k, Msg: "cannot encode the value: " + err.Error(), Err: err})
			continue
		}
		if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(dst); err != nil {
			errs = append(errs, &config.Error{Key: k, Msg: config.TypeErrorMsg(err), Err: err})
		}
	}
	return errors.Join(errs...)
}

// optionKeys returns the yaml keys of the options struct t, with those of
// its ",inline" embedded structs.
func optionKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct:
			out = append(out, optionKeys(f.Type)...)
		case name != "":
			out = append(out, name)
		default:
			out = append(out, strings.ToLower(f.Name))
		}
	}
	slices.Sort(out)
	return out
}

func (o *ProviderOptions) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o *ProviderOptions) timeout(def time.Duration) time.Duration {
	s := cmp.Or(o.Timeout, o.TimeoutS)
	if s <= 0 {
		return def
	}
	return time.Duration(s * float64(time.Second))
}

// baseURL returns the configured base URL without a trailing slash, or def.
func (o *ProviderOptions) baseURL(def string) string {
	return strings.TrimRight(cmp.Or(o.BaseURL, o.Endpoint, def), "/")
}

func (o *ProviderOptions) apiKey(envVar string) string {
	if k := strings.TrimSpace(o.APIKey); k != "" {
		return k
	}
	if envVar == "" {
		return ""
	}
	get := o.Getenv
	if get == nil {
		get = os.Getenv
	}
	return strings.TrimSpace(get(envVar))
}

// validate checks the shared keys.
func (o *ProviderOptions) validate() error {
	if o.BaseURL != "" && o.Endpoint != "" && o.BaseURL != o.Endpoint {
		return errors.New("base_url and endpoint are aliases; set one")
	}
	if u := cmp.Or(o.BaseURL, o.Endpoint); u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("base_url %q is not an http(s) URL", u)
		}
	}
	if o.Timeout < 0 || o.TimeoutS < 0 {
		return errors.New("timeout must not be negative")
	}
	if o.Proxy != "" {
		p, err := url.Parse(o.Proxy)
		if err != nil || p.Host == "" {
			return fmt.Errorf("proxy %q is not a URL", o.Proxy)
		}
	}
	return nil
}

// client returns the HTTP client for provider requests: HTTPClient if set,
// otherwise one with the timeout and proxy settings of the options.
func (o *ProviderOptions) client(def time.Duration) *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	switch {
	case o.Proxy != "":
		p, _ := url.Parse(o.Proxy) // checked by validate
		tr.Proxy = http.ProxyURL(p)
	case o.TrustEnv != nil && !*o.TrustEnv:
		tr.Proxy = nil
	}
	return &http.Client{Transport: tr, Timeout: o.timeout(def)}
}
