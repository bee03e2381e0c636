package community

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDecodeOptions(t *testing.T) {
	var o FetchOptions
	err := DecodeOptions(map[string]any{
		"provider": "jina", "timeout": 10, "max_chars": 8000, "allow_private_addresses": true,
		"api_key": "k", "base_url": "http://127.0.0.1:9/", "trust_env": false,
	}, &o)
	if err != nil {
		t.Fatal(err)
	}
	f := false
	want := FetchOptions{ProviderOptions: ProviderOptions{Provider: "jina", Timeout: 10, APIKey: "k",
		BaseURL: "http://127.0.0.1:9/", TrustEnv: &f}, MaxChars: 8000, AllowPrivateAddresses: true}
	if d := cmp.Diff(want, o, cmpopts.IgnoreFields(ProviderOptions{}, "Getenv")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	var s SearchOptions
	if err := DecodeOptions(map[string]any{"max_results": 5, "backend": []any{"duckduckgo", "wikipedia"}, "region": "de-de"}, &s); err != nil {
		t.Fatal(err)
	}
	if s.MaxResults != 5 || s.Region != "de-de" {
		t.Errorf("search options = %+v", s)
	}

	tests := []struct {
		name string
		in   map[string]any
		dst  any
		want string
	}{
		{"unknown key", map[string]any{"max_resluts": 3}, &SearchOptions{}, "max_resluts"},
		{"fetch has no max_results", map[string]any{"max_results": 3}, &FetchOptions{}, "max_results"},
		{"wrong type", map[string]any{"max_chars": "lots"}, &FetchOptions{}, "lots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := DecodeOptions(tt.in, tt.dst)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("DecodeOptions error = %v, want one naming %q", err, tt.want)
			}
		})
	}
}
