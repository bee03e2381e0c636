package toolset

import (
	"slices"
	"testing"
)

// TestModelOptionKeys_areTheKeysProvidersRead checks that the list is read
// from modelOptions: keys of each kind the providers decode are in it,
// sorted, and keys they do not read are not.
func TestModelOptionKeys_areTheKeysProvidersRead(t *testing.T) {
	keys := ModelOptionKeys()
	for _, want := range []string{"api_key", "base_url", "max_tokens", "temperature", "when_thinking_enabled", "num_predict"} {
		if !slices.Contains(keys, want) {
			t.Errorf("ModelOptionKeys() = %v, missing %q", keys, want)
		}
	}
	for _, not := range []string{"name", "use", "max_token", ""} {
		if slices.Contains(keys, not) {
			t.Errorf("ModelOptionKeys() contains %q", not)
		}
	}
	if !slices.IsSorted(keys) {
		t.Errorf("ModelOptionKeys() not sorted: %v", keys)
	}
}
