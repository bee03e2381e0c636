package config

import (
	"strings"
	"testing"
)

func TestTokenUsageSection(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want TokenUsage
	}{
		{name: "absent is on (DeerFlow's default)", src: "", want: TokenUsage{Enabled: true}},
		{name: "null section keeps the default", src: "token_usage: null\n", want: TokenUsage{Enabled: true}},
		{name: "off", src: "token_usage:\n  enabled: false\n", want: TokenUsage{}},
		{name: "on", src: "token_usage:\n  enabled: true\n", want: TokenUsage{Enabled: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src, nil)
			if c.TokenUsage != tt.want {
				t.Errorf("TokenUsage = %+v, want %+v", c.TokenUsage, tt.want)
			}
			if len(c.Ignored) != 0 {
				t.Errorf("Ignored = %v, want none", c.Ignored)
			}
		})
	}
}

func TestTokenUsageSectionErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{name: "unknown key", src: "token_usage:\n  enable: true\n", want: `config.yaml:2: token_usage.enable: unknown key "enable"`},
		{name: "wrong type", src: "token_usage:\n  enabled: maybe\n", want: "config.yaml:2: token_usage.enabled: expected boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.yaml", []byte(tt.src), nil)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}
