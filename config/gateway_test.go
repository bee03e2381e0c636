package config

import (
	"strings"
	"testing"
)

// TestGatewayElicitationTimeout: gateway.elicitation_timeout_seconds is
// read as written (0, the default, means 300 to the gateway), and a
// negative value is a load error naming the key and its line.
func TestGatewayElicitationTimeout(t *testing.T) {
	c := mustParse(t, "gateway:\n  elicitation_timeout_seconds: 90\n", nil)
	if got := c.Gateway.ElicitationTimeoutSeconds; got != 90 {
		t.Errorf("elicitation_timeout_seconds = %d, want 90", got)
	}
	if got := mustParse(t, "gateway: {}\n", nil).Gateway.ElicitationTimeoutSeconds; got != 0 {
		t.Errorf("default = %d, want 0", got)
	}
	_, err := Parse("config.yaml", []byte("gateway:\n  elicitation_timeout_seconds: -1\n"), nil)
	want := "config.yaml:2: gateway.elicitation_timeout_seconds: must be at least 0, got -1"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("negative: error %v, want %q", err, want)
	}
}
